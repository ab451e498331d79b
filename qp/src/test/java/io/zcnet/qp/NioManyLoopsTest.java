package io.zcnet.qp;

import io.zcnet.ring.EventLoopConfig;

/** A context of several loops on the NIO engine. */
class NioManyLoopsTest extends ManyLoopsContractTest {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.NIO;
    }
}
