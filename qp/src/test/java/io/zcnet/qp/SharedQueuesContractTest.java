package io.zcnet.qp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.ring.EventLoopConfig;

import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The verbs tools for many clients: a shared completion queue many queue pairs complete into, a shared receive queue
 * whose receives are lent to them as their peers' credits, and a completion channel a thread sleeps on. A server
 * context with both shared queues on its listener, a client context with queue pairs of their own (or a shared
 * completion queue of its own), real sockets on loopback. Subclassed once per engine.
 */
@Timeout(120)
abstract class SharedQueuesContractTest {
    private static final Duration WAIT = QpPair.WAIT;
    private static final int SLOT = 64;

    protected abstract EventLoopConfig.Choice engine();

    private QpContext server;
    private QpContext client;
    private final Arena arena = Arena.ofShared();
    private MemoryRegion serverRegion;
    private MemoryRegion clientRegion;

    @BeforeEach
    void open() throws Exception {
        server = QpContext.open(engine());
        client = QpContext.open(engine());
        serverRegion = server.register(arena.allocate(1 << 20, 4096), Access.ALL);
        clientRegion = client.register(arena.allocate(1 << 20, 4096), Access.ALL);
    }

    @AfterEach
    void close() {
        try {
            client.close();
        } finally {
            try {
                server.close();
            } finally {
                arena.close();
            }
        }
    }

