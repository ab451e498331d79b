package io.zcnet.collective;

import io.zcnet.qp.QueuePair;

import java.util.function.IntSupplier;

/** What tests read from, or tell, a rank's insides ({@link Communicator#parts()}). */
final class Probe {
    private Probe() {
    }

    /** How many messages {@code c} has sent to {@code peer}; the joining thread, between calls. */
    static long messagesSentTo(Communicator c, int peer) {
        return c.parts().links().to(peer).sent();
    }

    /**
     * Makes {@code c} say it runs on the CPU {@code cpu} gives instead of asking the kernel, for tests of the
     * adaptive fold ({@link HalvingDoubling#foldsAdaptively}); the joining thread, before the first operation.
     */
    static void reportCpu(Communicator c, IntSupplier cpu) {
        c.parts().halvingDoubling().cpu = cpu;
    }

    /** The queue pair from {@code c} to {@code peer}, for tests that break it; any thread. */
    static QueuePair queuePairTo(Communicator c, int peer) {
        return c.parts().links().to(peer).qp;
    }

    /** Whether {@code c}'s staging memory is freed, for tests of closing; any thread. */
    static boolean stagingFreed(Communicator c) {
        return c.parts().staging().isFreed();
    }
}
