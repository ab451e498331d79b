package io.zcnet.collective;

import java.net.InetSocketAddress;

/**
 * An aggregator as a process of its own, for the tests that kill it: listens on 127.0.0.1 at a free port, open to
 * every job, prints {@code listening PORT}, then {@code chunks N} whenever the count of chunks it reduced changed
 * (looked at every millisecond), until it is killed.
 */
final class AggregatorProcess {
    private AggregatorProcess() {
    }

    public static void main(String[] args) throws Exception {
        try (Aggregator a = Aggregator.start(new InetSocketAddress("127.0.0.1", 0),
                AggregatorConfig.defaults().withOpen(true))) {
            System.out.println("listening " + a.address().getPort());
            System.out.flush();
            long said = -1;
            while (true) {
                long chunks = a.statistics().chunks();
                if (chunks != said) {
                    System.out.println("chunks " + chunks);
                    System.out.flush();
                    said = chunks;
                }
                Thread.sleep(1);
            }
        }
    }
}
