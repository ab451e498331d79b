package io.zcnet.rx;

import io.zcnet.ring.EventLoopConfig;

/** What receivers hold of their loop's buffers, on io_uring; skipped with the reason where io_uring cannot run. */
class UringReceiveBuffersTest extends ReceiveBuffersContractTest implements RequiresUring {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.URING;
    }
}
