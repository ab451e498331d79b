package io.zcnet.qp;

import io.zcnet.ring.EventLoopConfig;

/** The fault paths on the NIO engine. */
class NioFaultPathTest extends FaultPathContractTest {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.NIO;
    }
}
