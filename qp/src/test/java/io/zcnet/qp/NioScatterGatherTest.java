package io.zcnet.qp;

import io.zcnet.ring.EventLoopConfig;

/** Scatter/gather lists on the NIO engine. */
class NioScatterGatherTest extends ScatterGatherContractTest {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.NIO;
    }
}
