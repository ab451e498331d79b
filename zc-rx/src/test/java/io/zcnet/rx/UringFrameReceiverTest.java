package io.zcnet.rx;

import io.zcnet.ring.EventLoopConfig;

/** The receive path on io_uring; skipped with the reason where io_uring cannot run. */
class UringFrameReceiverTest extends FrameReceiverContractTest implements RequiresUring {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.URING;
    }
}
