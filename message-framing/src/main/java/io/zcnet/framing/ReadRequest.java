package io.zcnet.framing;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.AccessStatus;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.buffer.MemoryRegistry;

/**
 * A reusable holder for one validated RDMA READ request that the responder must answer with a READ
 * RESPONSE message (see {@link MessageAssembler#pollReadRequest}). Not thread-safe.
 *
 * <p>The source range was checked (REMOTE_READ, bounds) when the request arrived, but the region may be
 * deregistered, or its memory freed, before the responder serves it: the responder must check again when
 * it builds the response, with {@link #sourceRegion(MemoryRegistry)}, and answer nothing from a region that
 * no longer resolves.
 */
public final class ReadRequest {
    int msn;
    int rkey;
    long regionOffset;
    int length;
    int sinkRkey;
    long sinkOffset;

    /** An empty holder, filled by {@link MessageAssembler#pollReadRequest}. */
    public ReadRequest() {
    }

    /** {@return the READ_REQUEST's MSN} */
    public int msn() {
        return msn;
    }

    /** {@return the key of the responder's region to read}; checked on arrival, to be checked again when serving. */
    public int rkey() {
        return rkey;
    }

    /** {@return where the read starts in the responder's region} */
    public long regionOffset() {
        return regionOffset;
    }

    /** {@return the bytes to read} */
    public int length() {
        return length;
    }

    /**
     * {@return the requester's sink region's remote key ({@code sink_rkey})}, to echo in the response's tagged
     * extension.
     */
    public int sinkRkey() {
        return sinkRkey;
    }

    /** {@return where the response lands in the requester's sink region} */
    public long sinkOffset() {
        return sinkOffset;
    }

    /**
     * Checks the source range again, as it is now (REMOTE_READ, liveness, bounds), and resolves it: call it
     * when building the response, because the region may have been deregistered since the request arrived.
     * Allocation-free.
     *
     * @return the region to send {@link #length()} bytes from at {@link #regionOffset()}, or null if the key
     *         no longer resolves or the range is no longer permitted (answer with an access error instead)
     * @param registry the responder's registry
     * @throws IllegalArgumentException if {@code registry} is null
     */
    public MemoryRegion sourceRegion(MemoryRegistry registry) {
        if (registry == null) {
            throw new IllegalArgumentException("registry is null");
        }
        if (registry.checkRemote(rkey, regionOffset, length, Access.REMOTE_READ) != AccessStatus.OK) {
            return null;
        }
        MemoryRegion region = registry.lookupRemote(rkey);
        // Deregistration may race with the check: re-read validity and bounds on what was resolved.
        if (region == null || !region.segment().scope().isAlive() || regionOffset > region.size() - length) {
            return null;
        }
        return region;
    }

    @Override
    public String toString() {
        return "ReadRequest[msn=" + msn + " rkey=0x" + Integer.toHexString(rkey) + " offset=" + regionOffset
                + " length=" + length + " sink=0x" + Integer.toHexString(sinkRkey) + "@" + sinkOffset + "]";
    }
}
