package io.zcnet.qp.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.zcnet.qp.lab.NetnsLab.Namespace;
import io.zcnet.qp.lab.NetnsLab.Path;
import io.zcnet.qp.lab.NetnsLab.Side;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The lab does what multi-host tests will count on: paths that carry TCP between namespaces, and
 * impairments that act on one path only; and it leaves nothing behind. Needs root (skipped with the
 * reason otherwise). Connections go only to the lab's own addresses.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NetnsLabTest {
    private static final int PORT = 7411;
    /** How long a connect may take before it counts as cut: a lab link answers in well under a ms. */
    private static final int CONNECT_SECONDS = 2;
    /** bash's exit code when {@code timeout} had to stop it. */
    private static final int TIMED_OUT = 124;

    private NetnsLab lab;
    private Namespace client;
    private Namespace server;

    @BeforeAll
    static void requireLab() {
        String reason = NetnsLab.unavailableReason();
        assumeTrue(reason == null, reason);
    }

    @AfterEach
    void closeLab() {
        if (lab != null) {
            lab.close();
        }
    }

    @Test
    void twoPathsCarryTcpAndABlackHoleCutsOnlyItsOwn() throws Exception {
        Path[] paths = clientAndServer(2);
        Path first = paths[0];
        Path second = paths[1];

        assertConnects(client, first.addressB());
        assertConnects(client, second.addressB());

        lab.blackHole(first, Side.B);
        assertEquals(TIMED_OUT, connect(client, first.addressB()).exit(), "the black-holed path must time out");
        assertConnects(client, second.addressB());

        lab.clear(first, Side.B);
        assertConnects(client, first.addressB());
    }

    @Test
    void aRateLimitIsATokenBucketOnThatDeviceOnlyUntilCleared() throws Exception {
        lab = new NetnsLab();
        Namespace a = lab.namespace("a");
        Namespace b = lab.namespace("b");
        Path limited = lab.link(a, b);
        Path free = lab.link(a, b);

        lab.rateLimit(limited, Side.A, 200);
        String qdiscs = lab.run(a, Duration.ofSeconds(5), "tc", "qdisc", "show").stdout();
        assertTrue(qdiscs.contains("qdisc tbf") && qdiscs.contains("dev " + limited.deviceA())
                && qdiscs.contains("rate 200Mbit"), qdiscs);
        assertFalse(qdisc(a, free.deviceA()).contains("tbf"), "the other path is not shaped");
        assertFalse(qdisc(b, limited.deviceB()).contains("tbf"), "the other side is not shaped");

        lab.rateLimit(limited, Side.A, 1000);
        assertTrue(qdisc(a, limited.deviceA()).contains("rate 1Gbit"), "replaced: " + qdisc(a, limited.deviceA()));

        lab.clear(limited, Side.A);
        assertFalse(qdisc(a, limited.deviceA()).contains("tbf"), qdisc(a, limited.deviceA()));
    }

    @Test
    void lossIsAnNftRuleOnThatInterfaceAndAHundredPercentCutsThePath() throws Exception {
        Path path = clientAndServer(1)[0];

        lab.dropPercent(path, Side.A, 30);
        String rules = lab.run(client, Duration.ofSeconds(5), "nft", "list", "ruleset").stdout();
        assertTrue(rules.contains("iifname \"" + path.deviceA() + "\" numgen random mod 100 < 30 drop"), rules);
        assertTrue(rules.contains("oifname \"" + path.deviceA() + "\" numgen random mod 100 < 30 drop"), rules);

        lab.dropPercent(path, Side.A, 100);
        assertEquals(TIMED_OUT, connect(client, path.addressB()).exit(), "100% loss must cut the path");
        lab.clear(path, Side.A);
        assertConnects(client, path.addressB());
    }

    @Test
    void aPathToTheRootNamespaceIsClearOfTheMachinesRoutesAndCarriesTcp() throws Exception {
        List<Subnets.Route> before = Subnets.parse(
                Command.run(Duration.ofSeconds(5), List.of("ip", "-4", "-o", "route", "show", "table", "all"))
                        .orThrow().stdout());
        lab = new NetnsLab();
        server = lab.namespace("server");
        Path path = lab.link(Namespace.ROOT, server);
        for (Subnets.Route route : before) {
            assertFalse(route.covers(Subnets.toInt(path.addressA().getHostAddress()), Subnets.PREFIX),
                    path + " overlaps the machine's route " + route);
        }
        startListener(server);
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(path.addressB(), PORT), CONNECT_SECONDS * 1000);
            socket.setSoTimeout(CONNECT_SECONDS * 1000);
            assertEquals("hello", new String(socket.getInputStream().readNBytes(5), StandardCharsets.US_ASCII));
            assertEquals(path.addressA(), socket.getLocalAddress(), "left through the path's root end");
        }
    }

    @Test
    void linkDownCutsThePathAndLinkUpRestoresIt() throws Exception {
        Path path = clientAndServer(1)[0];

        lab.linkDown(path);
        assertFalse(connect(client, path.addressB()).exit() == 0, "connected over a link that is down");
        lab.linkUp(path);
        assertConnects(client, path.addressB());
    }

    @Test
    void aFailedStepNamesItsCommandAndCloseStillRemovesEverything() {
        lab = new NetnsLab();
        Namespace a = lab.namespace("a");
        Namespace b = lab.namespace("b");
        // Pulled from under the lab: the veth cannot be moved into it.
        Command.run(Duration.ofSeconds(5), List.of("ip", "netns", "delete", b.name())).orThrow();
        Command.Failed failed = assertThrows(Command.Failed.class, () -> lab.link(a, b));
        assertTrue(failed.getMessage().contains("ip link add name zc" + lab.id()), failed.getMessage());
        assertTrue(failed.getMessage().contains(b.name()), "stderr names the namespace: " + failed.getMessage());
        lab.close();
        assertNothingLeftOf(lab.id());
    }

    @Test
    void closeRemovesNamespacesVethsTablesAndProcesses() throws Exception {
        lab = new NetnsLab();
        Namespace a = lab.namespace("a");
        Namespace b = lab.namespace("b");
        Path between = lab.link(a, b);
        Path fromRoot = lab.link(Namespace.ROOT, a);
        lab.blackHole(fromRoot, Side.A); // a table in the root namespace
        lab.rateLimit(fromRoot, Side.A, 100);
        lab.dropPercent(between, Side.B, 10);
        LabProcess sleeper = lab.exec(b, "sleep", "60");
        assertTrue(Command.run(Duration.ofSeconds(5), List.of("nft", "list", "tables")).orThrow().stdout()
                .contains("zc" + lab.id()), "the root table exists before close");

        lab.close();
        assertFalse(sleeper.isAlive(), "the process in the namespace was killed");
        assertNothingLeftOf(lab.id());
        lab.close(); // idempotent
    }

    // ------------------------------------------------------------------ helpers

    private static void assertNothingLeftOf(String id) {
        String mark = "zc" + id;
        for (List<String> listing : List.of(List.of("ip", "netns", "list"), List.of("ip", "-o", "link", "show"),
                List.of("nft", "list", "tables"))) {
            String out = Command.run(Duration.ofSeconds(5), listing).orThrow().stdout();
            assertFalse(out.contains(mark), String.join(" ", listing) + " still shows " + mark + ":\n" + out);
        }
    }

    /** A fresh lab: namespaces "client" and "server", {@code count} paths between them, a listener in server. */
    private Path[] clientAndServer(int count) throws InterruptedException {
        lab = new NetnsLab();
        client = lab.namespace("client");
        server = lab.namespace("server");
        Path[] paths = new Path[count];
        for (int i = 0; i < count; i++) {
            paths[i] = lab.link(client, server);
        }
        startListener(server);
        return paths;
    }

    /** A {@link Listener} in {@code ns} on {@link #PORT}, ready when this returns. */
    private void startListener(Namespace ns) throws InterruptedException {
        LabProcess listener = lab.spawnJava(ns, Listener.class, Integer.toString(PORT), "60");
        listener.awaitOutput(Listener.READY, Duration.ofSeconds(20));
    }

    /** A TCP connect from {@code ns} to {@code to}, cut off after {@link #CONNECT_SECONDS}. */
    private Command connect(Namespace ns, InetAddress to) {
        return lab.run(ns, Duration.ofSeconds(CONNECT_SECONDS + 5), "timeout", Integer.toString(CONNECT_SECONDS),
                "bash", "-c", "exec 3<>/dev/tcp/" + to.getHostAddress() + "/" + PORT);
    }

    private void assertConnects(Namespace ns, InetAddress to) {
        Command result = connect(ns, to);
        assertEquals(0, result.exit(), "connect from " + ns + " to " + to.getHostAddress() + ": " + result.stderr());
    }

    private String qdisc(Namespace ns, String device) {
        return lab.run(ns, Duration.ofSeconds(5), "tc", "qdisc", "show", "dev", device).orThrow().stdout();
    }

    /**
     * A TCP server for a lab namespace: greets each connection with "hello" and closes it; stops by
     * itself after the given number of seconds. Arguments: port, lifetime in seconds.
     */
    public static final class Listener {
        static final String READY = "listening";

        public static void main(String[] args) throws IOException {
            int port = Integer.parseInt(args[0]);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(args[1]));
            try (ServerSocket server = new ServerSocket()) {
                server.bind(new InetSocketAddress(port)); // every address of its namespace
                server.setSoTimeout(200);
                System.out.println(READY);
                while (System.nanoTime() < deadline) {
                    try (Socket socket = server.accept(); OutputStream out = socket.getOutputStream()) {
                        out.write("hello".getBytes(StandardCharsets.US_ASCII));
                        out.flush();
                    } catch (SocketTimeoutException e) {
                        // no connection this round: check the deadline
                    }
                }
            }
        }
    }
}
