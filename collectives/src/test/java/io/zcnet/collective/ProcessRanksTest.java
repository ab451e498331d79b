package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.EventLoops;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Ranks as separate JVMs ({@link RankProcess}) on loopback, rank 0 hosting the store: a set of operations
 * verified against the reference, then a stream of 16 MiB allreduces in which one rank is killed (SIGKILL,
 * no chance to close anything), after which every other rank's operation must end with an error that names
 * it, well within the operation timeout, because its connections close.
 */
@Timeout(120)
class ProcessRanksTest {
    private static final int SIZE = 4;
    private static final int VICTIM = 2;
    /** How soon after the kill every other rank must have failed: far below the 20 s operation timeout. */
    private static final Duration FAILURE_BOUND = Duration.ofSeconds(5);

    @ParameterizedTest
    @EnumSource(names = {"NIO", "URING"})
    void ranksInSeparateProcessesAgreeAndAKilledRankFailsEveryOtherNamingIt(EventLoopConfig.Choice engine)
            throws Exception {
        killOneOfFour(engine, false);
    }

    /** The same with busy-polling ranks, which have no loop thread: only their own calls notice the kill. */
    @ParameterizedTest
    @EnumSource(names = {"NIO", "URING"})
    void busyPollingRanksInSeparateProcessesAgreeAndAKilledRankFailsEveryOtherNamingIt(EventLoopConfig.Choice engine)
            throws Exception {
        killOneOfFour(engine, true);
    }

    private static void killOneOfFour(EventLoopConfig.Choice engine, boolean busyPoll) throws Exception {
        assumeUsable(engine);
        InetSocketAddress store = freeAddress();
        try (Children ranks = new Children()) {
            List<Children.Child> children = new ArrayList<>();
            for (int r = 0; r < SIZE; r++) {
                children.add(ranks.start(Children.java(engine.name(), RankProcess.class, String.valueOf(r),
                        String.valueOf(SIZE), store.getAddress().getHostAddress() + ":" + store.getPort(),
                        engine.name(), String.valueOf(busyPoll)), Map.of()));
            }
            awaitLine(children, "ok");
            killAndAwaitTheOthers(children, VICTIM);
        }
    }

    /** Waits for every rank's next line to be {@code rank R what}. */
    static void awaitLine(List<Children.Child> ranks, String what) throws InterruptedException {
        for (int r = 0; r < ranks.size(); r++) {
            Children.Child child = ranks.get(r);
            assertEquals("rank " + r + " " + what, child.out().poll(90, TimeUnit.SECONDS), () -> child.err().toString());
        }
    }

    /**
     * Once every rank loops over allreduces ({@link RankProcess}), SIGKILLs {@code victim}; every other rank
     * must then fail within {@link #FAILURE_BOUND}, naming it, and exit.
     */
    static void killAndAwaitTheOthers(List<Children.Child> ranks, int victim) throws InterruptedException {
        awaitLine(ranks, "looping");
        ranks.get(victim).process().destroyForcibly();
        long killed = System.nanoTime();
        for (int r = 0; r < ranks.size(); r++) {
            if (r == victim) {
                continue;
            }
            Children.Child child = ranks.get(r);
            String line = child.out().poll(FAILURE_BOUND.toMillis(), TimeUnit.MILLISECONDS);
            long millis = (System.nanoTime() - killed) / 1_000_000;
            assertNotNull(line, "rank " + r + " still ran " + FAILURE_BOUND + " after rank " + victim + " was killed");
            System.out.println(millis + " ms after the kill: " + line);
            assertTrue(line.startsWith("rank " + r + " failed peer=" + victim + ": "),
                    () -> line + " (after " + millis + " ms)");
            assertTrue(child.process().waitFor(30, TimeUnit.SECONDS), "rank " + r + " did not exit");
            assertEquals(2, child.process().exitValue());
        }
    }

    static void assumeUsable(EventLoopConfig.Choice engine) {
        if (engine == EventLoopConfig.Choice.URING) {
            assumeTrue(EventLoops.uringAvailability().usable(),
                    () -> "io_uring not usable here: " + EventLoops.uringAvailability().reason());
        }
    }

    /** A loopback address with a port nobody listens on at the moment, for rank 0 to host the store at. */
    static InetSocketAddress freeAddress() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return new InetSocketAddress(InetAddress.getLoopbackAddress(), s.getLocalPort());
        }
    }
}
