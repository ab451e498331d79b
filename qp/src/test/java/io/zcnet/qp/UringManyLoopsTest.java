package io.zcnet.qp;

import io.zcnet.ring.EventLoopConfig;

/** A context of several loops on the io_uring engine; skipped with the kernel's reason where io_uring cannot run. */
class UringManyLoopsTest extends ManyLoopsContractTest implements RequiresUring {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.URING;
    }
}
