package io.zcnet.jmh.qp;

import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.QueuePair;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * What establishing queue pairs costs once the JIT has compiled the path: {@code queuePairs} queue pairs opened to a
 * {@code zcnet qp-server} from {@code threads} threads (as {@code zcnet qp-load} opens them), all kept open until
 * every one is up, then closed; {@code rounds} times in one JVM on one context. Every round but the last warms up.
 * Prints one line per round to stderr and last {@code warm-establish: qps=N ms=T}, T the last round's time.
 *
 * <pre>WarmEstablish host:port [queuePairs] [threads] [rounds]</pre>
 */
public final class WarmEstablish {
    /** Lets the server finish the last round's closes before the next round's opens. */
    private static final long PAUSE_MILLIS = 500;

    private WarmEstablish() {
    }

    /**
     * Runs the rounds.
     *
     * @param args {@code host:port [queuePairs] [threads] [rounds]}
     * @throws Exception if a queue pair cannot be opened
     */
    public static void main(String[] args) throws Exception {
        String[] hostPort = args[0].split(":");
        InetSocketAddress server = new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1]));
        int queuePairs = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 8;
        int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 5;
        if (queuePairs < 1 || queuePairs > 100_000 || threads < 1 || threads > 256 || rounds < 1 || rounds > 1000) {
            throw new IllegalArgumentException("queue pairs 1..100000, threads 1..256 and rounds 1..1000, got "
                    + queuePairs + ", " + threads + ", " + rounds);
        }
        double last = 0;
        try (QpContext context = QpContext.open()) {
            for (int round = 1; round <= rounds; round++) {
                ExecutorService pool = Executors.newFixedThreadPool(threads);
                List<QueuePair> opened = new ArrayList<>();
                try {
                    long start = System.nanoTime();
                    List<Future<QueuePair>> opening = new ArrayList<>();
                    for (int i = 0; i < queuePairs; i++) {
                        opening.add(pool.submit(() -> context.connect(server, QpConfig.defaults())));
                    }
                    for (Future<QueuePair> f : opening) {
                        opened.add(f.get(60, TimeUnit.SECONDS));
                    }
                    last = (System.nanoTime() - start) / 1e6;
                    System.err.printf(Locale.ROOT, "warm-establish: round %d: %d queue pairs in %.1f ms%n", round,
                            queuePairs, last);
                } finally {
                    pool.shutdownNow();
                    for (QueuePair qp : opened) {
                        qp.close();
                    }
                }
                Thread.sleep(PAUSE_MILLIS);
            }
        }
        System.out.printf(Locale.ROOT, "warm-establish: qps=%d ms=%.1f%n", queuePairs, last);
    }
}
