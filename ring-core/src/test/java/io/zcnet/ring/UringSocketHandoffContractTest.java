package io.zcnet.ring;

/** Moving a socket between loops on io_uring; skipped with the kernel's reason where io_uring cannot run. */
class UringSocketHandoffContractTest extends SocketHandoffContractTest implements RequiresUring {

    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.URING;
    }
}
