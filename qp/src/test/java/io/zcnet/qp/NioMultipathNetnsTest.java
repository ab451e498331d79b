package io.zcnet.qp;

import io.zcnet.ring.EventLoopConfig;

/** Multipath over network namespaces on the NIO engine. */
class NioMultipathNetnsTest extends MultipathNetnsContractTest {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.NIO;
    }
}
