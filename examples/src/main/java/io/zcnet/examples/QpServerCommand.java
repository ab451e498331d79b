package io.zcnet.examples;

import io.zcnet.qp.ContextStatistics;
import io.zcnet.qp.QpConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code zcnet qp-server}: serves any number of queue pairs ({@link QpServer}) until stopped, printing its counts
 * every few seconds.
 */
@Command(name = "qp-server", mixinStandardHelpOptions = true,
        description = {"Serve queue pairs until stopped (Ctrl-C or SIGTERM): every SEND is answered with a SEND of",
                "the same bytes; each queue pair has a registered region its client may WRITE and READ.",
                "Drive it with 'zcnet qp-load'. With ZCNET_QP_KEY set (16..64 bytes) only peers holding the same",
                "pre-shared key are served: a stranger is refused in the handshake."})
final class QpServerCommand implements Callable<Integer> {
    @Option(names = "--listen", required = true, paramLabel = "ADDR:PORT", description = "Where to listen (port 0: any).")
    String listen;

    @Option(names = "--max-size", defaultValue = "4096", description = "Largest SEND a client may make. Default: ${DEFAULT-VALUE}.")
    int maxSize;

    @Option(names = "--receives", defaultValue = "8",
            description = "Receives kept posted per queue pair (its client's SENDs in flight). Default: ${DEFAULT-VALUE}.")
    int receives;

    @Option(names = "--region-bytes", defaultValue = "4096",
            description = "Bytes of each queue pair's region for WRITE and READ. Default: ${DEFAULT-VALUE}.")
    int regionBytes;

    @Option(names = "--queue-depth", defaultValue = "0", paramLabel = "D",
            description = {"Send and receive queue depths and the message window of every queue pair, a power of two",
                    "up to 32768 (0: the defaults, 256 deep with a window of 64). Both ends must ask for the same."})
    int queueDepth;

    @Option(names = "--shared-receives", defaultValue = "0", paramLabel = "N",
            description = {"Serve every queue pair from one shared completion queue and one shared receive queue of N",
                    "receives (a power of two), lent --receives at a time to each queue pair; 0: queues of each",
                    "queue pair's own. Default: ${DEFAULT-VALUE}."})
    int sharedReceives;

    @Option(names = "--report-seconds", defaultValue = "5", description = "Seconds between count lines. Default: ${DEFAULT-VALUE}.")
    int reportSeconds;

    @Mixin
    LoopOptions loop;

    @Mixin
    LoopCountOption loops;

    @Override
    public Integer call() throws Exception {
        if (reportSeconds < 1) {
            throw new IllegalArgumentException("--report-seconds must be at least 1, got " + reportSeconds);
        }
        if (sharedReceives > 0 && loops.count() > 1) {
            throw new IllegalArgumentException("--shared-receives serves every queue pair from shared queues of one loop,"
                    + " so every queue pair would live there: use --loops 1 with it");
        }
        QpServer.Options options = new QpServer.Options(maxSize, receives, regionBytes,
                QueuePairSettings.config(queueDepth, System.getenv()), sharedReceives);
        QpServer server = QpServer.start(loop.config(), loops.count(), BulkCommand.listenAddress(listen), options);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().unstarted(() -> {
            server.close();
            stopped.countDown();
        }));
        System.out.println("zcnet qp-server: listening on " + server.address().getAddress().getHostAddress() + ":"
                + server.address().getPort() + " (engine " + server.context().engine() + ", loops "
                + server.context().loops() + ")");
        System.out.flush();
        while (!stopped.await(reportSeconds, TimeUnit.SECONDS)) {
            ContextStatistics s = server.context().statistics();
            System.out.println(String.format(Locale.ROOT, "qp-server: live=%d accepted=%d ended=%d failed=%d refused=%d"
                            + " echoed=%d handshakes=%d sender_spaces=%d+%d_idle receive_kib=%d+%d_idle", server.live(),
                    server.accepted.get(), server.ended.get(), server.failed.get(), server.refused(), server.echoed.get(),
                    s.handshakes(), s.senderSpacesLent(), s.senderSpacesIdle(), s.receiveBytesLent() / 1024,
                    s.receiveBytesIdle() / 1024));
            System.out.flush();
        }
        return 0;
    }
}