    private static QpConfig config() {
        return QpConfig.defaults().withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(2));
    }

    private QpListener listen(SharedQueues queues) throws Exception {
        return server.listen(new InetSocketAddress("127.0.0.1", 0), ListenerConfig.of(config()).withSharedQueues(queues));
    }

    private List<QueuePair> accept(QpListener listener, int n) throws InterruptedException {
        List<QueuePair> accepted = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            QueuePair qp = listener.accept(WAIT);
            assertNotNull(qp, "accepted " + i + " of " + n);
            accepted.add(qp);
        }
        return accepted;
    }

    private static WorkCompletion next(SharedCompletionQueue cq) {
        WorkCompletion wc = new WorkCompletion();
        assertTrue(cq.await(wc, WAIT), () -> "no completion within " + WAIT + " in " + cq);
        return wc;
    }

    private static int word(MemoryRegion r, long offset) {
        return r.segment().get(ValueLayout.JAVA_INT_UNALIGNED, offset);
    }

    private static void word(MemoryRegion r, long offset, int value) {
        r.segment().set(ValueLayout.JAVA_INT_UNALIGNED, offset, value);
    }

    /** Client {@code c} sends message {@code m}: its two words, from its own slot. */
    private void send(QueuePair qp, int c, int m, long wrId) {
        long at = (long) (c * 64 + m % 64) * SLOT;
        word(clientRegion, at, c);
        word(clientRegion, at + 4, m);
        assertTrue(qp.postSend(new WorkRequest().send(wrId, clientRegion.localKey(), at, 8)));
    }

    @Test
    void manyQueuePairsCompleteIntoOneQueueAndTakeReceivesFromOneEachCompletionNamingItsQueuePair() throws Exception {
        int clients = 12;
        int messages = 40;
        SharedCompletionQueue cq = server.createCompletionQueue(256);
        SharedReceiveQueue srq = server.createSharedReceiveQueue(64, 1, 2);
        for (int b = 0; b < 64; b++) {
            assertTrue(srq.postReceive(b, serverRegion.localKey(), (long) b * SLOT, SLOT));
        }
        QpListener listener = listen(new SharedQueues(cq, srq));
        SharedCompletionQueue clientCq = client.createCompletionQueue(64);
        List<QueuePair> clientQps = new ArrayList<>();
        Map<QueuePair, Integer> clientOf = new IdentityHashMap<>();
        for (int c = 0; c < clients; c++) {
            QueuePair qp = client.connect(listener.address(), config(), new SharedQueues(clientCq, null));
            clientOf.put(qp, c);
            clientQps.add(qp);
            for (int r = 0; r < 4; r++) {
                assertTrue(qp.postReceive(r, clientRegion.localKey(), (long) (1024 + c * 4 + r) * SLOT, SLOT));
            }
        }
        List<QueuePair> serverQps = accept(listener, clients);
        // Every client sends its messages in order; the server echoes each from the receive it landed in, and posts
        // that receive again to the shared queue once the echo completed.
        int[] sent = new int[clients];
        for (int c = 0; c < clients; c++) {
            send(clientQps.get(c), c, sent[c]++, c);
        }
        Map<QueuePair, Integer> lastSeen = new IdentityHashMap<>();
        Map<QueuePair, Integer> clientBehind = new IdentityHashMap<>();
        int[] echoed = new int[clients];
        int done = 0;
        WorkCompletion wc = new WorkCompletion();
        while (done < clients * messages) {
            while (cq.poll(wc)) {
                assertTrue(wc.isSuccess(), wc::toString);
                QueuePair from = wc.queuePair();
                assertTrue(serverQps.contains(from), "the completion names a queue pair of the listener: " + wc);
                int b = (int) wc.workRequestId();
                if (wc.opcode() == WorkCompletion.OP_RECV) {
                    int c = word(serverRegion, (long) b * SLOT);
                    int m = word(serverRegion, (long) b * SLOT + 4);
                    Integer client = clientBehind.putIfAbsent(from, c);
                    assertEquals(client == null ? c : client, c, "one queue pair carries one client's messages");
                    Integer last = lastSeen.put(from, m);
                    assertEquals(last == null ? 0 : last + 1, m, "a queue pair's receives complete in order");
                    assertTrue(from.postSend(new WorkRequest().send(b, serverRegion.localKey(), (long) b * SLOT, 8)));
                } else {
                    assertEquals(WorkCompletion.OP_SEND, wc.opcode(), wc::toString);
                    assertTrue(srq.postReceive(b, serverRegion.localKey(), (long) b * SLOT, SLOT));
                }
            }
            WorkCompletion reply = new WorkCompletion();
            while (clientCq.poll(reply)) {
                assertTrue(reply.isSuccess(), reply::toString);
                int c = clientOf.get(reply.queuePair());
                QueuePair qp = clientQps.get(c);
                if (reply.opcode() == WorkCompletion.OP_RECV) {
                    long at = (long) (1024 + c * 4 + (int) reply.workRequestId()) * SLOT;
                    assertEquals(c, word(clientRegion, at), "the echo came back to the client that sent it");
                    assertEquals(echoed[c]++, word(clientRegion, at + 4), "echoes come back in order");
                    done++;
                    assertTrue(qp.postReceive(reply.workRequestId(), clientRegion.localKey(), at, SLOT));
                    if (sent[c] < messages) {
                        send(qp, c, sent[c]++, c);
                    }
                }
            }
            Thread.onSpinWait();
        }
        for (int c = 0; c < clients; c++) {
            assertEquals(messages, echoed[c], "client " + c);
        }
        assertEquals(clients, lastSeen.size(), "every server queue pair received");
    }

    @Test
    void aFullSharedQueueHoldsCompletionsUntilPolledAndLosesNone() throws Exception {
        int clients = 6;
        int messages = 30;
        SharedCompletionQueue cq = server.createCompletionQueue(4);
        // As many lent to each as its client sends: the first to join would otherwise hold more than its share.
        SharedReceiveQueue srq = server.createSharedReceiveQueue(256, 1, messages);
        for (int b = 0; b < clients * messages; b++) {
            assertTrue(srq.postReceive(b, serverRegion.localKey(), (long) b * SLOT, SLOT));
        }
        QpListener listener = listen(new SharedQueues(cq, srq));
        List<QueuePair> clientQps = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            clientQps.add(client.connect(listener.address(), config()));
        }
        accept(listener, clients);
        for (int m = 0; m < messages; m++) {
            for (int c = 0; c < clients; c++) {
                send(clientQps.get(c), c, m, m);
            }
        }
        awaitTrue(() -> cq.size() == 4, "the queue full: the rest of the receives wait in their queue pairs");
        Map<QueuePair, Integer> lastSeen = new IdentityHashMap<>();
        Map<Integer, Integer> perClient = new HashMap<>();
        for (int i = 0; i < clients * messages; i++) {
            WorkCompletion wc = next(cq);
            assertTrue(wc.isSuccess(), wc::toString);
            long at = wc.workRequestId() * SLOT;
            int m = word(serverRegion, at + 4);
            Integer last = lastSeen.put(wc.queuePair(), m);
            assertEquals(last == null ? 0 : last + 1, m, "in order per queue pair");
            perClient.merge(word(serverRegion, at), 1, Integer::sum);
        }
        for (int c = 0; c < clients; c++) {
            assertEquals(messages, perClient.get(c), "client " + c + "'s messages, each once");
        }
        assertFalse(cq.poll(new WorkCompletion()), "nothing more than was sent");
    }

    @Test
    void aSendWaitsForTheSharedQueueToLendItsQueuePairAReceive() throws Exception {
        SharedCompletionQueue cq = server.createCompletionQueue(16);
        SharedReceiveQueue srq = server.createSharedReceiveQueue(16, 1, 1);
        QpListener listener = listen(new SharedQueues(cq, srq));
        QueuePair qp = client.connect(listener.address(), config());
        QueuePair accepted = accept(listener, 1).getFirst();
        send(qp, 0, 7, 1);
        Thread.sleep(300);
        assertEquals(0, cq.size(), "no receive was posted: the SEND has no credit and waits");
        assertEquals(QpState.RTS, qp.state());
        assertTrue(srq.postReceive(42, serverRegion.localKey(), 0, SLOT));
        WorkCompletion wc = next(cq);
        QpPair.assertSuccess(wc, 42, WorkCompletion.OP_RECV, 8);
        assertSame(accepted, wc.queuePair());
        assertEquals(7, word(serverRegion, 4));
        QpPair.assertSuccess(QpPair.next(qp), 1, WorkCompletion.OP_SEND, 8);
    }

    @Test
    void theLimitEventComesOnceWhenFewerThanTheLimitAreLeftToLend() throws Exception {
        SharedCompletionQueue cq = server.createCompletionQueue(16);
        SharedReceiveQueue srq = server.createSharedReceiveQueue(16, 1, 2);
        AtomicInteger events = new AtomicInteger();
        AtomicInteger leftAtEvent = new AtomicInteger(-1);
        srq.onLimit(() -> {
            events.incrementAndGet();
            leftAtEvent.set(srq.available());
        });
        for (int b = 0; b < 8; b++) {
            assertTrue(srq.postReceive(b, serverRegion.localKey(), (long) b * SLOT, SLOT));
        }
        QpListener listener = listen(new SharedQueues(cq, srq));
        QueuePair qp = client.connect(listener.address(), config());
        accept(listener, 1);
        awaitTrue(() -> srq.available() == 6, "two receives lent to the one queue pair");
        srq.armLimit(5);
        Thread.sleep(100);
        assertEquals(0, events.get(), "6 left, the limit is 5: no event yet");
        for (int m = 0; m < 2; m++) {
            send(qp, 0, m, m);
            next(cq);
        }
        awaitTrue(() -> events.get() == 1, "the limit event, once 4 were left");
        assertEquals(4, leftAtEvent.get());
        send(qp, 0, 2, 2);
        next(cq);
        Thread.sleep(100);
        assertEquals(1, events.get(), "disarmed after the event: no second one");
    }

    @Test
    void theChannelReturnsAnArmedQueueOnceItHasACompletionAndNoneWhenUnarmed() throws Exception {
        CompletionChannel channel = new CompletionChannel(2);
        SharedCompletionQueue quiet = server.createCompletionQueue(16, channel);
        SharedCompletionQueue busy = server.createCompletionQueue(16, channel);
        SharedReceiveQueue srq = server.createSharedReceiveQueue(16, 1, 4);
        for (int b = 0; b < 8; b++) {
            assertTrue(srq.postReceive(b, serverRegion.localKey(), (long) b * SLOT, SLOT));
        }
        QpListener listener = listen(new SharedQueues(busy, srq));
        QueuePair qp = client.connect(listener.address(), config());
        accept(listener, 1);
        send(qp, 0, 0, 0);
        assertNull(channel.await(Duration.ofMillis(300)), "an unarmed queue raises no event");
        assertEquals(1, busy.size(), "the completion is in the queue all the same");
        quiet.requestNotification();
        busy.requestNotification();
        assertTrue(busy.poll(new WorkCompletion()));
        AtomicInteger woken = new AtomicInteger();
        SharedCompletionQueue[] got = new SharedCompletionQueue[1];
        Thread waiter = Thread.ofPlatform().start(() -> {
            try {
                got[0] = channel.await(WAIT);
                woken.incrementAndGet();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Thread.sleep(100);
        assertEquals(0, woken.get(), "nothing completed since the arm: the waiter sleeps");
        send(qp, 0, 1, 1);
        waiter.join(WAIT.toMillis());
        assertSame(busy, got[0], "the queue that had the completion");
        assertTrue(busy.poll(new WorkCompletion()), "the completion the event was for");
        send(qp, 0, 2, 2);
        awaitTrue(() -> busy.size() == 1, "the third message's receive completed");
        assertNull(channel.poll(), "one event per arm");
        assertThrows(IllegalStateException.class, () -> server.createCompletionQueue(4, channel),
                "a channel serves as many queues as its capacity");
    }

    @Test
    void aClosedQueuePairsLentReceivesComeBackFlushedAndNamedAndTheQueuesRefuseWhatVerbsRefuse() throws Exception {
        SharedCompletionQueue cq = server.createCompletionQueue(16);
        SharedReceiveQueue srq = server.createSharedReceiveQueue(16, 1, 3);
        for (int b = 0; b < 5; b++) {
            assertTrue(srq.postReceive(b, serverRegion.localKey(), (long) b * SLOT, SLOT));
        }
        QpListener listener = listen(new SharedQueues(cq, srq));
        QueuePair qp = client.connect(listener.address(), config());
        QueuePair accepted = accept(listener, 1).getFirst();
        awaitTrue(() -> srq.available() == 2, "three receives lent");
        assertThrows(IllegalStateException.class, () -> accepted.postReceive(9, serverRegion.localKey(), 0, SLOT),
                "ibv_post_recv on a queue pair of an SRQ");
        assertThrows(IllegalStateException.class, () -> accepted.poll(new WorkCompletion()),
                "a queue pair of a shared completion queue is polled there");
        assertThrows(IllegalStateException.class, cq::close, "queue pairs still complete into it");
        assertThrows(IllegalStateException.class, srq::close, "queue pairs still take receives from it");
        assertThrows(IllegalArgumentException.class,
                () -> client.connect(listener.address(), config(), new SharedQueues(null, srq)), "another context's queue");
        assertThrows(IllegalArgumentException.class, () -> client.connect(listener.address(), config().withMaxSge(2, 1),
                new SharedQueues(null, client.createSharedReceiveQueue(4, 2, 1))), "receives wider than the queue pair takes");
        accepted.close();
        List<Long> flushed = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            WorkCompletion wc = next(cq);
            assertEquals(WorkCompletion.statusName(WorkCompletion.FLUSH_ERROR), WorkCompletion.statusName(wc.status()));
            assertSame(accepted, wc.queuePair(), "the closed queue pair, still named");
            flushed.add(wc.workRequestId());
        }
        assertEquals(List.of(0L, 1L, 2L), flushed, "the receives it was lent, in the order they were lent");
        assertEquals(2, srq.available(), "the ones not lent stay in the shared queue");
        qp.close();
        cq.close();
        srq.close();
    }

    @Test
    void aSharedQueuesListenerServesFromTheLoopAndOneThatThrowsFailsOnlyItsMembers() throws Exception {
        SharedCompletionQueue cq = server.createCompletionQueue(64);
        SharedReceiveQueue srq = server.createSharedReceiveQueue(16, 1, 4);
        for (int b = 0; b < 8; b++) {
            assertTrue(srq.postReceive(b, serverRegion.localKey(), (long) b * SLOT, SLOT));
        }
        WorkCompletion onLoop = new WorkCompletion();
        WorkRequest echo = new WorkRequest();
        cq.onCompletions(() -> { // the inline style: poll, echo and post again from the loop thread
            while (cq.poll(onLoop)) {
                int b = (int) onLoop.workRequestId();
                if (onLoop.opcode() == WorkCompletion.OP_RECV) {
                    onLoop.queuePair().postSend(echo.send(b, serverRegion.localKey(), (long) b * SLOT, 8));
                } else {
                    srq.postReceive(b, serverRegion.localKey(), (long) b * SLOT, SLOT);
                }
            }
        });
        QpListener listener = listen(new SharedQueues(cq, srq));
        QueuePair qp = client.connect(listener.address(), config());
        QueuePair accepted = accept(listener, 1).getFirst();
        // A neighbour on the same loop, with its own queues, that must outlive the throwing listener.
        QpListener plain = server.listen(new InetSocketAddress("127.0.0.1", 0), config());
        QueuePair neighbourClient = client.connect(plain.address(), config());
        QueuePair neighbour = plain.accept(WAIT);
        assertNotNull(neighbour);
        for (int m = 0; m < 20; m++) {
            assertTrue(qp.postReceive(m, clientRegion.localKey(), 4096L * SLOT, SLOT));
            send(qp, 1, m, m);
            List<WorkCompletion> two = QpPair.next(qp, 2); // the send's and the echo's, in either order
            two.sort(java.util.Comparator.comparingInt(WorkCompletion::opcode));
            QpPair.assertSuccess(two.get(0), m, WorkCompletion.OP_SEND, 8);
            QpPair.assertSuccess(two.get(1), m, WorkCompletion.OP_RECV, 8);
            assertEquals(m, word(clientRegion, 4096L * SLOT + 4), "the echo of message " + m);
        }
        cq.onCompletions(() -> {
            throw new IllegalStateException("listener bug");
        });
        send(qp, 1, 20, 20);
        awaitTrue(() -> accepted.state() == QpState.ERROR, "the member failed");
        assertEquals(WorkCompletion.statusName(WorkCompletion.GENERAL_ERROR),
                WorkCompletion.statusName(accepted.errorStatus()));
        assertTrue(accepted.errorReason().contains("listener bug"), accepted.errorReason());
        assertNull(server.failure(), "the loop runs on");
        assertEquals(QpState.RTS, neighbour.state());
        assertTrue(neighbour.postReceive(1, serverRegion.localKey(), 0, SLOT));
        send(neighbourClient, 2, 0, 5);
        QpPair.assertSuccess(QpPair.next(neighbour), 1, WorkCompletion.OP_RECV, 8);
    }

    private static void awaitTrue(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("still not: " + what);
            }
            Thread.sleep(2);
        }
    }
}
