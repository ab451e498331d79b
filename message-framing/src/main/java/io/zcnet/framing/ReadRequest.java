package io.zcnet.framing;

/**
 * A reusable holder for one validated RDMA READ request that the responder must answer with a READ
 * RESPONSE message (see {@link MessageAssembler#pollReadRequest}). Not thread-safe.
 */
public final class ReadRequest {
    int msn;
    int rkey;
    long regionOffset;
    int length;
    int sinkRkey;
    long sinkOffset;

    public int msn() {
        return msn;
    }

    /** Key of the responder's region to read, already checked for REMOTE_READ and bounds. */
    public int rkey() {
        return rkey;
    }

    public long regionOffset() {
        return regionOffset;
    }

    public int length() {
        return length;
    }

    /** The requester's sink key, to echo in the response's tagged extension. */
    public int sinkRkey() {
        return sinkRkey;
    }

    public long sinkOffset() {
        return sinkOffset;
    }

    @Override
    public String toString() {
        return "ReadRequest[msn=" + msn + " rkey=0x" + Integer.toHexString(rkey) + " offset=" + regionOffset
                + " length=" + length + " sink=0x" + Integer.toHexString(sinkRkey) + "@" + sinkOffset + "]";
    }
}
