package io.zcnet.rx;

/**
 * What a {@link FrameReceiver} did: volumes, which strategy took each frame, and where payload bytes were
 * written from. Written by the loop thread; read them there (or accept a slightly stale view from another
 * thread: plain fields, no tearing on 64-bit JVMs).
 */
public final class ReceiverCounters {
    long bytesReceived;
    long receives;
    long bufferCompletions;
    long framesFromBuffers;
    long framesStraddling;
    long framesPlaced;
    long framesDeferred;
    long framesDuplicate;
    long payloadBytesDirect;
    long payloadBytesCopied;
    long noBuffers;
    long multishotArms;
    long switchesToDirect;
    long switchesToStreaming;

    ReceiverCounters() {
    }

    /** Stream bytes the kernel delivered, headers and payloads. */
    public long bytesReceived() {
        return bytesReceived;
    }

    /** Single receives submitted: header reads and direct payload receives (not multishot completions). */
    public long receives() {
        return receives;
    }

    /** Completions of the multishot receive that carried a pool buffer. */
    public long bufferCompletions() {
        return bufferCompletions;
    }

    /** Frames handed to the assembler whole, their payload copied from a pool buffer or header read. */
    public long framesFromBuffers() {
        return framesFromBuffers;
    }

    /** Of {@link #framesFromBuffers()}, those that straddled buffers and were first joined in the carry buffer. */
    public long framesStraddling() {
        return framesStraddling;
    }

    /** Frames placed by direct placement (header first, payload into its destination, then commit). */
    public long framesPlaced() {
        return framesPlaced;
    }

    /** Frames that could not be placed yet and were kept for later. */
    public long framesDeferred() {
        return framesDeferred;
    }

    /** Frames that repeated segments already placed. */
    public long framesDuplicate() {
        return framesDuplicate;
    }

    /** Payload bytes the kernel wrote straight into their posted receive or registered region. */
    public long payloadBytesDirect() {
        return payloadBytesDirect;
    }

    /** Payload bytes copied in user space from a pool buffer or header read to their destination. */
    public long payloadBytesCopied() {
        return payloadBytesCopied;
    }

    /** Share of placed payload bytes the kernel wrote straight into their destination, 0..1. */
    public double directShare() {
        long all = payloadBytesDirect + payloadBytesCopied;
        return all == 0 ? 0 : (double) payloadBytesDirect / all;
    }

    /** Times the buffer ring was empty ({@code ENOBUFS}) and the multishot receive was armed again. */
    public long noBuffers() {
        return noBuffers;
    }

    /** Multishot receives armed. */
    public long multishotArms() {
        return multishotArms;
    }

    /** Times the connection left the multishot receive for direct placement. */
    public long switchesToDirect() {
        return switchesToDirect;
    }

    /** Times the connection went back to the multishot receive after small frames. */
    public long switchesToStreaming() {
        return switchesToStreaming;
    }

    @Override
    public String toString() {
        return "bytes=" + bytesReceived + " receives=" + receives + " bufferCompletions=" + bufferCompletions
                + " fromBuffers=" + framesFromBuffers + " straddling=" + framesStraddling + " placed=" + framesPlaced
                + " deferred=" + framesDeferred + " duplicate=" + framesDuplicate + " direct=" + payloadBytesDirect
                + " copied=" + payloadBytesCopied + " noBuffers=" + noBuffers + " arms=" + multishotArms
                + " toDirect=" + switchesToDirect + " toStreaming=" + switchesToStreaming;
    }
}
