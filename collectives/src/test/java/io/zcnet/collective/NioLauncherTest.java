package io.zcnet.collective;

import io.zcnet.ring.EventLoopConfig;

/** Launched ranks on the NIO engine. */
class NioLauncherTest extends LauncherContractTest {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.NIO;
    }
}
