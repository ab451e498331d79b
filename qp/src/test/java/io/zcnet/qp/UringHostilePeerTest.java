package io.zcnet.qp;

import io.zcnet.ring.EventLoopConfig;

/** Hostile peers against io_uring; skipped with the reason where io_uring cannot run. */
class UringHostilePeerTest extends HostilePeerContractTest implements RequiresUring {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.URING;
    }
}
