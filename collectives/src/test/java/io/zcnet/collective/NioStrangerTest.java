package io.zcnet.collective;

import io.zcnet.ring.EventLoopConfig;

/** Strangers at the rendezvous, on the NIO engine. */
class NioStrangerTest extends StrangerContractTest {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.NIO;
    }
}
