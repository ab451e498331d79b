/**
 * io_uring through the FFM API, the event loop, socket operations, and the NIO engine that stands in
 * where io_uring cannot run.
 *
 * <p>Only {@code io.zcnet.ring} is exported. The modules above (zc-tx, zc-rx) reach the kernel through
 * {@link io.zcnet.ring.EventLoop} like any user: every operation they need (gathered and zero-copy sends,
 * buffer-select and multishot receives, linked operations, fixed buffers, the probe through
 * {@code supports}) is an {@code EventLoop} method with an NIO twin that completes identically, so they run
 * on both engines without knowing which. The engines ({@code io.zcnet.ring.uring}, {@code io.zcnet.ring.nio})
 * and the kernel ABI ({@code io.zcnet.ring.sys}) stay internal, with no qualified exports: nothing
 * above may depend on an SQE's layout.
 */
module io.zcnet.ring {
    requires transitive io.zcnet.buffer;
    requires org.agrona;
    requires org.jctools.core;
    requires jdk.jfr;

    exports io.zcnet.ring;
}
