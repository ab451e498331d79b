package io.zcnet.examples;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.QpListener;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.WorkCompletion;
import io.zcnet.qp.WorkRequest;
import io.zcnet.ring.EventLoopConfig;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code qp-server} and {@code qp-load} against each other, and the load against a server that answers wrong. */
class QpServerLoadTest {
    private static final QpServer.Options OPTIONS = new QpServer.Options(4096, 8, 4096, QpConfig.defaults());

    private static QpLoad.Plan plan(InetSocketAddress server, int qps, QpLoad.Op op) {
        return new QpLoad.Plan(server, qps, 0.5, 4, 200, op, QpConfig.defaults(), 0);
    }

    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void everyQueuePairOpensAndEveryReplyIsChecked(EventLoopConfig.Choice engine) throws Exception {
        serveAndCheck(engine, OPTIONS);
    }

    /** The same with both ends' queue pairs spread over two loop threads ({@code --loops 2}). */
    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void queuePairsSpreadOverTwoLoopsOnBothEndsAndEveryReplyIsChecked(EventLoopConfig.Choice engine) throws Exception {
        BulkRunTest.assumeUsable(engine);
        EventLoopConfig loop = EventLoopConfig.defaults().withEngine(engine);
        try (QpServer server = QpServer.start(loop, 2, new InetSocketAddress("127.0.0.1", 0), OPTIONS)) {
            QpLoad.Result r = QpLoad.run(loop, 2, plan(server.address(), 20, QpLoad.Op.SEND));
            assertNull(r.firstFailure(), r.firstFailure());
            assertEquals(20, r.established(), r.line());
            assertTrue(r.verified(), r.line());
            assertEquals(2, server.context().loops());
        }
    }

    /** The same with every queue pair of the server completing into one queue and receiving from one. */
    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void aServerOfSharedQueuesServesEveryQueuePairAndEveryReplyIsChecked(EventLoopConfig.Choice engine) throws Exception {
        serveAndCheck(engine, new QpServer.Options(4096, 8, 4096, QpConfig.defaults(), 256));
    }

    /** A server given a key ({@code ZCNET_QP_KEY}) serves a load holding it and refuses one without. */
    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void aKeyedServerServesHoldersOfItsKeyAndRefusesStrangers(EventLoopConfig.Choice engine) throws Exception {
        BulkRunTest.assumeUsable(engine);
        EventLoopConfig loop = EventLoopConfig.defaults().withEngine(engine);
        QpConfig keyed = QueuePairSettings.config(0, Map.of(QueuePairSettings.KEY_VARIABLE, "the qp-server test key"));
        try (QpServer server = QpServer.start(loop, 1, new InetSocketAddress("127.0.0.1", 0),
                new QpServer.Options(4096, 8, 4096, keyed))) {
            QpLoad.Result stranger = QpLoad.run(loop, 1, plan(server.address(), 4, QpLoad.Op.SEND));
            assertEquals(0, stranger.established(), stranger.line());
            assertEquals(4, stranger.failed(), stranger.line());
            assertEquals(0, server.accepted.get(), "a stranger became a queue pair");
            QpLoad.Result holder = QpLoad.run(loop, 1, new QpLoad.Plan(server.address(), 4, 0.5, 4, 200, QpLoad.Op.SEND,
                    keyed, 0));
            assertEquals(4, holder.established(), holder.line());
            assertTrue(holder.verified(), holder.line());
        }
    }

    private static void serveAndCheck(EventLoopConfig.Choice engine, QpServer.Options options) throws Exception {
        BulkRunTest.assumeUsable(engine);
        EventLoopConfig loop = EventLoopConfig.defaults().withEngine(engine);
        try (QpServer server = QpServer.start(loop, 1, new InetSocketAddress("127.0.0.1", 0), options)) {
            for (QpLoad.Op op : QpLoad.Op.values()) {
                QpLoad.Result r = QpLoad.run(loop, 1, plan(server.address(), 20, op));
                assertNull(r.firstFailure(), op + ": " + r.firstFailure());
                assertEquals(20, r.established(), r.line());
                assertEquals(0, r.failed(), r.line());
                assertTrue(r.roundTrips() > 20, r.line());
                assertTrue(r.verified(), r.line());
                assertTrue(r.line().matches("qp-load: qps=20 established=20 failed=0 round_trips=\\d+ rt_per_s=\\d+"
                        + " p50_us=[\\d.]+ p99_us=[\\d.]+ verify=ok"), r.line());
            }
            assertTrue(server.echoed.get() > 0, "the SENDs were not echoed by the server");
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (server.live() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(0, server.live(), "the server keeps queue pairs whose clients left");
            assertEquals(0, server.failed.get(), "clients that left are not failures");
        }
    }

    /** A server speaking the protocol that answers every SEND with one byte changed. */
    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void aWrongByteInAReplyFailsTheVerification(EventLoopConfig.Choice engine) throws Exception {
        BulkRunTest.assumeUsable(engine);
        EventLoopConfig loop = EventLoopConfig.defaults().withEngine(engine);
        ValueLayout.OfInt le = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        try (QpContext context = QpContext.open(loop);
             Arena arena = Arena.ofShared()) {
            QpListener listener = context.listen(new InetSocketAddress("127.0.0.1", 0), QpConfig.defaults());
            MemorySegment memory = arena.allocate(64 * 1024, 64);
            MemoryRegion region = context.register(memory, Access.ALL);
            Thread liar = Thread.ofPlatform().start(() -> {
                try {
                    QueuePair qp = listener.accept(Duration.ofSeconds(10));
                    memory.set(le, 0, QpServer.MAGIC);
                    memory.set(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 8, 4096);
                    WorkRequest wr = new WorkRequest();
                    WorkCompletion wc = new WorkCompletion();
                    for (int i = 0; i < 8; i++) {
                        qp.postReceive(i, region.localKey(), 4096 + i * 4096L, 4096);
                    }
                    qp.postSend(wr.send(99, region.localKey(), 0, QpServer.HELLO_BYTES));
                    while (qp.await(wc, Duration.ofSeconds(2)) && wc.isSuccess()) {
                        if (wc.opcode() == WorkCompletion.OP_RECV) {
                            long at = 4096 + wc.workRequestId() * 4096;
                            memory.set(ValueLayout.JAVA_BYTE, at + 7, (byte) ~memory.get(ValueLayout.JAVA_BYTE, at + 7));
                            qp.postSend(wr.send(100 + wc.workRequestId(), region.localKey(), at, wc.byteCount()));
                        } else if (wc.workRequestId() >= 100) {
                            long slot = wc.workRequestId() - 100;
                            qp.postReceive(slot, region.localKey(), 4096 + slot * 4096, 4096);
                        }
                    }
                    qp.close();
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            QpLoad.Result r = QpLoad.run(loop, 1, plan(listener.address(), 1, QpLoad.Op.SEND));
            liar.join();
            assertTrue(r.roundTrips() > 0, r.line());
            assertFalse(r.verified(), "replies with a byte changed passed: " + r.line());
            assertTrue(r.line().endsWith("verify=FAILED"), r.line());
        }
    }
}
