package io.zcnet.examples;

import io.zcnet.collective.Aggregator;
import io.zcnet.collective.AggregatorConfig;
import io.zcnet.ring.EventLoopConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.zcnet.examples.BulkRunTest.assumeUsable;
import static io.zcnet.examples.CliTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code zcnet allreduce} end to end: ranks as child JVMs on loopback on each engine, in network namespaces
 * when root, one rank mode run read the way bench/collectives.sh reads it, and the refusal of bad options.
 */
class AllreduceCommandTest {
    private static final String ALL_OPS = "allreduce,allgather,reduce_scatter,broadcast,reduce,alltoall,barrier";
    private static final Set<String> OPS = Set.of(ALL_OPS.split(","));
    /** The RESULT fields in the order bench/collectives.sh's header gives them. */
    private static final List<String> FIELDS = List.of("impl", "op", "algo", "ranks", "bytes", "warmup", "iters",
            "avg_us", "min_us", "p50_us", "max_us", "cpu_us", "algbw_gbps", "busbw_gbps", "check");
    private static final Pattern NAMESPACES = Pattern.compile("namespaces (zcar-\\S+)-r0\\.\\.");

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void threeLocalRanksRunEveryOperationAndCheckEveryResult(EventLoopConfig.Choice engine) {
        assumeUsable(engine);
        String output = run(0, "allreduce", "--ranks", "3", "--engine", engine.name().toLowerCase(Locale.ROOT), "--ops",
                ALL_OPS, "--min-bytes", "1K", "--max-bytes", "2K", "--budget", "0.02", "--warmup", "0.01",
                "--jit-warmup", "0.3");
        // Rank 0, a child JVM, reports the warm-up: every operation at both sizes, the barrier once.
        assertTrue(output.contains("# JIT warm-up: 0.3 s, "), output);
        assertTrue(output.contains(" untimed operations at 13 operation sizes up to 2K"), output);
        List<String[]> rows = rows(output, false);
        // Two sizes of each operation that moves data (rounded down to whole floats per rank where it
        // splits them: 1020 and 2040 bytes among three ranks), one barrier.
        assertEquals(6 * 2 + 1, rows.size(), output);
        assertTrue(rows.stream().anyMatch(r -> r[0].equals("reduce_scatter") && r[2].equals("1020")), output);
        assertTrue(output.contains("engine " + engine.name().toLowerCase(Locale.ROOT)), output);
        assertTrue(output.contains("summary: 13 results, all checks ok"), output);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void busyPollAndCoreSharingReachEveryRankAndTheResultsStayRight(EventLoopConfig.Choice engine) {
        assumeUsable(engine);
        String output = run(0, "allreduce", "--ranks", "2", "--busy-poll", "--core-sharing", "shared", "--engine",
                engine.name().toLowerCase(Locale.ROOT), "--min-bytes", "8", "--max-bytes", "1K", "--budget", "0.02",
                "--warmup", "0.01");
        // Rank 0, a child JVM, prints the header: busy-polling and shared cores only if the options reached it.
        assertTrue(output.contains("float32 sum, busy-polling, ranks share cores"), output);
        assertEquals(8, rows(output, false).size(), output);
        assertTrue(output.contains("summary: 8 results, all checks ok"), output);
    }

    @Test
    void ranksInNetworkNamespacesStayUnderTheBoundAndLeaveNothingBehind() throws Exception {
        String why = NetnsTopology.unavailableReason();
        assumeTrue(why == null, why);
        String output = run(0, "allreduce", "--netns", "--ranks", "2", "--rate-mbit", "200", "--min-bytes", "1M",
                "--max-bytes", "2M", "--budget", "0.05", "--warmup", "0.02");
        assertTrue(output.contains("bound: busbw <= B = 0.200 Gbit/s"), output);
        List<String[]> rows = rows(output, true);
        assertEquals(2, rows.size(), output);
        for (String[] row : rows) {
            // tbf's burst (100 kB at this rate) lets a rank that waited send a little faster than the rate;
            // unshaped, veth would carry these sizes at many times it.
            assertTrue(Double.parseDouble(row[8]) < 1.5, () -> "busbw/B " + Arrays.toString(row));
        }
        Matcher name = NAMESPACES.matcher(output);
        assertTrue(name.find(), output);
        Process list = new ProcessBuilder("ip", "netns", "list").redirectErrorStream(true).start();
        String left = new String(list.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(list.waitFor(10, TimeUnit.SECONDS));
        assertFalse(left.contains(name.group(1)), left);
    }

    /**
     * Two ranks in this process, in rank mode on NIO: rank 0 prints one RESULT line per operation and size,
     * fields in the header's order, figures that agree with each other; rank 1 prints nothing.
     */
    @Test
    void rankModePrintsTheResultLinesTheBenchmarkScriptReads() throws Exception {
        int port = freePort();
        CompletableFuture<String> rank1 = CompletableFuture.supplyAsync(() -> rankMode(1, port));
        String rank0 = rankMode(0, port);
        assertEquals("", rank1.get(60, TimeUnit.SECONDS).strip());
        List<String> results = rank0.lines().filter(l -> l.startsWith("RESULT ")).toList();
        assertEquals(3 * 2, results.size(), rank0);
        for (String line : results) {
            List<String> fields = Arrays.asList(line.split("\\s+"));
            assertEquals(FIELDS, fields.subList(1, fields.size()).stream().map(f -> f.substring(0, f.indexOf('='))).toList(),
                    line);
            assertEquals("zcnet", field(line, "impl"));
            assertTrue(OPS.contains(field(line, "op")), line);
            assertEquals("2", field(line, "ranks"));
            assertTrue(Set.of("1024", "2048").contains(field(line, "bytes")), line);
            long iters = Long.parseLong(field(line, "iters"));
            assertTrue(iters >= 2 && iters <= 50, line);
            double avg = Double.parseDouble(field(line, "avg_us"));
            assertTrue(Double.parseDouble(field(line, "min_us")) <= avg, line);
            assertTrue(Double.parseDouble(field(line, "p50_us")) <= Double.parseDouble(field(line, "max_us")), line);
            assertTrue(Double.parseDouble(field(line, "cpu_us")) > 0, line);
            double algbw = Double.parseDouble(field(line, "algbw_gbps"));
            assertEquals(Long.parseLong(field(line, "bytes")) * 8 / avg / 1e3, algbw, algbw * 0.01 + 1e-4, line);
            double factor = field(line, "op").equals("allreduce") ? 1 : 0.5; // 2(n-1)/n, (n-1)/n for n = 2
            assertEquals(algbw * factor, Double.parseDouble(field(line, "busbw_gbps")), algbw * 0.01 + 1e-4, line);
            assertEquals("ok", field(line, "check"));
        }
    }

    /** {@code mpirun -np 2 zcnet allreduce --from-env}: Open MPI starts the ranks, ZCNET_STORE names the store. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void ranksThatMpirunStartsTakeRankSizeAndStoreFromItsEnvironment(EventLoopConfig.Choice engine) throws Exception {
        assumeUsable(engine);
        String missing = DebianPackages.ensure(() -> Files.isExecutable(Path.of("/usr/bin/mpirun")), "openmpi-bin");
        assumeTrue(missing == null, () -> "Open MPI's mpirun: " + missing);
        List<String> command = new ArrayList<>(List.of("mpirun", "-np", "2", "--oversubscribe", "--allow-run-as-root",
                "-x", "ZCNET_STORE"));
        command.addAll(RankProcesses.javaCommand());
        command.addAll(List.of("allreduce", "--from-env", "--ops", "allreduce,broadcast", "--min-bytes", "1K",
                "--max-bytes", "4K", "--budget", "0.02", "--warmup", "0.01", "--engine",
                engine.name().toLowerCase(Locale.ROOT)));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("ZCNET_STORE", "127.0.0.1:" + freePort());
        Process mpirun = builder.start();
        CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> {
            try {
                return new String(mpirun.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return e.toString();
            }
        });
        try {
            assertTrue(mpirun.waitFor(90, TimeUnit.SECONDS), "mpirun still runs after 90 s");
            String said = output.get(10, TimeUnit.SECONDS);
            assertEquals(0, mpirun.exitValue(), said);
            assertTrue(said.contains("# zcnet allreduce: 2 ranks, engine " + engine.name().toLowerCase(Locale.ROOT)
                    + ", store 127.0.0.1:"), said);
            assertTrue(said.contains("zcnet: Open MPI launch: rank 1 of 2, local rank 1"), said);
            long ok = said.lines().filter(l -> l.startsWith("RESULT ") && field(l, "check").equals("ok")).count();
            assertEquals(2 * 3, ok, said); // two operations at 1K, 2K and 4K
        } finally {
            mpirun.descendants().forEach(ProcessHandle::destroyForcibly);
            mpirun.destroyForcibly();
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void localRanksAllreduceThroughTheAggregatorGiven(EventLoopConfig.Choice engine) throws Exception {
        assumeUsable(engine);
        try (Aggregator aggregator = Aggregator.start(new InetSocketAddress("127.0.0.1", 0),
                AggregatorConfig.defaults().withEngine(engine).withOpen(true))) {
            String at = "127.0.0.1:" + aggregator.address().getPort();
            String output = run(0, "allreduce", "--ranks", "2", "--engine", engine.name().toLowerCase(Locale.ROOT),
                    "--aggregator", at, "--job", "3", "--min-bytes", "64K", "--max-bytes", "1M", "--budget", "0.02",
                    "--warmup", "0.01");
            assertTrue(output.contains(", aggregator " + at + " job 3"), output);
            assertEquals(5, rows(output, false).size(), output);
            assertTrue(output.contains("all checks ok"), output);
            // 64K to 1M in 256 KiB chunks: each run of a size is whole chunks through the aggregator.
            assertTrue(aggregator.statistics().chunks() >= 1 + 1 + 1 + 2 + 4, aggregator.statistics().toString());
            assertEquals(0, aggregator.statistics().failed());
        }
        assertTrue(run(1, "allreduce", "--aggregator", "nohost").contains("--aggregator needs HOST:PORT"));
    }

    @Test
    void badOptionsFailWithAMessageBeforeAnyRankStarts() {
        String[] rank = {"--ranks", "2", "--peers", "127.0.0.1,127.0.0.1", "--port", "7100"};
        assertTrue(run(1, with(rank, "allreduce", "--rank", "2")).contains("--rank must be 0..--ranks-1 (1), got 2"));
        assertTrue(run(1, "allreduce", "--rank", "0", "--ranks", "3", "--peers", "127.0.0.1", "--port", "7100")
                .contains("one address per rank (3), got 1 addresses"));
        assertTrue(run(1, with(rank, "allreduce", "--rank", "0", "--netns")).contains("does not go with --rank"));
        assertTrue(run(1, "allreduce", "--peers", "127.0.0.1").contains("--peers goes with --rank"));
        assertTrue(run(1, "allreduce", "--from-env", "--port", "7100").contains("--from-env takes the rank, the size and"
                + " the store from the launcher: it does not go with --rank, --ranks, --peers, --port or --netns"));
        assertTrue(run(1, "allreduce", "--jit-warmup", "-1").contains("--jit-warmup must be in [0, 3600] seconds"));
        assertTrue(run(1, "allreduce", "--ops", "allreduce,scatter").contains("no operation 'scatter'"));
        assertTrue(run(1, "allreduce", "--core-sharing", "sometimes")
                .contains("--core-sharing must be detect, shared or dedicated, got 'sometimes'"));
        assertTrue(run(1, "allreduce", "--ops", "allgather:tree").contains("allgather has no tree algorithm"));
        assertTrue(run(1, "allreduce", "--ops", "allreduce,reduce_scatter", "--algorithm", "halving_doubling")
                .contains("reduce_scatter has no halving_doubling algorithm; it takes auto or ring"));
        assertTrue(run(1, "allreduce", "--algorithm", "fastest").contains("no algorithm 'fastest'"));
        assertTrue(run(1, "allreduce", "--min-bytes", "1M", "--max-bytes", "1K").contains("need --min-bytes <= --max-bytes"));
        assertTrue(run(1, "allreduce", "--min-bytes", "lots").contains("is not a byte count"));
        assertTrue(run(1, "allreduce", "--min-iters", "0").contains("need 1 <= --min-iters"));
        assertTrue(run(1, "allreduce", "--budget", "0").contains("--budget must be"));
        assertTrue(run(1, "allreduce", "--ranks", "0").contains("--ranks must be 1..1024"));
        assertTrue(run(1, "allreduce", "--engine", "quantum").contains("use auto, uring or nio"));
        assertTrue(run(2, "allreduce", "--ranks", "four").contains("four"));
    }

    /**
     * Rank 0 cannot host the store where another program listens; rank 1 waits for that program's answer
     * until it is killed: the run fails with rank 0's reason, and no rank is left behind.
     */
    @Test
    void aRankThatFailsEndsTheRunAndTheOthersAreKilled() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            long before = ProcessHandle.current().children().count();
            String output = run(1, "allreduce", "--ranks", "2", "--port", String.valueOf(taken.getLocalPort()),
                    "--engine", "nio");
            assertTrue(output.contains("rank 0: zcnet allreduce: rank 0: "), output);
            assertTrue(output.contains("rank 0 exited with 1"), output);
            assertTrue(output.contains("summary: no results"), output);
            assertEquals(before, ProcessHandle.current().children().filter(ProcessHandle::isAlive).count());
        }
    }

