package io.zcnet.ring;

/** The engine contract on the {@code java.nio} engine, which runs everywhere. */
class NioEngineContractTest extends EngineContractTest {

    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.NIO;
    }
}
