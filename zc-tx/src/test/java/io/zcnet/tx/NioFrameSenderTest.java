package io.zcnet.tx;

import io.zcnet.ring.EventLoopConfig;

/** The send path on the NIO engine. */
class NioFrameSenderTest extends FrameSenderContractTest {

    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.NIO;
    }
}
