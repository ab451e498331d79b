package io.zcnet.examples;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The network of {@code zcnet allreduce --netns}: the "star" of bench/collectives-lib.sh, so that figures
 * compare with that script's Gloo and MPI runs. Namespace {@link #switchNamespace} holds bridge cb0; rank k's
 * namespace holds one veth, eth0, at {@link #address address(k)} (10.78.0.(k+1)/24), whose peer rk is a port
 * of the bridge. tc tbf at the rate shapes both directions of every rank's link (eth0's egress, what rank
 * k sends, and rk's, what it receives), with bench/lib.sh's settings (burst the larger of 64 KiB and 4 ms of
 * the rate, latency 50 ms): each rank can send and receive at the rate at once, whatever the pattern, which
 * makes the rate the bound of every operation's bus bandwidth. The addresses exist only inside these
 * namespaces, whose names carry this process's id and a random part, so runs never meet, nor a run's
 * leftovers. Needs root and iproute2's ip and tc. {@link #close()} may run in a shutdown hook.
 */
final class NetnsTopology implements AutoCloseable {
    private static final String PREFIX = "zcar-";
    private static final String SUBNET = "10.78.0.";

    private final String ip;
    private final String tc;
    private final String name;
    private final int ranks;
    private final String shaping;
    /** What exists now, deleted by close(): the rank namespaces, then the switch's. */
    private final List<String> namespaces = new CopyOnWriteArrayList<>();

    private NetnsTopology(String ip, String tc, int ranks, int rateMbit) {
        this.ip = ip;
        this.tc = tc;
        this.ranks = ranks;
        this.name = PREFIX + Long.toHexString(ProcessHandle.current().pid()) + "-"
                + String.format(Locale.ROOT, "%04x", ThreadLocalRandom.current().nextInt(0x10000));
        long burst = Math.max(64 * 1024, rateMbit * 1_000_000L / 8 / 250);
        this.shaping = "tbf rate " + rateMbit + "mbit burst " + burst + " latency 50ms";
    }

    /**
     * Why this process cannot build the topology (not root, no ip or tc), as a sentence that says what to do;
     * null when it can.
     */
    static String unavailableReason() {
        try {
            if (((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).intValue() != 0) {
                return "--netns needs root: it creates network namespaces, veth links, a bridge and tbf qdiscs"
                        + " (run it with sudo)";
            }
        } catch (IOException | UnsupportedOperationException e) {
            return "--netns needs Linux network namespaces (cannot tell this process's user: " + e.getMessage() + ")";
        }
        if (command("ip") == null || command("tc") == null) {
            return "--netns needs ip and tc from iproute2: install it (Debian/Ubuntu: apt-get install iproute2)";
        }
        return null;
    }

    /**
     * The topology for {@code ranks} at {@code rateMbit}, not built yet: {@link #close()} can be made sure of
     * (a shutdown hook) before anything exists.
     */
    static NetnsTopology of(int ranks, int rateMbit) {
        return new NetnsTopology(command("ip"), command("tc"), ranks, rateMbit);
    }

    /** Creates the namespaces, the bridge and the shaped links; close() deletes them, also after a failure here. */
    void build() throws IOException {
        String sw = switchNamespace();
        addNamespace(sw);
        run(ip, "-n", sw, "link", "add", "cb0", "type", "bridge", "forward_delay", "0", "stp_state", "0");
        run(ip, "-n", sw, "link", "set", "cb0", "up");
        for (int k = 0; k < ranks; k++) {
            String ns = namespace(k);
            String port = "r" + k;
            addNamespace(ns);
            run(ip, "link", "add", "name", "eth0", "netns", ns, "type", "veth", "peer", "name", port, "netns", sw);
            run(ip, "-n", sw, "link", "set", port, "master", "cb0");
            run(ip, "-n", ns, "addr", "add", address(k) + "/24", "dev", "eth0");
            run(ip, "-n", ns, "link", "set", "eth0", "up");
            run(ip, "-n", sw, "link", "set", port, "up");
            shape(ns, "eth0");
            shape(sw, port);
        }
    }

    private void addNamespace(String ns) throws IOException {
        run(ip, "netns", "add", ns);
        namespaces.addFirst(ns);
        run(ip, "-n", ns, "link", "set", "lo", "up");
    }

    private void shape(String ns, String dev) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(tc, "-n", ns, "qdisc", "replace", "dev", dev, "root"));
        cmd.addAll(List.of(shaping.split(" ")));
        run(cmd.toArray(String[]::new));
    }

    String switchNamespace() {
        return name + "-sw";
    }

    String namespace(int rank) {
        return name + "-r" + rank;
    }

    String address(int rank) {
        return SUBNET + (rank + 1);
    }

    /** The tc qdisc on both ends of every rank's link. */
    String shaping() {
        return shaping;
    }

    /** The prefix that runs a command in rank {@code rank}'s namespace. */
    List<String> exec(int rank) {
        return List.of(ip, "netns", "exec", namespace(rank));
    }

    /**
     * Kills whatever still runs in the namespaces, then deletes them (the veth links and the bridge go with
     * them). Says on standard error what it could not delete. Safe to call twice.
     */
    @Override
    public void close() {
        for (String ns : namespaces) {
            try {
                for (String pid : run(ip, "netns", "pids", ns).split("\\s+")) {
                    if (!pid.isEmpty()) {
                        ProcessHandle.of(Long.parseLong(pid)).ifPresent(ProcessHandle::destroyForcibly);
                    }
                }
                run(ip, "netns", "del", ns);
                namespaces.remove(ns);
            } catch (IOException | RuntimeException e) {
                System.err.println("zcnet allreduce: could not delete network namespace " + ns + " (ip netns del " + ns
                        + "): " + e.getMessage());
            }
        }
    }

    /** Runs a command to its end; returns its output, or throws with it when it fails. */
    private static String run(String... command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        try {
            if (p.waitFor() != 0) {
                throw new IOException("'" + String.join(" ", command) + "' failed: " + output);
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted during '" + String.join(" ", command) + "'", e);
        }
        return output;
    }

    /** Where {@code name} is on PATH or in the sbin directories (not always on a user's PATH); null if nowhere. */
    private static String command(String name) {
        List<String> dirs = new ArrayList<>(List.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)));
        dirs.addAll(List.of("/usr/sbin", "/sbin"));
        for (String dir : dirs) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, name);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        return null;
    }
}
