package io.zcnet.jmh.rx;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.QpListener;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.WorkCompletion;
import io.zcnet.ring.EventLoopConfig;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * Both ends of one queue pair in this process: two contexts (two loop threads, as two processes would
 * have) on 127.0.0.1, the client's queue pair connected to the server's, and the memory both register.
 * What the rx programs that drive queue pairs share, with the first failure either end's driver met (a
 * benchmark of a broken queue pair measures nothing); closing it closes both contexts, then the memory.
 */
final class QueuePairEnds implements AutoCloseable {
    private final Arena arena = Arena.ofShared();
    final QpContext serverContext;
    final QpContext clientContext;
    final QueuePair server;
    final QueuePair client;
    private volatile String failure;

    QueuePairEnds(EventLoopConfig.Choice engine, QpConfig config) throws IOException, InterruptedException {
        this(EventLoopConfig.defaults().withEngine(engine), config);
    }

    /** Both contexts' loops built as {@code loops} says: engine, and busy polling if its idle strategy is set. */
    QueuePairEnds(EventLoopConfig loops, QpConfig config) throws IOException, InterruptedException {
        QpContext serverSide = null;
        QpContext clientSide = null;
        try {
            serverSide = QpContext.open(loops);
            clientSide = QpContext.open(loops);
            QpListener listener = serverSide.listen(new InetSocketAddress("127.0.0.1", 0), config);
            client = clientSide.connect(listener.address(), config);
            server = listener.accept(Duration.ofSeconds(10));
            if (server == null) {
                throw new IOException("the listener accepted no queue pair");
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            closeAll(clientSide, serverSide, arena);
            throw e;
        }
        serverContext = serverSide;
        clientContext = clientSide;
    }

    /** Registers {@code bytes} (at least 1) of page-aligned memory on the server's context, all access. */
    MemoryRegion serverRegion(long bytes) {
        return serverContext.register(arena.allocate(Math.max(1, bytes), 4096), Access.ALL);
    }

    /** Registers {@code bytes} (at least 1) of page-aligned memory on the client's context, all access. */
    MemoryRegion clientRegion(long bytes) {
        return clientContext.register(arena.allocate(Math.max(1, bytes), 4096), Access.ALL);
    }

    /** Records {@code why} as the run's failure unless one came first; any thread. */
    void fail(String why) {
        if (failure == null) {
            failure = why;
        }
    }

    /** Records a completion that did not succeed as the failure of {@code end}; returns whether it failed. */
    boolean failed(String end, WorkCompletion wc) {
        if (wc.isSuccess()) {
            return false;
        }
        fail(end + ": " + wc);
        return true;
    }

    /** Throws if either end failed, naming the failure and the client's state. */
    void check() {
        String why = failure;
        if (why != null) {
            throw new IllegalStateException("queue pair failed: " + why + "; " + client);
        }
    }

    @Override
    public void close() {
        closeAll(clientContext, serverContext, arena);
    }

    /** Closes each of {@code resources} that is there, in order, even when one before it throws. */
    private static void closeAll(AutoCloseable... resources) {
        RuntimeException first = null;
        for (AutoCloseable r : resources) {
            try {
                if (r != null) {
                    r.close();
                }
            } catch (Exception e) {
                if (first == null) {
                    first = e instanceof RuntimeException re ? re : new IllegalStateException(e);
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
