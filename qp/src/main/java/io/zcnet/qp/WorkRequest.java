package io.zcnet.qp;

import io.zcnet.framing.SgeList;

import java.lang.foreign.MemorySegment;

/**
 * One send work request, the {@code struct ibv_send_wr} of ibv_post_send(3) reduced to what zcnet does: a
 * reusable holder that {@link QueuePair#postSend} copies into the send queue, so posting allocates
 * nothing. Fill it with one of the operation methods, add its scatter/gather elements with {@link #sge},
 * optionally {@link #unsignaled}, then post it; the holder may be refilled at once. Each operation also
 * has a form with one element, the common case:
 *
 * <pre>{@code
 * wr.send(1, mr.localKey(), 0, 4096);                                       // one element
 * wr.write(2, peerRkey, 0).sge(headers.localKey(), 0, 64).sge(mr.localKey(), 8192, 65536);
 * }</pre>
 *
 * <p>The local buffer is the {@code sg_list}: 1 to {@link QpConfig#maxSendSge()} elements (local key,
 * offset, length) of regions registered with the queue pair's context, each checked against the registry
 * when the work request is taken, as an adapter checks them (a refused one fails the work request with
 * LOCAL_PROTECTION_ERROR). Elements of 0 bytes are allowed, and so is a message of 0 bytes. A SEND or WRITE
 * sends the concatenation of the elements; a READ scatters what it reads over them, in order. They must
 * stay unchanged (for a SEND or WRITE) or untouched (the sink of a READ) until the work request completes:
 * the data is sent from them, and sent again from them when a subflow fails, as an RDMA adapter reads them
 * when it retransmits.
 *
 * <p>Inline data ({@code IBV_SEND_INLINE}): a SEND or WRITE of at most {@link QpConfig#maxInlineData()} bytes
 * may name its bytes by memory instead of by key, {@link #inline}: any {@link MemorySegment}, registered or
 * not, on or off the heap. {@link QueuePair#postSend} copies them, so that memory may change again as soon
 * as it returns.
 *
 * <pre>{@code
 * wr.send(3).inline(MemorySegment.ofArray(header), 0, header.length);      // copied when posted
 * }</pre>
 *
 * <p>Lengths: a SEND and a WRITE with immediate are one message, at most
 * {@link io.zcnet.framing.FramingConfig#MAX_MESSAGE_SIZE} (16 MiB − 1) bytes, so the receive they consume
 * completes with their whole length; a longer one fails with LOCAL_LENGTH_ERROR. A WRITE or READ may be
 * longer, as many messages as the agreed message window holds, up to {@link #MAX_LENGTH} (2^31 - 1) bytes in all,
 * which {@link QueuePair#postSend} checks: a completion counts the bytes in 32 bits (verbs' {@code byte_len}),
 * and adapters commonly advertise a {@code max_msg_sz} of 2^31. The holder itself takes any number of bytes,
 * and {@link #length()} counts them exactly.
 *
 * <p>Not thread-safe: one holder per posting thread.
 */
public final class WorkRequest {
    /** SEND: consumes the peer's next posted receive. */
    public static final int SEND = 0;
    /** SEND with immediate data, delivered in the peer's receive completion. */
    public static final int SEND_WITH_IMM = 1;
    /** RDMA WRITE into the peer's region {@code rkey} at {@code remoteOffset}; no completion at the peer. */
    public static final int RDMA_WRITE = 2;
    /** RDMA WRITE that also consumes a posted receive at the peer to deliver the immediate data. */
    public static final int RDMA_WRITE_WITH_IMM = 3;
    /** RDMA READ of the peer's region {@code rkey} at {@code remoteOffset} into the local buffer. */
    public static final int RDMA_READ = 4;
    /** The most bytes a work request's elements may hold together: what a completion's byte count holds. */
    public static final int MAX_LENGTH = Integer.MAX_VALUE;

