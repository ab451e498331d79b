package io.zcnet.examples;

import io.zcnet.qp.QpConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;

/**
 * {@code zcnet qp-load}: opens many queue pairs to a {@code qp-server}, drives them, checks every reply, and ends
 * with one line ({@link QpLoad.Result#line()}).
 */
@Command(name = "qp-load", mixinStandardHelpOptions = true,
        description = {"Open --qps queue pairs to a 'zcnet qp-server', keep --inflight operations in flight on each",
                "for --seconds, check every reply byte for byte, and print one line:",
                "qp-load: qps=N established=N failed=F round_trips=R rt_per_s=X p50_us=P p99_us=Q verify=ok|FAILED",
                "ZCNET_QP_KEY (16..64 bytes), when set, is the pre-shared key of a qp-server that asks for one."})
final class QpLoadCommand implements Callable<Integer> {
    @Option(names = "--connect", required = true, paramLabel = "HOST:PORT", description = "The qp-server.")
    String connect;

    @Option(names = "--qps", defaultValue = "100", description = "Queue pairs to open. Default: ${DEFAULT-VALUE}.")
    int queuePairs;

    @Option(names = "--seconds", defaultValue = "5", description = "How long to drive them. Default: ${DEFAULT-VALUE}.")
    double seconds;

    @Option(names = "--inflight", defaultValue = "1", description = "Operations in flight per queue pair. Default: ${DEFAULT-VALUE}.")
    int inflight;

    @Option(names = "--size", defaultValue = "64", description = "Bytes per operation. Default: ${DEFAULT-VALUE}.")
    int size;

    @Option(names = "--op", defaultValue = "send", paramLabel = "send|read",
            description = "send: SENDs the server echoes; read: RDMA READs of its region. Default: ${DEFAULT-VALUE}.")
    QpLoad.Op op;

    @Option(names = "--hold", defaultValue = "0",
            description = "Seconds to keep the queue pairs open and idle after the run. Default: ${DEFAULT-VALUE}.")
    double hold;

    @Option(names = "--queue-depth", defaultValue = "0", paramLabel = "D",
            description = {"Send and receive queue depths and the message window of every queue pair, a power of two",
                    "up to 32768 (0: the defaults, 256 deep with a window of 64). Both ends must ask for the same."})
    int queueDepth;

    @Mixin
    LoopOptions loop;

    @Mixin
    LoopCountOption loops;

    @Override
    public Integer call() throws Exception {
        QpLoad.Plan plan = new QpLoad.Plan(BulkCommand.connectAddress(connect), queuePairs, seconds, inflight, size, op,
                QueuePairSettings.config(queueDepth, System.getenv()), hold);
        QpLoad.Result result = QpLoad.run(loop.config(), loops.count(), plan);
        if (result.firstFailure() != null) {
            System.err.println("qp-load: first failure: " + result.firstFailure());
        }
        if (result.firstLost() != null && !result.firstLost().equals(result.firstFailure())) {
            System.err.println("qp-load: first established queue pair lost: " + result.firstLost());
        }
        System.out.println(result.line());
        return result.verified() && result.failed() == 0 ? 0 : 1;
    }
}
