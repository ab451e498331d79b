package io.zcnet.ring;

/** The engine contract on io_uring; skipped with the kernel's reason where io_uring cannot run. */
class UringEngineContractTest extends EngineContractTest implements RequiresUring {

    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.URING;
    }
}