    long workRequestId;
    int opcode = -1;
    boolean signaled;
    /** Signaled, but its acknowledgement not asked for: {@link #signaledLazily()}. */
    boolean lazy;
    int immediate;
    /** The elements by local key, offset and length; their total is the message's length. */
    final SgeList sges = new SgeList(QpConfig.MAX_SGE);
    int rkey;
    long remoteOffset;
    /** Whether {@link #sges} holds one piece of memory to copy when posted rather than elements by key. */
    boolean inline;

    /** An empty holder: fill it with one of the operation methods. */
    public WorkRequest() {
    }

    /**
     * A SEND of the elements {@link #sge} adds next.
     *
     * @param workRequestId reported in the completion
     * @return this holder
     */
    public WorkRequest send(long workRequestId) {
        return fill(SEND, workRequestId, 0, 0, 0);
    }

    /**
     * A SEND of {@code length} bytes at {@code offset} of the local region {@code lkey}.
     *
     * @param workRequestId reported in the completion
     * @param lkey the local key of the region holding the bytes
     * @param offset where the bytes start in the region
     * @param length how many bytes
     * @return this holder
     */
    public WorkRequest send(long workRequestId, int lkey, long offset, int length) {
        return send(workRequestId).sge(lkey, offset, length);
    }

    /**
     * A SEND with immediate data of the elements {@link #sge} adds next.
     *
     * @param workRequestId reported in the completion
     * @param immediate delivered with the peer's receive completion
     * @return this holder
     */
    public WorkRequest sendWithImmediate(long workRequestId, int immediate) {
        return fill(SEND_WITH_IMM, workRequestId, 0, 0, immediate);
    }

    /**
     * A SEND with immediate data.
     *
     * @param workRequestId reported in the completion
     * @param lkey the local key of the region holding the bytes
     * @param offset where the bytes start in the region
     * @param length how many bytes
     * @param immediate delivered with the peer's receive completion
     * @return this holder
     */
    public WorkRequest sendWithImmediate(long workRequestId, int lkey, long offset, int length, int immediate) {
        return sendWithImmediate(workRequestId, immediate).sge(lkey, offset, length);
    }

    /**
     * An RDMA WRITE to the peer's region {@code rkey} from {@code remoteOffset} of the elements {@link #sge} adds next.
     *
     * @param workRequestId reported in the completion
     * @param rkey the peer's region key, which must grant REMOTE_WRITE
     * @param remoteOffset where the bytes go in the peer's region
     * @return this holder
     */
    public WorkRequest write(long workRequestId, int rkey, long remoteOffset) {
        return fill(RDMA_WRITE, workRequestId, rkey, remoteOffset, 0);
    }

    /**
     * An RDMA WRITE of the local bytes to the peer's region {@code rkey} from {@code remoteOffset}.
     *
     * @param workRequestId reported in the completion
     * @param lkey the local key of the region holding the bytes
     * @param offset where the bytes start in the region
     * @param length how many bytes
     * @param rkey the peer's region key, which must grant REMOTE_WRITE
     * @param remoteOffset where the bytes go in the peer's region
     * @return this holder
     */
    public WorkRequest write(long workRequestId, int lkey, long offset, int length, int rkey, long remoteOffset) {
        return write(workRequestId, rkey, remoteOffset).sge(lkey, offset, length);
    }

    /**
     * An RDMA WRITE with immediate data of the elements {@link #sge} adds next.
     *
     * @param workRequestId reported in the completion
     * @param rkey the peer's region key, which must grant REMOTE_WRITE
     * @param remoteOffset where the bytes go in the peer's region
     * @param immediate delivered with the peer's receive completion
     * @return this holder
     */
    public WorkRequest writeWithImmediate(long workRequestId, int rkey, long remoteOffset, int immediate) {
        return fill(RDMA_WRITE_WITH_IMM, workRequestId, rkey, remoteOffset, immediate);
    }

