package io.zcnet.collective;

import io.zcnet.ring.EventLoopConfig;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;

/**
 * N ranks as threads of this JVM, each with a communicator (and a queue-pair context, so a loop thread) of
 * its own, formed through a rendezvous store on loopback: the fixture of the collective tests. {@link #run}
 * runs a body on every rank at once, as N processes would, and fails with the first rank's failure. Each rank
 * keeps one thread for everything, joining included, as a busy-polling rank needs (its joining thread drives it).
 */
final class RankGroup implements AutoCloseable {
    static final Duration WAIT = Duration.ofSeconds(60);

    /** What every rank runs; {@code c.rank()} tells them apart. */
    @FunctionalInterface
    interface Body {
        void run(Communicator c) throws Exception;
    }

    final Communicator[] ranks;
    /** One thread per rank, so each rank's calls all come from the thread that joined. */
    private final ExecutorService[] threads;

    private RankGroup(Communicator[] ranks, ExecutorService[] threads) {
        this.ranks = ranks;
        this.threads = threads;
    }

    static RankGroup start(int size, EventLoopConfig.Choice engine, CommunicatorConfig config) throws Exception {
        try (RendezvousServer store = RendezvousServer.start(new InetSocketAddress("127.0.0.1", 0), size,
                config.connectTimeout(), config.jobSecret())) {
            return start(size, engine, config, store.address());
        }
    }

    /** The ranks join at {@code store}, a store (or a relay in front of one) that the caller runs. */
    static RankGroup start(int size, EventLoopConfig.Choice engine, CommunicatorConfig config, InetSocketAddress store)
            throws Exception {
        return startSome(size, IntStream.range(0, size).toArray(), engine, config, store);
    }

    /** Only {@code present} of the {@code size} ranks join at {@code store}: the rest never come. */
    static RankGroup startSome(int size, int[] present, EventLoopConfig.Choice engine, CommunicatorConfig config,
            InetSocketAddress store) throws Exception {
        ExecutorService[] threads = new ExecutorService[size];
        for (int r = 0; r < size; r++) {
            threads[r] = Executors.newSingleThreadExecutor(Thread.ofPlatform().name("rank-" + r).factory());
        }
        CommunicatorConfig each = config.withEngine(engine).withHostStore(false);
        List<Future<Communicator>> joining = new ArrayList<>();
        for (int rank : present) {
            joining.add(threads[rank].submit(() -> Communicator.rendezvous(rank, size, store, each)));
        }
        Communicator[] ranks = new Communicator[size];
        Exception failure = null;
        for (int i = 0; i < present.length; i++) {
            try {
                ranks[present[i]] = joining.get(i).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        RankGroup group = new RankGroup(ranks, threads);
        if (failure != null) {
            group.close();
            throw failure;
        }
        return group;
    }

    /** Runs {@code body} on every rank at once and waits for all; throws the first failure, by rank. */
    void run(Body body) throws Exception {
        List<Future<?>> running = new ArrayList<>();
        for (int r = 0; r < ranks.length; r++) {
            Communicator c = ranks[r];
            running.add(threads[r].submit(() -> {
                body.run(c);
                return null;
            }));
        }
        Throwable first = null;
        for (int r = 0; r < ranks.length; r++) {
            try {
                running.get(r).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (first == null) {
                    first = e.getCause();
                } else {
                    first.addSuppressed(e.getCause());
                }
            } catch (TimeoutException e) {
                if (first == null) {
                    first = new AssertionError("rank " + r + " did not finish within " + WAIT + ": " + ranks[r]);
                }
            }
        }
        if (first instanceof Exception e) {
            throw e;
        }
        if (first instanceof Error e) {
            throw e;
        }
    }

    /** Closes every communicator at once (closing is collective), then the threads. */
    @Override
    public void close() throws Exception {
        List<Future<?>> closing = new ArrayList<>();
        for (int r = 0; r < ranks.length; r++) {
            if (ranks[r] != null) {
                closing.add(threads[r].submit(ranks[r]::close));
            }
        }
        for (Future<?> f : closing) {
            f.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
        for (ExecutorService t : threads) {
            t.shutdownNow();
        }
    }
}
