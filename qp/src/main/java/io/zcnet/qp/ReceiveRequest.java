package io.zcnet.qp;

import io.zcnet.framing.SgeList;

/**
 * One receive, the {@code struct ibv_recv_wr} of ibv_post_recv(3): a reusable holder of a work request id
 * and 1 to {@link QpConfig#maxReceiveSge()} scatter/gather elements that {@link QueuePair#postReceive(ReceiveRequest)}
 * copies into the receive queue, so posting allocates nothing; it may be refilled at once.
 *
 * <pre>{@code
 * rr.receive(7).sge(headers.localKey(), 0, 64).sge(mr.localKey(), 8192, 65536);
 * }</pre>
 *
 * <p>A SEND (or the immediate of a WRITE) that consumes the receive fills its elements in order; one longer
 * than all of them together fails with LOCAL_LENGTH_ERROR. Each element's region needs LOCAL_WRITE;
 * elements of 0 bytes are allowed. Not thread-safe: one holder per posting thread.
 */
public final class ReceiveRequest {
    long workRequestId;
    final SgeList sges = new SgeList(QpConfig.MAX_SGE);

    /** An empty holder: start it with {@link #receive}. */
    public ReceiveRequest() {
    }

    /**
     * Starts the receive {@code workRequestId}, with no elements yet.
     *
     * @param workRequestId reported in the receive's completion
     * @return this holder
     */
    public ReceiveRequest receive(long workRequestId) {
        this.workRequestId = workRequestId;
        sges.clear();
        return this;
    }

    /**
     * Appends {@code length} bytes at {@code offset} of the local region {@code lkey}.
     *
     * @param lkey the local key of a region that grants LOCAL_WRITE
     * @param offset where the element starts in the region
     * @param length bytes in the element
     * @return this holder
     * @throws IllegalArgumentException if the range is negative, the holder holds {@link QpConfig#MAX_SGE}
     *                                  elements already, or the total would pass 2^31 - 1 bytes
     */
    public ReceiveRequest sge(int lkey, long offset, int length) {
        if (length > WorkRequest.MAX_LENGTH - sges.byteSize()) {
            throw new IllegalArgumentException("elements of more than " + WorkRequest.MAX_LENGTH + " bytes in all");
        }
        WorkRequest.addSge(sges, lkey, offset, length);
        return this;
    }

    /** {@return the id the receive is posted with} */
    public long workRequestId() {
        return workRequestId;
    }

    /** {@return how many scatter/gather elements were added so far} */
    public int sgeCount() {
        return sges.count();
    }

    @Override
    public String toString() {
        return "ReceiveRequest[wr=" + workRequestId + " " + sges + "]";
    }
}
