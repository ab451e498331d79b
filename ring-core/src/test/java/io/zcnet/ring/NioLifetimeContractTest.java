package io.zcnet.ring;

/** The lifetime contract on the Nio engine. */
class NioLifetimeContractTest extends LifetimeContractTest {

    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.NIO;
    }
}
