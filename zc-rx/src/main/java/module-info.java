/**
 * The receive path of framed connections: frames cut from provided buffer rings (straddling frames
 * included), large payloads received by the kernel straight into their posted receive or registered
 * region, all handed to a {@code MessageAssembler}. Built on {@code EventLoop} alone, so it runs on both
 * engines.
 */
module io.zcnet.rx {
    requires transitive io.zcnet.ring;
    requires transitive io.zcnet.framing;

    exports io.zcnet.rx;
}
