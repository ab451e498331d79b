package io.zcnet.qp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.LoopIdle;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A context of several loop threads: queue pairs spread over them and carry data, a JOIN lands on its queue pair's
 * loop, the listener's bounds hold across loops, and shared queues bind their queue pairs to their loop. Subclassed
 * once per engine.
 */
@Timeout(120)
abstract class ManyLoopsContractTest {
    private static final int SIZE = 4096;
    private static final InetSocketAddress ANY = new InetSocketAddress("127.0.0.1", 0);

    protected abstract EventLoopConfig.Choice engine();

    private EventLoopConfig loops() {
        return EventLoopConfig.defaults().withEngine(engine());
    }

    private static QpConfig config() {
        return QpConfig.defaults().withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(2));
    }

    private static void fill(MemorySegment memory, long at, int seed) {
        memory.set(ValueLayout.JAVA_INT_UNALIGNED, at, seed);
        for (int k = 4; k < SIZE; k++) {
            memory.set(ValueLayout.JAVA_BYTE, at + k, (byte) (seed * 31 + k));
        }
    }

    private static void assertFilled(MemorySegment memory, long at, int seed, String what) {
        assertEquals(seed, memory.get(ValueLayout.JAVA_INT_UNALIGNED, at), what + ": whose message");
        for (int k = 4; k < SIZE; k++) {
            if (memory.get(ValueLayout.JAVA_BYTE, at + k) != (byte) (seed * 31 + k)) {
                throw new AssertionError(what + ": byte " + k + " of message " + seed + " differs");
            }
        }
    }

    /** Twenty connections that never send a byte, ten from each of two sources of 127/8, into {@code opened}. */
    private static void openSilent(InetSocketAddress listener, List<SocketChannel> opened) throws IOException {
        for (int i = 0; i < 20; i++) {
            SocketChannel c = SocketChannel.open();
            opened.add(c);
            c.bind(new InetSocketAddress(i % 2 == 0 ? "127.0.0.2" : "127.0.0.3", 0));
            c.connect(listener);
        }
    }

    private static int[] perLoop(List<QueuePair> queuePairs, int loops) {
        int[] n = new int[loops];
        for (QueuePair qp : queuePairs) {
            n[qp.loop()]++;
        }
        return n;
    }

    /** Each client sends its own pattern, each server queue pair checks it and echoes it back, each client checks that. */
    private static void echoOnce(List<QueuePair> clients, List<QueuePair> servers, MemorySegment clientMemory,
            MemoryRegion clientRegion, MemorySegment serverMemory, MemoryRegion serverRegion) {
        int n = clients.size();
        WorkRequest wr = new WorkRequest();
        for (int i = 0; i < n; i++) {
            assertTrue(servers.get(i).postReceive(i, serverRegion.localKey(), (long) i * SIZE, SIZE));
            assertTrue(clients.get(i).postReceive(1000 + i, clientRegion.localKey(), (long) (n + i) * SIZE, SIZE));
            fill(clientMemory, (long) i * SIZE, i);
            assertTrue(clients.get(i).postSend(wr.send(i, clientRegion.localKey(), (long) i * SIZE, SIZE)));
        }
        for (int j = 0; j < n; j++) {
            QueuePair server = servers.get(j);
            QpPair.assertSuccess(QpPair.next(server), j, WorkCompletion.OP_RECV, SIZE);
            int who = serverMemory.get(ValueLayout.JAVA_INT_UNALIGNED, (long) j * SIZE);
            assertFilled(serverMemory, (long) j * SIZE, who, "server queue pair " + j + " on loop " + server.loop());
            assertTrue(server.postSend(wr.send(500 + j, serverRegion.localKey(), (long) j * SIZE, SIZE)));
            QpPair.assertSuccess(QpPair.next(server), 500 + j, WorkCompletion.OP_SEND, SIZE);
        }
        for (int i = 0; i < n; i++) {
            Set<Long> done = new HashSet<>();
            for (int c = 0; c < 2; c++) {
                WorkCompletion wc = QpPair.next(clients.get(i));
                assertTrue(wc.isSuccess(), wc::toString);
                done.add(wc.workRequestId());
            }
            assertEquals(Set.of((long) i, 1000L + i), done, "client " + i + ": its SEND and the echo");
            assertFilled(clientMemory, (long) (n + i) * SIZE, i, "the echo to client " + i);
        }
    }

    @Test
    void queuePairsSpreadEvenlyOverTheLoopsAndEachCarriesVerifiedDataBothWays() throws Exception {
        int n = 12;
        try (QpContext server = QpContext.open(loops(), 3); QpContext client = QpContext.open(loops(), 2);
                Arena arena = Arena.ofShared()) {
            assertEquals(3, server.loops());
            QpListener listener = server.listen(ANY, config());
            MemorySegment clientMemory = arena.allocate(2L * n * SIZE, 4096);
            MemorySegment serverMemory = arena.allocate((long) n * SIZE, 4096);
            // One registry per context: a key is valid whichever loop the queue pair using it lives on.
            MemoryRegion clientRegion = client.register(clientMemory, Access.ALL);
            MemoryRegion serverRegion = server.register(serverMemory, Access.ALL);
            List<QueuePair> clients = new ArrayList<>();
            List<QueuePair> servers = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                clients.add(client.connect(listener.address(), config()));
                QueuePair accepted = listener.accept(QpPair.WAIT);
                assertNotNull(accepted, "accepted " + i);
                servers.add(accepted);
            }
            assertArrayEquals(new int[] {4, 4, 4}, perLoop(servers, 3), "the listener's queue pairs, by loop");
            assertArrayEquals(new int[] {6, 6}, perLoop(clients, 2), "connect's queue pairs, by loop");
            assertArrayEquals(new int[] {4, 4, 4}, server.loopLoads());
            echoOnce(clients, servers, clientMemory, clientRegion, serverMemory, serverRegion);
            ContextStatistics stats = server.statistics();
            assertEquals(n, stats.ready(), "summed over the loops: " + stats);
            assertEquals(0, stats.handshakes(), stats::toString);
            for (QueuePair qp : servers) {
                qp.close();
            }
            QpPair.await(() -> java.util.Arrays.stream(server.loopLoads()).sum() == 0, "every closed queue pair forgotten");
        }
    }

    @Test
    void joinsLandOnTheirQueuePairsLoopAndItsSubflowsCarryData() throws Exception {
        try (QpContext server = QpContext.open(loops(), 3); QpContext client = QpContext.open(loops(), 2);
                Arena arena = Arena.ofShared()) {
            QpListener listener = server.listen(ANY, config());
            QueuePair first = client.connect(listener.address(), config());
            assertNotNull(listener.accept(QpPair.WAIT));
            // The accepting loop holds one queue pair now: the next OPEN goes to another, and so must its JOINs.
            QueuePair multi = client.connect(listener.address(), config().withSubflows(3));
            QueuePair accepted = listener.accept(QpPair.WAIT);
            assertNotNull(accepted);
            assertNotEquals(0, accepted.loop(), "the OPEN went to a loop the listener does not accept on");
            assertEquals(List.of(), multi.joinFailures());
            assertEquals(3, multi.liveSubflows());
            assertEquals(3, accepted.liveSubflows(), "every JOIN attached on its queue pair's loop");
            assertEquals(4, (int) multi.addSubflow(SubflowPath.to(listener.address())).get(10, TimeUnit.SECONDS) + 1,
                    "a later subflow, from the queue pair's own loop");
            QpPair.await(() -> accepted.liveSubflows() == 4, "the fourth subflow on the accepting side");
            MemorySegment clientMemory = arena.allocate(2L * SIZE, 4096);
            MemorySegment serverMemory = arena.allocate(SIZE, 4096);
            echoOnce(List.of(multi), List.of(accepted), clientMemory, client.register(clientMemory, Access.ALL),
                    serverMemory, server.register(serverMemory, Access.ALL));
            first.close();
        }
    }

    @Test
    void theListenersBoundsHoldAcrossLoops() throws Exception {
        try (QpContext server = QpContext.open(loops(), 3); QpContext client = QpContext.open(loops(), 2)) {
            QpListener small = server.listen(ANY, ListenerConfig.of(config()).withLimits(16, 16, 2));
            List<QueuePair> opened = new ArrayList<>();
            try {
                opened.add(client.connect(small.address(), config()));
                opened.add(client.connect(small.address(), config()));
                QpPair.await(() -> small.waiting() == 2, "two waiting");
                IOException busy = assertThrows(IOException.class, () -> client.connect(small.address(), config()));
                assertTrue(busy.getMessage().contains("waiting to be accepted"), busy::getMessage);
                QpPair.await(() -> small.refused(Refusal.BUSY) == 1, "one refused BUSY, on whichever loop it was routed to");
                Set<Integer> loopsUsed = new HashSet<>();
                for (int i = 0; i < 2; i++) {
                    QueuePair accepted = small.accept(QpPair.WAIT);
                    loopsUsed.add(accepted.loop());
                    opened.add(accepted);
                }
                assertEquals(2, loopsUsed.size(), "the two waiting queue pairs were on two loops");
            } finally {
                for (QueuePair qp : opened) {
                    qp.close();
                }
            }
            QpPair.await(() -> java.util.Arrays.stream(server.loopLoads()).sum() == 0, "the refused OPEN's place given back");

            // One queue pair pinned to the accepting loop (by its shared queue there): the slow client's OPEN, routed
            // to the least loaded loop, moves to another loop.
            SharedCompletionQueue onFirst = server.createCompletionQueue(16, null, 0);
            QpListener pinning = server.listen(ANY, ListenerConfig.of(config()).withSharedQueues(new SharedQueues(onFirst, null)));
            QueuePair anchor = client.connect(pinning.address(), config());
            QueuePair pinned = pinning.accept(QpPair.WAIT);
            assertEquals(0, pinned.loop());
            QpListener tight = server.listen(ANY, ListenerConfig.of(config()).withLimits(8, 4, 64));
            List<SocketChannel> silent = new ArrayList<>();
            try (RawPeer slow = new RawPeer(SocketChannel.open(tight.address()))) {
                slow.sendOpen(config());
                assertEquals(HandshakeMessage.CHALLENGE, slow.readAnswer());
                slow.learnOpen();
                assertEquals(1, tight.handshakes(), "the moved handshake still counts against the bound");
                openSilent(tight.address(), silent);
                QpPair.await(() -> tight.refused(Refusal.HANDSHAKE_LIMIT) + tight.refused(Refusal.SOURCE_LIMIT) >= 20 - 7,
                        "the silent connections dropped: " + tight);
                assertTrue(tight.handshakes() <= 8, "at most the bound in progress, on every loop: " + tight);
                slow.sendProof(slow.openProof(), 0);
                assertTrue(slow.read(HandshakeMessage.LENGTH, io.zcnet.framing.FrameHeader.LENGTH),
                        "the client past its first message, on another loop, was dropped for silent ones");
                QueuePair kept = tight.accept(QpPair.WAIT);
                assertNotNull(kept);
                assertNotEquals(0, kept.loop(), "its handshake finished on the loop it moved to");
            } finally {
                for (SocketChannel c : silent) {
                    c.close();
                }
                anchor.close();
                pinned.close();
            }
            QpPair.await(() -> tight.handshakes() == 0, "every handshake ended and counted out: " + tight);
            onFirst.close();
        }
    }

    @Test
    void sharedQueuesKeepTheirQueuePairsOnTheirLoop() throws Exception {
        try (QpContext server = QpContext.open(loops(), 3); QpContext client = QpContext.open(loops(), 2);
                Arena arena = Arena.ofShared()) {
            SharedCompletionQueue cq = server.createCompletionQueue(64, null, 2);
            QpListener listener = server.listen(ANY, ListenerConfig.of(config())
                    .withSharedQueues(new SharedQueues(cq, null)));
            MemorySegment serverMemory = arena.allocate(4L * SIZE, 4096);
            MemoryRegion serverRegion = server.register(serverMemory, Access.ALL);
            MemorySegment clientMemory = arena.allocate(SIZE, 4096);
            MemoryRegion clientRegion = client.register(clientMemory, Access.ALL);
            List<QueuePair> clients = new ArrayList<>();
            List<QueuePair> servers = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                clients.add(client.connect(listener.address(), config()));
                servers.add(listener.accept(QpPair.WAIT));
            }
            assertArrayEquals(new int[] {0, 0, 4}, perLoop(servers, 3), "all on the shared queue's loop");
            WorkRequest wr = new WorkRequest();
            for (int i = 0; i < 4; i++) {
                assertTrue(servers.get(i).postReceive(i, serverRegion.localKey(), (long) i * SIZE, SIZE));
            }
            fill(clientMemory, 0, 7);
            for (QueuePair c : clients) {
                assertTrue(c.postSend(wr.send(1, clientRegion.localKey(), 0, SIZE)));
            }
            Set<QueuePair> from = new HashSet<>();
            WorkCompletion wc = new WorkCompletion();
            for (int i = 0; i < 4; i++) {
                assertTrue(cq.await(wc, QpPair.WAIT), "completion " + i);
                QpPair.assertSuccess(wc, wc.workRequestId(), WorkCompletion.OP_RECV, SIZE);
                from.add(wc.queuePair());
                assertFilled(serverMemory, wc.workRequestId() * SIZE, 7, "into the shared queue");
            }
            assertEquals(new HashSet<>(servers), from, "each queue pair's completion, named");

            SharedCompletionQueue clientCq = client.createCompletionQueue(16, null, 1);
            List<SubflowPath> path = List.of(SubflowPath.to(listener.address()));
            IllegalArgumentException elsewhere = assertThrows(IllegalArgumentException.class,
                    () -> client.connect(path, config(), new SharedQueues(clientCq, null), 0));
            assertTrue(elsewhere.getMessage().contains("loop 1"), elsewhere::getMessage);
            SharedReceiveQueue otherLoop = client.createSharedReceiveQueue(16, 1, 1, 0);
            assertThrows(IllegalArgumentException.class,
                    () -> client.connect(path, config(), new SharedQueues(clientCq, otherLoop)));
            QueuePair bound = client.connect(path, config(), new SharedQueues(clientCq, null));
            assertEquals(1, bound.loop(), "connect puts it on its shared queue's loop");
            QueuePair boundPeer = listener.accept(QpPair.WAIT);
            assertEquals(2, boundPeer.loop());
            bound.close();
            boundPeer.close();
            for (QueuePair qp : servers) {
                qp.close();
            }
            cq.close();
        }
    }

    @Test
    void aLoopThatDiesFailsItsOwnQueuePairsAndTheOthersCarryOn() throws Exception {
        try (QpContext server = QpContext.open(loops(), 2); QpContext client = QpContext.open(loops(), 2);
                Arena arena = Arena.ofShared()) {
            QpListener listener = server.listen(ANY, config());
            List<QueuePair> clients = new ArrayList<>();
            List<QueuePair> servers = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                clients.add(client.connect(listener.address(), config()));
                servers.add(listener.accept(QpPair.WAIT));
            }
            assertArrayEquals(new int[] {1, 1}, perLoop(servers, 2));
            QueuePair doomed = servers.get(0).loop() == 1 ? servers.get(0) : servers.get(1);
            QueuePair survivor = doomed == servers.get(0) ? servers.get(1) : servers.get(0);
            doomed.home().execute(() -> {
                throw new IllegalStateException("loop 1 broke");
            });
            QpPair.await(() -> server.failure() != null, "the loop's death seen by the context");
            assertTrue(server.failure().getMessage().contains("loop 1 broke"), server.failure()::toString);
            QpPair.await(() -> doomed.state() == QpState.ERROR, "its queue pair in ERROR");
            assertEquals(QpState.RTS, survivor.state(), "the other loop's queue pair carries on");
            MemorySegment clientMemory = arena.allocate(2L * SIZE, 4096);
            MemorySegment serverMemory = arena.allocate(SIZE, 4096);
            QueuePair survivorPeer = clients.get(servers.indexOf(survivor));
            echoOnce(List.of(survivorPeer), List.of(survivor), clientMemory, client.register(clientMemory, Access.ALL),
                    serverMemory, server.register(serverMemory, Access.ALL));
            assertEquals(1, server.statistics().ready(), "the living loop still answers");
            QueuePair fresh = client.connect(listener.address(), config());
            QueuePair freshPeer = listener.accept(QpPair.WAIT);
            assertEquals(0, freshPeer.loop(), "a new queue pair goes to the loop that runs");
            assertEquals(QpState.RTS, fresh.state());
        }
    }

    @Test
    void badLoopCountsAndIndicesAreRefusedClearly() throws Exception {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> QpContext.open(loops(), 0)).getMessage()
                .contains("outside 1.." + QpContext.MAX_LOOPS));
        assertThrows(IllegalArgumentException.class, () -> QpContext.open(loops(), QpContext.MAX_LOOPS + 1));
        IllegalArgumentException busy = assertThrows(IllegalArgumentException.class,
                () -> QpContext.open(loops().withIdle(LoopIdle.yielding()), 2));
        assertTrue(busy.getMessage().contains("busy-polling"), busy::getMessage);
        try (QpContext two = QpContext.open(loops(), 2)) {
            List<SubflowPath> path = List.of(SubflowPath.to(new InetSocketAddress("127.0.0.1", 9)));
            IllegalArgumentException noLoop = assertThrows(IllegalArgumentException.class,
                    () -> two.connect(path, config(), SharedQueues.NONE, 2));
            assertTrue(noLoop.getMessage().contains("outside 0..1"), noLoop::getMessage);
            assertThrows(IllegalArgumentException.class, () -> two.createCompletionQueue(16, null, -1));
            IllegalArgumentException noJobLoop = assertThrows(IllegalArgumentException.class,
                    () -> two.runOnLoop(2, () -> { }));
            assertTrue(noJobLoop.getMessage().contains("outside 0..1"), noJobLoop::getMessage);
            int[] ran = new int[2];
            for (int loop = 0; loop < 2; loop++) {
                int here = loop;
                two.runOnLoop(here, () -> ran[here]++);
            }
            assertArrayEquals(new int[] {1, 1}, ran, "a job on each loop ran once");
        }
    }
}
