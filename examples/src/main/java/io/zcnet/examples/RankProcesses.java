package io.zcnet.examples;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The ranks of a run that {@code zcnet allreduce} starts itself: one child JVM per rank, running this CLI
 * in rank mode. Rank 0's standard output goes to a consumer (the RESULT lines); every other line of every
 * rank is relayed with {@code rank K: } in front. Children die with the run: {@link #close()} kills what
 * still runs, and each child is told to halt when this process ends ({@code --parent-pid}), so not even a
 * SIGKILL of this process leaves ranks behind. Started and awaited by one thread; the relays run on
 * threads of their own.
 */
final class RankProcesses implements AutoCloseable {
    private final PrintWriter out;
    private final PrintWriter err;
    private final Consumer<String> rankZeroOutput;
    private final List<Process> processes = new CopyOnWriteArrayList<>(); // close() may run in a shutdown hook
    private final List<Thread> relays = new ArrayList<>();

    RankProcesses(PrintWriter out, PrintWriter err, Consumer<String> rankZeroOutput) {
        this.out = out;
        this.err = err;
        this.rankZeroOutput = rankZeroOutput;
    }

    /**
     * The command that runs this CLI in a new JVM as this one runs: the same java binary, class path and
     * {@code --enable-native-access} flags (FFM refuses or warns without them).
     */
    static List<String> javaCommand() {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String flag : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (flag.startsWith("--enable-native-access")) {
                command.add(flag);
            }
        }
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(ZcnetCli.class.getName());
        return command;
    }

    /** Starts rank {@code rank} as {@code command}. */
    void start(int rank, List<String> command) throws IOException {
        Process p = new ProcessBuilder(command).start();
        processes.add(p);
        p.getOutputStream().close();
        relay(rank, p.getInputStream(), rank == 0 ? rankZeroOutput : line -> println(out, rank, line));
        relay(rank, p.getErrorStream(), line -> println(err, rank, line));
    }

    private static void println(PrintWriter w, int rank, String line) {
        synchronized (w) {
            w.println("rank " + rank + ": " + line);
            w.flush();
        }
    }

    private void relay(int rank, InputStream stream, Consumer<String> lines) {
        relays.add(Thread.ofPlatform().name("zcnet-rank-" + rank + "-relay").daemon().start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    lines.accept(line);
                }
            } catch (IOException e) {
                // The rank was killed: its pipe closed under the reader.
            }
        }));
    }

    /**
     * Waits until every rank has exited, and their output is relayed. Once one fails, the others have
     * {@code grace} to end by themselves (a failed rank breaks their communicator, which says why) before
     * they are killed. Returns what went wrong, one entry per rank that failed; empty when all exited 0.
     */
    List<String> await(Duration grace) throws InterruptedException {
        Long killAt = null;
        while (processes.stream().anyMatch(Process::isAlive)) {
            if (killAt == null && processes.stream().anyMatch(p -> !p.isAlive() && p.exitValue() != 0)) {
                killAt = System.nanoTime() + grace.toNanos();
            }
            if (killAt != null && System.nanoTime() - killAt > 0) {
                close();
            }
            Thread.sleep(50);
        }
        for (Thread relay : relays) {
            relay.join();
        }
        List<String> failures = new ArrayList<>();
        for (int k = 0; k < processes.size(); k++) {
            int status = processes.get(k).exitValue();
            if (status != 0) {
                failures.add("rank " + k + " exited with " + status);
            }
        }
        return failures;
    }

    /** Kills every rank still running. Safe to call twice, and from a shutdown hook. */
    @Override
    public void close() {
        for (Process p : processes) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }
}
