package io.zcnet.examples;

import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.SubflowPath;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code zcnet qp-flood}: what a careless or hostile crowd does to a queue-pair server, to try one's own server
 * against it: many connections that complete an OPEN and hang up at once, and many that connect and send nothing.
 * Bounded in count and time; it aims only at the address it is given.
 */
@Command(name = "qp-flood", mixinStandardHelpOptions = true,
        description = {"Flood a queue-pair server you run (for testing it): --opens connections that complete an OPEN",
                "and hang up at once, and --half-open connections that send nothing, held for --hold seconds.",
                "Prints one line: qp-flood: opens=N opened=O refused=R half_open=H held_s=S"})
final class QpFloodCommand implements Callable<Integer> {
    @Option(names = "--connect", required = true, paramLabel = "HOST:PORT", description = "The server to flood.")
    String connect;

    @Option(names = "--opens", defaultValue = "5000", description = "OPENs completed then hung up. Default: ${DEFAULT-VALUE}.")
    int opens;

    @Option(names = "--half-open", defaultValue = "2000",
            description = "Connections that send nothing. Default: ${DEFAULT-VALUE}.")
    int halfOpen;

    @Option(names = "--source", defaultValue = "127.0.0.2", paramLabel = "ADDR",
            description = "Local address the flood comes from (any of 127/8 on loopback). Default: ${DEFAULT-VALUE}.")
    String source;

    @Option(names = "--hold", defaultValue = "10", description = "Seconds the half-open connections stay. Default: ${DEFAULT-VALUE}.")
    double hold;

    @Option(names = "--threads", defaultValue = "16", description = "Threads opening at once. Default: ${DEFAULT-VALUE}.")
    int threads;

    @Mixin
    LoopOptions loop;

    @Override
    public Integer call() throws Exception {
        if (opens < 0 || opens > 100_000 || halfOpen < 0 || halfOpen > 100_000) {
            throw new IllegalArgumentException("--opens and --half-open must be 0..100000");
        }
        if (threads < 1 || threads > 256 || !(hold >= 0 && hold <= 600)) {
            throw new IllegalArgumentException("--threads must be 1..256 and --hold 0..600 s");
        }
        InetSocketAddress server = BulkCommand.connectAddress(connect);
        InetSocketAddress from = new InetSocketAddress(source, 0);
        List<SocketChannel> silent = new ArrayList<>();
        try {
            for (int i = 0; i < halfOpen; i++) {
                SocketChannel c = SocketChannel.open();
                c.bind(from);
                c.connect(server);
                silent.add(c);
            }
            AtomicLong opened = new AtomicLong();
            AtomicLong refused = new AtomicLong();
            // The OPENs from the flood's own address too: one context, so every queue pair it opens shares one loop.
            QpConfig config = QpConfig.defaults().withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(2));
            try (QpContext context = QpContext.open(loop.config())) {
                ExecutorService pool = Executors.newFixedThreadPool(threads, Thread.ofPlatform().name("qp-flood").factory());
                try {
                    List<Future<?>> done = new ArrayList<>();
                    for (int i = 0; i < opens; i++) {
                        done.add(pool.submit(() -> {
                            try {
                                QueuePair qp = context.connect(List.of(new SubflowPath(from, server)), config);
                                opened.incrementAndGet();
                                qp.close(); // hangs up at once
                            } catch (IOException e) {
                                refused.incrementAndGet();
                            }
                            return null;
                        }));
                    }
                    for (Future<?> f : done) {
                        f.get(60, TimeUnit.SECONDS);
                    }
                } finally {
                    pool.shutdownNow();
                }
            }
            long heldMillis = (long) (hold * 1000);
            Thread.sleep(heldMillis);
            System.out.printf("qp-flood: opens=%d opened=%d refused=%d half_open=%d held_s=%.1f%n", opens, opened.get(),
                    refused.get(), silent.size(), hold);
            return 0;
        } finally {
            for (SocketChannel c : silent) {
                try {
                    c.close();
                } catch (IOException alreadyGone) {
                    // the server dropped it first: nothing left to close
                }
            }
        }
    }
}
