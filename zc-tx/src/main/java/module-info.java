/**
 * The send path of framed connections: frames queued per connection go out in order, small ones
 * coalesced, large ones gathered behind their headers and sent without a copy where the kernel can, with
 * back-pressure instead of unbounded buffering. Built on {@code EventLoop} alone, so it runs on both
 * engines.
 */
module io.zcnet.tx {
    requires transitive io.zcnet.ring;
    requires transitive io.zcnet.framing;

    exports io.zcnet.tx;
}
