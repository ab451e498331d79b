package io.zcnet.tx;

/**
 * What a {@link FrameSender} did: volumes, how frames left (copied into staging or gathered by
 * reference), and every zero-copy decision. Written by the loop thread; read them there (or accept a
 * slightly stale view from another thread: plain fields, no tearing on 64-bit JVMs).
 */
public final class SenderCounters {
    long batches;
    long sendCalls;
    long shortSends;
    long bytesSent;
    long framesSent;
    long framesCopied;
    long framesGathered;
    long zeroCopySends;
    long zeroCopyCopied;
    long zeroCopyNotCopied;
    long switchesToCopy;
    long switchesToZeroCopy;
    long probes;
    long backPressure;
    long failures;

    SenderCounters() {
    }

    /** Batches formed (one per flush or completed send that found frames waiting). */
    public long batches() {
        return batches;
    }

    /** {@code sendmsg} operations submitted: batches plus the rests of short sends. */
    public long sendCalls() {
        return sendCalls;
    }

    /** Sends the kernel took only part of (the rest went in the next send, before anything else). */
    public long shortSends() {
        return shortSends;
    }

    public long bytesSent() {
        return bytesSent;
    }

    /** Frames reported sent to the listener. */
    public long framesSent() {
        return framesSent;
    }

    /** Small frames copied into the staging buffer. */
    public long framesCopied() {
        return framesCopied;
    }

    /** Frames whose header and payload were gathered by reference. */
    public long framesGathered() {
        return framesGathered;
    }

    /** Sends submitted as {@code SENDMSG_ZC}. */
    public long zeroCopySends() {
        return zeroCopySends;
    }

    /** Zero-copy notifications saying the kernel copied after all. */
    public long zeroCopyCopied() {
        return zeroCopyCopied;
    }

    /** Zero-copy notifications saying the pages went out without a copy. */
    public long zeroCopyNotCopied() {
        return zeroCopyNotCopied;
    }

    /** Times the connection gave up zero copy for large batches. */
    public long switchesToCopy() {
        return switchesToCopy;
    }

    /** Times a probe found zero copy working again. */
    public long switchesToZeroCopy() {
        return switchesToZeroCopy;
    }

    /** Large batches sent zero-copy while copying was the rule, to see whether that changed. */
    public long probes() {
        return probes;
    }

    /** Times {@link FrameSender#offer} started answering back-pressure. */
    public long backPressure() {
        return backPressure;
    }

    public long failures() {
        return failures;
    }

    @Override
    public String toString() {
        return "batches=" + batches + " sends=" + sendCalls + " short=" + shortSends + " bytes=" + bytesSent
                + " frames=" + framesSent + " copied=" + framesCopied + " gathered=" + framesGathered
                + " zcSends=" + zeroCopySends + " zcCopied=" + zeroCopyCopied + " zcNotCopied=" + zeroCopyNotCopied
                + " toCopy=" + switchesToCopy + " toZc=" + switchesToZeroCopy + " probes=" + probes
                + " backPressure=" + backPressure + " failures=" + failures;
    }
}
