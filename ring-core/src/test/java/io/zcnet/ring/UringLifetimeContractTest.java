package io.zcnet.ring;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.zcnet.ring.uring.Uring;

import org.junit.jupiter.api.BeforeAll;

/** The lifetime contract on io_uring; skipped with the kernel's reason where io_uring cannot run. */
class UringLifetimeContractTest extends LifetimeContractTest {

    @BeforeAll
    static void requireUring() {
        Availability uring = Uring.availability();
        assumeTrue(uring.usable(), () -> "io_uring not usable here: " + uring.reason());
    }

    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.URING;
    }
}
