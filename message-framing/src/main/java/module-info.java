/**
 * Wire format v1 of zcnet's message layer: frame codec, segmentation, placement and in-order completion.
 * Pure logic (bytes in, placements and completions out, no I/O); see DESIGN.md, "message-framing".
 */
module io.zcnet.framing {
    requires io.zcnet.buffer;

    exports io.zcnet.framing;
}
