package io.zcnet.ring;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.zcnet.ring.uring.Uring;

import org.junit.jupiter.api.BeforeAll;

/** Mixed into a suite's io_uring subclass: skips it, with the kernel's reason, where io_uring cannot run. */
interface RequiresUring {

    @BeforeAll
    static void requireUring() {
        Availability uring = Uring.availability();
        assumeTrue(uring.usable(), () -> "io_uring not usable here: " + uring.reason());
    }

    /**
     * For a test parameterized by engine: skips it, with the kernel's reason, where it asks for io_uring and
     * io_uring cannot run.
     */
    static void assumeUsable(EventLoopConfig.Choice choice) {
        if (choice == EventLoopConfig.Choice.URING) {
            requireUring();
        }
    }
}
