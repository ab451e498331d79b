package io.zcnet.ring.internal;

import io.zcnet.ring.EngineKind;
import io.zcnet.ring.LoopCounters;

/**
 * The writable side of {@link LoopCounters}, for the engines only (this package is not exported): users
 * read a loop's counters, they cannot move them. Owner thread only.
 */
public final class Counters extends LoopCounters {

    public Counters(EngineKind engine) {
        super(engine);
    }

    public void syscall() {
        add(SYSCALLS, 1);
    }

    public void submitted(int count) {
        add(SUBMITTED, count);
    }

    public void completed(int count) {
        add(COMPLETED, count);
    }

    public void cqOverflow(long lost) {
        add(CQ_OVERFLOWS, lost);
    }

    public void cqOverflowEvent() {
        add(CQ_OVERFLOW_EVENTS, 1);
    }

    public void noBuffers() {
        add(NO_BUFFERS, 1);
    }

    public void droppedCompletion() {
        add(DROPPED, 1);
    }

    public void wakeup() {
        add(WAKEUPS, 1);
    }

    public void tasks(int count) {
        add(TASKS, count);
    }

    public void zeroCopyCopied() {
        add(ZC_COPIED, 1);
    }
}
