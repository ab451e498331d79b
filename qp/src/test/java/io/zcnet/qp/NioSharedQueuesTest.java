package io.zcnet.qp;

import io.zcnet.ring.EventLoopConfig;

/** Shared completion and receive queues and the completion channel on the NIO engine. */
class NioSharedQueuesTest extends SharedQueuesContractTest {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.NIO;
    }
}
