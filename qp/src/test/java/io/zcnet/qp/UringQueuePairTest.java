package io.zcnet.qp;

import io.zcnet.ring.EventLoopConfig;

/** Queue pairs on io_uring; skipped with the reason where io_uring cannot run. */
class UringQueuePairTest extends QueuePairContractTest implements RequiresUring {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.URING;
    }
}
