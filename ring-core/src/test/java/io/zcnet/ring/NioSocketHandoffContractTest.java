package io.zcnet.ring;

/** Moving a socket between loops on the NIO engine. */
class NioSocketHandoffContractTest extends SocketHandoffContractTest {

    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.NIO;
    }
}
