package io.zcnet.qp;

import io.zcnet.ring.EventLoopConfig;

/** Hostile peers against the NIO engine. */
class NioHostilePeerTest extends HostilePeerContractTest {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.NIO;
    }
}