    @Test
    void netnsWithoutRootSaysWhatItNeeds() {
        String why = NetnsTopology.unavailableReason();
        assumeTrue(why != null, "this process could run --netns: root, with iproute2");
        assertTrue(run(1, "allreduce", "--netns").contains(why));
    }

    @Test
    void inputsAreFilledAgainBeforeAllreduceSumsLeaveTheExactFloats() {
        assertEquals(16, Workload.refillEvery(1));
        assertEquals(16, Workload.refillEvery(2)); // 22 * 2^15 < 2^24
        assertEquals(10, Workload.refillEvery(4)); // 44 * 4^9 = 11534336 < 2^24 <= 44 * 4^10
        assertEquals(1, Workload.refillEvery(2048)); // 22528 * 2048 > 2^24
    }

    /** The table rows of a local or --netns run: op algo size iters avg p50 algbw busbw [busbw/B] check. */
    private static List<String[]> rows(String output, boolean bound) {
        List<String[]> rows = new ArrayList<>();
        for (String line : output.lines().toList()) {
            String[] f = line.trim().split("\\s+");
            if (!OPS.contains(f[0])) {
                continue;
            }
            assertEquals(bound ? 10 : 9, f.length, line);
            for (int i = 3; i < f.length - 1; i++) {
                Double.parseDouble(f[i]);
            }
            assertEquals("ok", f[f.length - 1], line);
            rows.add(f);
        }
        return rows;
    }

    private static String rankMode(int rank, int port) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        var cli = ZcnetCli.commandLine();
        cli.setOut(new PrintWriter(out));
        cli.setErr(new PrintWriter(err));
        int exit = cli.execute("allreduce", "--rank", String.valueOf(rank), "--ranks", "2", "--peers",
                "127.0.0.1,127.0.0.1", "--port", String.valueOf(port), "--ops", "allreduce,allgather,reduce_scatter",
                "--min-bytes", "1024", "--max-bytes", "2048", "--budget", "0.02", "--warmup", "0.01", "--min-iters", "2",
                "--max-iters", "50", "--engine", "nio");
        assertEquals(0, exit, () -> "rank " + rank + ": " + out + err);
        return out.toString();
    }

    /** As bench/collectives.sh's awk field(): the value after "key=" among the whitespace-separated fields. */
    private static String field(String line, String key) {
        for (String f : line.split("\\s+")) {
            if (f.startsWith(key + "=")) {
                return f.substring(key.length() + 1);
            }
        }
        return "";
    }

    private static String[] with(String[] tail, String... head) {
        String[] all = Arrays.copyOf(head, head.length + tail.length);
        System.arraycopy(tail, 0, all, head.length, tail.length);
        return all;
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
