/**
 * The send path of framed connections: frames queued per connection go out in order, small ones
 * coalesced, large ones gathered behind their headers and sent without a copy where the kernel can, with
 * back-pressure instead of unbounded buffering. Built on {@code EventLoop} alone, so it runs on both
 * engines. zcnet's own plumbing beneath its queue pairs, not an API: exported to {@code io.zcnet.qp} alone.
 */
@SuppressWarnings("module")
module io.zcnet.tx {
    requires transitive io.zcnet.ring;
    requires transitive io.zcnet.framing;

    // The benchmarks and the tests use it too, from the class path, where a qualified export binds nothing.
    // io.zcnet.qp is built after this module, so javac cannot see it here: the declaration suppresses its
    // "module not found".
    exports io.zcnet.tx to io.zcnet.qp;
}
