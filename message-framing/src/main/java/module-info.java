/**
 * Wire format v1 of zcnet's message layer: frame codec, segmentation, placement and in-order completion.
 * Pure logic (bytes in, placements and completions out, no I/O); the format is specified in
 * docs/wire-format.md. Requires buffer-pool transitively: its regions and registry appear in this API.
 */
module io.zcnet.framing {
    requires transitive io.zcnet.buffer;

    exports io.zcnet.framing;
}
