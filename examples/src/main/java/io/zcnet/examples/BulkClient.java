package io.zcnet.examples;

import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.QpStatistics;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.SubflowPath;
import io.zcnet.qp.WorkCompletion;
import io.zcnet.qp.WorkRequest;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The active side of a bulk run (the exchange is described on {@link BulkCommand}): on a connected queue
 * pair, sends the HELLO, keeps {@link BulkPlan#window()} data work requests in flight from a ring of as many
 * local slots until the plan's bytes or time are used up, then sends DONE with its totals and reads the
 * server's RESULT. The calling thread posts and polls; the loop between READY and DONE reuses one work
 * request and one completion and allocates nothing (the progress meter allocates on the turns it prints).
 */
final class BulkClient {
    private static final Duration POLL = Duration.ofMillis(100);

    private final QueuePair qp;
    private final BulkPlan plan;
    private final ControlChannel control;
    private final MemoryRegion data;
    private final ProgressMeter meter;
    private final WorkRequest wr = new WorkRequest();
    private final WorkCompletion wc = new WorkCompletion();
    private BulkProtocol.Ready ready;
    private long posted;
    private long completed;
    private long bytes;
    private long mismatches;

    private BulkClient(QueuePair qp, BulkPlan plan, RegionArena memory, ProgressMeter meter) {
        this.qp = qp;
        this.plan = plan;
        this.meter = meter;
        this.control = new ControlChannel(qp, memory);
        this.data = memory.register((long) plan.window() * plan.messageSize());
    }

    /**
     * Opens a queue pair along the first of {@code paths}, joins a subflow along each further one, runs
     * {@code plan} on it and closes it.
     */
    static BulkResult run(QpContext context, List<SubflowPath> paths, QpConfig config, BulkPlan plan,
            ProgressMeter meter) throws IOException, InterruptedException {
        QueuePair qp = context.connect(paths.subList(0, 1), config);
        try (RegionArena memory = new RegionArena(context); qp) {
            join(qp, paths.subList(1, paths.size()), config);
            BulkClient client = new BulkClient(qp, plan, memory, meter);
            client.hello();
            return client.run(context.engine().name().toLowerCase(Locale.ROOT));
        }
    }

    private void hello() throws IOException {
        control.postReceive();
        control.send(BulkProtocol.HELLO, BulkProtocol.writeHello(control.memory(), ControlChannel.OUT, plan));
        ready = BulkProtocol.readReady(control.memory(), ControlChannel.IN, control.await(BulkProtocol.READY));
        if (ready.slots() != plan.serverSlots() || ready.stride() < plan.messageSize()) {
            throw new IOException("the server's READY (" + ready + ") does not fit the plan " + plan);
        }
    }

    /**
     * Joins one subflow along each of {@code paths}, failing with the reason when any of them fails (where
     * {@link QpContext#connect(List, QpConfig)} would carry on with fewer subflows and keep the reason).
     */
    private static void join(QueuePair qp, List<SubflowPath> paths, QpConfig config) throws IOException,
            InterruptedException {
        List<CompletableFuture<Integer>> joins = new ArrayList<>();
        for (SubflowPath path : paths) {
            joins.add(qp.addSubflow(path));
        }
        long waitMillis = config.handshakeTimeout().toMillis() + 5_000;
        for (int i = 0; i < joins.size(); i++) {
            try {
                joins.get(i).get(waitMillis, TimeUnit.MILLISECONDS);
            } catch (ExecutionException | TimeoutException e) {
                String reason = e instanceof ExecutionException ? e.getCause().getMessage() : "no answer in " + waitMillis + " ms";
                throw new IOException("subflow " + (i + 1) + " (" + paths.get(i) + ") did not join: " + reason, e);
            }
        }
    }

    private BulkResult run(String engine) throws IOException {
        long start = System.nanoTime();
        meter.start(start);
        transfer(start);
        long nanos = System.nanoTime() - start;
        meter.finish();
        QpStatistics stats = qp.statistics();
        control.postReceive();
        control.send(BulkProtocol.DONE, BulkProtocol.writeDone(control.memory(), ControlChannel.OUT,
                new BulkProtocol.Done(completed, bytes)));
        BulkProtocol.Result server = BulkProtocol.readResult(control.memory(), ControlChannel.IN,
                control.await(BulkProtocol.RESULT));
        long checked = mismatches + server.mismatches();
        int subflows = stats.subflows().size();
        if (plan.op() == BulkOp.READ) { // the server sent the data: its subflows carried it
            return new BulkResult(plan, subflows, bytes, nanos, server.subflowBytes(), server.framesResent(),
                    server.bytesResent(), checked, engine);
        }
        return new BulkResult(plan, subflows, bytes, nanos, BulkResult.subflowBytes(stats), stats.framesResent(),
                stats.bytesResent(), checked, engine);
    }

    /** Keeps the window full until the plan is used up, then drains it. */
    private void transfer(long start) throws IOException {
        long limit = plan.messages();
        long deadline = start + plan.nanos();
        while (true) {
            long now = System.nanoTime();
            boolean more = posted < limit && (!plan.timed() || now - deadline < 0);
            while (more && posted - completed < plan.window() && qp.postSend(prepare(posted))) {
                posted++;
                more = posted < limit;
            }
            if (!more && completed == posted) {
                return;
            }
            if (qp.await(wc, POLL)) {
                complete();
            }
            meter.update(now, bytes);
        }
    }

    /** Message {@code seq} from (or, for READ, into) local slot {@code seq % window}. */
    private WorkRequest prepare(long seq) {
        int length = plan.lengthOf(seq);
        long local = seq % plan.window() * plan.messageSize();
        long remote = seq % ready.slots() * ready.stride();
        int lkey = data.localKey();
        if (plan.verify() && plan.op() != BulkOp.READ) {
            MessagePattern.fill(data.segment(), local, length, seq);
        }
        return switch (plan.op()) {
            case WRITE -> plan.verify()
                    ? wr.writeWithImmediate(seq, lkey, local, length, ready.rkey(), remote, (int) seq)
                    : wr.write(seq, lkey, local, length, ready.rkey(), remote);
            case SEND -> wr.send(seq, lkey, local, length);
            case READ -> wr.read(seq, lkey, local, length, ready.rkey(), remote);
        };
    }

    private void complete() throws IOException {
        if (!wc.isSuccess()) {
            throw ControlChannel.failure(qp, wc);
        }
        long seq = wc.workRequestId();
        if (seq == ControlChannel.CONTROL) {
            return; // the HELLO's acknowledgement, overtaken by the READY
        }
        if (seq != completed) {
            throw new IOException("work request " + seq + " completed while " + completed + " was the oldest");
        }
        int length = plan.lengthOf(seq);
        if (plan.verify() && plan.op() == BulkOp.READ
                && !MessagePattern.matches(data.segment(), seq % plan.window() * plan.messageSize(), length,
                        seq % ready.slots())) {
            mismatches++;
        }
        bytes += length;
        completed++;
    }
}
