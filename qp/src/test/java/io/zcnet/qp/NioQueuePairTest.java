package io.zcnet.qp;

import io.zcnet.ring.EventLoopConfig;

/** Queue pairs on the NIO engine. */
class NioQueuePairTest extends QueuePairContractTest {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.NIO;
    }
}
