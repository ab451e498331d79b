package io.zcnet.tx;

import io.zcnet.ring.GatherList;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The storage a {@link FrameSender} works in while it has something to send, everything sized by its
 * {@link SenderConfig}: the frames by token, the FIFO of payload pieces, the FIFO of batches, the header
 * slots, the staging buffer and the two gather lists of a {@code sendmsg}. It holds no positions: which
 * slot is live is known only to the sender that holds it, which writes every slot before it reads it, so a
 * space needs no reset between two senders. Lent by {@link SenderSpaces}; owner thread of the loop only (made,
 * used and freed there).
 */
final class SenderSpace {
    /**
     * Confined to the loop thread that made it, which alone uses it: freeing a shared arena stops every thread of
     * the JVM for a handshake, and a pool that frees spaces as a thousand connections come and go would do that
     * thousands of times a second.
     */
    private final Arena arena = Arena.ofConfined();
    /** The frames it holds: its size class. */
    final int frames;

    // Frames by token & mask. A frame's payload is one slice (payload, payloadOffset) when pieceCount is 0,
    // else pieceCount slices in the piece FIFO from firstPiece; payloadLength is the total either way.
    final int[] headerLength;
    final MemorySegment[] payload;
    final long[] payloadOffset;
    final int[] payloadLength;
    final int[] pieceCount;
    final long[] firstPiece;
    /** Where the frame's header and payload were copied into staging when offered, or -1 (copied when batched). */
    final long[] stagedAt;

    // The slices of payloads gathered from several, by piece number & pieceMask, in frame order.
    final MemorySegment[] pieceSegment;
    final long[] pieceOffset;
    final long[] pieceLength;

    // Batches sent or being sent, oldest first, until their frames are released: a FIFO by batch number.
    final long[] batchEnd;
    final long[] batchBytes;
    final int[] notificationsDue;
    final boolean[] fullySent;

    final MemorySegment headers;
    final MemorySegment staging;
    final GatherList batch;
    final GatherList rest;

    SenderSpace(int frames, int stagingBytes) {
        this.frames = frames;
        headerLength = new int[frames];
        payload = new MemorySegment[frames];
        payloadOffset = new long[frames];
        payloadLength = new int[frames];
        pieceCount = new int[frames];
        firstPiece = new long[frames];
        stagedAt = new long[frames];
        pieceSegment = new MemorySegment[2 * frames];
        pieceOffset = new long[2 * frames];
        pieceLength = new long[2 * frames];
        batchEnd = new long[frames];
        batchBytes = new long[frames];
        notificationsDue = new int[frames];
        fullySent = new boolean[frames];
        headers = arena.allocate((long) frames * FrameSender.MAX_HEADER, 64);
        staging = arena.allocate(stagingBytes, 64);
        batch = GatherList.allocate(arena, gatherCapacity(frames));
        rest = GatherList.allocate(arena, gatherCapacity(frames));
    }

    /**
     * {@return the pieces one {@code sendmsg} of a sender of {@code frames} gathers}: a header and a slice a
     * frame (more for a gathered payload) plus one staging run, within {@code UIO_MAXIOV}.
     */
    static int gatherCapacity(int frames) {
        return Math.min(1024, 2 * frames + 1);
    }

    /**
     * Takes over the frames and pieces a sender has queued in {@code from}, a smaller space with no batch in flight
     * or outstanding: each at its token (piece number) modulo this space's size, the headers in their slots, the
     * staged bytes at their offsets.
     */
    void takeOver(SenderSpace from, long firstToken, long endToken, long pieceFrom, long pieceTo, long stagingEnd) {
        int fromMask = from.frames - 1;
        int toMask = frames - 1;
        for (long t = firstToken; t < endToken; t++) {
            int i = (int) (t & fromMask);
            int j = (int) (t & toMask);
            headerLength[j] = from.headerLength[i];
            payload[j] = from.payload[i];
            payloadOffset[j] = from.payloadOffset[i];
            payloadLength[j] = from.payloadLength[i];
            pieceCount[j] = from.pieceCount[i];
            firstPiece[j] = from.firstPiece[i];
            stagedAt[j] = from.stagedAt[i];
            MemorySegment.copy(from.headers, (long) i * FrameSender.MAX_HEADER, headers, (long) j * FrameSender.MAX_HEADER,
                    FrameSender.MAX_HEADER);
        }
        int fromPieceMask = 2 * from.frames - 1;
        int toPieceMask = 2 * frames - 1;
        for (long k = pieceFrom; k < pieceTo; k++) {
            int i = (int) (k & fromPieceMask);
            int j = (int) (k & toPieceMask);
            pieceSegment[j] = from.pieceSegment[i];
            pieceOffset[j] = from.pieceOffset[i];
            pieceLength[j] = from.pieceLength[i];
        }
        MemorySegment.copy(from.staging, 0, staging, 0, stagingEnd);
        from.forgetPayloads();
    }

    /**
     * Drops the payloads of frames a closed or failed sender never reported sent, so that a space waiting in
     * its pool keeps no caller's memory reachable (released frames have dropped theirs already).
     */
    void forgetPayloads() {
        Arrays.fill(payload, null);
        Arrays.fill(pieceSegment, null);
    }

    /** Frees the native memory; the space is unusable after. */
    void free() {
        arena.close();
    }
}
