/**
 * io_uring through the FFM API, the event loop, socket operations, and the NIO engine that stands in
 * where io_uring cannot run.
 */
module io.zcnet.ring {
    requires transitive io.zcnet.buffer;
    requires org.agrona;
    requires org.jctools.core;
    requires jdk.jfr;

    exports io.zcnet.ring;
}
