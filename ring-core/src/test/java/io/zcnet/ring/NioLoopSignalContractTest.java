package io.zcnet.ring;

/** {@link LoopSignal} on the NIO engine. */
class NioLoopSignalContractTest extends LoopSignalContractTest {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.NIO;
    }
}
