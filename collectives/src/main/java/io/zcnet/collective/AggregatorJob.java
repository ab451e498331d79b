package io.zcnet.collective;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.WorkRequest;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * One job at the {@link Aggregator}: its ranks' queue pairs, its slots and the memory they need, reserved
 * whole when its first rank proves it belongs (docs/wire-format.md, section 20.4). Nothing it receives can reach
 * another job's memory: its ranks' SENDs land only in receives posted on their own queue pairs, which point into
 * this job's landing buffers.
 *
 * <pre>
 * sums (registered, sent from), S slots of stride = 32 + chunk rounded up to 64:
 * +----------------------+----------------------+-----+------------------------+
 * | slot 0: header, sum  | slot 1: header, sum  | ... | slot S-1: header, sum  |
 * +----------------------+----------------------+-----+------------------------+
 * landing (registered, local write): rank r's buffer i at (r S + i) stride, one receive each
 * </pre>
 *
 * <h2>A slot</h2>
 * Slot s takes the chunks s, s + S, s + 2S, ... one at a time. While it gathers chunk q it has a contributor
 * bitmap: the first contribution is copied into the slot, every other one reduced into it, and a rank whose bit
 * is set is not counted again. When every bit is set the slot WRITEs its header and sum, with the immediate q,
 * into every rank's result slot; when every WRITE has completed it takes chunk q + S. A rank may send chunk
 * q + S as soon as its own result of q has landed, so such a chunk can come while the other WRITEs are still
 * unacknowledged: it waits in its landing buffer, whose receive is not posted again meanwhile, and is taken when
 * the slot is free. Contributions are reduced in the order they arrive, so a floating-point sum may differ in
 * its last bits from run to run (every rank of a run gets the same one).
 *
 * <p>Loop thread only. The data path ({@link #onChunk}, {@link #onResultWritten}) allocates nothing until the
 * job fails.
 */
final class AggregatorJob {
    final int id;
    final int ranks;
    final int slots;
    final int chunkBytes;
    final int askedSlots;
    final int askedChunkBytes;
    final long bytes;
    private final long stride;
    final long createdNanos;
    final AggregatorMember[] members;
    private final long fullBitmap;
    private int joined;
    boolean accepted;
    /** Why the job failed or ended, or null while it runs. */
    String ended;

    private final QpContext context;
    private final Arena arena = Arena.ofShared();
    private final MemoryRegion sums;
    private final MemoryRegion landing;
    private final NacaHeader header;
    private final WorkRequest request = new WorkRequest();
    private final Aggregator.Counters counters;
    /** The {@code dtypes} and {@code redops} bits of the ACCEPT: what this job's chunks may be. */
    private final int offeredTypes;
    private final int offeredReductions;

    /** The chunk each slot gathers (unsigned 32-bit sequence kept in a long), and its contributors so far. */
    private final long[] sequence;
    private final long[] bitmap;
    /** Result WRITEs of each slot not yet completed; above 0 while the slot sends. */
    private final int[] writing;
    /** What the first contribution to each slot said, for every other one to agree with. */
    private final int[] dataType;
    private final int[] reduction;
    private final int[] length;
    private final long[] operation;
    /** Per slot and rank, the landing buffer of a chunk that waits for its slot (-1: none), and its bytes. */
    private final int[] waiting;
    private final int[] waitingBytes;

    AggregatorJob(QpContext context, NacaHeader header, Aggregator.Counters counters, AggregatorConfig config, int id,
            int ranks, int slots, int chunkBytes, int askedSlots, int askedChunkBytes, long now) {
        this.context = context;
        this.offeredTypes = config.dataTypeBits();
        this.offeredReductions = config.reductionBits();
        this.header = header;
        this.counters = counters;
        this.id = id;
        this.ranks = ranks;
        this.slots = slots;
        this.chunkBytes = chunkBytes;
        this.askedSlots = askedSlots;
        this.askedChunkBytes = askedChunkBytes;
        this.stride = strideOf(chunkBytes);
        this.bytes = bytesOf(slots, ranks, chunkBytes);
        this.createdNanos = now;
        this.members = new AggregatorMember[ranks];
        this.fullBitmap = ranks == 64 ? -1L : (1L << ranks) - 1;
        this.sequence = new long[slots];
        for (int s = 0; s < slots; s++) {
            sequence[s] = s;
        }
        this.bitmap = new long[slots];
        this.writing = new int[slots];
        this.dataType = new int[slots];
        this.reduction = new int[slots];
        this.length = new int[slots];
        this.operation = new long[slots];
        this.waiting = new int[slots * ranks];
        this.waitingBytes = new int[slots * ranks];
        Arrays.fill(waiting, -1);
        try {
            this.sums = context.register(arena.allocate(slots * stride, 4096), 0);
            this.landing = context.register(arena.allocate((long) ranks * slots * stride, 4096), Access.LOCAL_WRITE);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    static long strideOf(int chunkBytes) {
        return (NacaHeader.LENGTH + chunkBytes + 63L) & ~63L;
    }

    /** Memory a job of these dimensions holds: its slots' sums and a landing buffer per slot and rank. */
    static long bytesOf(int slots, int ranks, int chunkBytes) {
        return (long) slots * (ranks + 1) * strideOf(chunkBytes);
    }

    // ---------------------------------------------------------------- joining (control path)

    /** Whether rank {@code rank} has joined already. */
    boolean hasJoined(int rank) {
        return members[rank] != null;
    }

    /** Takes {@code m} as rank {@code rank}; returns true when it is the last of the job's ranks to join. */
    boolean join(AggregatorMember m, int rank) {
        members[rank] = m;
        m.job = this;
        m.rank = rank;
        return ++joined == ranks;
    }

    /** Every rank has joined: posts each one's landing receives, then sends it the ACCEPT. */
    void accept() {
        accepted = true;
        for (AggregatorMember m : members) {
            for (int i = 0; i < slots; i++) {
                postLanding(m.rank, i);
            }
            m.accept(header, this, offeredTypes, offeredReductions);
        }
    }

    private void postLanding(int rank, int buffer) {
        AggregatorMember m = members[rank];
        // More than the receive queue holds cannot be posted: the configuration keeps slots below its depth.
        m.qp.postReceive(buffer, landing.localKey(), landingOffset(rank, buffer), (int) stride);
    }

    private long landingOffset(int rank, int buffer) {
        return ((long) rank * slots + buffer) * stride;
    }

    // ---------------------------------------------------------------- data path

    /**
     * A CHUNK from {@code m} landed in its buffer {@code buffer}, {@code bytes} long. Returns null when it was
     * taken (reduced, dropped as a duplicate, or kept until its slot is free), else the rule it broke, which fails
     * the job.
     */
    String onChunk(AggregatorMember m, int buffer, int bytes) {
        MemorySegment land = landing.segment();
        long at = landingOffset(m.rank, buffer);
        NacaHeader h = header.wrap(land, at);
        String problem = h.validate(bytes);
        if (problem != null) {
            return problem;
        }
        if (h.type() != NacaHeader.CHUNK) {
            return NacaHeader.typeName(h.type()) + " where only CHUNKs are sent";
        }
        if (h.job() != id || h.ranks() != ranks || h.rank() != m.rank) {
            return "a CHUNK names job " + h.job() + " rank " + h.rank() + " of " + h.ranks() + " on the queue pair of job "
                    + id + " rank " + m.rank + " of " + ranks;
        }
        if (h.length() > chunkBytes) {
            return "a CHUNK of " + h.length() + " bytes, over the " + chunkBytes + " granted";
        }
        long q = h.sequence();
        int s = h.slot();
        if (s >= slots || s != q % slots) {
            return "chunk " + q + " names slot " + s + ", not " + (q % slots) + " of " + slots;
        }
        if ((offeredTypes & 1 << h.dataType()) == 0 || (offeredReductions & 1 << h.reduction()) == 0) {
            return "a CHUNK of " + NacaHeader.dataType(h.dataType()) + " " + NacaHeader.reduction(h.reduction())
                    + ", which the ACCEPT did not offer";
        }
        long bit = 1L << m.rank;
        boolean resend = (h.flags() & NacaHeader.FLAG_RESEND) != 0;
        if (q == sequence[s] && (bitmap[s] & bit) != 0
                || resend && writing[s] == 0 && q == ((sequence[s] - slots) & 0xFFFF_FFFFL)) {
            // Counted already (in the slot's present chunk, or, resent, in its last): it never adds twice.
            counters.duplicate(h.flags());
            postLanding(m.rank, buffer);
            return null;
        }
        if (writing[s] > 0 && q == ((sequence[s] + slots) & 0xFFFF_FFFFL)) {
            int w = s * ranks + m.rank;
            if (waiting[w] >= 0) {
                return "rank " + m.rank + " sent chunk " + q + " twice before slot " + s + " was free";
            }
            waiting[w] = buffer;
            waitingBytes[w] = bytes;
            return null;
        }
        if (writing[s] > 0 || q != sequence[s]) {
            return "chunk " + q + " for slot " + s + ", which takes chunk " + sequence[s] + " now";
        }
        return contribute(m.rank, buffer, s, h);
    }

    private String contribute(int rank, int buffer, int s, NacaHeader h) {
        int n = (int) h.length();
        long from = landingOffset(rank, buffer) + NacaHeader.LENGTH;
        long to = s * stride + NacaHeader.LENGTH;
        MemorySegment sum = sums.segment();
        DataType type = NacaHeader.dataType(h.dataType());
        if (bitmap[s] == 0) {
            dataType[s] = h.dataType();
            reduction[s] = h.reduction();
            length[s] = n;
            operation[s] = h.operation();
            MemorySegment.copy(landing.segment(), from, sum, to, n);
        } else if (dataType[s] != h.dataType() || reduction[s] != h.reduction() || length[s] != n
                || operation[s] != h.operation()) {
            return "rank " + rank + "'s contribution to chunk " + sequence[s] + " (" + type + " "
                    + NacaHeader.reduction(h.reduction()) + ", " + n + " bytes, operation " + h.operation()
                    + ") differs from the first (" + NacaHeader.dataType(dataType[s]) + " "
                    + NacaHeader.reduction(reduction[s]) + ", " + length[s] + " bytes, operation " + operation[s] + ")";
        } else {
            Reductions.apply(type, NacaHeader.reduction(h.reduction()), sum, to, sum, to, landing.segment(), from,
                    n / type.byteSize());
        }
        bitmap[s] |= 1L << rank;
        postLanding(rank, buffer);
        if (bitmap[s] == fullBitmap) {
            sendResults(s);
        }
        return null;
    }

    private void sendResults(int s) {
        long at = s * stride;
        header.wrap(sums.segment(), at).write(NacaHeader.RESULT, 0, id, NacaHeader.COLLECTIVE_ALLREDUCE, dataType[s],
                reduction[s], ranks, 0, s, sequence[s], length[s], operation[s]);
        int bytes = NacaHeader.LENGTH + length[s];
        writing[s] = ranks;
        // Lazily: each rank's next chunk (or, once it stops, its next heartbeat) acknowledges its result, so a
        // small allreduce costs no acknowledgement frames, where one each way per rank took the aggregator's
        // core as long as the chunks did.
        for (AggregatorMember m : members) {
            m.qp.postSend(request.writeWithImmediate(s, sums.localKey(), at, bytes, m.resultKey, at,
                    (int) sequence[s]).signaledLazily());
        }
        counters.reduced();
    }

    /**
     * The WRITE of slot {@code s}'s result to one rank completed; after the last the slot takes its next chunk,
     * and the contributions already waiting for it. Returns null, or the rule a waiting contribution broke.
     */
    String onResultWritten(int s) {
        if (s < 0 || s >= slots || writing[s] == 0) {
            return "a WRITE completion for slot " + s + ", which sent none";
        }
        if (--writing[s] > 0) {
            return null;
        }
        sequence[s] = (sequence[s] + slots) & 0xFFFF_FFFFL;
        bitmap[s] = 0;
        for (int r = 0; r < ranks; r++) {
            int w = s * ranks + r;
            if (waiting[w] >= 0) {
                int buffer = waiting[w];
                waiting[w] = -1;
                String problem = onChunk(members[r], buffer, waitingBytes[w]);
                if (problem != null) {
                    return problem;
                }
            }
        }
        return null;
    }

    // ---------------------------------------------------------------- ending

    /**
     * Ends the job: every rank still here gets a REFUSE saying {@code why} (with FALLBACK when its ranks should
     * reduce on their hosts) and its queue pair is closed once that is delivered. Idempotent.
     */
    void end(String why, boolean fallback, long now) {
        if (ended != null) {
            return;
        }
        ended = why;
        for (AggregatorMember m : members) {
            if (m != null) {
                m.refuse(header, id, ranks, m.rank, fallback, why, now);
            }
        }
    }

    /** Whether every member's queue pair is closed, so the job's memory can go. */
    boolean allClosed() {
        for (AggregatorMember m : members) {
            if (m != null && !m.closed) {
                return false;
            }
        }
        return true;
    }

    /** Frees the job's memory; every member must be closed. */
    void free() {
        context.deregister(sums);
        context.deregister(landing);
        arena.close();
    }

    @Override
    public String toString() {
        return "job " + id + " (" + joined + " of " + ranks + " ranks, " + slots + " slots of " + chunkBytes + " bytes)";
    }
}
