package io.zcnet.collective;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.WorkCompletion;
import io.zcnet.qp.WorkRequest;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A rank of the tests' own that speaks docs/wire-format.md, section 20, message by message, so a test can send an
 * aggregator what no {@link Communicator} sends: a chunk twice, a bad one, a flood, a JOIN with a wrong proof.
 * Control memory of 16 receives of 256 bytes; one result slot of {@value #STRIDE} bytes; one outbox of as much.
 * One thread; blocking, bounded by {@link #WAIT}.
 */
final class NacaPeer implements AutoCloseable {
    static final Duration WAIT = Duration.ofSeconds(10);
    static final int STRIDE = 4096 + 64;
    private static final int RECEIVES = 16;

    private final QpContext context;
    private final QueuePair qp;
    private final Arena arena = Arena.ofShared();
    private final MemoryRegion control;
    private final MemoryRegion results;
    private final MemoryRegion outbox;
    private final WorkRequest request = new WorkRequest();
    private final WorkCompletion completion = new WorkCompletion();
    private final NacaHeader header = new NacaHeader();
    private byte[] nonce;
    private long sent;

    /** What came from the aggregator: a control message's header fields and body, or a result's floats. */
    record Message(int type, int flags, String reason, float[] data, long sequence) {
    }

    NacaPeer(QpContext context, InetSocketAddress aggregator) throws Exception {
        this.context = context;
        this.control = context.register(arena.allocate(RECEIVES * 256L + 256, 64), Access.LOCAL_WRITE);
        this.results = context.register(arena.allocate(STRIDE * 4L, 64), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        this.outbox = context.register(arena.allocate(STRIDE * 4L, 64), 0);
        this.qp = context.connect(aggregator, CommunicatorConfig.defaults().queuePairs());
        for (int i = 0; i < RECEIVES; i++) {
            qp.postReceive(i, control.localKey(), i * 256L, 256);
        }
        Message challenge = next();
        if (challenge.type() != NacaHeader.CHALLENGE) {
            throw new AssertionError("no CHALLENGE first: " + challenge);
        }
    }

    /** Sends a JOIN proven under {@code secret} (or with a zero proof); {@link #next} returns what answers it. */
    void join(int job, int ranks, int rank, int slots, int chunk, byte[] secret) {
        long at = RECEIVES * 256L;
        header.wrap(control.segment(), at).write(NacaHeader.JOIN, 0, job, 0, 0, 0, ranks, rank, 0, 0, NacaJoin.LENGTH, 0);
        NacaJoin.write(control.segment(), at, slots, chunk, results.remoteKey(), secret, nonce);
        qp.postSend(request.send(-1, control.localKey(), at, NacaHeader.LENGTH + NacaJoin.LENGTH));
    }

    /**
     * Sends a CHUNK of {@code values} as floats summed, header fields as given, from the next of four outbox
     * places in turn (a SEND's bytes must stay as they are until it completes: four in flight at most).
     */
    void chunk(int flags, int job, int dtype, int ranks, int rank, int slot, long sequence, float[] values,
            int extraBytes) {
        long at = (sent++ % 4) * (long) STRIDE;
        int bytes = values.length * 4 + extraBytes;
        header.wrap(outbox.segment(), at).write(NacaHeader.CHUNK, flags, job, 1, dtype, 1, ranks, rank, slot, sequence,
                bytes, 0);
        MemorySegment.copy(values, 0, outbox.segment(), ValueLayout.JAVA_FLOAT, at + NacaHeader.LENGTH, values.length);
        qp.postSend(request.send(slot, outbox.localKey(), at, NacaHeader.LENGTH + bytes));
    }

    /** The next message from the aggregator (send completions skipped); fails if none comes or the pair fails. */
    Message next() throws Exception {
        while (true) {
            if (!qp.await(completion, WAIT)) {
                throw new AssertionError("nothing from the aggregator within " + WAIT);
            }
            if (!completion.isSuccess()) {
                return new Message(-1, 0, WorkCompletion.statusName(completion.status()) + " " + qp.errorReason(), null,
                        -1);
            }
            if (completion.opcode() == WorkCompletion.OP_SEND) {
                continue;
            }
            int buffer = (int) completion.workRequestId();
            if (completion.opcode() == WorkCompletion.OP_RECV_RDMA_WITH_IMM) {
                long sequence = Integer.toUnsignedLong(completion.immediate());
                NacaHeader h = header.wrap(results.segment(), 0);
                String problem = h.validate(completion.byteCount());
                if (problem != null) {
                    throw new AssertionError("bad RESULT: " + problem);
                }
                float[] data = results.segment().asSlice(NacaHeader.LENGTH, h.length()).toArray(ValueLayout.JAVA_FLOAT);
                qp.postReceive(buffer, control.localKey(), buffer * 256L, 256);
                return new Message(NacaHeader.RESULT, h.flags(), null, data, sequence);
            }
            long at = buffer * 256L;
            NacaHeader h = header.wrap(control.segment(), at);
            String problem = h.validate(completion.byteCount());
            if (problem != null) {
                throw new AssertionError("bad message from the aggregator: " + problem);
            }
            String reason = null;
            if (h.type() == NacaHeader.CHALLENGE) {
                nonce = control.segment().asSlice(at + NacaHeader.LENGTH, 16).toArray(ValueLayout.JAVA_BYTE);
            } else if (h.type() == NacaHeader.REFUSE) {
                reason = new String(control.segment().asSlice(at + NacaHeader.LENGTH, h.length())
                        .toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
            }
            Message m = new Message(h.type(), h.flags(), reason, null, 0);
            qp.postReceive(buffer, control.localKey(), at, 256);
            return m;
        }
    }

    @Override
    public void close() {
        qp.close();
        context.deregister(control);
        context.deregister(results);
        context.deregister(outbox);
        arena.close();
    }
}
