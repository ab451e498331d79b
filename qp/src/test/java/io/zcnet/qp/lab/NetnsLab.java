package io.zcnet.qp.lab;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A small network of Linux network namespaces for tests that need several hosts and several paths
 * between them: namespaces joined by veth pairs, each pair a {@link Path} with its own /24, and per
 * path end a rate limit ({@code tc tbf}), random loss or a black hole ({@code nft}), or the link taken
 * down. Processes run inside a namespace with {@code ip netns exec}.
 *
 * <p>Everything it makes is named {@code zc<id>...} with a random id, so labs running in parallel on one
 * machine never collide, and {@link #close()} removes all of it (processes, nft tables, veths,
 * namespaces) even after a step failed halfway; a JVM shutdown hook does the same if the test never
 * gets to close it. Addresses come from the private ranges, clear of every route the machine has
 * ({@link Subnets}); traffic in a lab only ever goes to the lab's own addresses.
 *
 * <p>Needs root, {@code ip}, {@code tc} and {@code nft}: tests start with
 * {@code assumeTrue(NetnsLab.unavailableReason() == null, NetnsLab.unavailableReason())}. Every command
 * has a deadline and a failure throws {@link Command.Failed} with the command line and its stderr.
 * Thread-safe (each method holds the lab's lock), though a test normally drives it from one thread.
 */
public final class NetnsLab implements AutoCloseable {

    /** One end of a {@link Path}: the side of its first namespace, or of its second. */
    public enum Side { A, B }

    /** A namespace of this lab, or the machine's own, {@link #ROOT}. */
    public record Namespace(String name) {
        public static final Namespace ROOT = new Namespace("");

        public boolean isRoot() {
            return name.isEmpty();
        }

        @Override
        public String toString() {
            return isRoot() ? "root" : name;
        }
    }

    /**
     * A veth pair between namespaces {@code a} and {@code b}: device {@code deviceA} with
     * {@code addressA} in {@code a}, device {@code deviceB} with {@code addressB} in {@code b}, both in one
     * /{@code prefixLength} of their own.
     */
    public record Path(String name, Namespace a, String deviceA, InetAddress addressA,
            Namespace b, String deviceB, InetAddress addressB, int prefixLength) {

        public Namespace namespace(Side side) {
            return side == Side.A ? a : b;
        }

        public String device(Side side) {
            return side == Side.A ? deviceA : deviceB;
        }

        public InetAddress address(Side side) {
            return side == Side.A ? addressA : addressB;
        }

        @Override
        public String toString() {
            return name + " " + a + ":" + deviceA + " " + addressA.getHostAddress() + " <-> " + b + ":" + deviceB
                    + " " + addressB.getHostAddress() + "/" + prefixLength;
        }
    }

    /** Deadline of one {@code ip}, {@code tc} or {@code nft} step: they take milliseconds. */
    private static final Duration STEP = Duration.ofSeconds(10);
    /** Deadline of installing nftables: a package download on a slow mirror. */
    private static final Duration INSTALL = Duration.ofMinutes(4);
    /**
     * How long a packet may wait in a tbf queue. 50 ms holds about one bandwidth-delay product of a
     * path with a few tens of ms of RTT, so a single TCP flow can keep the rate limit busy, yet it keeps
     * the queueing delay a test sees small next to its timeouts (no bufferbloat of seconds).
     */
    private static final int TBF_LATENCY_MILLIS = 50;
    /** Labels of namespaces: short, so the names fit where Linux keeps them. */
    private static final Pattern LABEL = Pattern.compile("[a-z0-9]{1,12}");

    /** An nft table or a device, by name, and the namespace it is in. */
    private record InNamespace(Namespace ns, String name) {
    }

    private static String unavailable;
    private static boolean probed;

    private final String id;
    private final java.nio.file.Path logs;
    private final Thread shutdownHook;
    // What exists now, in the order it was made; close() removes it in the reverse dependency order.
    private final List<Namespace> namespaces = new ArrayList<>();
    private final List<Path> paths = new ArrayList<>();
    private final Set<InNamespace> tables = new LinkedHashSet<>();
    private final Set<InNamespace> shapedDevices = new LinkedHashSet<>();
    private final List<LabProcess> processes = new ArrayList<>();
    private final List<Subnets.Route> ownSubnets = new ArrayList<>();
    private boolean closed;

    /**
     * An empty lab with a fresh id.
     *
     * @throws IllegalStateException with {@link #unavailableReason()} if the lab cannot run here
     */
    public NetnsLab() {
        String reason = unavailableReason();
        if (reason != null) {
            throw new IllegalStateException("network namespace lab unavailable: " + reason);
        }
        this.id = newId();
        try {
            this.logs = Files.createTempDirectory("zc" + id + "-logs");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the lab's log directory", e);
        }
        this.shutdownHook = Thread.ofPlatform().unstarted(this::close);
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /** The random id in the name of everything this lab makes. */
    public String id() {
        return id;
    }

    // ---------------------------------------------------------------- topology

    /** Creates namespace {@code zc<id>-<label>} with its loopback up. */
    public synchronized Namespace namespace(String label) {
        checkOpen();
        if (label == null || !LABEL.matcher(label).matches()) {
            throw new IllegalArgumentException("label must be 1 to 12 of [a-z0-9], got " + label);
        }
        Namespace ns = new Namespace("zc" + id + "-" + label);
        if (namespaces.contains(ns)) {
            throw new IllegalArgumentException("this lab has a namespace " + label + " already");
        }
        namespaces.add(ns); // before it exists: close() then removes what a half-done add left
        must(List.of("ip", "netns", "add", ns.name()));
        must(List.of("ip", "-n", ns.name(), "link", "set", "lo", "up"));
        return ns;
    }

    /**
     * Joins {@code a} and {@code b} (either may be {@link Namespace#ROOT}, not both) with a new veth pair
     * in a /24 of its own, addressed {@code .1} on side A and {@code .2} on side B, both ends up.
     */
    public synchronized Path link(Namespace a, Namespace b) {
        checkOpen();
        checkOwn(a);
        checkOwn(b);
        if (a.equals(b)) {
            throw new IllegalArgumentException("a path joins two different namespaces, got " + a + " twice");
        }
        List<Subnets.Route> taken = new ArrayList<>(Subnets.parse(
                must(List.of("ip", "-4", "-o", "route", "show", "table", "all")).stdout()));
        taken.addAll(ownSubnets);
        int subnet = Subnets.pick(taken, ThreadLocalRandom.current());
        ownSubnets.add(new Subnets.Route(subnet, Subnets.PREFIX));
        String name = "zc" + id + "p" + paths.size(); // at most 15 characters (IFNAMSIZ)
        Path path = new Path(name, a, name + "a", Subnets.address(subnet + 1), b, name + "b",
                Subnets.address(subnet + 2), Subnets.PREFIX);
        paths.add(path);
        List<String> add = new ArrayList<>(List.of("ip", "link", "add", "name", path.deviceA()));
        add.addAll(netnsOption(a));
        add.addAll(List.of("type", "veth", "peer", "name", path.deviceB()));
        add.addAll(netnsOption(b));
        must(add);
        for (Side side : Side.values()) {
            Namespace ns = path.namespace(side);
            String device = path.device(side);
            must(ip(ns, "addr", "add", path.address(side).getHostAddress() + "/" + Subnets.PREFIX, "dev", device));
            must(ip(ns, "link", "set", device, "up"));
        }
        return path;
    }

    // ---------------------------------------------------------------- impairments

    /**
     * Limits what leaves {@code side} of {@code path} to {@code mbit} Mbit/s with a token bucket
     * ({@code tc qdisc replace ... root tbf}), replacing an earlier limit. The burst is the larger of
     * 64 KiB and 4 ms at the rate: a bucket must hold a whole GSO packet (veth hands tbf up to 64 KiB at
     * once, which a smaller bucket would have to split or drop), and must cover the time the qdisc may
     * wait for its watchdog timer, one jiffy (4 ms at HZ=250), or the link falls short of its rate. At
     * 100 Mbit/s that is 64 KiB, at 1000 Mbit/s 500 kB. Queueing is bounded by
     * {@link #TBF_LATENCY_MILLIS}.
     */
    public synchronized void rateLimit(Path path, Side side, int mbit) {
        checkPath(path, side);
        if (mbit < 1 || mbit > 100_000) {
            throw new IllegalArgumentException("rate must be 1 to 100000 Mbit/s, got " + mbit);
        }
        long bytesPer4Millis = (long) mbit * 1_000_000 / 8 / 250;
        long burst = Math.max(64 * 1024, bytesPer4Millis);
        Namespace ns = path.namespace(side);
        String device = path.device(side);
        shapedDevices.add(new InNamespace(ns, device));
        must(tc(ns, "qdisc", "replace", "dev", device, "root", "tbf", "rate", mbit + "mbit",
                "burst", Long.toString(burst), "latency", TBF_LATENCY_MILLIS + "ms"));
    }

    /**
     * Drops {@code percent} of the IP packets that {@code side} of {@code path} sends and of those it
     * receives, each at random ({@code nft ... numgen random mod 100 < percent drop}), replacing an earlier
     * loss or black hole of that side. 100 drops everything, like {@link #blackHole}.
     */
    public synchronized void dropPercent(Path path, Side side, int percent) {
        checkPath(path, side);
        if (percent < 1 || percent > 100) {
            throw new IllegalArgumentException("percent must be 1 to 100 (clear() for none), got " + percent);
        }
        // numgen's "< 100" does not parse (the value must fit the 0-99 range): 100% is a plain drop.
        installDrop(path, side, percent == 100 ? "drop" : "numgen random mod 100 < " + percent + " drop");
    }

    /**
     * Drops every IP packet that {@code side} of {@code path} sends or receives, while the link stays up:
     * a path that fails silently, as a broken middlebox does. Replaces an earlier loss of that side.
     */
    public synchronized void blackHole(Path path, Side side) {
        checkPath(path, side);
        installDrop(path, side, "drop");
    }

    /** Takes the rate limit, loss and black hole off {@code side} of {@code path}. */
    public synchronized void clear(Path path, Side side) {
        checkPath(path, side);
        Namespace ns = path.namespace(side);
        String table = tableName(path, side);
        if (tables.remove(new InNamespace(ns, table))) {
            must(inNamespace(ns, List.of("nft", "delete", "table", "inet", table)));
        }
        if (shapedDevices.remove(new InNamespace(ns, path.device(side)))) {
            must(tc(ns, "qdisc", "del", "dev", path.device(side), "root"));
        }
    }

    /** Sets side A's device down, which takes the carrier of side B's away too: a cable pulled. */
    public synchronized void linkDown(Path path) {
        checkPath(path, Side.A);
        must(ip(path.a(), "link", "set", path.deviceA(), "down"));
    }

    /** Brings side A's device up again after {@link #linkDown}; the addresses stayed. */
    public synchronized void linkUp(Path path) {
        checkPath(path, Side.A);
        must(ip(path.a(), "link", "set", path.deviceA(), "up"));
    }

    // ---------------------------------------------------------------- processes

    /**
     * Starts {@code command} inside {@code ns} ({@code ip netns exec}); its output goes to
     * {@link LabProcess#log()}, and {@link #close()} kills it.
     */
    public synchronized LabProcess exec(Namespace ns, String... command) {
        checkOpen();
        checkOwn(ns);
        if (command.length == 0) {
            throw new IllegalArgumentException("no command given");
        }
        List<String> argv = inNamespace(ns, List.of(command));
        java.nio.file.Path log = logs.resolve(processes.size() + "-" + ns + "-"
                + java.nio.file.Path.of(command[0]).getFileName() + ".log");
        try {
            Process process = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            LabProcess started = new LabProcess("`" + String.join(" ", argv) + "`", process, log);
            processes.add(started);
            return started;
        } catch (IOException e) {
            throw new Command.Failed("cannot start `" + String.join(" ", argv) + "`: " + e.getMessage(), e);
        }
    }

    /**
     * Starts {@code mainClass} in a JVM of its own inside {@code ns}: this JVM's {@code java}, this JVM's
     * class path (so test classes run too) and {@code --enable-native-access=ALL-UNNAMED}, as the zcnet
     * engines need. Output and lifetime as for {@link #exec}.
     */
    public LabProcess spawnJava(Namespace ns, Class<?> mainClass, String... args) {
        List<String> command = new ArrayList<>(List.of(
                java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"),
                mainClass.getName()));
        command.addAll(List.of(args));
        return exec(ns, command.toArray(String[]::new));
    }

    /**
     * Runs {@code command} inside {@code ns} to its end, within {@code timeout}: its exit code and output.
     * A non-zero exit is returned, not thrown (a test may expect a connect to fail).
     */
    public Command run(Namespace ns, Duration timeout, String... command) {
        synchronized (this) { // not while it runs: close() from the shutdown hook must not wait for it
            checkOpen();
            checkOwn(ns);
        }
        return Command.run(timeout, inNamespace(ns, List.of(command)));
    }

    // ---------------------------------------------------------------- closing

    /**
     * Removes everything the lab made: kills its processes, deletes its nft tables, its veths (their
     * qdiscs go with them) and its namespaces, and its log files. Goes on past a step that fails and
     * throws at the end, with every failure attached. Idempotent; also run by the shutdown hook.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (Thread.currentThread() != shutdownHook) {
            try {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException e) {
                // The JVM is shutting down: the hook runs (and finds the lab closed) or has run.
            }
        }
        List<RuntimeException> failures = new ArrayList<>();
        for (LabProcess process : processes) {
            try {
                process.kill();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failures.add(new IllegalStateException("interrupted while killing " + process, e));
            }
        }
        // Tables and qdiscs of the root namespace outlive the lab unless deleted; those inside a lab
        // namespace would go with it, but are deleted alike so a namespace that cannot be deleted leaves
        // no rule behind.
        for (InNamespace table : tables) {
            quietly(failures, inNamespace(table.ns(), List.of("nft", "delete", "table", "inet", table.name())));
        }
        for (Path path : paths.reversed()) {
            // Deleting one end of a veth deletes both; a link add that failed left nothing, hence "absent".
            quietly(failures, ip(path.a(), "link", "del", path.deviceA()));
        }
        for (Namespace ns : namespaces.reversed()) {
            quietly(failures, List.of("ip", "netns", "delete", ns.name()));
        }
        deleteLogs(failures);
        if (!failures.isEmpty()) {
            IllegalStateException all = new IllegalStateException("lab zc" + id + " left " + failures.size()
                    + " thing(s) behind; the first: " + failures.getFirst().getMessage());
            failures.forEach(all::addSuppressed);
            throw all;
        }
    }

    @Override
    public synchronized String toString() {
        return "NetnsLab zc" + id + (closed ? " (closed)" : "") + ": namespaces " + namespaces + ", paths " + paths
                + ", processes " + processes;
    }

    // ---------------------------------------------------------------- availability

    /**
     * Null when a lab can run here, else one line saying why not: not Linux, not root, {@code ip} or
     * {@code tc} missing, {@code nft} missing and not installable ({@code apt-get install -y nftables} is
     * tried when root), or the kernel refusing namespaces, veths, tbf or nf_tables (tried once in a
     * throwaway namespace). Probed once per JVM.
     */
    public static synchronized String unavailableReason() {
        if (!probed) {
            probed = true;
            try {
                unavailable = probe();
            } catch (Command.Failed e) {
                unavailable = e.getMessage();
            }
        }
        return unavailable;
    }

    private static String probe() {
        if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
            return "network namespaces need Linux, this is " + System.getProperty("os.name");
        }
        String uid = Command.run(STEP, List.of("id", "-u")).stdout().strip();
        if (!uid.equals("0")) {
            return "needs root to make namespaces, veths, qdiscs and nft tables; running as uid " + uid;
        }
        for (String tool : List.of("ip", "tc")) {
            if (!works(List.of(tool, "-V"))) {
                return tool + " is missing: install Debian's iproute2";
            }
        }
        if (!works(List.of("nft", "--version"))) {
            String failure = installNftables();
            if (failure != null) {
                return "nft is missing and `apt-get install -y nftables` failed: " + failure;
            }
        }
        return tryKernel();
    }

    /** Null once nft runs, else the installer's last words; retried after {@code apt-get update} once. */
    private static String installNftables() {
        Command install = aptGet("install", "-y", "nftables");
        if (install.exit() != 0) {
            aptGet("update");
            install = aptGet("install", "-y", "nftables");
        }
        if (install.exit() != 0 || !works(List.of("nft", "--version"))) {
            String[] lines = (install.stderr() + install.stdout()).strip().split("\n");
            return "exit " + install.exit() + ": " + lines[lines.length - 1];
        }
        return null;
    }

    private static Command aptGet(String... args) {
        List<String> argv = new ArrayList<>(List.of("env", "DEBIAN_FRONTEND=noninteractive", "apt-get"));
        argv.addAll(List.of(args));
        return Command.run(INSTALL, argv);
    }

    /** Makes a namespace with a veth pair, a tbf qdisc and an nft table, then deletes it. */
    private static String tryKernel() {
        String ns = "zc" + newId() + "-probe";
        try {
            for (List<String> step : List.of(
                    List.of("ip", "netns", "add", ns),
                    List.of("ip", "-n", ns, "link", "add", "probea", "type", "veth", "peer", "name", "probeb"),
                    List.of("tc", "-n", ns, "qdisc", "replace", "dev", "probea", "root", "tbf", "rate", "100mbit",
                            "burst", "65536", "latency", "50ms"),
                    List.of("ip", "netns", "exec", ns, "nft", "add", "table", "inet", "probe"))) {
                Command result = Command.run(STEP, step);
                if (result.exit() != 0) {
                    return "the kernel refused `" + String.join(" ", step) + "`: " + result.stderr().strip();
                }
            }
            return null;
        } finally {
            Command.run(STEP, List.of("ip", "netns", "delete", ns));
        }
    }

    private static boolean works(List<String> argv) {
        try {
            return Command.run(STEP, argv).exit() == 0;
        } catch (Command.Failed e) {
            return false;
        }
    }

    // ---------------------------------------------------------------- helpers

    /** 6 hex digits: 16M ids, so parallel labs collide once in millions, and names stay short. */
    private static String newId() {
        return HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt(1 << 24)).substring(2);
    }

    private void installDrop(Path path, Side side, String verdict) {
        Namespace ns = path.namespace(side);
        String device = path.device(side);
        String table = tableName(path, side);
        tables.add(new InNamespace(ns, table));
        // One nft transaction: the add makes the delete safe when the table is new, and the table is
        // never seen half-built.
        String hook = " type filter hook %s priority filter; %s \"" + device + "\" " + verdict + "; }\n";
        String script = "table inet " + table + "\n"
                + "delete table inet " + table + "\n"
                + "table inet " + table + " {\n"
                + "  chain in {" + hook.formatted("input", "iifname")
                + "  chain out {" + hook.formatted("output", "oifname")
                + "}\n";
        Command.run(STEP, inNamespace(ns, List.of("nft", "-f", "-")), script).orThrow();
    }

    private static String tableName(Path path, Side side) {
        return path.device(side); // unique per lab and side, and a valid nft identifier
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("lab zc" + id + " is closed");
        }
    }

    private void checkOwn(Namespace ns) {
        if (ns == null || !(ns.isRoot() || namespaces.contains(ns))) {
            throw new IllegalArgumentException(ns + " is not a namespace of lab zc" + id + " (nor ROOT)");
        }
    }

    private void checkPath(Path path, Side side) {
        checkOpen();
        if (path == null || side == null || !paths.contains(path)) {
            throw new IllegalArgumentException("path " + path + " side " + side + " is not of lab zc" + id);
        }
    }

    private static List<String> netnsOption(Namespace ns) {
        return ns.isRoot() ? List.of() : List.of("netns", ns.name());
    }

    private static List<String> inNamespace(Namespace ns, List<String> command) {
        if (ns.isRoot()) {
            return command;
        }
        List<String> argv = new ArrayList<>(List.of("ip", "netns", "exec", ns.name()));
        argv.addAll(command);
        return argv;
    }

    private static List<String> ip(Namespace ns, String... args) {
        return withNamespaceOption("ip", ns, args);
    }

    private static List<String> tc(Namespace ns, String... args) {
        return withNamespaceOption("tc", ns, args);
    }

    /** {@code ip -n NS ...} and {@code tc -n NS ...} switch namespace themselves: no extra process. */
    private static List<String> withNamespaceOption(String tool, Namespace ns, String... args) {
        List<String> argv = new ArrayList<>(List.of(tool));
        if (!ns.isRoot()) {
            argv.addAll(List.of("-n", ns.name()));
        }
        argv.addAll(List.of(args));
        return argv;
    }

    private static Command must(List<String> argv) {
        return Command.run(STEP, argv).orThrow();
    }

    /** Runs a clean-up step; one that fails because its object is already gone counts as done. */
    private static void quietly(List<RuntimeException> failures, List<String> argv) {
        try {
            Command result = Command.run(STEP, argv);
            String err = result.stderr();
            boolean gone = err.contains("Cannot find device") || err.contains("No such file or directory")
                    || err.contains("does not exist");
            if (result.exit() != 0 && !gone) {
                result.orThrow();
            }
        } catch (Command.Failed e) {
            failures.add(e);
        }
    }

    private void deleteLogs(List<RuntimeException> failures) {
        try (Stream<java.nio.file.Path> files = Files.walk(logs)) {
            for (java.nio.file.Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            failures.add(new UncheckedIOException("cannot delete the lab's logs in " + logs, e));
        }
    }
}
