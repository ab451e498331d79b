package io.zcnet.rx;

import io.zcnet.ring.EventLoopConfig;

/** What receivers hold of their loop's buffers, on the NIO engine. */
class NioReceiveBuffersTest extends ReceiveBuffersContractTest {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.NIO;
    }
}
