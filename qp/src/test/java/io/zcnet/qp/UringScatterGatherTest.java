package io.zcnet.qp;

import io.zcnet.ring.EventLoopConfig;

/** Scatter/gather lists on io_uring; skipped with the reason where io_uring cannot run. */
class UringScatterGatherTest extends ScatterGatherContractTest implements RequiresUring {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.URING;
    }
}
