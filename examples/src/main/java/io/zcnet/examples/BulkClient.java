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
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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
 * server's RESULT.
 *
 * <p>The data runs on the queue pair's loop thread ({@link LoopDriver}): the READY's completion posts the
 * first window, and each later completion the next work request, so the calling thread, which sends the
 * HELLO and the DONE, only waits in between and draws the progress meter from {@link #bytesSoFar()}. The
 * loop's turns reuse one work request and one completion and allocate nothing.
 */
final class BulkClient {
    private static final VarHandle BYTES;
    private static final VarHandle STARTED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            BYTES = lookup.findVarHandle(BulkClient.class, "bytes", long.class);
            STARTED = lookup.findVarHandle(BulkClient.class, "started", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** How often the calling thread looks whether the READY came, before the data starts. */
    private static final long READY_STEP = 100_000_000L;

    private final QueuePair qp;
    private final BulkPlan plan;
    private final ControlChannel control;
    private final MemoryRegion data;
    private final ProgressMeter meter;
    private final WorkRequest wr = new WorkRequest();
    private final WorkCompletion wc = new WorkCompletion();
    // Written by the loop thread's turns; the calling thread reads them once the driver stopped, except
    // bytes (opaque, for the meter) and started (release/acquire, publishing start).
    private BulkProtocol.Ready ready;
    private long start;
    private long end;
    private long deadline;
    @SuppressWarnings("unused") // through STARTED
    private boolean started;
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
            return new BulkClient(qp, plan, memory, meter).run(context.engine().name().toLowerCase(Locale.ROOT));
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

    private BulkResult run(String engine) throws IOException, InterruptedException {
        LoopDriver driver = new LoopDriver(qp, this::turn);
        control.postReceive();
        driver.start();
        // From here the loop thread polls: the READY's completion starts the data there.
        control.send(BulkProtocol.HELLO, BulkProtocol.writeHello(control.memory(), ControlChannel.OUT, plan));
        try {
            awaitData(driver);
        } finally {
            meter.finish();
            driver.stop();
        }
        long nanos = end - start;
        QpStatistics stats = qp.statistics();
        control.postReceive();
        control.send(BulkProtocol.DONE, BulkProtocol.writeDone(control.memory(), ControlChannel.OUT,
                new BulkProtocol.Done(completed, bytes)));
        BulkProtocol.Result server = BulkProtocol.readResult(control.memory(), ControlChannel.IN,
                control.await(BulkProtocol.RESULT));
        long checked = mismatches + server.mismatches();
        int subflows = stats.subflows().size();
        int live = BulkResult.live(stats);
        if (plan.op() == BulkOp.READ) { // the server sent the data: its subflows carried it
            return new BulkResult(plan, subflows, live, bytes, nanos, server.subflowBytes(), server.framesResent(),
                    server.bytesResent(), checked, engine);
        }
        return new BulkResult(plan, subflows, live, bytes, nanos, BulkResult.subflowBytes(stats), stats.framesResent(),
                stats.bytesResent(), checked, engine);
    }

    /** Waits for the READY (within the control timeout), then draws the meter until the data is done. */
    private void awaitData(LoopDriver driver) throws IOException, InterruptedException {
        long readyBy = System.nanoTime() + ControlChannel.TIMEOUT.toNanos();
        boolean metering = false;
        while (!driver.await(metering ? meter.due() - System.nanoTime() : READY_STEP)) {
            long now = System.nanoTime();
            if (metering) {
                meter.update(now, bytesSoFar());
            } else if ((boolean) STARTED.getAcquire(this)) { // acquire: start, as the loop thread set it
                meter.start(start);
                metering = true;
            } else if (now - readyBy > 0) {
                throw new IOException("no READY from the peer within " + ControlChannel.TIMEOUT.toSeconds() + " s");
            }
        }
    }

    /** Payload bytes of the data work requests completed so far; any thread. */
    long bytesSoFar() {
        return (long) BYTES.getOpaque(this); // opaque: a figure to show, nothing is read through it
    }

    /**
     * One turn on the loop thread: takes the READY, retires what completed, and keeps the window full until
     * the plan is used up; over once the last data work request completed.
     */
    private boolean turn() throws IOException {
        while (qp.poll(wc)) {
            complete();
        }
        if (ready == null) {
            return false;
        }
        long now = System.nanoTime();
        boolean more = posted < plan.messages() && (!plan.timed() || now - deadline < 0);
        while (more && posted - completed < plan.window() && qp.postSend(prepare(posted))) {
            posted++;
            more = posted < plan.messages();
        }
        if (!more && completed == posted) {
            end = System.nanoTime();
            return true;
        }
        return false;
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
            if (wc.opcode() == WorkCompletion.OP_RECV) {
                takeReady();
            }
            return; // else the HELLO's acknowledgement, before or after the READY
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
        BYTES.setOpaque(this, bytes + length); // opaque: read by the meter only; the loop thread is the writer
        completed++;
    }

    /** The server's READY, in the control receive: checked against the plan, it starts the clock. */
    private void takeReady() throws IOException {
        if (!wc.hasImmediate() || wc.immediate() != BulkProtocol.READY) {
            throw new IOException("expected READY from the peer, got " + wc);
        }
        BulkProtocol.Ready r = BulkProtocol.readReady(control.memory(), ControlChannel.IN, wc.byteCount());
        if (r.slots() != plan.serverSlots() || r.stride() < plan.messageSize()) {
            throw new IOException("the server's READY (" + r + ") does not fit the plan " + plan);
        }
        ready = r;
        start = System.nanoTime();
        deadline = start + plan.nanos();
        STARTED.setRelease(this, true); // release: start, for the calling thread's meter
    }
}
