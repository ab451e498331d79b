package io.zcnet.collective;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.QpState;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.WorkCompletion;
import io.zcnet.qp.WorkRequest;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;

/**
 * A rank's queue pair to an {@link Aggregator} and the memory its chunks and results pass through: joins the
 * rank's job (docs/wire-format.md, section 20.4) and streams allreduces through it.
 *
 * <pre>
 * outbox (registered, sent from): S slots of stride = 32 + chunk rounded up to 64, each a CHUNK's header and data
 * results (registered, remote write): S slots of the granted stride, where the aggregator WRITEs each RESULT
 * control (registered, local write): S + 2 receives of 256 bytes, then the JOIN being sent
 * </pre>
 *
 * Every message from the aggregator, a SEND (CHALLENGE, ACCEPT, REFUSE) or a RESULT's WRITE with immediate,
 * consumes the oldest posted receive, so every receive has a control buffer large enough for a REFUSE; S + 2 of
 * them bound what the aggregator can send ahead. A slot of the outbox is free again once its SEND has completed
 * and its result has arrived: the result is the aggregator's grant of the slot for the next chunk.
 *
 * <p>Used by one thread at a time: the one running the communicator's operation, or the loop thread it handed a
 * one-chunk allreduce to; either waits with {@link QueuePair#await}, which turns the loop on the loop's thread.
 * Streaming allocates nothing until it fails.
 */
final class AggregatorLink implements AutoCloseable {
    private static final int CONTROL_BYTES = 256;
    private static final Duration WAIT = Duration.ofMillis(1);
    private static final int JOIN_BYTES = NacaHeader.LENGTH + NacaJoin.LENGTH;

    /** The aggregator refused, failed, vanished or broke the protocol; the message says which. */
    static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;

