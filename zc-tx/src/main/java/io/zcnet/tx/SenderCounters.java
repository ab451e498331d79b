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
    long spacesGrown;

    SenderCounters() {
    }

    /** {@return how many batches were formed} (one per flush or completed send that found frames waiting). */
    public long batches() {
        return batches;
    }

    /** {@return how many {@code sendmsg} operations were submitted}: batches plus the rests of short sends. */
    public long sendCalls() {
        return sendCalls;
    }

    /** {@return how many sends the kernel took only part of} (the rest went in the next send, before anything else). */
    public long shortSends() {
        return shortSends;
    }

    /** {@return how many bytes the kernel took, headers and payloads} */
    public long bytesSent() {
        return bytesSent;
    }

    /** {@return how many frames were reported sent to the listener} */
    public long framesSent() {
        return framesSent;
    }

    /** {@return how many small frames were copied into the staging buffer} */
    public long framesCopied() {
        return framesCopied;
    }

    /** {@return how many frames had header and payload gathered by reference} */
    public long framesGathered() {
        return framesGathered;
    }

    /** {@return how many sends were submitted as {@code SENDMSG_ZC}} */
    public long zeroCopySends() {
        return zeroCopySends;
    }

    /** {@return how many zero-copy notifications said the kernel copied after all} */
    public long zeroCopyCopied() {
        return zeroCopyCopied;
    }

    /** {@return how many zero-copy notifications said the pages went out without a copy} */
    public long zeroCopyNotCopied() {
        return zeroCopyNotCopied;
    }

    /** {@return how many times the connection gave up zero copy for large batches} */
    public long switchesToCopy() {
        return switchesToCopy;
    }

    /** {@return how many times a probe found zero copy working again} */
    public long switchesToZeroCopy() {
        return switchesToZeroCopy;
    }

    /** {@return how many large batches went zero-copy while copying was the rule}, to see whether that changed. */
    public long probes() {
        return probes;
    }

    /** {@return how many times {@link FrameSender#offer} started answering back-pressure} */
    public long backPressure() {
        return backPressure;
    }

    /** {@return how many times the connection failed (0 or 1)} */
    public long failures() {
        return failures;
    }

    /** {@return how often the sender filled a small space and moved into a large one} */
    public long spacesGrown() {
        return spacesGrown;
    }

    @Override
    public String toString() {
        return "batches=" + batches + " sends=" + sendCalls + " short=" + shortSends + " bytes=" + bytesSent
                + " frames=" + framesSent + " copied=" + framesCopied + " gathered=" + framesGathered
                + " zcSends=" + zeroCopySends + " zcCopied=" + zeroCopyCopied + " zcNotCopied=" + zeroCopyNotCopied
                + " toCopy=" + switchesToCopy + " toZc=" + switchesToZeroCopy + " probes=" + probes
                + " backPressure=" + backPressure + " failures=" + failures + " spacesGrown=" + spacesGrown;
    }
}
