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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static io.zcnet.examples.BulkRunTest.assumeUsable;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LoopDriver} on a real queue pair, on each engine: turns run on the loop thread until one says the
 * phase is over and never after, a failing turn ends the wait with its exception, and the calling thread
 * gets the queue pair back either way.
 */
class LoopDriverTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int WRITES = 10;

    private final Arena arena = Arena.ofShared();
    private QpContext serverContext;
    private QpContext clientContext;
    private QueuePair client;
    private QueuePair server;
    private MemoryRegion local;
    private MemoryRegion remote;
    private final WorkRequest wr = new WorkRequest();

    private void connect(EventLoopConfig.Choice engine) throws Exception {
        assumeUsable(engine);
        serverContext = QpContext.open(engine);
        clientContext = QpContext.open(engine);
        QpListener listener = serverContext.listen(new InetSocketAddress("127.0.0.1", 0), QpConfig.defaults());
        client = clientContext.connect(listener.address(), QpConfig.defaults());
        server = listener.accept(WAIT);
        assertNotNull(server, "the listener accepted no queue pair");
        local = clientContext.register(arena.allocate(4096, 4096), Access.ALL);
        remote = serverContext.register(arena.allocate(4096, 4096), Access.ALL);
    }

    @AfterEach
    void close() {
        if (clientContext != null) {
            clientContext.close();
        }
        if (serverContext != null) {
            serverContext.close();
        }
        arena.close();
    }

    private void postWrite(long id) {
        assertTrue(client.postSend(wr.write(id, local.localKey(), 0, 64, remote.remoteKey(), 0)));
    }

    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void turnsRunOnTheLoopThreadUntilOneSaysOverAndNeverAfter(EventLoopConfig.Choice engine) throws Exception {
        connect(engine);
        WorkCompletion wc = new WorkCompletion();
        int[] polled = {0};
        String[] threads = {null};
        LoopDriver driver = new LoopDriver(client, () -> {
            threads[0] = Thread.currentThread().getName();
            while (polled[0] < WRITES / 2 && client.poll(wc)) {
                polled[0]++;
            }
            return polled[0] == WRITES / 2;
        });
        driver.start();
        for (int i = 0; i < WRITES; i++) {
            postWrite(i); // the turns only poll: this thread stays the only one posting
        }
        assertTrue(driver.await(TimeUnit.SECONDS.toNanos(30)), "the turns never said the phase was over");
        Thread.sleep(200); // time for the other half to complete, and for a turn that should not run
        driver.stop();
        assertEquals(WRITES / 2, polled[0]);
        assertTrue(threads[0].startsWith("zcnet-qp"), threads[0]);
        for (int i = WRITES / 2; i < WRITES; i++) {
            assertTrue(client.await(wc, WAIT), "completion " + i + " was not left to the calling thread");
            assertEquals(i, wc.workRequestId(), wc::toString);
            assertTrue(wc.isSuccess(), wc::toString);
        }
    }

    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void aTurnThatFailsEndsTheWaitAndStopThrowsWhy(EventLoopConfig.Choice engine) throws Exception {
        connect(engine);
        IOException why = new IOException("the peer said something odd");
        LoopDriver driver = new LoopDriver(client, () -> {
            throw why;
        });
        driver.start();
        postWrite(0);
        assertTrue(driver.await(TimeUnit.SECONDS.toNanos(30)));
        assertSame(why, assertThrows(IOException.class, driver::stop));
    }

    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void aBugInATurnIsReportedAndTheLoopRunsOn(EventLoopConfig.Choice engine) throws Exception {
        connect(engine);
        LoopDriver driver = new LoopDriver(client, () -> {
            throw new IllegalStateException("a bug");
        });
        driver.start();
        postWrite(0);
        assertTrue(driver.await(TimeUnit.SECONDS.toNanos(30)));
        IOException e = assertThrows(IOException.class, driver::stop);
        assertTrue(e.getMessage().contains("a bug"), e.getMessage());
        postWrite(1); // the queue pair still works, now from the calling thread again
        WorkCompletion wc = new WorkCompletion();
        while (client.await(wc, WAIT) && wc.workRequestId() == 0) {
            // the first write's completion, which the failing turn left behind
        }
        assertEquals(1, wc.workRequestId(), wc::toString);
        assertTrue(wc.isSuccess(), wc::toString);
    }
}
