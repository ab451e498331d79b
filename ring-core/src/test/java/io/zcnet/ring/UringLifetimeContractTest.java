package io.zcnet.ring;

/** The lifetime contract on io_uring; skipped with the kernel's reason where io_uring cannot run. */
class UringLifetimeContractTest extends LifetimeContractTest implements RequiresUring {

    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.URING;
    }
}
