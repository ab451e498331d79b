package io.zcnet.examples;

import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.QpStatistics;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.WorkCompletion;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.Locale;

/**
 * The passive side of a bulk run (the exchange is described on {@link BulkCommand}): on one accepted queue
 * pair, takes the client's HELLO, sets up the ring of message slots it asks for, keeps receives posted
 * where the plan consumes them and checks each message that arrives in one, then answers the client's
 * DONE with a RESULT and closes the queue pair. The calling thread takes the HELLO and sends the READY and
 * the RESULT; in between, the queue pair's loop thread checks and re-posts the receives inline
 * ({@link LoopDriver}), in turns that allocate nothing, while the calling thread waits.
 */
final class BulkServer {
    /** What the server saw of one run. */
    record Summary(BulkPlan plan, int subflows, long bytes, long nanos, long mismatches, String engine) {
        /** {@code bulk server: op=.. message=.. subflows=.. bytes=.. seconds=.. gbit/s=.. verify=.. engine=..}. */
        String line() {
            return "bulk server: op=" + plan.op().label() + " message=" + plan.messageSize() + " subflows=" + subflows
                    + " bytes=" + bytes + " seconds=" + BulkResult.seconds(nanos) + " gbit/s="
                    + BulkResult.gbits(bytes, nanos) + " verify="
                    + BulkResult.verdict(plan.verify() && plan.serverReceivesData(), mismatches) + " engine=" + engine;
        }
    }

    private final QueuePair qp;
    private final RegionArena memory;
    private final ControlChannel control;
    private final WorkCompletion wc = new WorkCompletion();
    private BulkPlan plan;
    private MemoryRegion data;
    private long stride;
    // Written by the loop thread's turns; the calling thread reads them once the driver stopped.
    private long received;
    private long mismatches;
    private BulkProtocol.Done done;
    private long doneAt;

    private BulkServer(QueuePair qp, RegionArena memory) {
        this.qp = qp;
        this.memory = memory;
        this.control = new ControlChannel(qp, memory);
    }

    /**
     * What a server's queue pairs offer: the client's choices are agreed down from these, so any plan within
     * {@link BulkPlan}'s limits fits.
     */
    static QpConfig config() {
        return QpConfig.defaults().withMessageWindow(BulkPlan.MAX_WINDOW)
                .withQueueDepths(BulkPlan.MAX_WINDOW, BulkPlan.MAX_WINDOW).withMaxSubflows(QpConfig.MAX_SUBFLOWS);
    }

    /** Serves one run on {@code qp} and closes it. */
    static Summary serve(QpContext context, QueuePair qp) throws IOException, InterruptedException {
        try (RegionArena memory = new RegionArena(context); qp) {
            return new BulkServer(qp, memory).run(context.engine().name().toLowerCase(Locale.ROOT));
        }
    }

    private Summary run(String engine) throws IOException, InterruptedException {
        control.postReceive();
        int length = control.await(BulkProtocol.HELLO);
        try {
            plan = BulkProtocol.readHello(control.memory(), ControlChannel.IN, length);
        } catch (IllegalArgumentException refused) {
            control.send(BulkProtocol.READY, BulkProtocol.writeRefusal(control.memory(), ControlChannel.OUT,
                    refused.getMessage()));
            control.awaitLastSent();
            throw new IOException("refused the client's HELLO: " + refused.getMessage(), refused);
        }
        prepare();
        LoopDriver driver = new LoopDriver(qp, this::turn);
        driver.start();
        long start = System.nanoTime();
        // From here the loop thread polls, until the client's DONE.
        control.send(BulkProtocol.READY, BulkProtocol.writeReady(control.memory(), ControlChannel.OUT,
                new BulkProtocol.Ready(data.remoteKey(), plan.serverSlots(), stride)));
        try {
            driver.await(); // as long as the client takes: a run may be long, and a failed queue pair ends it
        } finally {
            driver.stop();
        }
        long nanos = doneAt - start;
        if (plan.serverReceivesData()) {
            mismatches += Math.abs(done.messages() - received);
        }
        QpStatistics stats = qp.statistics();
        control.send(BulkProtocol.RESULT, BulkProtocol.writeResult(control.memory(), ControlChannel.OUT,
                new BulkProtocol.Result(received, mismatches, stats.framesResent(), stats.bytesResent(),
                        BulkResult.subflowBytes(stats))));
        control.awaitLastSent();
        return new Summary(plan, stats.subflows().size(), done.bytes(), nanos, mismatches, engine);
    }

    /**
     * The ring of message slots, each big enough for a control message too (the client's DONE lands in
     * whichever receive is next), READ's source patterns, and the receives the plan consumes, or one for DONE.
     */
    private void prepare() throws IOException {
        stride = Math.max(plan.messageSize(), BulkProtocol.SMALL);
        data = memory.register(plan.serverSlots() * stride);
        if (plan.op() == BulkOp.READ && plan.verify()) {
            for (int slot = 0; slot < plan.serverSlots(); slot++) {
                MessagePattern.fill(data.segment(), slot * stride, plan.messageSize(), slot);
            }
        }
        if (!plan.serverReceivesData()) {
            control.postReceive();
            return;
        }
        for (int slot = 0; slot < plan.window(); slot++) {
            postData(slot);
        }
    }

    private void postData(long slot) throws IOException {
        if (!qp.postReceive(slot, data.localKey(), slot * stride, (int) stride)) {
            throw new IOException("the receive queue is full");
        }
    }

    /**
     * One turn on the loop thread: checks and re-posts the receives that completed; over with the client's
     * DONE.
     */
    private boolean turn() throws IOException {
        while (qp.poll(wc)) {
            if (!wc.isSuccess()) {
                throw new IOException("the queue pair failed before the client's DONE: "
                        + ControlChannel.failure(qp, wc).getMessage());
            }
            if (wc.opcode() == WorkCompletion.OP_SEND) {
                continue; // READY reached the client
            }
            long id = wc.workRequestId();
            if (wc.opcode() == WorkCompletion.OP_RECV && wc.hasImmediate()) {
                if (wc.immediate() != BulkProtocol.DONE) {
                    throw new IOException("expected data or DONE from the client, got " + ControlChannel.name(wc.immediate()));
                }
                doneAt = System.nanoTime();
                done = id == ControlChannel.CONTROL
                        ? BulkProtocol.readDone(control.memory(), ControlChannel.IN, wc.byteCount())
                        : BulkProtocol.readDone(data.segment(), id * stride, wc.byteCount());
                return true;
            }
            if (plan.verify() && !arrivedIntact(id)) {
                mismatches++;
            }
            received++;
            postData(id);
        }
        return false;
    }

    /**
     * Whether data message number {@link #received} is the one expected: a SEND in the receive's own slot,
     * or a WRITE with immediate, whose immediate is its sequence number, in the slot that number names.
     */
    private boolean arrivedIntact(long receiveSlot) {
        long seq = received;
        if (seq >= plan.messages()) {
            return false;
        }
        int length = plan.lengthOf(seq);
        MemorySegment s = data.segment();
        if (plan.op() == BulkOp.SEND) {
            return wc.byteCount() == length && MessagePattern.matches(s, receiveSlot * stride, length, seq);
        }
        return wc.opcode() == WorkCompletion.OP_RECV_RDMA_WITH_IMM && wc.immediate() == (int) seq
                && MessagePattern.matches(s, seq % plan.serverSlots() * stride, length, seq);
    }
}
