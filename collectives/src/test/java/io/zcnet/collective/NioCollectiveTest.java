package io.zcnet.collective;

import io.zcnet.ring.EventLoopConfig;

/** Collectives on the NIO engine. */
class NioCollectiveTest extends CollectiveContractTest {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.NIO;
    }
}
