package io.zcnet.rx;

import io.zcnet.ring.EventLoopConfig;

/** The receive path on the NIO engine. */
class NioFrameReceiverTest extends FrameReceiverContractTest {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.NIO;
    }
}
