package io.zcnet.qp;

import io.zcnet.ring.EventLoop;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The initiating side of one loop's handshakes: opens a queue pair along its first path and joins more subflows
 * to it, each a socket of that loop running an {@link InitiatorHandshake}, so a queue pair's subflows all connect
 * from the loop it lives on. The waits happen on the
 * caller's thread, or turn the loop on its own thread, where nobody else would. Any thread; the handshakes run
 * on the loop thread.
 */
final class Connector {
    private final QpContext context;
    private final QpLoop home;
    private final EventLoop loop;
    /** The loop's handler of closes whose completion nothing waits for. */
    private final int closer;

    Connector(QpContext context, QpLoop home, int closer) {
        this.context = context;
        this.home = home;
        this.loop = home.loop();
        this.closer = closer;
    }

    /**
     * Opens the queue pair along the first path, then joins every further one as another subflow, as
     * {@link QpContext#connect(List, QpConfig, SharedQueues)} says; the caller checked the arguments and
     * {@linkplain QpLoop#claim claimed} the queue pair's place on this loop, which a failure gives back.
     */
    QueuePair connect(List<SubflowPath> paths, QpConfig config, SharedQueues shared) throws IOException {
        CompletableFuture<QueuePair> opened = new CompletableFuture<>();
        try {
            loop.execute(() -> startOpen(paths.getFirst(), config, shared, opened));
        } catch (RuntimeException e) {
            home.unclaim();
            throw e;
        }
        QueuePair qp;
        try {
            qp = await(opened, config);
        } catch (IOException e) {
            // Given back once: by the handshake's failure, or here when the wait gave up before the handshake did.
            if (opened.completeExceptionally(e)) {
                home.unclaim();
            }
            throw e;
        }
        List<SubflowPath> extra = paths.subList(1, paths.size());
        List<CompletableFuture<Integer>> joins = new ArrayList<>();
        for (SubflowPath path : extra) {
            joins.add(join(qp, path));
        }
        for (int i = 0; i < joins.size(); i++) {
            try {
                await(joins.get(i), config);
            } catch (IOException partial) {
                // The queue pair runs with the subflows that joined; joinFailures() says why the others did not.
                qp.joinFailed(extra.get(i), partial.getMessage());
            }
        }
        return qp;
    }

    private <T> T await(CompletableFuture<T> f, QpConfig config) throws IOException {
        try {
            long timeoutMillis = config.handshakeTimeout().toMillis() + 5_000;
            if (loop.inLoop()) {
                // Nobody else turns this loop: a wait that parked would only run out its time.
                home.drive(f::isDone, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis));
                if (!f.isDone()) {
                    throw new TimeoutException();
                }
            }
            return f.get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof IOException io ? new IOException(io.getMessage(), io)
                    : new IOException(e.getCause());
        } catch (TimeoutException e) {
            throw new IOException("the handshake did not finish in " + config.handshakeTimeout(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while connecting", e);
        }
    }

    private void startOpen(SubflowPath path, QpConfig config, SharedQueues shared, CompletableFuture<QueuePair> opened) {
        int socket;
        try {
            socket = openSocket(path);
        } catch (IOException | RuntimeException e) {
            failOpen(opened, new IOException("cannot open a socket for " + path + ": " + e.getMessage(), e));
            return;
        }
        new InitiatorHandshake(home, socket, path.remote(), path.toString(), config, null, 0, null,
                new InitiatorHandshake.Outcome() {
                    @Override
                    public void established(InitiatorHandshake h) {
                        if (opened.isDone()) { // the caller gave up waiting and gave the place back: nobody would own it
                            loop.close(closer, 0, socket);
                            return;
                        }
                        QueuePair qp = home.create(context.registry(), h.agreement, config, shared, h.token, h.secret);
                        qp.engine().attach(0, socket, h.path, h.peerAckMsn, h.peerCredit);
                        if (!opened.complete(qp)) { // it gave up just now: the place is taken again for the close to free
                            home.claim();
                            qp.close();
                        }
                    }

                    @Override
                    public void failed(InitiatorHandshake h, String reason) {
                        failOpen(opened, new IOException(path + ": " + reason));
                    }
                });
    }

    /** The first subflow failed: the place claimed for the queue pair is given back, unless the caller gave up first. */
    private void failOpen(CompletableFuture<QueuePair> opened, IOException cause) {
        if (opened.completeExceptionally(cause)) {
            home.unclaim();
        }
    }

    /** Opens one more subflow of {@code qp} along {@code path}, from this loop; completes with its index. Any thread. */
    CompletableFuture<Integer> join(QueuePair qp, SubflowPath path) {
        CompletableFuture<Integer> joined = new CompletableFuture<>();
        loop.execute(() -> {
            QpEngine engine = qp.engine();
            if (engine.state() == QpState.ERROR) {
                joined.completeExceptionally(new IOException("queue pair is in ERROR: " + engine.errorReason()));
                return;
            }
            int socket;
            try {
                socket = openSocket(path);
            } catch (IOException | RuntimeException e) {
                joined.completeExceptionally(new IOException("cannot open a socket for " + path + ": " + e.getMessage(), e));
                return;
            }
            new InitiatorHandshake(home, socket, path.remote(), path.toString(), qp.config(), engine, engine.token(),
                    engine.secret(), new InitiatorHandshake.Outcome() {
                        @Override
                        public void established(InitiatorHandshake h) {
                            engine.attach(h.subflowIndex, socket, h.path, h.peerAckMsn, h.peerCredit);
                            joined.complete(h.subflowIndex);
                        }

                        @Override
                        public void failed(InitiatorHandshake h, String reason) {
                            joined.completeExceptionally(new IOException(path + ": " + reason));
                        }
                    });
        });
        return joined;
    }

    private int openSocket(SubflowPath path) throws IOException {
        int socket = loop.socket(path.remote());
        try {
            loop.setTcpNoDelay(socket, true);
            if (path.local() != null) {
                loop.bind(socket, path.local());
            }
        } catch (IOException | RuntimeException e) {
            loop.close(closer, 0, socket);
            throw e;
        }
        return socket;
    }
}
