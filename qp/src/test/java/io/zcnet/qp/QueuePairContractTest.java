package io.zcnet.qp;

import static io.zcnet.qp.QpPair.assertFilled;
import static io.zcnet.qp.QpPair.assertStatus;
import static io.zcnet.qp.QpPair.assertSuccess;
import static io.zcnet.qp.QpPair.fill;
import static io.zcnet.qp.QpPair.next;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.LoopIdle;
import io.zcnet.ring.LoopJob;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Queue-pair semantics over real loopback TCP on one engine: every work-request kind, sizes from 0 B to
 * 16 MiB - 1 checked byte for byte, completion order, flow control, striping and failover over several
 * subflows, and the error flush. Subclassed once per engine.
 */
@Timeout(120)
abstract class QueuePairContractTest {
    static final int MIB = 1 << 20;
    static final int[] SIZES = {0, 1, 63, 4096, 65535, 65536, 65537, 1 << 20, 3 * (1 << 20) + 17, (1 << 24) - 1};

    protected abstract EventLoopConfig.Choice engine();

    QpConfig config() {
        return QpConfig.defaults();
    }

    @Test
    void sendsOfEverySizeLandInPostedReceivesInOrder() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), 64L * MIB)) {
            long offset = 0;
            long[] at = new long[SIZES.length];
            for (int i = 0; i < SIZES.length; i++) {
                at[i] = offset;
                assertTrue(p.server.postReceive(100 + i, p.serverRegion.localKey(), offset, SIZES[i]));
                fill(p.clientRegion, offset, SIZES[i], i);
                offset += SIZES[i];
            }
            WorkRequest wr = new WorkRequest();
            for (int i = 0; i < SIZES.length; i++) {
                if (i % 2 == 0) {
                    wr.send(i, p.clientRegion.localKey(), at[i], SIZES[i]);
                } else {
                    wr.sendWithImmediate(i, p.clientRegion.localKey(), at[i], SIZES[i], 0x1000 + i);
                }
                assertTrue(p.client.postSend(wr));
            }
            for (int i = 0; i < SIZES.length; i++) {
                WorkCompletion wc = next(p.server);
                assertSuccess(wc, 100 + i, WorkCompletion.OP_RECV, SIZES[i]);
                assertEquals(i % 2 == 1, wc.hasImmediate(), wc::toString);
                if (i % 2 == 1) {
                    assertEquals(0x1000 + i, wc.immediate());
                }
                assertFilled(p.serverRegion, at[i], SIZES[i], i);
            }
            for (int i = 0; i < SIZES.length; i++) {
                assertSuccess(next(p.client), i, WorkCompletion.OP_SEND, SIZES[i]);
            }
        }
    }

    @Test
    void writesAndWritesWithImmediatePlaceAtTheRemoteOffset() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), 80L * MIB)) {
            int big = 40 * MIB + 3; // several messages: an operation larger than one message is split
            fill(p.clientRegion, 0, big, 7);
            WorkRequest wr = new WorkRequest();
            assertTrue(p.client.postSend(wr.write(1, p.clientRegion.localKey(), 0, big, p.serverRegion.remoteKey(), 4096)));
            assertSuccess(next(p.client), 1, WorkCompletion.OP_RDMA_WRITE, big);
            assertFilled(p.serverRegion, 4096, big, 7);

            assertTrue(p.server.postReceive(55, p.serverRegion.localKey(), 0, 0));
            fill(p.clientRegion, 0, 5000, 8);
            assertTrue(p.client.postSend(wr.writeWithImmediate(2, p.clientRegion.localKey(), 0, 5000,
                    p.serverRegion.remoteKey(), 60 * MIB, 0xCAFE)));
            WorkCompletion received = next(p.server);
            assertSuccess(received, 55, WorkCompletion.OP_RECV_RDMA_WITH_IMM, received.byteCount());
            assertTrue(received.hasImmediate());
            assertEquals(0xCAFE, received.immediate());
            assertFilled(p.serverRegion, 60 * MIB, 5000, 8);
            assertSuccess(next(p.client), 2, WorkCompletion.OP_RDMA_WRITE, 5000);
        }
    }

    @Test
    void readsPullTheRemoteRegion() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), 64L * MIB)) {
            WorkRequest wr = new WorkRequest();
            long offset = 0;
            for (int i = 0; i < SIZES.length; i++) {
                fill(p.serverRegion, offset, SIZES[i], 40 + i);
                assertTrue(p.client.postSend(wr.read(i, p.clientRegion.localKey(), offset, SIZES[i],
                        p.serverRegion.remoteKey(), offset)));
                offset += SIZES[i];
            }
            offset = 0;
            for (int i = 0; i < SIZES.length; i++) {
                assertSuccess(next(p.client), i, WorkCompletion.OP_RDMA_READ, SIZES[i]);
                assertFilled(p.clientRegion, offset, SIZES[i], 40 + i);
                offset += SIZES[i];
            }
        }
    }

    @Test
    void busyPollingContextsCarrySendsWritesAndReads() throws Exception {
        EventLoopConfig busy = EventLoopConfig.defaults().withEngine(engine()).withIdle(LoopIdle.yielding());
        try (QpPair p = new QpPair(busy, config(), 4L * MIB)) {
            assertTrue(p.clientContext.isBusyPolling() && p.serverContext.isBusyPolling());
            WorkRequest wr = new WorkRequest();
            int bytes = MIB + 7;
            fill(p.clientRegion, 0, bytes, 1);
            assertTrue(p.server.postReceive(10, p.serverRegion.localKey(), 0, bytes));
            assertTrue(p.client.postSend(wr.send(1, p.clientRegion.localKey(), 0, bytes)));
            assertSuccess(next(p.server), 10, WorkCompletion.OP_RECV, bytes);
            assertFilled(p.serverRegion, 0, bytes, 1);
            assertSuccess(next(p.client), 1, WorkCompletion.OP_SEND, bytes);

            writeVerified(p, 2, bytes, 2);

            fill(p.serverRegion, 2 * MIB, bytes, 3);
            assertTrue(p.client.postSend(wr.read(3, p.clientRegion.localKey(), 2 * MIB, bytes, p.serverRegion.remoteKey(),
                    2 * MIB)));
            assertSuccess(next(p.client), 3, WorkCompletion.OP_RDMA_READ, bytes);
            assertFilled(p.clientRegion, 2 * MIB, bytes, 3);
        }
        try (QpPair p = new QpPair(engine(), config(), MIB)) {
            assertFalse(p.clientContext.isBusyPolling(), "a context sleeps when idle unless told otherwise");
        }
    }

    @Test
    void aContextDrivenByTheThreadThatOpenedItConnectsAcceptsAndCarriesEveryKindOfWork() throws Exception {
        EventLoopConfig busy = EventLoopConfig.defaults().withEngine(engine()).withIdle(LoopIdle.yielding());
        QpConfig config = config();
        int bytes = MIB + 7;
        WorkRequest wr = new WorkRequest();
        try (Arena arena = Arena.ofShared();
             QpContext peer = QpContext.open(engine());
             QpContext driven = QpContext.openOnCallingThread(busy);
             QpListener peerListener = peer.listen(new InetSocketAddress("127.0.0.1", 0), config);
             QpListener drivenListener = driven.listen(new InetSocketAddress("127.0.0.1", 0), config)) {
            assertTrue(driven.isDrivenByCallingThread() && driven.isBusyPolling());
            assertFalse(peer.isDrivenByCallingThread());
            MemoryRegion mine = driven.register(arena.allocate(4L * MIB, 4096), Access.ALL);
            MemoryRegion theirs = peer.register(arena.allocate(4L * MIB, 4096), Access.ALL);

            // This thread connects: its waits turn the driven loop, the peer's loop thread answers.
            QueuePair out = driven.connect(peerListener.address(), config);
            QueuePair outPeer = peerListener.accept(QpPair.WAIT);
            assertNotNull(outPeer);
            fill(mine, 0, bytes, 1);
            assertTrue(outPeer.postReceive(10, theirs.localKey(), 0, bytes));
            assertTrue(out.postSend(wr.send(1, mine.localKey(), 0, bytes)));
            assertSuccess(next(out), 1, WorkCompletion.OP_SEND, bytes); // acknowledged: the peer has it all
            assertSuccess(next(outPeer), 10, WorkCompletion.OP_RECV, bytes);
            assertFilled(theirs, 0, bytes, 1);
            fill(mine, 0, bytes, 2);
            assertTrue(out.postSend(wr.write(2, mine.localKey(), 0, bytes, theirs.remoteKey(), MIB)));
            assertSuccess(next(out), 2, WorkCompletion.OP_RDMA_WRITE, bytes);
            assertFilled(theirs, MIB, bytes, 2);
            fill(theirs, 2 * MIB, bytes, 3);
            assertTrue(out.postSend(wr.read(3, mine.localKey(), 2 * MIB, bytes, theirs.remoteKey(), 2 * MIB)));
            assertSuccess(next(out), 3, WorkCompletion.OP_RDMA_READ, bytes);
            assertFilled(mine, 2 * MIB, bytes, 3);

            // The peer connects from a thread of its own while this one accepts, which runs the handshake.
            CompletableFuture<QueuePair> connecting = CompletableFuture.supplyAsync(() -> {
                try {
                    return peer.connect(drivenListener.address(), config);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            QueuePair in = drivenListener.accept(QpPair.WAIT);
            assertNotNull(in, "this thread's accept ran the handshake");
            QueuePair inPeer = connecting.get(30, TimeUnit.SECONDS);
            fill(theirs, 0, bytes, 4);
            assertTrue(in.postReceive(20, mine.localKey(), 0, bytes));
            assertTrue(inPeer.postSend(wr.sendWithImmediate(4, theirs.localKey(), 0, bytes, 0x1234)));
            WorkCompletion received = next(in);
            assertSuccess(received, 20, WorkCompletion.OP_RECV, bytes);
            assertEquals(0x1234, received.immediate());
            assertFilled(mine, 0, bytes, 4);
            // The peer's SEND completes on this side's acknowledgement, which leaves only while this thread turns
            // its loop: a thread that drives its context waits for anything by driving it.
            WorkCompletion sent = new WorkCompletion();
            long deadline = System.nanoTime() + QpPair.WAIT.toNanos();
            while (!inPeer.poll(sent) && System.nanoTime() < deadline) {
                driven.progress(TimeUnit.MILLISECONDS.toNanos(1));
            }
            assertSuccess(sent, 4, WorkCompletion.OP_SEND, bytes);

            // Nothing that would wait for the loop is taken from another thread: nobody would turn it.
            String driver = Thread.currentThread().getName();
            CompletableFuture<List<String>> refusals = CompletableFuture.supplyAsync(() -> List.of(
                    assertThrows(IllegalStateException.class, () -> driven.connect(peerListener.address(), config))
                            .getMessage(),
                    assertThrows(IllegalStateException.class, out::statistics).getMessage(),
                    assertThrows(IllegalStateException.class, driven::close).getMessage()));
            for (String message : refusals.get(30, TimeUnit.SECONDS)) {
                assertTrue(message.contains(driver), "the refusal names the driving thread: " + message);
            }
            assertEquals(QpState.RTS, out.state(), "refusals change nothing");

            // Posted and flushed, a SEND reaches the peer while this thread turns nothing at all.
            fill(mine, 0, bytes, 5);
            assertTrue(outPeer.postReceive(11, theirs.localKey(), 0, bytes));
            assertTrue(out.postSend(wr.send(5, mine.localKey(), 0, bytes)));
            assertTrue(driven.flush(QpPair.WAIT.toNanos()), "everything was handed to the kernel");
            assertSuccess(next(outPeer), 11, WorkCompletion.OP_RECV, bytes);
            assertFilled(theirs, 0, bytes, 5);
            Throwable offThread = assertThrows(java.util.concurrent.CompletionException.class,
                    () -> CompletableFuture.runAsync(() -> driven.flush(0)).join()).getCause();
            assertTrue(offThread instanceof IllegalStateException, "only the driving thread may flush: " + offThread);
            out.close();
            in.close();
        }
    }

    @Test
    void aFlushThatWaitsForThePeersCreditSleepsInsteadOfSpinning() throws Exception {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isCurrentThreadCpuTimeSupported(), "this JVM cannot tell a thread's CPU time");
        QpConfig config = config();
        WorkRequest wr = new WorkRequest();
        try (Arena arena = Arena.ofShared();
             QpContext peer = QpContext.open(engine());
             QpContext driven = QpContext.openOnCallingThread(EventLoopConfig.defaults().withEngine(engine()));
             QpListener peerListener = peer.listen(new InetSocketAddress("127.0.0.1", 0), config)) {
            assertFalse(driven.isBusyPolling());
            MemoryRegion mine = driven.register(arena.allocate(4096), Access.ALL);
            MemoryRegion theirs = peer.register(arena.allocate(4096), Access.ALL);
            QueuePair out = driven.connect(peerListener.address(), config);
            QueuePair outPeer = peerListener.accept(QpPair.WAIT);
            assertNotNull(outPeer);
            assertTrue(outPeer.postReceive(1, theirs.localKey(), 0, 64));
            fill(mine, 0, 128, 7);
            assertTrue(out.postSend(wr.send(1, mine.localKey(), 0, 64)));
            assertTrue(out.postSend(wr.send(2, mine.localKey(), 64, 64))); // no receive, no credit: it must wait

            // The peer grants the second credit a while later; until then the flush has nothing to do but wait.
            long grantAfter = TimeUnit.MILLISECONDS.toNanos(400);
            long start = System.nanoTime();
            long cpuBefore = threads.getCurrentThreadCpuTime();
            CompletableFuture<Boolean> grant = CompletableFuture.supplyAsync(() -> {
                long until = System.nanoTime() + grantAfter;
                for (long left = grantAfter; left > 0; left = until - System.nanoTime()) {
                    LockSupport.parkNanos(left); // may return early: waits out the rest
                }
                return outPeer.postReceive(2, theirs.localKey(), 64, 64);
            });
            assertTrue(driven.flush(QpPair.WAIT.toNanos()), "both SENDs were handed over once the credit came");
            long cpu = threads.getCurrentThreadCpuTime() - cpuBefore;
            long wall = System.nanoTime() - start;
            assertTrue(grant.get(30, TimeUnit.SECONDS));
            assertTrue(wall >= grantAfter, "the flush returned before the credit existed: " + wall + " ns");
            assertTrue(cpu < wall / 2, "the flush spun while it waited: " + TimeUnit.NANOSECONDS.toMillis(cpu)
                    + " ms of CPU in " + TimeUnit.NANOSECONDS.toMillis(wall) + " ms");
            assertSuccess(next(outPeer), 1, WorkCompletion.OP_RECV, 64);
            assertSuccess(next(outPeer), 2, WorkCompletion.OP_RECV, 64);
            assertFilled(theirs, 0, 128, 7);
        }
    }

    @Test
    void aDrivenContextsConnectToAListenerThatNeverAnswersFailsWithTheHandshakeTimeout() throws Exception {
        QpConfig config = config().withTimeouts(Duration.ofMillis(300), config().silenceTimeout());
        EventLoopConfig loop = EventLoopConfig.defaults().withEngine(engine());
        try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             QpContext driven = QpContext.openOnCallingThread(loop)) {
            IOException e = assertThrows(IOException.class, () -> driven.connect(
                    new InetSocketAddress(silent.getInetAddress(), silent.getLocalPort()), config));
            assertTrue(e.getMessage().contains("handshake"), e.getMessage());
        }
    }

    @Test
    void lazilySignaledWritesCompleteOnThePeersNextFrameWithNoAcknowledgementFrameOfTheirOwn() throws Exception {
        // A long silence timeout: no heartbeat (and no acknowledgement riding on one) within the test.
        QpConfig config = config().withTimeouts(config().handshakeTimeout(), Duration.ofSeconds(60));
        try (QpPair p = new QpPair(engine(), config, MIB)) {
            WorkRequest wr = new WorkRequest();
            fill(p.clientRegion, 0, 8 * 100, 9);
            fill(p.serverRegion, MIB / 2, 64, 10);
            assertTrue(p.client.postReceive(50, p.clientRegion.localKey(), MIB / 2, 64));
            // The server's frames so far: the handshake's acknowledgements, and now one for the receive's credit.
            long framesBefore = settledFrames(p.server);
            for (int i = 0; i < 8; i++) {
                assertTrue(p.client.postSend(wr.write(i, p.clientRegion.localKey(), i * 100L, 100,
                        p.serverRegion.remoteKey(), i * 100L).signaledLazily()));
            }
            Thread.sleep(200); // every WRITE lands meanwhile, and nothing asked the server to acknowledge it
            assertFilled(p.serverRegion, 0, 8 * 100, 9);
            assertEquals(framesBefore, settledFrames(p.server), "lazily signaled WRITEs drew no acknowledgement frame");
            WorkCompletion early = new WorkCompletion();
            assertFalse(p.client.poll(early), "nothing acknowledged them yet: " + early);

            // The server's next frame, a SEND, takes the acknowledgement of all eight along.
            assertTrue(p.server.postSend(wr.send(60, p.serverRegion.localKey(), MIB / 2, 64)));
            int writes = 0;
            for (WorkCompletion wc : next(p.client, 9)) { // the two queues' completions interleave as they come
                if (wc.opcode() == WorkCompletion.OP_RECV) {
                    assertSuccess(wc, 50, WorkCompletion.OP_RECV, 64);
                } else {
                    assertSuccess(wc, writes++, WorkCompletion.OP_RDMA_WRITE, 100);
                }
            }
            assertEquals(8, writes);
            assertFilled(p.clientRegion, MIB / 2, 64, 10);
            assertEquals(framesBefore + 2, settledFrames(p.server),
                    "the SEND and the acknowledgement riding with it, in one sendmsg: no frame apart");
            assertSuccess(next(p.server), 60, WorkCompletion.OP_SEND, 64);
        }
    }

    /** The frames {@code qp} has sent, once they stop changing for a moment. */
    private static long settledFrames(QueuePair qp) throws InterruptedException {
        long frames = qp.statistics().subflows().getFirst().frames();
        for (int i = 0; i < 100; i++) {
            Thread.sleep(20);
            long now = qp.statistics().subflows().getFirst().frames();
            if (now == frames) {
                return now;
            }
            frames = now;
        }
        return frames;
    }

    @Test
    void sendsWaitForCreditsInsteadOfFailing() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), MIB)) {
            WorkRequest wr = new WorkRequest();
            fill(p.clientRegion, 0, 1000, 3);
            for (int i = 0; i < 8; i++) {
                assertTrue(p.client.postSend(wr.send(i, p.clientRegion.localKey(), 0, 1000)));
            }
            Thread.sleep(200);
            WorkCompletion wc = new WorkCompletion();
            assertFalse(p.client.poll(wc), "a SEND completed without a receive posted: " + wc);
            assertEquals(QpState.RTS, p.client.state());
            for (int i = 0; i < 8; i++) {
                assertTrue(p.server.postReceive(i, p.serverRegion.localKey(), i * 1000L, 1000));
            }
            for (int i = 0; i < 8; i++) {
                assertSuccess(next(p.server), i, WorkCompletion.OP_RECV, 1000);
                assertFilled(p.serverRegion, i * 1000L, 1000, 3);
            }
            for (int i = 0; i < 8; i++) {
                assertSuccess(next(p.client), i, WorkCompletion.OP_SEND, 1000);
            }
        }
    }

    @Test
    void aWriteWithImmediateSendsNoByteBeforeThePeerPostsAReceive() throws Exception {
        // What lets a receive stand for a free staging slot (the collectives' flow control): not only the
        // frame that consumes the receive waits for the credit, every data frame before it does too.
        try (QpPair p = new QpPair(engine(), config(), 4L * MIB)) {
            int bytes = 5 * config().segmentSize() + 123; // several frames
            fill(p.clientRegion, 0, bytes, 41);
            WorkRequest wr = new WorkRequest();
            assertTrue(p.client.postSend(wr.writeWithImmediate(1, p.clientRegion.localKey(), 0, bytes,
                    p.serverRegion.remoteKey(), MIB, 0x600D)));
            Thread.sleep(300);
            for (long i = 0; i < bytes; i += 8) {
                assertEquals(0L, p.serverRegion.segment().get(ValueLayout.JAVA_LONG_UNALIGNED, MIB + i),
                        "byte " + i + " landed before a receive was posted");
            }
            assertFalse(p.client.poll(new WorkCompletion()), "the WRITE completed without a receive posted");
            assertTrue(p.server.postReceive(9, p.serverRegion.localKey(), 0, 0));
            WorkCompletion received = next(p.server);
            assertSuccess(received, 9, WorkCompletion.OP_RECV_RDMA_WITH_IMM, bytes);
            assertEquals(0x600D, received.immediate());
            assertFilled(p.serverRegion, MIB, bytes, 41);
            assertSuccess(next(p.client), 1, WorkCompletion.OP_RDMA_WRITE, bytes);
        }
    }

    @Test
    void aFailedQueuePairSaysWhyOnBothSides() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), MIB)) {
            assertEquals(-1, p.client.errorStatus());
            assertEquals(null, p.client.errorReason());
            p.server.close();
            awaitState(p.client, QpState.ERROR);
            assertEquals(WorkCompletion.FLUSH_ERROR, p.client.errorStatus(), p.client::errorReason);
            assertTrue(p.client.errorReason().contains("peer ended"), p.client::errorReason);
            assertEquals(WorkCompletion.FLUSH_ERROR, p.server.errorStatus(), "readable after close");
            assertEquals("closed", p.server.errorReason());
        }
        try (QpPair p = new QpPair(engine(), config(), MIB)) {
            SubflowDrill.kill(p.client, 0);
            awaitState(p.client, QpState.ERROR);
            assertEquals(WorkCompletion.TRANSPORT_ERROR, p.client.errorStatus(), p.client::errorReason);
            assertTrue(p.client.errorReason().contains("every subflow is gone"), p.client::errorReason);
        }
    }

    @Test
    void unsignaledWorkRequestsCompleteSilently() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), MIB)) {
            WorkRequest wr = new WorkRequest();
            for (int i = 0; i < 9; i++) {
                wr.write(i, p.clientRegion.localKey(), 0, 100, p.serverRegion.remoteKey(), 0);
                assertTrue(p.client.postSend(i == 8 ? wr : wr.unsignaled()));
            }
            assertSuccess(next(p.client), 8, WorkCompletion.OP_RDMA_WRITE, 100);
            Thread.sleep(100);
            assertFalse(p.client.poll(new WorkCompletion()));
        }
    }

    /** A heartbeat only every 15 s: what these tests see acknowledged was acknowledged by the policy, not a tick. */
    private QpConfig quietConfig() {
        return config().withTimeouts(config().handshakeTimeout(), Duration.ofSeconds(60));
    }

    private static long framesSent(QueuePair qp) {
        return qp.statistics().subflows().stream().mapToLong(QpStatistics.SubflowStatistics::frames).sum();
    }

    @Test
    void unsignaledMessagesCostThePeerNoFrameEachWhileASignaledOneIsAcknowledgedAtOnce() throws Exception {
        try (QpPair p = new QpPair(engine(), quietConfig(), MIB)) {
            for (int i = 0; i < 32; i++) {
                assertTrue(p.server.postReceive(i, p.serverRegion.localKey(), 0, 0));
            }
            WorkRequest wr = new WorkRequest();
            assertTrue(p.client.postSend(wr.writeWithImmediate(100, p.clientRegion.localKey(), 0, 100,
                    p.serverRegion.remoteKey(), 0, 0)));
            assertSuccess(next(p.client), 100, WorkCompletion.OP_RDMA_WRITE, 100);
            next(p.server);
            long before = framesSent(p.server);
            for (int i = 0; i < 10; i++) {
                assertTrue(p.client.postSend(wr.writeWithImmediate(i, p.clientRegion.localKey(), 0, 100,
                        p.serverRegion.remoteKey(), 0, i).unsignaled()));
            }
            for (int i = 0; i < 10; i++) {
                assertEquals(i, next(p.server).immediate());
            }
            assertEquals(before, framesSent(p.server), "the server acknowledged unsignaled messages nobody waits for");
            assertTrue(p.client.postSend(wr.writeWithImmediate(200, p.clientRegion.localKey(), 0, 100,
                    p.serverRegion.remoteKey(), 0, 10)));
            assertSuccess(next(p.client), 200, WorkCompletion.OP_RDMA_WRITE, 100);
            assertEquals(10, next(p.server).immediate());
            assertEquals(before + 1, framesSent(p.server), "one acknowledgement for all eleven");
        }
    }

    @Test
    void unsignaledWorkBeyondTheSendQueueAndTheReceiveCreditsKeepsFlowing() throws Exception {
        // Nobody waits for an unsignaled completion, but the sender's queue and the receiver's credits run
        // out: the sender asks for an acknowledgement at half its queue, the receiver grants credit at half.
        QpConfig config = quietConfig().withQueueDepths(16, 16);
        try (QpPair p = new QpPair(engine(), config, MIB)) {
            WorkRequest wr = new WorkRequest();
            for (int i = 0; i < 100; i++) {
                wr.write(i, p.clientRegion.localKey(), 0, 100, p.serverRegion.remoteKey(), 0).unsignaled();
                long deadline = System.nanoTime() + QpPair.WAIT.toNanos();
                while (!p.client.postSend(wr)) {
                    assertTrue(System.nanoTime() < deadline, () -> "the send queue stayed full: " + p.client);
                    Thread.onSpinWait();
                }
            }
            for (int i = 0; i < 4; i++) {
                assertTrue(p.server.postReceive(i, p.serverRegion.localKey(), 0, 0));
            }
            // Receives go back as messages land: four credits carry all sixty SENDs.
            int[] arrived = {0};
            for (int i = 0; i < 60; i++) {
                wr.sendWithImmediate(1000 + i, p.clientRegion.localKey(), 0, 0, i);
                long deadline = System.nanoTime() + QpPair.WAIT.toNanos();
                while (!p.client.postSend(i == 59 ? wr : wr.unsignaled())) {
                    assertTrue(System.nanoTime() < deadline, () -> "the send queue stayed full: " + p.client);
                    repostArrivals(p, arrived);
                }
            }
            WorkCompletion done = new WorkCompletion();
            long deadline = System.nanoTime() + QpPair.WAIT.toNanos();
            while (!p.client.poll(done)) {
                assertTrue(System.nanoTime() < deadline, () -> "stalled after " + arrived[0] + " SENDs: " + p.client);
                repostArrivals(p, arrived);
            }
            assertSuccess(done, 1059, WorkCompletion.OP_SEND, 0);
            while (arrived[0] < 60) {
                assertTrue(System.nanoTime() < deadline, () -> "only " + arrived[0] + " SENDs arrived");
                repostArrivals(p, arrived);
            }
        }
    }

    /** Takes the server's arrivals, checking their order, and posts each receive again. */
    private static void repostArrivals(QpPair p, int[] arrived) {
        WorkCompletion received = new WorkCompletion();
        while (p.server.poll(received)) {
            assertTrue(received.isSuccess(), received::toString);
            assertEquals(arrived[0]++, received.immediate());
            assertTrue(p.server.postReceive(received.workRequestId(), p.serverRegion.localKey(), 0, 0));
        }
        Thread.onSpinWait();
    }

    @Test
    void stripedOverSeveralSubflowsEveryByteArrivesOnce() throws Exception {
        QpConfig config = config().withSubflows(4);
        try (QpPair p = new QpPair(engine(), config, 72L * MIB)) {
            assertEquals(4, p.client.liveSubflows());
            int messages = 64;
            int size = MIB;
            fill(p.clientRegion, 0, (long) messages * size, 11);
            WorkRequest wr = new WorkRequest();
            for (int i = 0; i < messages; i++) {
                assertTrue(p.server.postReceive(i, p.serverRegion.localKey(), (long) i * size, size));
            }
            for (int i = 0; i < messages; i++) {
                assertTrue(p.client.postSend(wr.send(i, p.clientRegion.localKey(), (long) i * size, size)));
            }
            for (int i = 0; i < messages; i++) {
                assertSuccess(next(p.server), i, WorkCompletion.OP_RECV, size);
            }
            assertFilled(p.serverRegion, 0, (long) messages * size, 11);
            for (int i = 0; i < messages; i++) {
                assertSuccess(next(p.client), i, WorkCompletion.OP_SEND, size);
            }
            QpStatistics stats = p.client.statistics();
            long carriers = stats.subflows().stream().filter(s -> s.payloadBytes() > 0).count();
            assertTrue(carriers >= 2, () -> "striping used one subflow only: " + stats);
            // The peer's frames echo the header timestamps: round trips are measured, and sane for loopback.
            assertTrue(stats.subflows().stream().anyMatch(s -> s.roundTripMicros() > 0), stats::toString);
            assertTrue(stats.subflows().stream().allMatch(s -> s.roundTripMicros() < 5e6), stats::toString);
        }
    }

    @Test
    void aSubflowKilledMidTransferLosesNothingAndCompletesNothingTwice() throws Exception {
        QpConfig config = config().withSubflows(3);
        try (QpPair p = new QpPair(engine(), config, 130L * MIB)) {
            int messages = 128;
            int size = MIB;
            fill(p.clientRegion, 0, (long) messages * size, 13);
            for (int i = 0; i < messages; i++) {
                assertTrue(p.server.postReceive(i, p.serverRegion.localKey(), (long) i * size, size));
            }
            WorkRequest wr = new WorkRequest();
            for (int i = 0; i < messages; i++) {
                assertTrue(p.client.postSend(wr.send(i, p.clientRegion.localKey(), (long) i * size, size)));
                if (i == 16) {
                    SubflowDrill.kill(p.client, 1);
                }
            }
            for (int i = 0; i < messages; i++) {
                assertSuccess(next(p.server), i, WorkCompletion.OP_RECV, size);
            }
            assertFilled(p.serverRegion, 0, (long) messages * size, 13);
            for (int i = 0; i < messages; i++) {
                assertSuccess(next(p.client), i, WorkCompletion.OP_SEND, size);
            }
            Thread.sleep(100);
            assertFalse(p.server.poll(new WorkCompletion()), "a receive completed twice");
            assertFalse(p.client.poll(new WorkCompletion()), "a send completed twice");
            assertEquals(2, p.client.liveSubflows());
            assertEquals(QpState.RTS, p.client.state());
        }
    }

    @Test
    void inlineSendsAndWritesCarryTheBytesTheyHeldWhenPostedFromTheRingAndFromTheLoop() throws Exception {
        int max = 256;
        try (QpPair p = new QpPair(engine(), config().withMaxInlineData(max), MIB)) {
            int[] sizes = {0, 1, 63, max};
            byte[] source = new byte[max]; // on the heap, registered nowhere
            MemorySegment heap = MemorySegment.ofArray(source);
            WorkRequest wr = new WorkRequest();
            for (int round = 0; round < 2; round++) {
                int base = round * sizes.length;
                for (int i = 0; i < sizes.length; i++) {
                    assertTrue(p.server.postReceive(base + i, p.serverRegion.localKey(), (long) (base + i) * max, max));
                }
                LoopJob posts = () -> {
                    for (int i = 0; i < sizes.length; i++) {
                        int id = base + i;
                        fill(p.clientRegion, 0, sizes[i], id);
                        MemorySegment.copy(p.clientRegion.segment(), 0, heap, 0, sizes[i]);
                        WorkRequest filled = i % 2 == 0 ? wr.send(id) : wr.sendWithImmediate(id, 0x700 + id);
                        assertTrue(p.client.postSend(filled.inline(heap, 0, sizes[i])));
                        Arrays.fill(source, (byte) 0xEE); // the post took a copy: the peer must not see this
                    }
                    // A WRITE and a WRITE with immediate, into the region past the receives.
                    fill(p.clientRegion, 0, max, 50 + base);
                    MemorySegment.copy(p.clientRegion.segment(), 0, heap, 0, max);
                    assertTrue(p.client.postSend(wr.write(50 + base, p.serverRegion.remoteKey(), 64 * 1024 + base * max)
                            .inline(heap, 0, max)));
                    Arrays.fill(source, (byte) 0xEE);
                    fill(p.clientRegion, 0, 100, 60 + base);
                    MemorySegment.copy(p.clientRegion.segment(), 0, heap, 7, 100);
                    assertTrue(p.client.postSend(wr.writeWithImmediate(60 + base, p.serverRegion.remoteKey(),
                            128 * 1024 + base * max, 0x900 + base).inline(heap, 7, 100)));
                    Arrays.fill(source, (byte) 0xEE);
                };
                if (round == 0) {
                    posts.run(); // from this thread: each entry carries its bytes through the send ring
                } else {
                    p.clientContext.runOnLoop(posts); // on the loop: straight into the queue pair's copy
                }
                assertTrue(p.server.postReceive(60 + base, p.serverRegion.localKey(), 0, 0));
                for (int i = 0; i < sizes.length; i++) {
                    WorkCompletion wc = next(p.server);
                    assertSuccess(wc, base + i, WorkCompletion.OP_RECV, sizes[i]);
                    assertEquals(i % 2 == 1, wc.hasImmediate(), wc::toString);
                    assertFilled(p.serverRegion, (long) (base + i) * max, sizes[i], base + i);
                }
                WorkCompletion withImmediate = next(p.server);
                assertSuccess(withImmediate, 60 + base, WorkCompletion.OP_RECV_RDMA_WITH_IMM, withImmediate.byteCount());
                assertEquals(0x900 + base, withImmediate.immediate());
                assertFilled(p.serverRegion, 64 * 1024 + base * max, max, 50 + base);
                assertFilled(p.serverRegion, 128 * 1024 + base * max, 100, 60 + base);
                for (int i = 0; i < sizes.length; i++) {
                    assertSuccess(next(p.client), base + i, WorkCompletion.OP_SEND, sizes[i]);
                }
                assertSuccess(next(p.client), 50 + base, WorkCompletion.OP_RDMA_WRITE, max);
                assertSuccess(next(p.client), 60 + base, WorkCompletion.OP_RDMA_WRITE, 100);
            }
        }
    }

    @Test
    void smallSendsPostedTogetherShareFramesAndEachLandsOnceInItsOwnReceive() throws Exception {
        int messages = 600;
        int slot = 1024;
        QpConfig config = config().withMessageWindow(1024).withQueueDepths(1024, 1024).withMaxInlineData(64);
        try (QpPair p = new QpPair(engine(), config, 2L * messages * slot)) {
            byte[] source = new byte[64];
            MemorySegment heap = MemorySegment.ofArray(source);
            WorkRequest wr = new WorkRequest();
            for (int round = 0; round < 2; round++) {
                int base = round * messages;
                for (int i = 0; i < messages; i++) {
                    assertTrue(p.server.postReceive(base + i, p.serverRegion.localKey(), (long) (base + i) * slot, slot));
                }
                // Sizes 0 .. 600: most small enough to share a frame, some not, so the two kinds interleave.
                LoopJob posts = () -> {
                    for (int i = 0; i < messages; i++) {
                        int id = base + i;
                        int size = i;
                        fill(p.clientRegion, (long) id * slot, size, id);
                        if (i % 7 == 3 && size <= 64) {
                            MemorySegment.copy(p.clientRegion.segment(), (long) id * slot, heap, 0, size);
                            wr.send(id).inline(heap, 0, size);
                        } else if (i % 3 == 1) {
                            wr.sendWithImmediate(id, p.clientRegion.localKey(), (long) id * slot, size, 0x5000 + id);
                        } else {
                            wr.send(id, p.clientRegion.localKey(), (long) id * slot, size);
                        }
                        assertTrue(p.client.postSend(i % 50 == 49 ? wr : wr.unsignaled()));
                    }
                };
                if (round == 0) {
                    posts.run(); // through the send ring
                } else {
                    p.clientContext.runOnLoop(posts); // straight into the ledger
                }
                for (int i = 0; i < messages; i++) {
                    int id = base + i;
                    WorkCompletion wc = next(p.server);
                    assertSuccess(wc, id, WorkCompletion.OP_RECV, i);
                    boolean immediate = i % 3 == 1 && !(i % 7 == 3 && i <= 64);
                    assertEquals(immediate, wc.hasImmediate(), wc::toString);
                    if (immediate) {
                        assertEquals(0x5000 + id, wc.immediate(), wc::toString);
                    }
                    assertFilled(p.serverRegion, (long) id * slot, i, id);
                }
                for (int i = 49; i < messages; i += 50) {
                    assertSuccess(next(p.client), base + i, WorkCompletion.OP_SEND, i);
                }
            }
            Thread.sleep(50);
            assertFalse(p.server.poll(new WorkCompletion()), "a receive completed twice");
            assertFalse(p.client.poll(new WorkCompletion()), "a send completed more than once");
            long frames = p.client.statistics().subflows().get(0).frames();
            // One frame each would be 1200 and more; sharing needs the sender's staging buffer free, which the
            // timing decides, so only a clear saving is asked for.
            assertTrue(frames < 2 * messages * 4 / 5, () -> 2 * messages + " SENDs in " + frames + " frames: small ones share frames");
        }
    }

    @Test
    void inlineDataBeyondTheLimitOrOnAReadOrWithElementsIsRefusedAtOnce() throws Exception {
        try (QpPair p = new QpPair(engine(), config().withMaxInlineData(64), MIB)) {
            MemorySegment bytes = MemorySegment.ofArray(new byte[100]);
            WorkRequest wr = new WorkRequest();
            IllegalArgumentException tooLong = assertThrows(IllegalArgumentException.class,
                    () -> p.client.postSend(wr.send(1).inline(bytes, 0, 65)));
            assertTrue(tooLong.getMessage().contains("at most 64"), tooLong::getMessage);
            assertThrows(IllegalArgumentException.class,
                    () -> wr.read(2, p.serverRegion.remoteKey(), 0).inline(bytes, 0, 8));
            assertThrows(IllegalArgumentException.class, () -> wr.send(3).sge(p.clientRegion.localKey(), 0, 8)
                    .inline(bytes, 0, 8));
            assertThrows(IllegalArgumentException.class,
                    () -> wr.send(4).inline(bytes, 0, 8).sge(p.clientRegion.localKey(), 0, 8));
            assertThrows(IllegalArgumentException.class, () -> wr.send(5).inline(bytes, 90, 20),
                    "past the segment's end");
            // Nothing of it reached the queue pair, which still carries an inline SEND of the limit.
            assertTrue(p.server.postReceive(6, p.serverRegion.localKey(), 0, 64));
            assertTrue(p.client.postSend(wr.send(6).inline(bytes, 0, 64)));
            assertSuccess(next(p.server), 6, WorkCompletion.OP_RECV, 64);
            assertSuccess(next(p.client), 6, WorkCompletion.OP_SEND, 64);
            assertEquals(QpState.RTS, p.client.state());
        }
        try (QpPair p = new QpPair(engine(), config(), MIB)) {
            WorkRequest wr = new WorkRequest();
            MemorySegment bytes = MemorySegment.ofArray(new byte[1]);
            assertThrows(IllegalArgumentException.class, () -> p.client.postSend(wr.send(1).inline(bytes, 0, 1)),
                    "no inline data by default");
            assertThrows(IllegalArgumentException.class, () -> p.client.postSend(wr.send(2).inline(bytes, 0, 0)),
                    "not even none");
            p.clientContext.runOnLoop(() -> assertThrows(IllegalArgumentException.class,
                    () -> p.client.postSend(wr.send(3).inline(bytes, 0, 0)), "nor on the loop"));
            assertTrue(p.server.postReceive(4, p.serverRegion.localKey(), 0, 8));
            assertTrue(p.client.postSend(wr.send(4, p.clientRegion.localKey(), 0, 8)));
            assertSuccess(next(p.server), 4, WorkCompletion.OP_RECV, 8);
        }
    }

    @Test
    void inlineSendsStripedOverSubflowsOneOfThemKilledArriveOnceFromTheQueuePairsCopy() throws Exception {
        int size = 1000;
        QpConfig config = config().withSubflows(3).withMaxInlineData(size).withQueueDepths(256, 2048);
        try (QpPair p = new QpPair(engine(), config, 8L * MIB)) {
            int messages = 2000;
            byte[] source = new byte[size];
            MemorySegment heap = MemorySegment.ofArray(source);
            WorkRequest wr = new WorkRequest();
            int posted = 0;
            int received = 0;
            for (int i = 0; i < messages; i++) {
                assertTrue(p.server.postReceive(i, p.serverRegion.localKey(), (long) i * size, size));
            }
            while (posted < messages) {
                fill(p.clientRegion, 0, size, posted);
                MemorySegment.copy(p.clientRegion.segment(), 0, heap, 0, size);
                if (!p.client.postSend(wr.send(posted).inline(heap, 0, size).unsignaled())) {
                    assertSuccess(next(p.server), received, WorkCompletion.OP_RECV, size);
                    received++;
                    continue;
                }
                Arrays.fill(source, (byte) 0xEE);
                if (++posted == messages / 4) {
                    SubflowDrill.kill(p.client, 1);
                }
            }
            for (; received < messages; received++) {
                assertSuccess(next(p.server), received, WorkCompletion.OP_RECV, size);
            }
            for (int i = 0; i < messages; i++) {
                assertFilled(p.serverRegion, (long) i * size, size, i);
            }
            Thread.sleep(100);
            assertFalse(p.server.poll(new WorkCompletion()), "a receive completed twice");
            assertEquals(2, p.client.liveSubflows());
            assertEquals(QpState.RTS, p.client.state());
        }
    }

    @Test
    void sendsGoOnPastHalfTheMsnSpaceWhileSubflowsFailAndEachLandsOnceInOrder() throws Exception {
        // Three times half the MSN space, so the MSNs wrap and the claims pass the reach of every resend
        // (ResendFence) twice over, with subflows failing while small SENDs share frames.
        int messages = 3 * (int) ResendFence.REACH;
        int size = 16;
        int receives = 2048;
        QpConfig config = config().withSubflows(3).withMessageWindow(1024).withQueueDepths(1024, receives)
                .withMaxInlineData(size);
        try (QpPair p = new QpPair(engine(), config, (long) receives * size)) {
            byte[] source = new byte[size];
            MemorySegment heap = MemorySegment.ofArray(source);
            WorkRequest wr = new WorkRequest();
            WorkCompletion wc = new WorkCompletion();
            for (int k = 0; k < receives; k++) {
                assertTrue(p.server.postReceive(k, p.serverRegion.localKey(), (long) k * size, size));
            }
            int posted = 0;
            int received = 0;
            while (received < messages) {
                if (posted < messages) {
                    heap.set(ValueLayout.JAVA_INT_UNALIGNED, 0, posted);
                    heap.set(ValueLayout.JAVA_LONG_UNALIGNED, 4, ~(long) posted * 0x9E3779B97F4A7C15L);
                    if (p.client.postSend(wr.send(posted).inline(heap, 0, size).unsignaled())) {
                        posted++;
                        if (posted == 1000) {
                            SubflowDrill.kill(p.client, 1);
                        } else if (posted == messages / 2) {
                            SubflowDrill.kill(p.client, 2);
                        }
                        continue;
                    }
                }
                // The send ring is full, or everything is posted: a receive must complete.
                if (!p.server.await(wc, QpPair.WAIT)) {
                    throw new AssertionError("stalled after " + received + " of " + messages + " messages: "
                            + p.server.statistics() + " / " + p.client.statistics());
                }
                assertSuccess(wc, received, WorkCompletion.OP_RECV, size);
                long at = (long) (received % receives) * size;
                MemorySegment landed = p.serverRegion.segment();
                assertEquals(received, landed.get(ValueLayout.JAVA_INT_UNALIGNED, at), "message in receive " + received);
                assertEquals(~(long) received * 0x9E3779B97F4A7C15L, landed.get(ValueLayout.JAVA_LONG_UNALIGNED, at + 4));
                if (received + receives < messages) {
                    assertTrue(p.server.postReceive(received + receives, p.serverRegion.localKey(), at, size));
                }
                received++;
            }
            Thread.sleep(100);
            assertFalse(p.server.poll(wc), "a receive completed twice");
            assertEquals(QpState.RTS, p.client.state(), p.client.statistics()::toString);
            assertEquals(1, p.client.liveSubflows());
        }
    }

    @Test
    void aSubflowAddedLaterCarriesTraffic() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), 40L * MIB)) {
            int index = p.client.addSubflow(SubflowPath.to(p.listener.address())).get();
            assertEquals(1, index);
            assertEquals(2, p.client.liveSubflows());
            SubflowDrill.kill(p.client, 0);
            writeVerified(p, 9, 32 * MIB, 17);
        }
    }

    @Test
    void aWriteToABadKeyIsReportedToBothSidesAsVerbsReportItAndFlushesTheRest() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), MIB)) {
            for (int i = 0; i < 3; i++) {
                assertTrue(p.server.postReceive(i, p.serverRegion.localKey(), 0, 100));
            }
            WorkRequest wr = new WorkRequest();
            assertTrue(p.client.postSend(wr.send(0, p.clientRegion.localKey(), 0, 10)));
            assertTrue(p.client.postSend(wr.write(1, p.clientRegion.localKey(), 0, 100, p.serverRegion.remoteKey() ^ 0x5A5A, 0)));
            assertTrue(p.client.postSend(wr.send(2, p.clientRegion.localKey(), 0, 10)));
            List<WorkCompletion> client = next(p.client, 3);
            assertSuccess(client.get(0), 0, WorkCompletion.OP_SEND, 10);
            assertStatus(client.get(1), 1, WorkCompletion.REMOTE_ACCESS_ERROR);
            assertStatus(client.get(2), 2, WorkCompletion.FLUSH_ERROR);
            List<WorkCompletion> server = next(p.server, 3);
            assertSuccess(server.get(0), 0, WorkCompletion.OP_RECV, 10);
            assertStatus(server.get(1), 1, WorkCompletion.FLUSH_ERROR);
            assertStatus(server.get(2), 2, WorkCompletion.FLUSH_ERROR);
            assertEquals(QpState.ERROR, p.client.state());
            assertEquals(QpState.ERROR, p.server.state());
            assertTrue(p.client.statistics().toString().contains("REMOTE_ACCESS"), p.client.statistics()::toString);
            assertTrue(p.client.postSend(wr.send(3, p.clientRegion.localKey(), 0, 10)));
            assertEquals(WorkCompletion.FLUSH_ERROR, next(p.client).status());
        }
    }

    @Test
    void aReadBeyondTheRemoteRegionFailsWithRemoteAccessError() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), MIB)) {
            WorkRequest wr = new WorkRequest();
            assertTrue(p.client.postSend(wr.read(1, p.clientRegion.localKey(), 0, 100, p.serverRegion.remoteKey(), MIB - 50)));
            assertStatus(next(p.client), 1, WorkCompletion.REMOTE_ACCESS_ERROR);
            awaitState(p.server, QpState.ERROR);
        }
    }

    @Test
    void aSendLongerThanTheReceiveIsAnInvalidRequestForTheSenderAndALengthErrorForTheReceiver() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), MIB)) {
            assertTrue(p.server.postReceive(7, p.serverRegion.localKey(), 0, 10));
            WorkRequest wr = new WorkRequest();
            assertTrue(p.client.postSend(wr.send(1, p.clientRegion.localKey(), 0, 100)));
            assertStatus(next(p.client), 1, WorkCompletion.REMOTE_INVALID_REQUEST);
            assertStatus(next(p.server), 7, WorkCompletion.LOCAL_LENGTH_ERROR);
        }
    }

    @Test
    void aQueuePairClosedRightAfterItsLastReceiveStillAcknowledgesIt() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), MIB)) {
            int n = 5;
            for (int i = 0; i < n; i++) {
                assertTrue(p.server.postReceive(i, p.serverRegion.localKey(), 100L * i, 100));
            }
            // Closed from the completion callback, on the loop thread, before the loop turn's ACKNOWLEDGE
            // would have left: only the close itself can tell the client its SENDs landed.
            AtomicInteger received = new AtomicInteger();
            WorkCompletion serverSide = new WorkCompletion();
            p.server.onCompletions(() -> {
                while (received.get() < n && p.server.poll(serverSide)) {
                    if (serverSide.isSuccess() && received.incrementAndGet() == n) {
                        p.server.close();
                    }
                }
            });
            WorkRequest wr = new WorkRequest();
            for (int i = 0; i < n; i++) {
                assertTrue(p.client.postSend(wr.send(i, p.clientRegion.localKey(), 0, 100)));
            }
            for (int i = 0; i < n; i++) {
                assertSuccess(next(p.client), i, WorkCompletion.OP_SEND, 100);
            }
            awaitState(p.client, QpState.ERROR);
            assertTrue(p.client.statistics().toString().contains("peer ended"), p.client.statistics()::toString);
            assertTrue(p.client.postSend(wr.send(9, p.clientRegion.localKey(), 0, 10)));
            assertStatus(next(p.client), 9, WorkCompletion.FLUSH_ERROR);
        }
    }

    @Test
    void receivesPostedOnTheLoopThreadKeepPostingOrderWithThoseTheRingHoldsAndABadOneStillFailsTheQueuePair()
            throws Exception {
        try (QpPair p = new QpPair(engine(), config(), MIB)) {
            // Posted on the loop thread, receives go straight to the receive queue until it is full; the rest
            // wait in the ring, and must still be consumed after the first ones.
            int first = config().receiveQueueDepth() + 3;
            int total = first + 40;
            p.serverContext.runOnLoop(() -> {
                for (int i = 0; i < first; i++) {
                    assertTrue(p.server.postReceive(i, p.serverRegion.localKey(), 100L * i, 100), "receive " + i);
                }
            });
            // Then each completion reposts its receive from the completion listener, on the loop thread.
            List<String> wrong = new java.util.concurrent.CopyOnWriteArrayList<>();
            CompletableFuture<Integer> badReceive = new CompletableFuture<>();
            AtomicInteger completed = takeInOrder(p.server, badReceive, wrong, wc -> {
                long id = wc.workRequestId();
                long slot = id < first ? id : id - first;
                assertEquals(100, wc.byteCount(), wc::toString);
                assertFilled(p.serverRegion, 100L * slot, 100, id);
                long next = id + first;
                if (next < total) {
                    assertTrue(p.server.postReceive(next, p.serverRegion.localKey(), 100L * slot, 100), "receive " + next);
                }
                if (id == total - 1) {
                    p.server.postReceive(-1, p.serverRegion.localKey() ^ 0x5A5A0000, 0, 10);
                }
            });
            WorkRequest wr = new WorkRequest();
            for (int i = 0; i < total; i++) {
                fill(p.clientRegion, 100L * i, 100, i);
                assertTrue(p.client.postSend(wr.send(i, p.clientRegion.localKey(), 100L * i, 100)));
                if (i >= config().sendQueueDepth() - 1) {
                    assertSuccess(next(p.client), i + 1 - config().sendQueueDepth(), WorkCompletion.OP_SEND, 100);
                }
            }
            for (int i = total + 1 - config().sendQueueDepth(); i < total; i++) {
                assertSuccess(next(p.client), i, WorkCompletion.OP_SEND, 100);
            }
            assertEquals(WorkCompletion.LOCAL_PROTECTION_ERROR, badReceive.get(QpPair.WAIT.toSeconds(), TimeUnit.SECONDS));
            assertEquals(List.of(), wrong);
            assertEquals(total, completed.get());
            awaitState(p.server, QpState.ERROR);
        }
    }

    @Test
    void workRequestsPostedOnTheLoopThreadKeepPostingOrderWithThoseTheRingHoldsAndABadOneStillFailsTheQueuePair()
            throws Exception {
        try (QpPair p = new QpPair(engine(), config(), MIB)) {
            int depth = config().sendQueueDepth();
            int first = depth + 3;
            int total = first + 40;
            AtomicInteger received = new AtomicInteger();
            List<String> wrong = new java.util.concurrent.CopyOnWriteArrayList<>();
            WorkCompletion atServer = new WorkCompletion();
            p.server.onCompletions(() -> {
                while (p.server.poll(atServer)) {
                    if (atServer.status() == WorkCompletion.FLUSH_ERROR) {
                        continue; // the receives left once the client's bad request ended the queue pair
                    }
                    int n = received.getAndIncrement();
                    long slot = atServer.workRequestId();
                    try {
                        assertSuccess(atServer, slot, WorkCompletion.OP_RECV, 100);
                        assertFilled(p.serverRegion, 100L * slot, 100, n);
                    } catch (AssertionError e) {
                        wrong.add("message " + n + ": " + e.getMessage());
                    }
                    p.server.postReceive(slot, p.serverRegion.localKey(), 100L * slot, 100);
                }
            });
            for (int i = 0; i < config().receiveQueueDepth(); i++) {
                assertTrue(p.server.postReceive(i, p.serverRegion.localKey(), 100L * i, 100));
            }
            for (int i = 0; i < total; i++) {
                fill(p.clientRegion, 100L * i, 100, i);
            }
            CompletableFuture<Integer> badSend = new CompletableFuture<>();
            WorkRequest next = new WorkRequest();
            AtomicInteger completed = takeInOrder(p.client, badSend, wrong, wc -> {
                long id = wc.workRequestId();
                long following = id + first;
                if (following < total) {
                    assertTrue(p.client.postSend(next.send(following, p.clientRegion.localKey(), 100L * following, 100)),
                            "send " + following);
                }
                if (id == total - 1) {
                    p.client.postSend(next.send(-1, p.clientRegion.localKey() ^ 0x5A5A0000, 0, 10));
                }
            });
            // Posted on the loop thread, work requests go straight to the send queue until it is full; the rest
            // wait in the ring, and must still leave after the first ones. Then each completion posts the next
            // from the completion listener, on the loop thread.
            WorkRequest wr = new WorkRequest();
            p.clientContext.runOnLoop(() -> {
                for (int i = 0; i < first; i++) {
                    assertTrue(p.client.postSend(wr.send(i, p.clientRegion.localKey(), 100L * i, 100)), "send " + i);
                }
            });
            assertEquals(WorkCompletion.LOCAL_PROTECTION_ERROR, badSend.get(QpPair.WAIT.toSeconds(), TimeUnit.SECONDS));
            awaitState(p.client, QpState.ERROR);
            long deadline = System.nanoTime() + QpPair.WAIT.toNanos();
            while (received.get() < total && System.nanoTime() < deadline) {
                Thread.sleep(5); // the last SENDs were acknowledged; the server's listener may not have run yet
            }
            assertEquals(List.of(), wrong);
            assertEquals(total, completed.get());
            assertEquals(total, received.get());
        }
    }

    /**
     * Has {@code qp}'s completion listener take its completions, on the loop thread: the one with id -1 completes
     * {@code flagged} with its status; the others must succeed with ids 0, 1, 2 and so on, and each goes to
     * {@code each}. What is out of order or fails an assertion in {@code each} is noted in {@code wrong}.
     *
     * @return how many came in order so far
     */
    private static AtomicInteger takeInOrder(QueuePair qp, CompletableFuture<Integer> flagged, List<String> wrong,
            Consumer<WorkCompletion> each) {
        AtomicInteger inOrder = new AtomicInteger();
        WorkCompletion wc = new WorkCompletion();
        qp.onCompletions(() -> {
            while (qp.poll(wc)) {
                if (wc.workRequestId() == -1) {
                    flagged.complete(wc.status());
                    continue;
                }
                int n = inOrder.getAndIncrement();
                try {
                    assertSuccess(wc, n, wc.opcode(), wc.byteCount());
                    each.accept(wc);
                } catch (AssertionError e) {
                    wrong.add("completion " + n + ": " + e.getMessage());
                }
            }
        });
        return inOrder;
    }

    @Test
    void aPathThatCannotJoinIsReportedAndTheQueuePairRunsOnTheOthers() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), MIB)) {
            InetSocketAddress nobody;
            try (ServerSocket closed = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                nobody = new InetSocketAddress(InetAddress.getLoopbackAddress(), closed.getLocalPort());
            }
            SubflowPath dead = SubflowPath.to(nobody);
            try (QueuePair qp = p.clientContext.connect(List.of(SubflowPath.to(p.listener.address()), dead,
                    SubflowPath.to(p.listener.address())), config().withMaxSubflows(4))) {
                QueuePair accepted = p.listener.accept(QpPair.WAIT);
                assertEquals(2, qp.liveSubflows(), qp::toString);
                assertEquals(1, qp.joinFailures().size(), qp.joinFailures()::toString);
                String failure = qp.joinFailures().getFirst();
                assertTrue(failure.startsWith(dead + ": ") && failure.length() > (dead + ": ").length(), failure);
                assertTrue(accepted.postReceive(1, p.serverRegion.localKey(), 0, 10));
                assertTrue(qp.postSend(new WorkRequest().send(2, p.clientRegion.localKey(), 0, 10)));
                assertSuccess(next(qp), 2, WorkCompletion.OP_SEND, 10);
                accepted.close();
            }
            assertTrue(p.client.joinFailures().isEmpty(), "the fixture's one path joined");
        }
    }

    @Test
    void sidesWithDifferentSilenceTimeoutsAgreeOnTheSmallerAndKeepIdleSubflowsAlive() throws Exception {
        // Each side heartbeats every quarter of its silence timeout: had the 300 ms side kept its own while
        // the default side heartbeats every 500 ms, it would have declared the idle subflow dead.
        Duration quick = Duration.ofMillis(300);
        QpConfig impatient = config().withTimeouts(config().handshakeTimeout(), quick);
        for (boolean impatientListens : new boolean[] {true, false}) {
            try (QpContext serverContext = QpContext.open(engine()); QpContext clientContext = QpContext.open(engine());
                 QpListener listener = serverContext.listen(new InetSocketAddress("127.0.0.1", 0),
                         impatientListens ? impatient : config());
                 QueuePair client = clientContext.connect(listener.address(), impatientListens ? config() : impatient);
                 QueuePair server = listener.accept(QpPair.WAIT)) {
                assertNotNull(server, "the listener accepted no queue pair");
                for (QueuePair qp : List.of(client, server)) {
                    assertEquals(quick, qp.config().silenceTimeout(), qp::toString);
                }
                Thread.sleep(4 * quick.toMillis() + 100);
                for (QueuePair qp : List.of(client, server)) {
                    assertEquals(QpState.RTS, qp.state(), qp.statistics()::toString);
                    assertEquals(1, qp.liveSubflows(), qp.statistics()::toString);
                }
            }
        }
    }

    @Test
    void idleQueuePairsGoQuietAndWakeForWork() throws Exception {
        // A heartbeat every 50 ms at a 200 ms silence timeout: had the idle pair kept heartbeating, each side
        // would have sent about twenty frames in the second watched below.
        QpConfig config = config().withTimeouts(config().handshakeTimeout(), Duration.ofMillis(200));
        try (QpPair p = new QpPair(engine(), config, 1 << 20)) {
            writeVerified(p, 1, 4096, 7);
            // Both sides find themselves idle at a heartbeat and say so: three silence timeouts normally, longer when
            // the suite's other JVM work delays a tick. Settled once neither has sent for 300 ms (within 5 s).
            long client = framesSent(p.client);
            long server = framesSent(p.server);
            long settleBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            do {
                Thread.sleep(300);
                long c = client;
                long s = server;
                client = framesSent(p.client);
                server = framesSent(p.server);
                if (c == client && s == server) {
                    break;
                }
            } while (System.nanoTime() < settleBy);
            Thread.sleep(1000);
            assertEquals(client, framesSent(p.client), () -> "the idle client went on sending: " + p.client.statistics());
            assertEquals(server, framesSent(p.server), () -> "the idle server went on sending: " + p.server.statistics());
            for (QueuePair qp : List.of(p.client, p.server)) {
                assertEquals(QpState.RTS, qp.state(), qp.statistics()::toString);
            }
            // Work wakes them: a WRITE and a SEND each way, then the pair stays up past several silence timeouts.
            writeVerified(p, 2, 8192, 8);
            assertTrue(p.server.postReceive(3, p.serverRegion.localKey(), 0, 64));
            assertTrue(p.client.postSend(new WorkRequest().send(4, p.clientRegion.localKey(), 0, 64)));
            assertSuccess(next(p.client), 4, WorkCompletion.OP_SEND, 64);
            assertSuccess(next(p.server), 3, WorkCompletion.OP_RECV, 64);
            assertTrue(p.client.postReceive(5, p.clientRegion.localKey(), 0, 64));
            assertTrue(p.server.postSend(new WorkRequest().send(6, p.serverRegion.localKey(), 0, 64)));
            assertSuccess(next(p.server), 6, WorkCompletion.OP_SEND, 64);
            assertSuccess(next(p.client), 5, WorkCompletion.OP_RECV, 64);
            Thread.sleep(800);
            for (QueuePair qp : List.of(p.client, p.server)) {
                assertEquals(QpState.RTS, qp.state(), qp.statistics()::toString);
                assertEquals(1, qp.liveSubflows(), qp.statistics()::toString);
            }
            writeVerified(p, 7, 4096, 9);
        }
    }

    /** WRITEs {@code bytes} of a pattern from the client's region start to the server's and checks them there. */
    private static void writeVerified(QpPair p, long wrId, int bytes, long seed) {
        fill(p.clientRegion, 0, bytes, seed);
        assertTrue(p.client.postSend(new WorkRequest().write(wrId, p.clientRegion.localKey(), 0, bytes,
                p.serverRegion.remoteKey(), 0)));
        assertSuccess(next(p.client), wrId, WorkCompletion.OP_RDMA_WRITE, bytes);
        assertFilled(p.serverRegion, 0, bytes, seed);
    }

    private static void awaitState(QueuePair qp, QpState state) throws InterruptedException {
        long deadline = System.nanoTime() + QpPair.WAIT.toNanos();
        while (qp.state() != state && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(state, qp.state(), qp::toString);
    }

    @Test
    void aBadLocalKeyFailsTheWorkRequestWithLocalProtection() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), MIB)) {
            WorkRequest wr = new WorkRequest();
            assertTrue(p.client.postSend(wr.send(1, p.clientRegion.localKey() + 1, 0, 10)));
            WorkCompletion wc = next(p.client);
            assertEquals(WorkCompletion.LOCAL_PROTECTION_ERROR, wc.status(), wc::toString);
            assertEquals(QpState.ERROR, p.client.state());
            assertTrue(p.client.postSend(wr.send(2, p.clientRegion.localKey(), p.clientRegion.segment().byteSize(), 1)));
            assertEquals(WorkCompletion.LOCAL_PROTECTION_ERROR, next(p.client).status());
        }
    }

    @Test
    void subflowsLeaveFromTheLocalAddressOfTheirPath() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), 8L * MIB)) {
            java.net.InetSocketAddress remote = p.listener.address();
            SubflowPath second = new SubflowPath(new java.net.InetSocketAddress("127.0.0.2", 0), remote);
            SubflowPath third = SubflowPath.parse("127.0.0.3=127.0.0.1:" + remote.getPort(), 0);
            assertEquals(1, p.client.addSubflow(second).get());
            assertEquals(2, p.client.addSubflow(third).get());
            QpStatistics server = p.server.statistics();
            assertEquals(3, server.subflows().size(), server::toString);
            assertTrue(server.subflows().get(1).path().contains("127.0.0.2"), server::toString);
            assertTrue(server.subflows().get(2).path().contains("127.0.0.3"), server::toString);
            writeVerified(p, 5, 8 * MIB, 23);
        }
    }

    @Test
    void readsStripedOverSubflowsWithASmallWindowAllLand() throws Exception {
        // Responses queue on every subflow, so the responder's ACKNOWLEDGEs may overtake each other (by many
        // windows on unequal paths: MessageAssemblerTest covers that rule; loopback reorders less).
        QpConfig config = config().withSubflows(3).withMessageWindow(16);
        try (QpPair p = new QpPair(engine(), config, 16L * MIB)) {
            int size = 256 * 1024;
            int reads = 192;
            fill(p.serverRegion, 0, 16L * MIB, 31);
            WorkRequest wr = new WorkRequest();
            WorkCompletion wc = new WorkCompletion();
            int posted = 0;
            for (int done = 0; done < reads; done++) {
                while (posted < reads && posted - done < 64) {
                    long at = (long) (posted % 64) * size;
                    assertTrue(p.client.postSend(wr.read(posted, p.clientRegion.localKey(), at, size,
                            p.serverRegion.remoteKey(), at)));
                    posted++;
                }
                assertTrue(p.client.await(wc, QpPair.WAIT), () -> "stalled: " + p.client);
                assertSuccess(wc, done, WorkCompletion.OP_RDMA_READ, size);
            }
            assertFilled(p.clientRegion, 0, 16L * MIB, 31);
            assertEquals(QpState.RTS, p.server.state(), p.server::toString);
        }
    }

    @Test
    void subflowsFailingOneAfterAnotherResendEveryFrameOnce() throws Exception {
        // A frame queued for resending whose new subflow fails too must go out again, and only once per failure.
        QpConfig config = config().withSubflows(4);
        try (QpPair p = new QpPair(engine(), config, 66L * MIB)) {
            int messages = 64;
            int size = MIB;
            fill(p.clientRegion, 0, (long) messages * size, 37);
            WorkRequest wr = new WorkRequest();
            for (int i = 0; i < messages; i++) {
                assertTrue(p.client.postSend(wr.write(i, p.clientRegion.localKey(), (long) i * size, size,
                        p.serverRegion.remoteKey(), (long) i * size)));
                if (i == 8 || i == 9 || i == 10) {
                    SubflowDrill.kill(p.client, i - 8);
                }
            }
            for (int i = 0; i < messages; i++) {
                assertSuccess(next(p.client), i, WorkCompletion.OP_RDMA_WRITE, size);
            }
            assertFilled(p.serverRegion, 0, (long) messages * size, 37);
            QpStatistics stats = p.client.statistics();
            assertEquals(1, p.client.liveSubflows(), stats::toString);
            assertTrue(stats.framesResent() <= 3L * messages * (size / config.segmentSize()), stats::toString);
            Thread.sleep(100);
            assertFalse(p.client.poll(new WorkCompletion()), "a write completed twice");
        }
    }

    @Test
    void closingAContextOnAnInterruptedThreadStillEndsItsQueuePairsInOrderAndKeepsTheInterrupt() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), MIB)) {
            Thread.currentThread().interrupt();
            boolean kept;
            try {
                p.serverContext.close();
            } finally {
                kept = Thread.interrupted();
            }
            awaitState(p.client, QpState.ERROR);
            assertTrue(p.client.errorReason().contains("peer ended"), p.client::errorReason);
            assertTrue(kept, "the caller's interrupt status is kept");
        }
    }
}
