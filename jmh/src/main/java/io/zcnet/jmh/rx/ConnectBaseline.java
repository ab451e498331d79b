package io.zcnet.jmh.rx;

import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * What establishing costs without zcnet: {@code connections} plain TCP connects from {@code threads} threads
 * (the way {@code zcnet qp-load} opens its queue pairs) to a listener that accepts each on a thread of its own,
 * TCP_NODELAY set on both ends, every connection kept open until all are up; {@code rounds} times in one JVM, every
 * round but the last a warm-up (1 by default: a fresh JVM's first). Prints one line, the last round's:
 * {@code connect-baseline: connections=N ms=T}.
 *
 * <pre>ConnectBaseline [connections] [threads] [rounds]</pre>
 */
public final class ConnectBaseline {
    private ConnectBaseline() {
    }

    public static void main(String[] args) throws Exception {
        int connections = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        if (connections < 1 || connections > 100_000 || threads < 1 || threads > 256 || rounds < 1 || rounds > 1000) {
            throw new IllegalArgumentException("connections 1..100000, threads 1..256 and rounds 1..1000, got "
                    + connections + ", " + threads + ", " + rounds);
        }
        double ms = 0;
        for (int round = 0; round < rounds; round++) {
            ms = round(connections, threads);
        }
        System.out.printf(Locale.ROOT, "connect-baseline: connections=%d ms=%.1f%n", connections, ms);
    }

    /** One round: {@code connections} opened and accepted, then closed; returns how long the opening took, in ms. */
    private static double round(int connections, int threads) throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0), 4096);
            List<SocketChannel> accepted = new ArrayList<>();
            Thread acceptor = Thread.ofPlatform().start(() -> {
                try {
                    for (int i = 0; i < connections; i++) {
                        SocketChannel c = server.accept();
                        c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                        accepted.add(c);
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            InetSocketAddress address = (InetSocketAddress) server.getLocalAddress();
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            List<SocketChannel> opened = new ArrayList<>();
            long start = System.nanoTime();
            try {
                List<Future<SocketChannel>> connecting = new ArrayList<>();
                for (int i = 0; i < connections; i++) {
                    connecting.add(pool.submit(() -> {
                        SocketChannel c = SocketChannel.open(address);
                        c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                        return c;
                    }));
                }
                for (Future<SocketChannel> f : connecting) {
                    opened.add(f.get(30, TimeUnit.SECONDS));
                }
                acceptor.join();
                return (System.nanoTime() - start) / 1e6;
            } finally {
                pool.shutdownNow();
                for (SocketChannel c : opened) {
                    c.close();
                }
                for (SocketChannel c : accepted) {
                    c.close();
                }
            }
        }
    }
}
