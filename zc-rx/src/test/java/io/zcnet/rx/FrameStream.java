package io.zcnet.rx;

import io.zcnet.framing.FlowControl;
import io.zcnet.framing.FrameHeader;
import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.Icrc;
import io.zcnet.framing.Segmenter;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

/**
 * A framed byte stream built ahead of time, as a peer would send it: work requests cut into frames by the
 * project's {@link Segmenter}, headers and payloads laid end to end; and written to a socket in chunks of
 * random size, so frames straddle the receiver's buffers wherever chance puts them.
 */
final class FrameStream {
    private final Segmenter segmenter;
    private final MemorySegment bytes;
    private long length;
    private int msn;
    /** Receive-consuming messages appended so far: the RSN of the next one. */
    private int rsn;

    FrameStream(FramingConfig framing, Arena arena, long capacity) {
        this.segmenter = new Segmenter(framing);
        this.bytes = arena.allocate(capacity, 64);
    }

    int nextMsn() {
        return msn;
    }

    /** The RSN the next receive-consuming message carries: which posted receive it consumes. */
    int nextRsn() {
        return rsn;
    }

    FrameStream send(MemorySegment source, long offset, int length) {
        return appendConsuming(segmenter.beginSend(msn, rsn, source, offset, length));
    }

    FrameStream sendWithImmediate(MemorySegment source, long offset, int length, int immediate) {
        return appendConsuming(segmenter.beginSendWithImmediate(msn, rsn, source, offset, length, immediate));
    }

    FrameStream write(MemorySegment source, long offset, long length, int rkey, long regionOffset) {
        return append(segmenter.beginWrite(msn, source, offset, length, rkey, regionOffset));
    }

    FrameStream writeWithImmediate(MemorySegment source, long offset, long length, int rkey, long regionOffset,
            int immediate) {
        return appendConsuming(segmenter.beginWriteWithImmediate(msn, rsn, source, offset, length, rkey, regionOffset,
                immediate));
    }

    FrameStream readRequest(int rkey, long regionOffset, long length, int sinkRkey, long sinkOffset) {
        return append(segmenter.beginReadRequest(msn, rkey, regionOffset, length, sinkRkey, sinkOffset));
    }

    FrameStream readResponse(MemorySegment source, long offset, int length, int sinkRkey, long sinkOffset) {
        return append(segmenter.beginReadResponse(msn, source, offset, length, sinkRkey, sinkOffset));
    }

    /**
     * Appends an ACKNOWLEDGE of everything up to {@code ackMsn} with the peer's cumulative credit limit; it
     * uses no MSN of its own. {@code icrc}: whether the connection negotiated the ICRC.
     */
    FrameStream acknowledge(int ackMsn, int creditLimit, boolean icrc) {
        FrameHeader header = new FrameHeader().wrap(bytes, length);
        FlowControl.writeAcknowledge(header, ackMsn, creditLimit, false, false);
        if (icrc) {
            header.icrc(new Icrc().compute(bytes, length));
        }
        length += FrameHeader.LENGTH;
        return this;
    }

    /** Appends raw bytes (a broken or hostile frame). */
    FrameStream raw(byte[] frame) {
        MemorySegment.copy(MemorySegment.ofArray(frame), 0, bytes, length, frame.length);
        length += frame.length;
        return this;
    }

    /** {@link #append} for a work request that consumes one posted receive. */
    private FrameStream appendConsuming(Segmenter request) {
        rsn++;
        return append(request);
    }

    /** Appends the frames of the work request just begun, in order. */
    private FrameStream append(Segmenter request) {
        for (long i = 0; i < request.frameCount(); i++) {
            appendFrame(request, i);
        }
        msn = (msn + request.messageCount()) & 0xFFFF;
        return this;
    }

    /** Appends frame {@code index} of the work request just begun: for streams that reorder or repeat frames. */
    void appendFrame(Segmenter request, long index) {
        length += request.writeFrame(index, bytes, length);
        int payload = request.payloadLength();
        if (payload > 0) {
            MemorySegment.copy(request.source(), request.payloadOffset(), bytes, length, payload);
            length += payload;
        }
    }

    /**
     * The segmenter, for callers that lay out frames themselves with {@link #appendFrame} (from
     * {@link #nextMsn()} and {@link #nextRsn()} on); then {@link #skip}.
     */
    Segmenter segmenter() {
        return segmenter;
    }

    /** Moves past {@code msns} messages, {@code receives} of them receive-consuming, laid out by the caller. */
    void skip(int msns, int receives) {
        msn = (msn + msns) & 0xFFFF;
        rsn += receives;
    }

    long length() {
        return length;
    }

    /** Writes the stream in chunks of 1 byte to {@code maxChunk} bytes, sizes drawn from {@code random}. */
    void writeTo(OutputStream out, SplittableRandom random, int maxChunk) throws IOException {
        writeTo(out, random, maxChunk, 0, length);
    }

    /** Writes bytes {@code from} .. {@code to} of the stream as {@link #writeTo(OutputStream, SplittableRandom, int)} does. */
    void writeTo(OutputStream out, SplittableRandom random, int maxChunk, long from, long to) throws IOException {
        byte[] chunk = new byte[maxChunk];
        long at = from;
        while (at < to) {
            int n = (int) Math.min(to - at, random.nextInt(4) == 0 ? 1 + random.nextInt(Math.min(64, maxChunk)) : 1 + random.nextInt(maxChunk));
            MemorySegment.copy(bytes, ValueLayout.JAVA_BYTE, at, chunk, 0, n);
            out.write(chunk, 0, n);
            at += n;
        }
        out.flush();
    }
}