    /**
     * An RDMA WRITE whose immediate data completes one of the peer's posted receives.
     *
     * @param workRequestId reported in the completion
     * @param lkey the local key of the region holding the bytes
     * @param offset where the bytes start in the region
     * @param length how many bytes
     * @param rkey the peer's region key, which must grant REMOTE_WRITE
     * @param remoteOffset where the bytes go in the peer's region
     * @param immediate delivered with the peer's receive completion
     * @return this holder
     */
    public WorkRequest writeWithImmediate(long workRequestId, int lkey, long offset, int length, int rkey,
            long remoteOffset, int immediate) {
        return writeWithImmediate(workRequestId, rkey, remoteOffset, immediate).sge(lkey, offset, length);
    }

    /**
     * An RDMA READ of the peer's region {@code rkey} from {@code remoteOffset} into the elements {@link #sge}
     * adds next: each element is read with requests of its own over the next consecutive range of the peer's
     * region (the whole READ is as long as its elements together), and the work request completes once
     * every one has landed.
     *
     * @param workRequestId reported in the completion
     * @param rkey the peer's region key, which must grant REMOTE_READ
     * @param remoteOffset where the read starts in the peer's region
     * @return this holder
     */
    public WorkRequest read(long workRequestId, int rkey, long remoteOffset) {
        return fill(RDMA_READ, workRequestId, rkey, remoteOffset, 0);
    }

    /**
     * An RDMA READ of {@code length} bytes of the peer's region {@code rkey} into the local region {@code lkey}.
     *
     * @param workRequestId reported in the completion
     * @param lkey the local key of the region the bytes land in, which must grant LOCAL_WRITE
     * @param offset where the bytes land in the local region
     * @param length how many bytes
     * @param rkey the peer's region key, which must grant REMOTE_READ
     * @param remoteOffset where the read starts in the peer's region
     * @return this holder
     */
    public WorkRequest read(long workRequestId, int lkey, long offset, int length, int rkey, long remoteOffset) {
        return read(workRequestId, rkey, remoteOffset).sge(lkey, offset, length);
    }

    /**
     * Appends a scatter/gather element: {@code length} bytes at {@code offset} of the local region
     * {@code lkey} (an {@code ibv_sge}).
     *
     * @param lkey the local key of the region
     * @param offset where the element starts in the region
     * @param length bytes in the element
     * @return this holder
     * @throws IllegalArgumentException if the holder is not filled, the range is negative, the holder holds
     *                                  {@link QpConfig#MAX_SGE} elements already, or the total would overflow
     *                                  the remote offset (a total past {@link #MAX_LENGTH} is refused when posted)
     */
    public WorkRequest sge(int lkey, long offset, int length) {
        if (opcode < 0) {
            throw new IllegalArgumentException("fill the work request with an operation before its elements");
        }
        if (inline) {
            throw new IllegalArgumentException("an inline work request has no scatter/gather elements: " + this);
        }
        if (remoteOffset > Long.MAX_VALUE - sges.byteSize() - Math.max(0, length)) {
            throw new IllegalArgumentException("remote offset " + remoteOffset + " with " + sges.byteSize() + "+"
                    + length + " bytes overflows");
        }
        addSge(sges, lkey, offset, length);
        return this;
    }

    /**
     * Makes this SEND or WRITE carry {@code length} bytes at {@code offset} of {@code source} inline
     * ({@code IBV_SEND_INLINE}): {@link QueuePair#postSend} copies them, so {@code source} needs no
     * registration and may change again once the post returns. Instead of scatter/gather elements: call it
     * right after the operation method. At most {@link QpConfig#maxInlineData()} bytes, which the post checks.
     *
     * @param source the bytes: any memory segment, native or on the heap
     * @param offset where they start in it
     * @param length how many
     * @return this holder
     * @throws IllegalArgumentException if the holder is not filled, is a READ (whose local side is written, not
     *                                  sent), already has elements, or the range lies outside {@code source}
     */
    public WorkRequest inline(MemorySegment source, long offset, int length) {
        if (opcode < 0) {
            throw new IllegalArgumentException("fill the work request with an operation before its inline data");
        }
        if (opcode == RDMA_READ) {
            throw new IllegalArgumentException("a READ has no inline data: it writes its local side");
        }
        if (sges.count() > 0) {
            throw new IllegalArgumentException("inline data replaces the scatter/gather elements, and this work request"
                    + " has " + sges.count() + ": " + this);
        }
        if (length < 0 || remoteOffset > Long.MAX_VALUE - length) {
            throw new IllegalArgumentException("inline data of " + length + " bytes at remote offset " + remoteOffset
                    + " is negative or overflows");
        }
        sges.add(source, offset, length);
        inline = true;
        return this;
    }