        Failure(String message) {
            super(message, null, false, false);
        }
    }

    final InetSocketAddress address;
    private final QpContext context;
    private final QueuePair qp;
    private final Arena arena = Arena.ofShared();
    private final MemoryRegion outbox;
    private final MemoryRegion results;
    private final MemoryRegion control;
    private final int askedSlots;
    private final int askedChunkBytes;
    private final int receives;
    private final WorkRequest request = new WorkRequest();
    private final WorkCompletion completion = new WorkCompletion();
    private final NacaHeader header = new NacaHeader();
    private final int job;
    private final int rank;
    private final int ranks;
    private NacaGrant.Granted granted;
    /** The CHALLENGE's nonce, which the JOIN's proof covers. */
    private byte[] nonce;
    private long stride;
    /** The job's next chunk sequence, and the number of its next aggregated operation. */
    private long nextSequence;
    private long operations;
    /** Per slot: the index in the running operation of the chunk whose result is due, or -1; its SEND pending. */
    private long[] awaited;
    private boolean[] sending;
    /** The first sequence of the last allreduce, and how many of its chunks were sent. */
    private long operationBase;
    private long sent;
    /** Where in {@link #results} the last result's data begins. */
    private long lastResultAt;
    private boolean disconnected;
    private boolean closed;

    /**
     * Connects to the aggregator at {@code address} and registers the memory; nothing is sent yet.
     *
     * @throws IOException if the queue pair cannot be connected
     */
    AggregatorLink(QpContext context, InetSocketAddress address, QpConfig config, int job, int rank, int ranks,
            AggregationConfig asked) throws IOException {
        this.context = context;
        this.address = address;
        this.job = job;
        this.rank = rank;
        this.ranks = ranks;
        this.askedSlots = asked.slots();
        this.askedChunkBytes = asked.chunkBytes();
        this.receives = askedSlots + 2;
        long askedStride = AggregatorJob.strideOf(askedChunkBytes);
        try {
            this.outbox = context.register(arena.allocate(askedSlots * askedStride, 4096), 0);
            this.results = context.register(arena.allocate(askedSlots * askedStride, 4096),
                    Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            this.control = context.register(arena.allocate((long) receives * CONTROL_BYTES + JOIN_BYTES, 64),
                    Access.LOCAL_WRITE);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        QueuePair connected;
        try {
            // One listener serves every job: the job proves its secret in the JOIN, not with the queue pair's key.
            connected = context.connect(address, config.withPreSharedKey(null));
        } catch (IOException | RuntimeException e) {
            freeMemory();
            throw e;
        }
        this.qp = connected;
    }

    /**
     * Joins the job: posts the receives, answers the CHALLENGE with the JOIN, and waits for the ACCEPT.
     *
     * @param secret   the job secret, or null
     * @param deadline {@link System#nanoTime} by which the ACCEPT must have come
     * @return what was granted
     * @throws Failure if the aggregator refused (the reason it gave), failed or did not answer in time
     */
    NacaGrant.Granted join(byte[] secret, long deadline) throws Failure {
        for (int i = 0; i < receives; i++) {
            postReceive(i);
        }
        awaitControl(deadline, NacaHeader.CHALLENGE);
        long join = (long) receives * CONTROL_BYTES;
        header.wrap(control.segment(), join).write(NacaHeader.JOIN, 0, job, 0, 0, 0, ranks, rank, 0, 0,
                NacaJoin.LENGTH, 0);
        NacaJoin.write(control.segment(), join, askedSlots, askedChunkBytes, results.remoteKey(), secret, nonce);
        qp.postSend(request.send(-1, control.localKey(), join, JOIN_BYTES));
        long accept = awaitControl(deadline, NacaHeader.ACCEPT);
        try {
            granted = NacaGrant.read(control.segment(), accept + NacaHeader.LENGTH, askedSlots, askedChunkBytes);
        } catch (IllegalArgumentException e) {
            throw new Failure("the aggregator at " + address + " sent a bad ACCEPT: " + e.getMessage());
        }
        stride = AggregatorJob.strideOf(granted.chunkBytes());
        awaited = new long[granted.slots()];
        Arrays.fill(awaited, -1);
        sending = new boolean[granted.slots()];
        return granted;
    }

    private void postReceive(int buffer) {
        qp.postReceive(buffer, control.localKey(), (long) buffer * CONTROL_BYTES, CONTROL_BYTES);
    }

    /** Waits for the next control message, which must be of {@code type} (or a REFUSE); returns its offset. */
    private long awaitControl(long deadline, int type) throws Failure {
        while (true) {
            if (!next(deadline)) {
                throw new Failure("the aggregator at " + address + " sent no " + NacaHeader.typeName(type) + " in time");
            }
            if (completion.opcode() == WorkCompletion.OP_SEND) {
                continue;
            }
            if (completion.opcode() != WorkCompletion.OP_RECV) {
                throw new Failure("the aggregator at " + address + " sent " + WorkCompletion.opcodeName(
                        completion.opcode()) + " where a " + NacaHeader.typeName(type) + " was due");
            }
            int buffer = (int) completion.workRequestId();
            long at = (long) buffer * CONTROL_BYTES;
            checkControl(at, completion.byteCount());
            if (header.type() != type) {
                throw new Failure("the aggregator at " + address + " sent " + NacaHeader.typeName(header.type())
                        + " where a " + NacaHeader.typeName(type) + " was due");
            }
            if (type == NacaHeader.CHALLENGE) {
                nonce = control.segment().asSlice(at + NacaHeader.LENGTH, NacaJoin.NONCE_BYTES)
                        .toArray(ValueLayout.JAVA_BYTE);
            }
            postReceive(buffer); // read: the buffer may take the next message
            return at;
        }
    }

    /** Validates the control message at {@code at}; a REFUSE, or anything not meant for this rank, fails. */
    private void checkControl(long at, int bytes) throws Failure {
        NacaHeader h = header.wrap(control.segment(), at);
        String problem = h.validate(bytes);
        if (problem != null) {
            throw new Failure("the aggregator at " + address + " sent a bad message: " + problem);
        }
        if (h.type() == NacaHeader.REFUSE) {
            String why = new String(control.segment().asSlice(at + NacaHeader.LENGTH, h.length())
                    .toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
            throw new Failure("the aggregator at " + address + " refused" + ((h.flags() & NacaHeader.FLAG_FALLBACK) != 0
                    ? " (reduce on the hosts)" : "") + ": " + why);
        }
        if (h.type() != NacaHeader.CHALLENGE && (h.job() != job || h.rank() != rank || h.ranks() != ranks)) {
            throw new Failure("the aggregator at " + address + " sent " + NacaHeader.typeName(h.type()) + " for job "
                    + h.job() + " rank " + h.rank() + " of " + h.ranks());
        }
    }

    /** Takes the next completion into {@link #completion} by {@code deadline}; false if none came. */
    private boolean next(long deadline) throws Failure {
        while (!qp.poll(completion)) {
            if (qp.state() == QpState.ERROR) {
                throw new Failure("the queue pair to the aggregator at " + address + " failed: " + qp.errorReason());
            }
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            if (qp.await(completion, WAIT)) {
                break;
            }
        }
        if (!completion.isSuccess()) {
            throw new Failure("the queue pair to the aggregator at " + address + " failed: "
                    + WorkCompletion.opcodeName(completion.opcode()) + " completed with "
                    + WorkCompletion.statusName(completion.status())
                    + (qp.errorReason() == null ? "" : " (" + qp.errorReason() + ")"));
        }
        return true;
    }

    /** {@return whether the aggregator reduces {@code type} with {@code op}, as its ACCEPT said} */
    boolean takes(DataType type, ReduceOp op) {
        return granted.takes(type, op);
    }

    // ---------------------------------------------------------------- streaming

    /**
     * Allreduces {@code bytes} of {@code input} into {@code output} through the aggregator, chunk by chunk, every
     * granted slot in flight. On failure {@link #hasResult} says which chunks of {@link #chunkBytes()} are in
     * {@code output} already, for the hosts to finish the rest.
     *
     * @param timeoutNanos how long nothing may arrive before the aggregator is given up on
     * @throws Failure if the aggregator failed, refused, broke the protocol or went silent
     */
    void allreduce(MemorySegment input, MemorySegment output, long bytes, DataType type, ReduceOp op,
            long timeoutNanos) throws Failure {
        int slots = granted.slots();
        int chunk = granted.chunkBytes();
        long chunks = chunkCount(bytes);
        long base = nextSequence;
        long operation = operations++ & 0xFFFF_FFFFL;
        long arrived = 0;
        operationBase = base;
        sent = 0;
        long deadline = System.nanoTime() + timeoutNanos;
        int dtype = NacaHeader.dataTypeCode(type);
        int redop = NacaHeader.reductionCode(op);
        // The sequence counts on whatever happens, so the next operation's chunks are new to the aggregator.
        nextSequence = base + chunks;
        while (arrived < chunks) {
            while (sent < chunks) {
                int s = (int) ((base + sent) % slots);
                if (awaited[s] >= 0 || sending[s]) {
                    break;
                }
                long from = sent * chunk;
                int n = (int) Math.min(chunk, bytes - from);
                long at = s * stride;
                header.wrap(outbox.segment(), at).write(NacaHeader.CHUNK, 0, job, NacaHeader.COLLECTIVE_ALLREDUCE,
                        dtype, redop, ranks, rank, s, (base + sent) & 0xFFFF_FFFFL, n, operation);
                MemorySegment.copy(input, from, outbox.segment(), at + NacaHeader.LENGTH, n);
                // Lazily: the RESULT that answers it carries its acknowledgement, so no frame of its own.
                qp.postSend(request.send(s, outbox.localKey(), at, NacaHeader.LENGTH + n).signaledLazily());
                awaited[s] = sent;
                sending[s] = true;
                sent++;
            }
            if (!next(deadline)) {
                throw new Failure("nothing came from the aggregator at " + address + " for "
                        + timeoutNanos / 1_000_000 + " ms (" + arrived + " of " + chunks + " chunks back)");
            }
            deadline = System.nanoTime() + timeoutNanos;
            switch (completion.opcode()) {
                case WorkCompletion.OP_SEND -> {
                    if (completion.workRequestId() >= 0) {
                        sending[(int) completion.workRequestId()] = false;
                    }
                }
                case WorkCompletion.OP_RECV_RDMA_WITH_IMM -> {
                    result(output, bytes, base, operation, dtype, redop);
                    arrived++;
                }
                case WorkCompletion.OP_RECV -> {
                    checkControl(completion.workRequestId() * CONTROL_BYTES, completion.byteCount());
                    throw new Failure("the aggregator at " + address + " sent "
                            + NacaHeader.typeName(header.type()) + " during an allreduce");
                }
                default -> throw new Failure("the aggregator at " + address + " sent "
                        + WorkCompletion.opcodeName(completion.opcode()));
            }
        }
    }

    /** A RESULT's WRITE with immediate arrived: checks it and copies the sum into place. */
    private void result(MemorySegment output, long bytes, long base, long operation, int dtype, int redop)
            throws Failure {
        postReceive((int) completion.workRequestId());
        long sequence = Integer.toUnsignedLong(completion.immediate());
        int slots = granted.slots();
        int s = (int) (sequence % slots);
        long index = awaited[s];
        long at = s * stride;
        NacaHeader h = header.wrap(results.segment(), at);
        String problem = h.validate(completion.byteCount());
        long expected = index < 0 ? -1 : (base + index) & 0xFFFF_FFFFL;
        if (problem == null && (h.type() != NacaHeader.RESULT || h.job() != job || h.ranks() != ranks
                || h.sequence() != sequence || sequence != expected || h.slot() != s || h.dataType() != dtype
                || h.reduction() != redop || h.operation() != operation
                || h.length() != Math.min(granted.chunkBytes(), bytes - index * granted.chunkBytes()))) {
            problem = "it is " + h + " where chunk " + expected + " of operation " + operation + " was due in slot " + s;
        }
        if (problem != null) {
            throw new Failure("the aggregator at " + address + " sent a bad RESULT: " + problem);
        }
        MemorySegment.copy(results.segment(), at + NacaHeader.LENGTH, output, index * granted.chunkBytes(), h.length());
        lastResultAt = at + NacaHeader.LENGTH;
        awaited[s] = -1;
    }

    /**
     * {@return whether chunk {@code index} of the last allreduce has its result in the output} A chunk's slot is
     * given to a later chunk only once its result is in, so a chunk sent and not the one its slot awaits is done.
     */
    boolean hasResult(long index) {
        return index < sent && awaited[(int) ((operationBase + index) % granted.slots())] != index;
    }

    /** {@return the granted chunk size} */
    int chunkBytes() {
        return granted.chunkBytes();
    }

    /** {@return how many chunks an allreduce of {@code bytes} is} */
    long chunkCount(long bytes) {
        return (bytes + granted.chunkBytes() - 1) / granted.chunkBytes();
    }

    /**
     * {@return the first {@code bytes} of the last result that arrived, where the aggregator wrote it} Of a
     * one-chunk allreduce that is its whole result, which stays there until a result lands in the same slot
     * again, and after {@link #disconnect}: so a rank can hand it to ranks that lack it.
     */
    MemorySegment lastResult(long bytes) {
        return results.segment().asSlice(lastResultAt, bytes);
    }

    /** Closes the queue pair, so the aggregator ends the job, and keeps the memory. Idempotent. */
    void disconnect() {
        if (!disconnected) {
            disconnected = true;
            qp.close();
        }
    }

    /** Closes the queue pair (the aggregator ends the job with it), then frees the memory. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            disconnect();
        } finally {
            freeMemory();
        }
    }

    private void freeMemory() {
        context.deregister(outbox);
        context.deregister(results);
        context.deregister(control);
        arena.close();
    }

    @Override
    public String toString() {
        return "AggregatorLink[" + address + " job " + job + " rank " + rank + "/" + ranks + "]";
    }
}
