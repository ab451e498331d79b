package io.zcnet.qp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.lab.LabProcess;
import io.zcnet.qp.lab.NetnsLab;
import io.zcnet.qp.lab.NetnsLab.Namespace;
import io.zcnet.qp.lab.NetnsLab.Path;
import io.zcnet.qp.lab.NetnsLab.Side;
import io.zcnet.ring.EventLoopConfig;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One queue pair over four real network paths between this JVM (the root namespace) and a peer process
 * in a namespace of its own: veth pairs the test makes, {@code tbf} rate limits of unequal speed,
 * {@code nft} loss on one path, then mid-transfer one path made a black hole and another reset. Every
 * message must arrive with the right bytes exactly once (checked by the peer process), every work request
 * must complete once and in order, and the queue pair must end in RTS on the survivors. Needs root (the
 * reason is given when skipped). Subclassed once per engine; the peer runs the same engine.
 */
@Timeout(180)
abstract class MultipathNetnsContractTest {
    private static final int SIZE = 256 * 1024;
    private static final int MESSAGES = 192; // 48 MiB
    private static final Duration SILENCE = Duration.ofMillis(1000);
    private static final Pattern READY = Pattern.compile("READY port=(\\d+) rkey=(-?\\d+)");
    private static final Pattern DONE = Pattern.compile("DONE verified=(\\d+) mismatches=(\\d+) duplicates=(\\d+)");

    protected abstract EventLoopConfig.Choice engine();

    @BeforeAll
    static void requireLab() {
        String reason = NetnsLab.unavailableReason();
        assumeTrue(reason == null, () -> "multipath tests need network namespaces: " + reason);
    }

    @Test
    void unequalLossyPathsWithABlackHoleAndAResetLoseNothing() throws Exception {
        try (NetnsLab lab = new NetnsLab(); Arena arena = Arena.ofShared()) {
            Namespace peer = lab.namespace("peer");
            List<Path> paths = new ArrayList<>();
            int[] mbit = {40, 80, 120, 160};
            for (int rate : mbit) {
                Path p = lab.link(Namespace.ROOT, peer);
                lab.rateLimit(p, Side.A, rate);
                paths.add(p);
            }
            lab.dropPercent(paths.get(0), Side.A, 3);
            LabProcess server = lab.spawnJava(peer, MultipathPeer.class, engine().name(), Integer.toString(SIZE),
                    Integer.toString(MESSAGES), Long.toString(SILENCE.toMillis()));
            server.awaitOutput("READY", Duration.ofSeconds(30));
            Matcher ready = READY.matcher(server.output());
            assertTrue(ready.find(), server::output);
            int port = Integer.parseInt(ready.group(1));
            int rkey = Integer.parseInt(ready.group(2));

            QpConfig config = QpConfig.defaults().withSubflows(4)
                    .withTimeouts(Duration.ofSeconds(10), SILENCE);
            List<SubflowPath> subflows = new ArrayList<>();
            for (Path p : paths) {
                subflows.add(new SubflowPath(new InetSocketAddress(p.address(Side.A), 0),
                        new InetSocketAddress(p.address(Side.B), port)));
            }
            try (QpContext context = QpContext.open(engine())) {
                MemoryRegion source = context.register(arena.allocate((long) SIZE * MESSAGES, 4096), Access.ALL);
                MemorySegment data = source.segment();
                for (int m = 0; m < MESSAGES; m++) {
                    for (int o = 0; o < SIZE; o++) {
                        data.set(ValueLayout.JAVA_BYTE, (long) m * SIZE + o, MultipathPeer.pattern(m, o));
                    }
                }
                QueuePair qp = context.connect(subflows, config);
                assertEquals(4, qp.liveSubflows(), () -> qp + "; peer said: " + server.output());
                WorkRequest wr = new WorkRequest();
                WorkCompletion wc = new WorkCompletion();
                int posted = 0;
                int completed = 0;
                int window = 32;
                while (completed < MESSAGES) {
                    while (posted < MESSAGES && posted - completed < window) {
                        assertTrue(qp.postSend(wr.writeWithImmediate(posted, source.localKey(), (long) posted * SIZE,
                                SIZE, rkey, (long) posted * SIZE, posted)));
                        posted++;
                    }
                    assertTrue(qp.await(wc, Duration.ofSeconds(60)), () -> "stalled: " + qp.statistics());
                    assertTrue(wc.isSuccess(), () -> wc + " " + qp.statistics());
                    assertEquals(completed, wc.workRequestId(), "completions out of order or twice");
                    completed++;
                    if (completed == MESSAGES / 3) {
                        lab.blackHole(paths.get(3), Side.A);
                    } else if (completed == 2 * MESSAGES / 3) {
                        resetConnections(lab, peer, paths.get(1));
                    }
                }
                // Read before the end marker: once the peer has it, it closes its side, and this one follows.
                QpStatistics stats = qp.statistics();
                assertEquals(QpState.RTS, stats.state(), () -> stats + "; peer said: " + server.output());
                assertEquals(2, stats.subflows().stream().filter(QpStatistics.SubflowStatistics::alive).count(),
                        stats::toString);
                assertTrue(stats.framesResent() > 0, () -> "two paths failed mid-transfer but nothing was resent: " + stats);
                assertTrue(qp.postSend(wr.writeWithImmediate(-1, source.localKey(), 0, 0, rkey, 0, -1)));
                assertTrue(qp.await(wc, Duration.ofSeconds(60)), () -> "no end: " + qp.statistics());
                assertTrue(wc.isSuccess(), wc::toString);
                server.awaitOutput("DONE", Duration.ofSeconds(30));
                Matcher done = DONE.matcher(server.output());
                assertTrue(done.find(), server::output);
                assertEquals(MESSAGES, Integer.parseInt(done.group(1)), server::output);
                assertEquals(0, Integer.parseInt(done.group(2)), server::output);
                assertEquals(0, Integer.parseInt(done.group(3)), server::output);
                assertTrue(wc.isSuccess());
                System.out.println("multipath " + engine() + ": " + stats);
            }
        }
    }

    /** Makes the peer answer everything on {@code path} with a TCP reset, as a middlebox that lost its state would. */
    private static void resetConnections(NetnsLab lab, Namespace peer, Path path) {
        String device = path.device(Side.B);
        lab.run(peer, Duration.ofSeconds(10), "nft", "add table inet zcreset");
        lab.run(peer, Duration.ofSeconds(10), "nft", "add chain inet zcreset in { type filter hook input priority -10 ; }");
        lab.run(peer, Duration.ofSeconds(10), "nft", "add rule inet zcreset in iifname " + device
                + " meta l4proto tcp reject with tcp reset");
    }
}
