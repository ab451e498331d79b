package io.zcnet.collective;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.WorkRequest;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * One rank's queue pair at the {@link Aggregator}: from its connection, through its JOIN, to its end. Before
 * it has proven its job's secret it holds only this: the queue pair and 512 bytes of control memory, one
 * receive of 128 bytes posted (room for a JOIN) and its CHALLENGE sent from there.
 *
 * <pre>
 * control memory (registered, local write):
 * +------------------+-------------------+-------------------+--------------------------+
 * | receive, 128 B   | CHALLENGE, 64 B   | ACCEPT, 64 B      | REFUSE, 256 B            |
 * +------------------+-------------------+-------------------+--------------------------+
 * 0                  128                 192                 256                        512
 * </pre>
 *
 * Each control message has its own place, so a REFUSE written while an ACCEPT is still unacknowledged (and may
 * be sent again from its memory) cannot change it. Once its job has been accepted, its receives are its job's
 * landing buffers ({@link AggregatorJob}). Loop thread only.
 */
final class AggregatorMember {
    static final int CONTROL_BYTES = 512;
    private static final long RECEIVE = 0;
    private static final int RECEIVE_BYTES = 128;
    private static final long CHALLENGE = 128;
    private static final long ACCEPT = 192;
    private static final long REFUSE = 256;
    /** Work request id of the control receive and the CHALLENGE; landing receives and results use slots. */
    static final long CONTROL = -1;
    static final long ACCEPTED = -2;
    /** Work request id of a REFUSE, whose completion closes the queue pair. */
    static final long REFUSED = -3;

    final QueuePair qp;
    final String peer;
    final long connectedNanos;
    private final Arena arena = Arena.ofShared();
    private final QpContext context;
    final MemoryRegion control;
    final byte[] nonce = MembershipProof.nonce();
    private final WorkRequest request = new WorkRequest();
    /** The job it joined, or null while it has not. */
    AggregatorJob job;
    int rank = -1;
    int resultKey;
    /** When a REFUSE was sent, after which the queue pair is closed once it is delivered or a second passed; 0: none. */
    long refusedNanos;
    boolean closed;

    AggregatorMember(QpContext context, QueuePair qp, String peer, long now) {
        this.context = context;
        this.qp = qp;
        this.peer = peer;
        this.connectedNanos = now;
        this.control = context.register(arena.allocate(CONTROL_BYTES, 64), Access.LOCAL_WRITE);
    }

    MemorySegment memory() {
        return control.segment();
    }

    long receiveOffset() {
        return RECEIVE;
    }

    /** Posts the one receive a JOIN lands in, and sends the CHALLENGE. */
    void challenge(NacaHeader h) {
        if (!qp.postReceive(CONTROL, control.localKey(), RECEIVE, RECEIVE_BYTES)) {
            throw new IllegalStateException("the receive queue of a new connection is full");
        }
        h.wrap(memory(), CHALLENGE).write(NacaHeader.CHALLENGE, 0, 0, 0, 0, 0, 0, 0, 0, 0, nonce.length, 0);
        MemorySegment.copy(nonce, 0, memory(), ValueLayout.JAVA_BYTE, CHALLENGE + NacaHeader.LENGTH, nonce.length);
        send(CONTROL, CHALLENGE, NacaHeader.LENGTH + nonce.length);
    }

    /** Sends the ACCEPT of {@code job} to this rank. */
    void accept(NacaHeader h, AggregatorJob job, int dataTypes, int reductions) {
        h.wrap(memory(), ACCEPT).write(NacaHeader.ACCEPT, 0, job.id, 0, 0, 0, job.ranks, rank, 0, 0,
                NacaGrant.LENGTH, 0);
        NacaGrant.write(memory(), ACCEPT + NacaHeader.LENGTH, job.slots, job.chunkBytes, dataTypes, reductions);
        send(ACCEPTED, ACCEPT, NacaHeader.LENGTH + NacaGrant.LENGTH);
    }

    /**
     * Sends a REFUSE saying {@code why} (cut to {@link NacaHeader#MAX_REASON_BYTES}), with FALLBACK when the
     * ranks should reduce on their hosts. Returns false, sending nothing, when there is no one to address: the
     * member never named a valid rank of a job (the caller closes it), or it was refused or closed already.
     */
    boolean refuse(NacaHeader h, int jobId, int ranks, int rank, boolean fallback, String why, long now) {
        if (closed || refusedNanos != 0) {
            return refusedNanos != 0;
        }
        refusedNanos = now;
        if (ranks < 1 || ranks > NacaHeader.MAX_RANKS || rank < 0 || rank >= ranks) {
            return false;
        }
        byte[] text = why.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, NacaHeader.MAX_REASON_BYTES);
        h.wrap(memory(), REFUSE).write(NacaHeader.REFUSE, fallback ? NacaHeader.FLAG_FALLBACK : 0, jobId, 0, 0, 0,
                ranks, rank, 0, 0, Math.max(1, n), 0);
        MemorySegment.copy(text, 0, memory(), ValueLayout.JAVA_BYTE, REFUSE + NacaHeader.LENGTH, n);
        send(REFUSED, REFUSE, NacaHeader.LENGTH + Math.max(1, n));
        return true;
    }

    private void send(long id, long offset, int bytes) {
        // A queue pair already failed takes the post and flushes it: nothing to do about that here.
        qp.postSend(request.send(id, control.localKey(), offset, bytes));
    }

    /**
     * Closes the queue pair and frees the control memory: the queue pair first, so that no receive into the
     * memory is left. Idempotent.
     */
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        qp.close();
        context.deregister(control);
        arena.close();
    }

    @Override
    public String toString() {
        return "connection from " + peer + (job == null ? "" : " (job " + job.id + " rank " + rank + ")");
    }
}
