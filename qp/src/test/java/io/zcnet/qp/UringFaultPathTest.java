package io.zcnet.qp;

import io.zcnet.ring.EventLoopConfig;

/** The fault paths on io_uring; skipped with the reason where io_uring cannot run. */
class UringFaultPathTest extends FaultPathContractTest implements RequiresUring {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.URING;
    }
}
