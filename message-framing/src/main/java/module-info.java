/**
 * Wire format v1 of zcnet's message layer: frame codec, segmentation, placement and in-order completion.
 * Pure logic (bytes in, placements and completions out, no I/O); the format is specified in
 * docs/wire-format.md. Requires buffer-pool transitively: its regions and registry appear in this API.
 */
module io.zcnet.framing {
    requires transitive io.zcnet.buffer;

    // Unqualified: the wire format's codecs (FrameHeader, FrameValidator, Icrc, the extensions) serve tools
    // such as the dissector. MessageAssembler's direct placement (beginPlacement, commit, abort, PlacementTarget)
    // is zc-rx's alone, but cannot move into a package exported to it only: it works on the assembler's private
    // state (judge, failure, completion) and on PlacementTarget fields DirectPlacements reads package-privately,
    // so the move takes either an accessor the assembler installs into that package (the JDK's SharedSecrets
    // pattern) or the assembler moving there with every class it shares state with.
    exports io.zcnet.framing;
}
