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

    /** {@return how many stream bytes the kernel delivered}, headers and payloads. */
    public long bytesReceived() {
        return bytesReceived;
    }

    /**
     * {@return how many single receives were submitted}: header reads and direct payload receives (not multishot
     * completions).
     */
    public long receives() {
        return receives;
    }

    /** {@return how many completions of the multishot receive carried a pool buffer} */
    public long bufferCompletions() {
        return bufferCompletions;
    }

    /**
     * {@return how many frames went to the assembler whole}, their payload copied from a pool buffer or header read.
     */
    public long framesFromBuffers() {
        return framesFromBuffers;
    }

    /**
     * {@return how many of {@link #framesFromBuffers()} straddled buffers} and were first joined in the carry buffer.
     */
    public long framesStraddling() {
        return framesStraddling;
    }

    /** {@return how many frames were placed directly} (header first, payload into its destination, then commit). */
    public long framesPlaced() {
        return framesPlaced;
    }

    /** {@return how many frames could not be placed yet and were kept for later} */
    public long framesDeferred() {
        return framesDeferred;
    }

    /** {@return how many frames repeated segments already placed} */
    public long framesDuplicate() {
        return framesDuplicate;
    }

    /** {@return how many payload bytes the kernel wrote straight into their posted receive or registered region} */
    public long payloadBytesDirect() {
        return payloadBytesDirect;
    }

    /**
     * {@return how many payload bytes were copied in user space} from a pool buffer or header read to their
     * destination.
     */
    public long payloadBytesCopied() {
        return payloadBytesCopied;
    }

    /** {@return the share of placed payload bytes the kernel wrote straight into their destination, 0..1} */
    public double directShare() {
        long all = payloadBytesDirect + payloadBytesCopied;
        return all == 0 ? 0 : (double) payloadBytesDirect / all;
    }

    /**
     * {@return how many times the buffer ring was empty ({@code ENOBUFS})} and the multishot receive was armed again.
     */
    public long noBuffers() {
        return noBuffers;
    }

    /** {@return how many multishot receives were armed} */
    public long multishotArms() {
        return multishotArms;
    }

    /** {@return how many times the connection left the multishot receive for direct placement} */
    public long switchesToDirect() {
        return switchesToDirect;
    }

    /** {@return how many times the connection went back to the multishot receive after small frames} */
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
