package io.zcnet.collective;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.zcnet.ring.Availability;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.EventLoops;

import org.junit.jupiter.api.BeforeAll;

/** Aggregation on io_uring; skipped with the reason where io_uring cannot run. */
class UringAggregatorTest extends AggregatorContractTest {

    @BeforeAll
    static void requireUring() {
        Availability uring = EventLoops.uringAvailability();
        assumeTrue(uring.usable(), () -> "io_uring not usable here: " + uring.reason());
    }

    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.URING;
    }
}
