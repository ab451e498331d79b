/**
 * The receive path of framed connections: frames cut from provided buffer rings (straddling frames
 * included), large payloads received by the kernel straight into their posted receive or registered
 * region, all handed to a {@code MessageAssembler}. Built on {@code EventLoop} alone, so it runs on both
 * engines. zcnet's own plumbing beneath its queue pairs, not an API: exported to {@code io.zcnet.qp} alone.
 */
@SuppressWarnings("module")
module io.zcnet.rx {
    requires transitive io.zcnet.ring;
    requires transitive io.zcnet.framing;

    // The benchmarks and the tests use it too, from the class path, where a qualified export binds nothing.
    // io.zcnet.qp is built after this module, so javac cannot see it here: the declaration suppresses its
    // "module not found".
    exports io.zcnet.rx to io.zcnet.qp;
}
