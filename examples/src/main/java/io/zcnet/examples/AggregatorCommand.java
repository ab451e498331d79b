package io.zcnet.examples;

import io.zcnet.collective.Aggregator;
import io.zcnet.collective.AggregatorConfig;
import io.zcnet.collective.DataType;
import io.zcnet.collective.ReduceOp;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code zcnet aggregator}: a long-running {@link Aggregator}, the aggregation node of network-assisted allreduce
 * (docs/wire-format.md, section 20), for {@code zcnet allreduce --aggregator} and any program whose communicator
 * is configured with one. It prints the address it listens on, a line per {@code --report} seconds with what it
 * did, and runs until it is stopped (SIGINT, SIGTERM), when it closes every job's queue pairs.
 */
@Command(name = "aggregator", mixinStandardHelpOptions = true,
        description = {"An aggregation node: sums the chunks of allreduces of any number of jobs and",
                "returns the sum to every rank (zcnet allreduce --aggregator ADDR:PORT). Runs until",
                "stopped. Without --job any job number may join, without a secret (--open)."})
final class AggregatorCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--listen", required = true, paramLabel = "[ADDR:]PORT",
            description = "Where ranks connect (PORT alone: every address; port 0: any free port).")
    String listen;

    @Option(names = "--job", paramLabel = "ID:SECRET",
            description = "A job taken, its number (0..65535) and secret in hex (16..64 bytes), as its ranks hold"
                    + " it (ZCNET_JOB_SECRET). Repeatable.")
    List<String> jobs = List.of();

    @Option(names = "--open", description = "Take job numbers without a secret too (the default when no --job).")
    boolean open;

    @Option(names = "--max-jobs", defaultValue = "64", paramLabel = "N", description = "Jobs at once. Default: ${DEFAULT-VALUE}.")
    int maxJobs;

    @Option(names = "--slots", defaultValue = "16", paramLabel = "N",
            description = "Slots of one job at most. Default: ${DEFAULT-VALUE}.")
    int slots;

    @Option(names = "--chunk", defaultValue = "1M", paramLabel = "BYTES",
            description = "Bytes per chunk at most (a multiple of 64). Default: ${DEFAULT-VALUE}.")
    String chunk;

    @Option(names = "--job-memory", defaultValue = "64M", paramLabel = "BYTES",
            description = "Memory of one job at most. Default: ${DEFAULT-VALUE}.")
    String jobMemory;

    @Option(names = "--memory", defaultValue = "1G", paramLabel = "BYTES",
            description = "Memory of all jobs at most. Default: ${DEFAULT-VALUE}.")
    String memory;

    @Option(names = "--types", defaultValue = "float,double,int,long,bfloat16,float16", paramLabel = "T,...", split = ",",
            description = "Element types reduced; the ranks reduce others on their hosts. Default: all.")
    List<String> types;

    @Option(names = "--reductions", defaultValue = "sum,prod,min,max", paramLabel = "OP,...", split = ",",
            description = "Reductions applied. Default: all.")
    List<String> reductions;

    @Option(names = "--report", defaultValue = "10", paramLabel = "S",
            description = "Seconds between the lines saying what it did; 0: none. Default: ${DEFAULT-VALUE}.")
    int report;

    @Option(names = "--busy-poll", description = "The loop thread polls and yields the core between polls instead of"
            + " sleeping: a small allreduce's chunks then wait for no wake-up here (as its ranks' --busy-poll), and"
            + " the thread takes a core throughout.")
    boolean busyPoll;

    @Mixin
    EngineOption engine;

    @Override
    public Integer call() throws Exception {
        AggregatorConfig config = AggregatorConfig.defaults().withEngine(engine.choice()).withBusyPoll(busyPoll)
                .withQuotas(maxJobs, slots, (int) BulkCommand.byteCount("--chunk", chunk),
                        BulkCommand.byteCount("--job-memory", jobMemory), BulkCommand.byteCount("--memory", memory))
                .withOperations(parse(types, DataType.class, "--types"), parse(reductions, ReduceOp.class, "--reductions"))
                .withOpen(open || jobs.isEmpty());
        for (String job : jobs) {
            int colon = job.indexOf(':');
            if (colon <= 0) {
                throw new IllegalArgumentException("--job needs ID:SECRET, got '" + job + "'");
            }
            byte[] secret;
            try {
                secret = HexFormat.of().parseHex(job.substring(colon + 1));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--job " + job.substring(0, colon) + ": the secret is not hex");
            }
            config = config.withJob(Integer.parseInt(job.substring(0, colon)), secret);
        }
        PrintWriter out = spec.commandLine().getOut();
        InetSocketAddress address = BulkCommand.listenAddress(listen);
        CountDownLatch stopped = new CountDownLatch(1);
        try (Aggregator aggregator = Aggregator.start(address, config)) {
            Thread hook = Thread.ofPlatform().unstarted(() -> {
                aggregator.close();
                stopped.countDown();
            });
            Runtime.getRuntime().addShutdownHook(hook);
            out.println("zcnet aggregator: listening on " + aggregator.address().getAddress().getHostAddress() + ":"
                    + aggregator.address().getPort() + " (engine " + aggregator.engine().name().toLowerCase(Locale.ROOT)
                    + "), " + (config.secrets().isEmpty() ? "" : config.secrets().size() + " job(s) with a secret, ")
                    + (config.open() ? "open to jobs without a secret" : "no job without a secret"));
            out.flush();
            while (!stopped.await(report > 0 ? report : Integer.MAX_VALUE, java.util.concurrent.TimeUnit.SECONDS)) {
                Aggregator.Statistics s = aggregator.statistics();
                out.println("zcnet aggregator: " + s.jobs() + " job(s), " + s.connections() + " connection(s), "
                        + s.chunks() + " chunks reduced, " + s.duplicates() + " duplicates dropped, " + s.refused()
                        + " refused, " + s.failed() + " job(s) failed");
                out.flush();
            }
        }
        return 0;
    }

    private static <E extends Enum<E>> Set<E> parse(List<String> names, Class<E> type, String option) {
        Set<E> set = EnumSet.noneOf(type);
        for (String n : names) {
            try {
                set.add(Enum.valueOf(type, n.strip().toUpperCase(Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(option + ": unknown '" + n + "', one of "
                        + EnumSet.allOf(type).toString().toLowerCase(Locale.ROOT));
            }
        }
        return set;
    }
}
