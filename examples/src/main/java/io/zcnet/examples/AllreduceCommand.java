package io.zcnet.examples;

import io.zcnet.collective.Algorithm;
import io.zcnet.collective.Communicator;
import io.zcnet.collective.CommunicatorConfig;
import io.zcnet.collective.CoreSharing;
import io.zcnet.collective.LaunchEnvironment;
import io.zcnet.qp.QpConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code zcnet allreduce}: the collectives benchmark (issue 9). Three ways to run it:
 * <ul>
 *   <li>rank mode ({@code --rank}): this process is one rank of N, as bench/collectives.sh starts them
 *   (its header fixes the options and the RESULT lines); rank 0 hosts the rendezvous store at the first
 *   of {@code --peers} and {@code --port}, every rank accepts its queue pairs on its own address in
 *   {@code --peers}; {@link RankBenchmark} runs and times the operations. With {@code --from-env} in place
 *   of those four, the launcher that started the process (mpirun, srun, torchrun) says the rank, the size
 *   and the store ({@link Communicator#fromEnvironment});</li>
 *   <li>local (no {@code --rank}): N ranks as child JVMs on 127.0.0.1 ({@link RankProcesses}), their
 *   RESULT lines shown as a table ({@link ResultTable});</li>
 *   <li>{@code --netns}: the same, each rank in a network namespace of its own on a bridge, every link
 *   shaped to {@code --rate-mbit} ({@link NetnsTopology}), so busbw has a known bound.</li>
 * </ul>
 */
@Command(name = "allreduce", mixinStandardHelpOptions = true,
        description = {"Collective operations among N ranks (allreduce; --ops for the others): per",
                "size the time, the algorithm and bus bandwidth as nccl-tests define them,",
                "and a check of every result. No options: 4 ranks as processes on 127.0.0.1.",
                "--netns (root): each rank in a network namespace, its link shaped to",
                "--rate-mbit, so that busbw <= B. --rank: one rank of bench/collectives.sh's.",
                "--from-env: one rank of those mpirun, srun or torchrun starts."})
final class AllreduceCommand implements Callable<Integer> {
    private static final int DEFAULT_RANKS = 4;
    private static final int NETNS_PORT = 7100;
    private static final long MAX_BYTES = 4L << 30;
    private static final long MAX_ITERS = 100_000_000;
    /** How long the other ranks may take to fail by themselves once one has. */
    private static final Duration FAILURE_GRACE = Duration.ofSeconds(5);

    @Spec
    CommandSpec spec;

    @Option(names = "--ranks", paramLabel = "N", description = "Ranks in all. Default: " + DEFAULT_RANKS + ".")
    Integer ranks;

    @Option(names = {"--ops", "--op"}, defaultValue = "allreduce", paramLabel = "OP[:ALGO],...",
            description = "Operations, in order: allreduce, allgather, reduce_scatter, broadcast, reduce, alltoall,"
                    + " barrier; each with :ALGO for its algorithm. Default: ${DEFAULT-VALUE}.")
    String ops;

    @Option(names = "--algorithm", defaultValue = "auto", paramLabel = "NAME",
            description = "Algorithm of the operations without :ALGO: auto (by size), ring, halving_doubling, tree"
                    + " or direct, where the operation has it. Default: ${DEFAULT-VALUE}.")
    String algorithm;

    @Option(names = "--min-bytes", defaultValue = "1K", paramLabel = "BYTES",
            description = "Smallest size (K, M, G: binary multiples); sizes double from it. Default: ${DEFAULT-VALUE}.")
    String minBytes;

    @Option(names = "--max-bytes", defaultValue = "64M", paramLabel = "BYTES",
            description = "Largest size. Default: ${DEFAULT-VALUE}.")
    String maxBytes;

    @Option(names = "--budget", defaultValue = "0.1", paramLabel = "S",
            description = "Seconds of timed operations per size (the slowest rank's). Default: ${DEFAULT-VALUE}.")
    double budget;

    @Option(names = "--warmup", defaultValue = "0.05", paramLabel = "S",
            description = "Seconds of warm-up per size; its first operation, checked, always runs. Default: ${DEFAULT-VALUE}.")
    double warmup;

    @Option(names = "--jit-warmup", defaultValue = "0", paramLabel = "S",
            description = "Seconds, before the first size, of untimed operations of every kind asked for at sizes up"
                    + " to " + RankBenchmark.JIT_WARMUP_MAX_LABEL + ", so the JIT has compiled both the small- and the"
                    + " large-message paths before anything is timed. Default: ${DEFAULT-VALUE}.")
    double jitWarmup;

    @Option(names = "--min-iters", defaultValue = "1", paramLabel = "N",
            description = "Timed operations per size at least. Default: ${DEFAULT-VALUE}.")
    long minIters;

    @Option(names = "--max-iters", defaultValue = "1000", paramLabel = "N",
            description = "Timed operations per size at most. Default: ${DEFAULT-VALUE}.")
    long maxIters;

    @Option(names = "--subflows", defaultValue = "1", paramLabel = "N",
            description = "TCP connections per queue pair. Default: ${DEFAULT-VALUE}.")
    int subflows;

    @Option(names = "--slots", paramLabel = "N",
            description = "Staging slots per peer and direction (CommunicatorConfig.withSlots): how many messages"
                    + " to one peer may be in flight. Default: the configuration's.")
    Integer slots;

    @Mixin
    EngineOption engine;

    @Option(names = "--busy-poll",
            description = "Every rank's threads poll and yield the core instead of sleeping, as MPI's progress"
                    + " engines do: the lowest small-message latency, every core busy throughout.")
    boolean busyPoll;

    @Option(names = "--core-sharing", defaultValue = "detect", paramLabel = "detect|shared|dedicated",
            description = "Whether the ranks compete for CPU cores, which decides how small allreduces run: detect"
                    + " (more ranks on one kernel than it has processors), shared (ranks fold in pairs first: fewer"
                    + " messages, one step more) or dedicated. Default: ${DEFAULT-VALUE}.")
    String coreSharing;

    @Option(names = "--netns",
            description = "Run each rank in a network namespace of its own, joined by a bridge, every link shaped"
                    + " with tc tbf to --rate-mbit both ways (needs root and iproute2).")
    boolean netns;

    @Option(names = "--rate-mbit", defaultValue = "1000", paramLabel = "R",
            description = "With --netns: every rank's link rate, Mbit/s, each way: the bound B. Default: ${DEFAULT-VALUE}.")
    int rateMbit;

    @Option(names = "--rank", paramLabel = "K",
            description = "Rank mode: be rank K of --ranks, with --peers and --port (as bench/collectives.sh runs it).")
    Integer rank;

    @Option(names = "--peers", paramLabel = "ADDR", split = ",",
            description = "Rank mode: every rank's address, in rank order; rank 0's hosts the store.")
    List<String> peers;

    @Option(names = "--port", paramLabel = "P",
            description = "The rendezvous store's port on rank 0's address. Default: local, a free one; --netns, "
                    + NETNS_PORT + ".")
    Integer port;

    @Option(names = "--from-env",
            description = "Rank mode, with rank, size and store from the launcher that started this process instead of"
                    + " --rank, --ranks, --peers and --port: mpirun (with ZCNET_STORE=host:port), srun, torchrun"
                    + " (docs/collectives.md, \"Launching ranks\").")
    boolean fromEnv;

    /** Set by this command on the ranks it starts: they halt when the process that started them ends. */
    @Option(names = "--aggregator", paramLabel = "HOST:PORT", split = ",",
            description = "Allreduce through an aggregation node (zcnet aggregator), the closest of these; the hosts"
                    + " reduce when it cannot (and finish when it fails).")
    List<String> aggregators;

    @Option(names = "--job", defaultValue = "1", paramLabel = "N",
            description = "The job number at the aggregator, the same on every rank. Default: ${DEFAULT-VALUE}.")
    int job;

    @Option(names = "--parent-pid", hidden = true)
    Long parentPid;

    @Override
    public Integer call() throws Exception {
        RankBenchmark.Plan plan = plan();
        int n = ranks == null ? DEFAULT_RANKS : ranks;
        if (n < 1 || n > 1024) {
            throw new IllegalArgumentException("--ranks must be 1..1024, got " + n);
        }
        if (port != null && (port < 1 || port > 65535)) {
            throw new IllegalArgumentException("--port must be 1..65535, got " + port);
        }
        if (subflows < 1 || subflows > QpConfig.MAX_SUBFLOWS) {
            throw new IllegalArgumentException("--subflows must be 1.." + QpConfig.MAX_SUBFLOWS + ", got " + subflows);
        }
        engine.choice(); // refuses an unknown engine here, before any rank starts
        aggregatorAddresses(); // and an aggregator address that does not resolve
        sharing();
        if (fromEnv) {
            return environmentMode(plan);
        }
        if (rank != null) {
            return rankMode(plan, n);
        }
        if (peers != null) {
            throw new IllegalArgumentException("--peers goes with --rank: without it, this command starts the ranks itself");
        }
        if (netns) {
            if (rateMbit < 1) {
                throw new IllegalArgumentException("--rate-mbit must be at least 1, got " + rateMbit);
            }
            String why = NetnsTopology.unavailableReason();
            if (why != null) {
                return fail(why);
            }
        }
        return spawn(plan, n);
    }

    // ---------------------------------------------------------------- rank mode

    private int rankMode(RankBenchmark.Plan plan, int n) {
        if (netns) {
            throw new IllegalArgumentException("--netns starts the ranks itself: it does not go with --rank");
        }
        if (rank < 0 || rank >= n) {
            throw new IllegalArgumentException("--rank must be 0..--ranks-1 (" + (n - 1) + "), got " + rank);
        }
        if (peers == null || peers.size() != n) {
            throw new IllegalArgumentException("--rank needs --peers with one address per rank (" + n + "), got "
                    + (peers == null ? "none" : peers.size() + " addresses"));
        }
        if (port == null) {
            throw new IllegalArgumentException("--rank needs --port, where rank 0 hosts the rendezvous store");
        }
        if (parentPid != null) {
            haltWithParent(parentPid);
        }
        InetSocketAddress store = new InetSocketAddress(address(peers.get(0)), port);
        return join(plan, () -> Communicator.rendezvous(rank, n, store, config().withListenAddress(address(peers.get(rank)))),
                store.getAddress().getHostAddress() + ":" + port);
    }

    /** Rank mode as the launcher's variables say; every rank listens where it reaches the store from. */
    private int environmentMode(RankBenchmark.Plan plan) {
        if (rank != null || ranks != null || peers != null || port != null || netns) {
            throw new IllegalArgumentException("--from-env takes the rank, the size and the store from the launcher:"
                    + " it does not go with --rank, --ranks, --peers, --port or --netns");
        }
        LaunchEnvironment launch = LaunchEnvironment.detect(System.getenv());
        return join(plan, () -> Communicator.fromEnvironment(config()),
                launch.store().getHostString() + ":" + launch.store().getPort() + " (" + launch.launcher() + ")");
    }

    private CommunicatorConfig config() {
        CommunicatorConfig defaults = CommunicatorConfig.defaults();
        CommunicatorConfig config = defaults.withEngine(engine.choice())
                .withQueuePairs(defaults.queuePairs().withSubflows(subflows)).withBusyPoll(busyPoll).withCoreSharing(sharing())
                .withAggregators(job, aggregatorAddresses().toArray(InetSocketAddress[]::new));
        return slots == null ? config : config.withSlots(slots, config.slotBytes());
    }

    private List<InetSocketAddress> aggregatorAddresses() {
        return aggregators == null ? List.of()
                : aggregators.stream().map(a -> BulkCommand.hostAndPort("--aggregator", a.strip())).toList();
    }

    /** How a rank joins: {@link Communicator#rendezvous} or {@link Communicator#fromEnvironment}. */
    private interface Join {
        Communicator join() throws IOException;
    }

    /** Joins, then rank 0 says what it joined and every rank runs the plan. */
    private int join(RankBenchmark.Plan plan, Join how, String store) {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        int me = rank == null ? -1 : rank;
        try (Communicator comm = how.join()) {
            me = comm.rank();
            if (me == 0) {
                out.println("# zcnet allreduce: " + comm.size() + " ranks, engine "
                        + comm.engine().name().toLowerCase(Locale.ROOT) + ", store " + store + ", " + subflows
                        + " subflow(s) per queue pair, float32 sum" + (busyPoll ? ", busy-polling" : "")
                        + (aggregators == null ? "" : ", aggregator " + String.join(",", aggregators) + " job " + job)
                        + (comm.coresShared() ? ", ranks share cores" : ""));
                out.flush();
            }
            return RankBenchmark.run(comm, plan, out, err) ? 0 : 1;
        } catch (IOException e) {
            return fail((me < 0 ? "" : "rank " + me + ": ") + e.getMessage());
        }
    }

    /** A rank started by this command ends with the process that started it, however that one ends. */
    private static void haltWithParent(long pid) {
        ProcessHandle.of(pid).ifPresentOrElse(
                parent -> parent.onExit().thenRun(() -> Runtime.getRuntime().halt(3)),
                () -> Runtime.getRuntime().halt(3));
    }

    private static InetAddress address(String text) {
        try {
            return InetAddress.getByName(text.trim());
        } catch (IOException e) {
            throw new IllegalArgumentException("--peers: cannot resolve '" + text + "'");
        }
    }

    // ---------------------------------------------------------------- local and --netns

    /** Starts the ranks (in namespaces with --netns), shows their results as a table, and cleans up. */
    private int spawn(RankBenchmark.Plan plan, int n) throws IOException, InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        ResultTable table = new ResultTable(netns ? rateMbit / 1000.0 : 0);
        RankProcesses processes = new RankProcesses(out, err, line -> {
            CollectiveResult r = CollectiveResult.parse(line);
            synchronized (out) {
                if (r != null && table.isEmpty()) { // after what rank 0 says first, its engine
                    out.println(table.header());
                }
                out.println(r == null ? line : table.row(r));
                out.flush();
            }
        });
        NetnsTopology topology = netns ? NetnsTopology.of(n, rateMbit) : null;
        List<AutoCloseable> cleanup = topology == null ? List.of(processes) : List.of(processes, topology);
        AtomicBoolean stopped = new AtomicBoolean();
        Thread hook = Thread.ofPlatform().unstarted(() -> {
            stopped.set(true);
            closeAll(cleanup);
            err.println("zcnet allreduce: stopped; the ranks were killed" + (netns ? ", the namespaces deleted" : ""));
            err.flush();
        });
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            List<String> addresses = new ArrayList<>();
            if (topology != null) {
                topology.build();
                for (int k = 0; k < n; k++) {
                    addresses.add(topology.address(k));
                }
                out.println("zcnet allreduce: " + n + " ranks in network namespaces " + topology.namespace(0) + ".."
                        + (n - 1) + " on a bridge in " + topology.switchNamespace() + ", every link " + topology.shaping()
                        + " both ways; bound: busbw <= B = " + String.format(Locale.ROOT, "%.3f", rateMbit / 1000.0)
                        + " Gbit/s");
            } else {
                for (int k = 0; k < n; k++) {
                    addresses.add("127.0.0.1");
                }
                out.println("zcnet allreduce: " + n + " ranks as processes on 127.0.0.1");
            }
            int storePort = port != null ? port : netns ? NETNS_PORT : freePort();
            out.flush();
            for (int k = 0; k < n; k++) {
                List<String> command = new ArrayList<>(topology != null ? topology.exec(k) : List.of());
                command.addAll(RankProcesses.javaCommand());
                command.addAll(rankArguments(plan, k, n, addresses, storePort));
                processes.start(k, command);
            }
            List<String> failures = processes.await(FAILURE_GRACE);
            if (stopped.get()) { // by a signal: the hook says so
                return 130;
            }
            out.println(table.summary());
            out.flush();
            if (!failures.isEmpty()) {
                return fail(String.join("; ", failures));
            }
            return table.allOk() ? 0 : 1;
        } finally {
            closeAll(cleanup);
            Runtime.getRuntime().removeShutdownHook(hook);
        }
    }

    /** Kills the ranks, then deletes the namespaces they ran in. */
    private static void closeAll(List<AutoCloseable> cleanup) {
        for (AutoCloseable c : cleanup) {
            try {
                c.close();
            } catch (Exception e) {
                System.err.println("zcnet allreduce: cleaning up: " + e.getMessage());
            }
        }
    }

    private List<String> rankArguments(RankBenchmark.Plan plan, int k, int n, List<String> addresses, int storePort) {
        List<String> items = plan.items().stream().map(RankBenchmark.Item::label).toList();
        List<String> args = new ArrayList<>(List.of("allreduce", "--rank", String.valueOf(k), "--ranks", String.valueOf(n), "--peers",
                String.join(",", addresses), "--port", String.valueOf(storePort), "--ops", String.join(",", items),
                "--min-bytes", String.valueOf(plan.minBytes()), "--max-bytes", String.valueOf(plan.maxBytes()),
                "--budget", String.valueOf(plan.budget()), "--warmup", String.valueOf(plan.warmup()),
                "--jit-warmup", String.valueOf(plan.jitWarmup()),
                "--min-iters", String.valueOf(plan.minIters()), "--max-iters", String.valueOf(plan.maxIters()),
                "--engine", engine.engine, "--subflows", String.valueOf(subflows), "--core-sharing", coreSharing,
                "--parent-pid", String.valueOf(ProcessHandle.current().pid())));
        if (busyPoll) {
            args.add("--busy-poll");
        }
        if (aggregators != null) {
            args.addAll(List.of("--aggregator", String.join(",", aggregators), "--job", String.valueOf(job)));
        }
        return args;
    }

    private CoreSharing sharing() {
        for (CoreSharing s : CoreSharing.values()) {
            if (s.name().equalsIgnoreCase(coreSharing)) {
                return s;
            }
        }
        throw new IllegalArgumentException("--core-sharing must be detect, shared or dedicated, got '" + coreSharing + "'");
    }

    /** A port nobody listens on now, for rank 0's store (another program could still take it first). */
    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    // ---------------------------------------------------------------- options

    private RankBenchmark.Plan plan() {
        long min = BulkCommand.byteCount("--min-bytes", minBytes);
        long max = BulkCommand.byteCount("--max-bytes", maxBytes);
        if (min > max || max > MAX_BYTES) {
            throw new IllegalArgumentException("need --min-bytes <= --max-bytes <= " + ResultTable.size(MAX_BYTES)
                    + ", got " + minBytes + " and " + maxBytes);
        }
        if (!(budget > 0) || !(warmup >= 0) || budget > 3600 || warmup > 3600) {
            throw new IllegalArgumentException("--budget must be in (0, 3600] and --warmup in [0, 3600] seconds, got "
                    + budget + " and " + warmup);
        }
        if (!(jitWarmup >= 0) || jitWarmup > 3600) {
            throw new IllegalArgumentException("--jit-warmup must be in [0, 3600] seconds, got " + jitWarmup);
        }
        if (minIters < 1 || maxIters < minIters || maxIters > MAX_ITERS) {
            throw new IllegalArgumentException("need 1 <= --min-iters <= --max-iters <= " + MAX_ITERS + ", got "
                    + minIters + " and " + maxIters);
        }
        Algorithm fallback = CollectiveOp.parseAlgorithm(algorithm);
        List<RankBenchmark.Item> items = new ArrayList<>();
        for (String item : ops.split(",")) {
            int colon = item.indexOf(':');
            CollectiveOp op = CollectiveOp.parse(colon < 0 ? item : item.substring(0, colon));
            Algorithm a = colon < 0 ? fallback : CollectiveOp.parseAlgorithm(item.substring(colon + 1));
            op.resolve(a); // refuses an algorithm the operation does not have, before any rank starts
            items.add(new RankBenchmark.Item(op, a));
        }
        return new RankBenchmark.Plan(items, min, max, budget, warmup, jitWarmup, minIters, maxIters);
    }

    private int fail(String why) {
        PrintWriter err = spec.commandLine().getErr();
        err.println("zcnet allreduce: " + why);
        err.flush();
        return 1;
    }
}
