package io.zcnet.qp;

import io.zcnet.ring.EventLoopConfig;

/** Multipath over network namespaces on io_uring; skipped with the reason where io_uring cannot run. */
class UringMultipathNetnsTest extends MultipathNetnsContractTest implements RequiresUring {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.URING;
    }
}
