package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.EventLoops;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
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
        try (Ranks ranks = new Ranks()) {
            List<Ranks.Child> children = new ArrayList<>();
            for (int r = 0; r < SIZE; r++) {
                children.add(ranks.start(r, store, engine, busyPoll));
            }
            for (Ranks.Child child : children) {
                assertEquals("rank " + child.rank + " ok", child.lines.poll(90, TimeUnit.SECONDS));
            }
            for (Ranks.Child child : children) {
                assertEquals("rank " + child.rank + " looping", child.lines.poll(60, TimeUnit.SECONDS));
            }
            children.get(VICTIM).process.destroyForcibly();
            long killed = System.nanoTime();
            for (Ranks.Child child : children) {
                if (child.rank == VICTIM) {
                    continue;
                }
                String line = child.lines.poll(FAILURE_BOUND.toMillis(), TimeUnit.MILLISECONDS);
                long millis = (System.nanoTime() - killed) / 1_000_000;
                assertNotNull(line, "rank " + child.rank + " still ran " + FAILURE_BOUND + " after rank " + VICTIM
                        + " was killed");
                System.out.println(millis + " ms after the kill: " + line);
                assertTrue(line.startsWith("rank " + child.rank + " failed peer=" + VICTIM + ": "),
                        () -> line + " (after " + millis + " ms)");
                assertTrue(child.process.waitFor(30, TimeUnit.SECONDS), "rank " + child.rank + " did not exit");
                assertEquals(2, child.process.exitValue());
            }
        }
    }

    private static void assumeUsable(EventLoopConfig.Choice engine) {
        if (engine == EventLoopConfig.Choice.URING) {
            assumeTrue(EventLoops.uringAvailability().usable(),
                    () -> "io_uring not usable here: " + EventLoops.uringAvailability().reason());
        }
    }

    /** A loopback address with a port nobody listens on at the moment, for rank 0 to host the store at. */
    private static InetSocketAddress freeAddress() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return new InetSocketAddress(InetAddress.getLoopbackAddress(), s.getLocalPort());
        }
    }

    /** The child JVMs of one test, killed at the end whatever happened. */
    private static final class Ranks implements AutoCloseable {
        private final List<Process> processes = new ArrayList<>();

        record Child(int rank, Process process, BlockingQueue<String> lines) {
        }

        Child start(int rank, InetSocketAddress store, EventLoopConfig.Choice engine, boolean busyPoll)
                throws IOException {
            List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--enable-native-access=ALL-UNNAMED", "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                    RankProcess.class.getName(), String.valueOf(rank), String.valueOf(SIZE),
                    store.getAddress().getHostAddress() + ":" + store.getPort(), engine.name(),
                    String.valueOf(busyPoll));
            Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            processes.add(p);
            BlockingQueue<String> lines = new LinkedBlockingQueue<>();
            Thread.ofPlatform().daemon().name("rank-" + rank + "-stdout").start(() -> {
                try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line; (line = in.readLine()) != null; ) {
                        lines.add(line);
                    }
                } catch (IOException ignored) {
                    // the process was killed: its lines end here
                }
            });
            return new Child(rank, p, lines);
        }

        @Override
        public void close() {
            for (Process p : processes) {
                p.destroyForcibly();
            }
        }
    }
}
