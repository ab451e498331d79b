package io.zcnet.rx;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.zcnet.ring.Availability;
import io.zcnet.ring.EventLoops;

import org.junit.jupiter.api.BeforeAll;

/** Mixed into a suite's io_uring subclass: skips it, with the kernel's reason, where io_uring cannot run. */
interface RequiresUring {

    @BeforeAll
    static void requireUring() {
        Availability uring = EventLoops.uringAvailability();
        assumeTrue(uring.usable(), () -> "io_uring not usable here: " + uring.reason());
    }
}
