package io.zcnet.collective;

import io.zcnet.ring.EventLoopConfig;

/** Aggregation on the NIO engine. */
class NioAggregatorTest extends AggregatorContractTest {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.NIO;
    }
}
