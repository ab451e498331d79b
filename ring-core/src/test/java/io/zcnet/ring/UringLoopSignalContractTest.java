package io.zcnet.ring;

/** {@link LoopSignal} on io_uring; skipped with the kernel's reason where io_uring cannot run. */
class UringLoopSignalContractTest extends LoopSignalContractTest implements RequiresUring {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.URING;
    }
}
