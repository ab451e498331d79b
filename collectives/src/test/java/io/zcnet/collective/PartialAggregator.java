package io.zcnet.collective;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.QpListener;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.WorkCompletion;
import io.zcnet.qp.WorkRequest;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * An aggregator of the tests' own, over real queue pairs, that fails the worst way for its ranks: it sums float
 * chunks as section 20 says until chunk {@code failAt}, whose result it WRITEs to the lower half of the ranks only,
 * then closes every queue pair. So some ranks hold a chunk's result and others do not, which the ranks must
 * sort out on their hosts. One job, one thread (its own, {@link #run}); test code, it allocates as it likes.
 */
final class PartialAggregator implements AutoCloseable {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private final QpContext context;
    private final QpListener listener;
    private final int ranks;
    private final int slots;
    private final int chunk;
    private final long failAt;
    private final long stride;
    private final Arena arena = Arena.ofShared();
    private final MemoryRegion memory;
    private final NacaHeader header = new NacaHeader();
    private final WorkRequest request = new WorkRequest();
    private final WorkCompletion completion = new WorkCompletion();
    /** Chunks reduced and sent (to every rank, or to some for the last). */
    volatile long sent;

    PartialAggregator(QpContext context, int ranks, int slots, int chunk, long failAt) throws Exception {
        this.context = context;
        this.ranks = ranks;
        this.slots = slots;
        this.chunk = chunk;
        this.failAt = failAt;
        this.stride = AggregatorJob.strideOf(chunk);
        // Per rank: its control receive and sends, then its landing buffers; then sums, two per slot: chunk q + slots
        // may arrive while q's result is still being sent from its sum, so they alternate (SwitchML's two pools).
        this.memory = context.register(arena.allocate((ranks * (slots + 2L) + 2L * slots) * stride, 4096),
                Access.LOCAL_WRITE);
        this.listener = context.listen(new InetSocketAddress("127.0.0.1", 0), CommunicatorConfig.defaults().queuePairs()
                .withPreSharedKey(null));
    }

    InetSocketAddress address() {
        return listener.address();
    }

    private long base(int rank) {
        return rank * (slots + 2L) * stride;
    }

    /** Serves one job of {@code ranks} ranks until chunk {@code failAt}, then closes every queue pair. */
    void run() throws Exception {
        QueuePair[] byRank = new QueuePair[ranks];
        int[] resultKey = new int[ranks];
        QueuePair[] accepted = new QueuePair[ranks];
        for (int i = 0; i < ranks; i++) {
            QueuePair qp = listener.accept(WAIT);
            accepted[i] = qp;
            long at = base(i);
            qp.postReceive(-1, memory.localKey(), at, (int) stride);
            header.wrap(memory.segment(), at + stride).write(NacaHeader.CHALLENGE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0);
            qp.postSend(request.send(-1, memory.localKey(), at + stride, NacaHeader.LENGTH + 16));
        }
        for (int i = 0; i < ranks; i++) {
            QueuePair qp = accepted[i];
            next(qp, WorkCompletion.OP_RECV);
            NacaHeader h = header.wrap(memory.segment(), base(i));
            byRank[h.rank()] = qp;
            resultKey[h.rank()] = NacaJoin.resultKey(memory.segment(), base(i) + NacaHeader.LENGTH);
        }
        for (int r = 0; r < ranks; r++) {
            for (int b = 0; b < slots; b++) {
                byRank[r].postReceive(b, memory.localKey(), base(r) + (2 + b) * stride, (int) stride);
            }
            long at = base(r) + stride;
            header.wrap(memory.segment(), at).write(NacaHeader.ACCEPT, 0, 1, 0, 0, 0, ranks, r, 0, 0, NacaGrant.LENGTH, 0);
            NacaGrant.write(memory.segment(), at + NacaHeader.LENGTH, slots, chunk, 0x7e, 0x1e);
            byRank[r].postSend(request.send(-1, memory.localKey(), at, NacaHeader.LENGTH + NacaGrant.LENGTH));
        }
        Map<Long, Integer> contributions = new HashMap<>();
        long sums = ranks * (slots + 2L) * stride;
        while (true) {
            for (int r = 0; r < ranks; r++) {
                while (byRank[r].poll(completion)) {
                    if (!completion.isSuccess()) {
                        throw new AssertionError("rank " + r + ": " + WorkCompletion.statusName(completion.status()));
                    }
                    if (completion.opcode() != WorkCompletion.OP_RECV) {
                        continue;
                    }
                    long at = base(r) + (2 + completion.workRequestId()) * stride;
                    NacaHeader h = header.wrap(memory.segment(), at);
                    long q = h.sequence();
                    int s = h.slot();
                    int dtype = h.dataType();
                    int redop = h.reduction();
                    long length = h.length();
                    long operation = h.operation();
                    long sum = sums + (q % (2L * slots)) * stride;
                    int n = (int) length / 4;
                    int count = contributions.merge(q, 1, Integer::sum);
                    for (int e = 0; e < n; e++) {
                        long o = NacaHeader.LENGTH + 4L * e;
                        float v = memory.segment().get(ValueLayout.JAVA_FLOAT, at + o);
                        float before = count == 1 ? 0 : memory.segment().get(ValueLayout.JAVA_FLOAT, sum + o);
                        memory.segment().set(ValueLayout.JAVA_FLOAT, sum + o, before + v);
                    }
                    byRank[r].postReceive(completion.workRequestId(), memory.localKey(), at, (int) stride);
                    if (count == ranks) {
                        header.wrap(memory.segment(), sum).write(NacaHeader.RESULT, 0, 1, 1, dtype, redop, ranks, 0, s,
                                q, length, operation);
                        int to = q == failAt ? ranks / 2 : ranks;
                        for (int k = 0; k < to; k++) {
                            byRank[k].postSend(request.writeWithImmediate(q, memory.localKey(), sum,
                                    NacaHeader.LENGTH + (int) length, resultKey[k], s * stride, (int) q));
                        }
                        if (q == failAt) {
                            for (int k = 0; k < to; k++) {
                                next(byRank[k], WorkCompletion.OP_RDMA_WRITE);
                            }
                            for (QueuePair qp : byRank) {
                                qp.close();
                            }
                            sent = q + 1;
                            return;
                        }
                        sent = q + 1;
                    }
                }
            }
            Thread.onSpinWait();
        }
    }

    /** Waits for a completion of {@code opcode} on {@code qp}, skipping others (sends of control messages). */
    private void next(QueuePair qp, int opcode) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            if (qp.await(completion, Duration.ofMillis(10))) {
                if (!completion.isSuccess()) {
                    throw new AssertionError(WorkCompletion.statusName(completion.status()) + " " + qp.errorReason());
                }
                if (completion.opcode() == opcode) {
                    return;
                }
            }
        }
        throw new AssertionError("no " + WorkCompletion.opcodeName(opcode) + " within " + WAIT);
    }

    @Override
    public void close() {
        listener.close();
        context.deregister(memory);
        arena.close();
    }
}
