package io.zcnet.ring;

/** The socket-option contract on the {@code java.nio} engine, which cannot set TCP_USER_TIMEOUT. */
class NioSocketOptionsContractTest extends SocketOptionsContractTest {

    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.NIO;
    }

    @Override
    protected boolean setsUserTimeout() {
        return false;
    }
}
