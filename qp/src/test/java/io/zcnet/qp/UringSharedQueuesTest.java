package io.zcnet.qp;

import io.zcnet.ring.EventLoopConfig;

/** Shared completion and receive queues and the completion channel on io_uring; skipped with the reason where io_uring cannot run. */
class UringSharedQueuesTest extends SharedQueuesContractTest implements RequiresUring {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.URING;
    }
}
