package io.zcnet.examples;

import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.QpListener;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.SubflowPath;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code zcnet bulk}: moves data over one queue pair as fast as it goes and prints one result line (see
 * {@link BulkResult#line()}): the rate, each subflow's share, the resends and, with {@code --verify}, whether
 * every message arrived intact. Without {@code --listen} or {@code --connect} both ends run in this process
 * on loopback, each on a context (an event-loop thread) of its own; with them, in two processes.
 *
 * <h2>The exchange</h2>
 * The client decides everything; four control messages, SENDs with immediate data naming them (layouts in
 * {@link BulkProtocol}), frame the data:
 * <ol>
 *   <li>HELLO, client to server: the {@link BulkPlan} (operation, message size, window, bytes or seconds,
 *   verify).</li>
 *   <li>READY, server to client: the remote key and stride of a region of message slots (one per message in
 *   flight, one more for READ), or a refusal with its reason. Before it, the server posted one receive per
 *   slot where the data consumes receives (SEND, and WRITE with {@code --verify}), else one for DONE.</li>
 *   <li>The data: message n uses the client's slot n mod window and the server's slot n mod slots. WRITE:
 *   RDMA WRITEs; with {@code --verify}, WRITEs with immediate n, each consuming a receive that the server
 *   posts again only once it checked that slot, so credits keep the client from overwriting a slot not yet
 *   checked. SEND: SENDs, checked in their receive's slot. READ: RDMA READs, checked by the client.</li>
 *   <li>DONE, client to server, once every data work request completed: messages and bytes moved.</li>
 *   <li>RESULT, server to client: messages it checked and how many were wrong or missing, and, as the
 *   sender of READ's data, its resends and what each subflow carried. The server closes the queue pair.</li>
 * </ol>
 * A verified message's bytes are {@link MessagePattern}'s for its sequence number n; READ fetches server
 * slot n mod (window + 1), which holds the pattern of that slot number.
 */
@Command(name = "bulk", mixinStandardHelpOptions = true,
        description = {"Move data over a queue pair (RDMA WRITE, SEND or READ over one or more TCP subflows) and",
                "print the rate, each subflow's share, resends and the verification in one line.",
                "No --listen/--connect: both ends in this process on loopback."})
final class BulkCommand implements Callable<Integer> {
    private static final Duration SERVER_WAIT = Duration.ofSeconds(30);
    /** QpConfig's floor: a heartbeat every 5 ms. */
    private static final int MIN_SILENCE_MILLIS = 20;
    private static final String[] CLIENT_OPTIONS = {"--connect", "--subflows", "--path", "--op", "--message",
            "--bytes", "--seconds", "--verify", "--window", "--interval-ms"};

    @Spec
    CommandSpec spec;

    @Option(names = "--listen", paramLabel = "[ADDR:]PORT",
            description = "Serve one queue pair on this address (PORT alone: every address; 0: any free port),"
                    + " print its summary and exit.")
    String listen;

    @Option(names = "--connect", paramLabel = "HOST:PORT", description = "Run against a 'bulk --listen' server.")
    String connect;

    @Option(names = "--subflows", defaultValue = "1",
            description = "TCP connections the queue pair stripes over. Default: ${DEFAULT-VALUE}.")
    int subflows;

    @Option(names = "--path", paramLabel = "LOCAL=REMOTE",
            description = {"One subflow per --path, from LOCAL to REMOTE[:PORT] (REMOTE alone also works);",
                    "a REMOTE without a port takes the --connect port (in process: the loopback server's)."})
    List<String> paths = new ArrayList<>();

    @Option(names = "--op", defaultValue = "write", paramLabel = "write|send|read",
            description = "Work request that moves the data. Default: ${DEFAULT-VALUE}.")
    BulkOp op;

    @Option(names = "--message", defaultValue = "1M", paramLabel = "BYTES",
            description = "Bytes per work request (K, M, G: binary multiples). Default: ${DEFAULT-VALUE}.")
    String message;

    @Option(names = "--bytes", paramLabel = "N", description = "Move N bytes (K, M, G: binary multiples).")
    String bytes;

    @Option(names = "--seconds", paramLabel = "S", description = "Run for S seconds (the default: 3).")
    Double seconds;

    @Option(names = "--verify",
            description = "Give every message bytes that depend on its number and check them where they land.")
    boolean verify;

    @Option(names = "--window", defaultValue = "32", description = "Messages in flight. Default: ${DEFAULT-VALUE}.")
    int window;

    @Option(names = "--interval-ms", paramLabel = "MS",
            description = {"Print a plain progress line every MS milliseconds, on a terminal too: the rate of that",
                    "interval and the bytes so far (without it: a redrawn bar on a terminal, else a line a second)."})
    Integer intervalMillis;

    @Option(names = "--silence-ms", paramLabel = "MS",
            description = {"Proposes MS ms as the silence timeout: a subflow with no frame for that long is declared",
                    "dead and its frames go again on the others (idle subflows carry a heartbeat every quarter of",
                    "it). Both ends use the smaller of their proposals. Default: the queue pair's, 2000."})
    Integer silenceMillis;

    @Mixin
    EngineOption engine;

    @Override
    public Integer call() throws Exception {
        boolean server = listen != null;
        if (server && connect != null) {
            throw new IllegalArgumentException("--listen and --connect are exclusive: a process is the server or the client");
        }
        try {
            if (silenceMillis != null && (silenceMillis < MIN_SILENCE_MILLIS || silenceMillis > 3_600_000)) {
                throw new IllegalArgumentException("--silence-ms must be " + MIN_SILENCE_MILLIS + "..3600000, got "
                        + silenceMillis);
            }
            if (server) {
                checkNoClientOptions();
                return serve(listenAddress(listen));
            }
            BulkPlan plan = plan();
            int paths = pathCount();
            InetSocketAddress remote = connect == null ? null : connectAddress(connect);
            return connect == null ? inProcess(plan, paths) : run(plan, paths, remote);
        } catch (IOException e) {
            spec.commandLine().getErr().println("zcnet bulk: " + e.getMessage());
            spec.commandLine().getErr().flush();
            return 1;
        }
    }

    // ---------------------------------------------------------------- the three ways to run

    /** The listener stays open while serving: the client's further subflows join through it. */
    private int serve(InetSocketAddress address) throws IOException, InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        try (QpContext context = QpContext.open(engine.choice());
                QpListener listener = context.listen(address, withSilence(BulkServer.config(), silenceMillis))) {
            out.println("zcnet bulk: listening on " + hostPort(listener.address()) + " (engine "
                    + context.engine().name().toLowerCase(Locale.ROOT) + ")");
            out.flush();
            QueuePair qp;
            while ((qp = listener.accept(Duration.ofSeconds(1))) == null) {
                // one queue pair, however long it takes to come
            }
            BulkServer.Summary summary = BulkServer.serve(context, qp);
            out.println(summary.line());
            out.flush();
            return summary.mismatches() == 0 ? 0 : 1;
        }
    }

    private int run(BulkPlan plan, int pathCount, InetSocketAddress remote) throws IOException, InterruptedException {
        try (QpContext context = QpContext.open(engine.choice())) {
            return report(BulkClient.run(context, subflowPaths(remote, pathCount), clientConfig(plan, pathCount),
                    plan, meter(plan)));
        }
    }

    /** Both ends here: the server on a thread of its own, as another process would run it. */
    private int inProcess(BulkPlan plan, int pathCount) throws IOException, InterruptedException {
        try (QpContext serverContext = QpContext.open(engine.choice());
                QpContext clientContext = QpContext.open(engine.choice())) {
            QpListener listener = serverContext.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                    withSilence(BulkServer.config(), silenceMillis));
            CompletableFuture<BulkServer.Summary> server = new CompletableFuture<>();
            Thread.ofPlatform().name("zcnet-bulk-server").daemon().start(() -> {
                try {
                    QueuePair qp = listener.accept(SERVER_WAIT);
                    if (qp == null) {
                        throw new IOException("the in-process server accepted no queue pair in " + SERVER_WAIT);
                    }
                    server.complete(BulkServer.serve(serverContext, qp));
                } catch (Exception | Error e) {
                    server.completeExceptionally(e);
                }
            });
            BulkResult result;
            try {
                result = BulkClient.run(clientContext, subflowPaths(listener.address(), pathCount),
                        clientConfig(plan, pathCount), plan, meter(plan));
            } catch (IOException clientFailed) { // the server's side of it often says more
                String why = serverFailure(server, Duration.ofSeconds(2));
                throw why == null ? clientFailed
                        : new IOException(clientFailed.getMessage() + "; the in-process server: " + why, clientFailed);
            }
            String why = serverFailure(server, SERVER_WAIT);
            if (why != null || !server.isDone()) {
                throw new IOException("the in-process server " + (why != null ? "failed: " + why
                        : "did not finish in " + SERVER_WAIT.toSeconds() + " s"));
            }
            return report(result);
        }
    }

    /** Why the in-process server failed, or null if it finished, or is still running after {@code wait}. */
    private static String serverFailure(CompletableFuture<?> server, Duration wait) throws InterruptedException {
        try {
            server.get(wait.toMillis(), TimeUnit.MILLISECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause().getMessage();
        } catch (TimeoutException e) {
            return null;
        }
    }

    private int report(BulkResult result) {
        PrintWriter out = spec.commandLine().getOut();
        out.println(result.line());
        out.flush();
        return result.verified() ? 0 : 1;
    }

    private ProgressMeter meter(BulkPlan plan) {
        PrintWriter out = spec.commandLine().getOut();
        return intervalMillis == null ? new ProgressMeter(out, ProgressMeter.onTerminal(), plan)
                : ProgressMeter.plainEvery(out, plan, intervalMillis * 1_000_000L);
    }

    private QpConfig clientConfig(BulkPlan plan, int pathCount) {
        return withSilence(plan.queuePairConfig().withSubflows(pathCount), silenceMillis);
    }

    /** {@code config} with a silence timeout of {@code millis}, or as it is when null (the default). */
    static QpConfig withSilence(QpConfig config, Integer millis) {
        return millis == null ? config : config.withTimeouts(config.handshakeTimeout(), Duration.ofMillis(millis));
    }

    /** One path per --path (a REMOTE without a port takes {@code remote}'s), else --subflows to {@code remote}. */
    private List<SubflowPath> subflowPaths(InetSocketAddress remote, int pathCount) {
        List<SubflowPath> list = new ArrayList<>();
        for (int i = 0; i < pathCount; i++) {
            list.add(paths.isEmpty() ? SubflowPath.to(remote) : SubflowPath.parse(paths.get(i), remote.getPort()));
        }
        return list;
    }

    // ---------------------------------------------------------------- validation

    private void checkNoClientOptions() {
        for (String option : CLIENT_OPTIONS) {
            if (spec.commandLine().getParseResult().hasMatchedOption(option)) {
                throw new IllegalArgumentException(option + " is the client's choice (its HELLO tells the server):"
                        + " drop it with --listen");
            }
        }
    }

    private BulkPlan plan() {
        if (intervalMillis != null && (intervalMillis < 1 || intervalMillis > 3_600_000)) {
            throw new IllegalArgumentException("--interval-ms must be 1..3600000, got " + intervalMillis);
        }
        if (bytes != null && seconds != null) {
            throw new IllegalArgumentException("--bytes and --seconds are exclusive: a run is bounded by one of them");
        }
        long messageSize = byteCount("--message", message);
        if (messageSize > BulkPlan.MAX_MESSAGE) {
            throw new IllegalArgumentException("--message must be 1.." + BulkPlan.MAX_MESSAGE
                    + " bytes (one message), got " + message);
        }
        if (bytes != null) {
            return new BulkPlan(op, (int) messageSize, window, byteCount("--bytes", bytes), 0, verify);
        }
        double s = seconds == null ? 3 : seconds;
        if (!(s > 0) || s > 86_400) {
            throw new IllegalArgumentException("--seconds must be in (0, 86400], got " + s);
        }
        return new BulkPlan(op, (int) messageSize, window, 0, (long) (s * 1e9), verify);
    }

    /** Subflows to open: one per --path, else --subflows. */
    private int pathCount() {
        if (!paths.isEmpty() && spec.commandLine().getParseResult().hasMatchedOption("--subflows")) {
            throw new IllegalArgumentException("--subflows and --path are exclusive: there is one subflow per --path");
        }
        int n = paths.isEmpty() ? subflows : paths.size();
        if (n < 1 || n > QpConfig.MAX_SUBFLOWS) {
            throw new IllegalArgumentException((paths.isEmpty() ? "--subflows" : "the number of --path options")
                    + " must be 1.." + QpConfig.MAX_SUBFLOWS + ", got " + n);
        }
        for (String path : paths) {
            try {
                SubflowPath.parse(path, 0); // the syntax now; the default port once it is known
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--path: " + e.getMessage(), e);
            }
        }
        return n;
    }

    /** A positive byte count: digits with an optional K, M or G (KiB, MiB, GiB). */
    static long byteCount(String option, String text) {
        String t = text.trim().toUpperCase(Locale.ROOT);
        int shift = t.endsWith("K") ? 10 : t.endsWith("M") ? 20 : t.endsWith("G") ? 30 : 0;
        String digits = shift == 0 ? t : t.substring(0, t.length() - 1);
        long value;
        try {
            value = Long.parseLong(digits);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + ": '" + text + "' is not a byte count (a number, optionally"
                    + " with K, M or G)");
        }
        if (value < 1 || value > Long.MAX_VALUE >> shift) {
            throw new IllegalArgumentException(option + " must be at least 1 byte and fit in 63 bits, got " + text);
        }
        return value << shift;
    }

    /** {@code [ADDR:]PORT}; PORT alone listens on every address. */
    static InetSocketAddress listenAddress(String text) {
        int colon = text.lastIndexOf(':');
        int port = port("--listen", text.substring(colon + 1), 0);
        return colon < 0 ? new InetSocketAddress(port) : resolve("--listen", text.substring(0, colon), port);
    }

    /** {@code HOST:PORT}. */
    static InetSocketAddress connectAddress(String text) {
        return hostAndPort("--connect", text);
    }

    /** {@code HOST:PORT} as the value of {@code option}, which the message of a refusal names. */
    static InetSocketAddress hostAndPort(String option, String text) {
        int colon = text.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException(option + " needs HOST:PORT, got '" + text + "'");
        }
        return resolve(option, text.substring(0, colon), port(option, text.substring(colon + 1), 1));
    }

    private static int port(String option, String text, int lowest) {
        try {
            int port = Integer.parseInt(text);
            if (port >= lowest && port <= 65535) {
                return port;
            }
        } catch (NumberFormatException e) {
            // reported below with the accepted range
        }
        throw new IllegalArgumentException(option + ": port '" + text + "' is not in " + lowest + "..65535");
    }

    private static InetSocketAddress resolve(String option, String host, int port) {
        String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        InetSocketAddress address = new InetSocketAddress(bare, port);
        if (bare.isEmpty() || address.isUnresolved()) {
            throw new IllegalArgumentException(option + ": cannot resolve host '" + host + "'");
        }
        return address;
    }

    private static String hostPort(InetSocketAddress address) {
        return address.getAddress().getHostAddress() + ":" + address.getPort();
    }
}