    /** Appends one element to {@code list}. */
    static void addSge(SgeList list, int lkey, long offset, int length) {
        if (offset < 0 || length < 0) {
            throw new IllegalArgumentException("element " + offset + "+" + length + " is negative");
        }
        if (list.count() == list.capacity()) {
            throw new IllegalArgumentException("at most " + list.capacity() + " scatter/gather elements");
        }
        list.add(lkey, offset, length);
    }

    /**
     * No completion on success ({@code IBV_SEND_SIGNALED} left out); a failure still completes, and a
     * later signaled completion implies this one succeeded. Since nothing waits for it, the peer acknowledges
     * it lazily, on its next frame to this side (or at once when this side's queue or window runs half
     * full), where a signaled request asks for its acknowledgement at once: signaling one request in
     * several saves the peer a frame, and a wake-up of this side, per request.
     *
     * @return this holder
     */
    public WorkRequest unsignaled() {
        this.signaled = false;
        this.lazy = false;
        return this;
    }

    /**
     * A completion on success, as a signaled request has, but not hurried: the peer acknowledges it as it does
     * an unsignaled one, on its next frame to this side (or at once when this side's queue or window runs half
     * full), instead of with a frame of its own. For streams in which the peer answers anyway, such as a
     * collective's exchanges, where the completion is needed back only well before what it frees runs out;
     * without such an answer it comes with a later signaled request's acknowledgement, or the next heartbeat's.
     *
     * @return this holder
     */
    public WorkRequest signaledLazily() {
        this.signaled = true;
        this.lazy = true;
        return this;
    }

    private WorkRequest fill(int opcode, long workRequestId, int rkey, long remoteOffset, int immediate) {
        if (remoteOffset < 0) {
            throw new IllegalArgumentException("remote offset " + remoteOffset + " is negative");
        }
        this.opcode = opcode;
        this.workRequestId = workRequestId;
        this.sges.clear();
        this.rkey = rkey;
        this.remoteOffset = remoteOffset;
        this.immediate = immediate;
        this.signaled = true;
        this.lazy = false;
        this.inline = false;
        return this;
    }

    /** {@return the id the work request is posted with} */
    public long workRequestId() {
        return workRequestId;
    }

    /** {@return one of {@link #SEND} .. {@link #RDMA_READ}, or -1 before the holder is filled} */
    public int opcode() {
        return opcode;
    }

    /** {@return how many scatter/gather elements were added so far} */
    public int sgeCount() {
        return sges.count();
    }

    /** {@return the bytes of all elements together, exactly}: the message's length (to post: {@link #MAX_LENGTH}). */
    public long length() {
        return sges.byteSize();
    }

    static String opcodeName(int opcode) {
        return switch (opcode) {
            case SEND -> "SEND";
            case SEND_WITH_IMM -> "SEND_WITH_IMM";
            case RDMA_WRITE -> "RDMA_WRITE";
            case RDMA_WRITE_WITH_IMM -> "RDMA_WRITE_WITH_IMM";
            case RDMA_READ -> "RDMA_READ";
            default -> "opcode " + opcode;
        };
    }

    private String signaling() {
        if (!signaled) {
            return " unsignaled";
        }
        return lazy ? " signaled lazily" : "";
    }

    @Override
    public String toString() {
        return "WorkRequest[" + opcodeName(opcode) + " wr=" + workRequestId + (inline ? " inline" : "") + " local="
                + sges + " remote=0x" + Integer.toHexString(rkey) + "@" + remoteOffset + " imm=" + immediate + signaling()
                + "]";
    }
}
