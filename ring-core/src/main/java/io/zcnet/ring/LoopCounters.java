package io.zcnet.ring;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counters of one event loop, read-only: the loop's owner thread is the only writer (through an internal
 * subclass); any thread may read, seeing each counter's latest value (opaque access: no tearing, no
 * ordering between counters). While the loop is open they also appear in JFR recordings as the periodic
 * {@code io.zcnet.LoopStatistics} event.
 */
public abstract sealed class LoopCounters permits io.zcnet.ring.internal.Counters {
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(long[].class);
    private static final AtomicLong IDS = new AtomicLong();

    protected static final int SYSCALLS = 0;
    protected static final int SUBMITTED = 1;
    protected static final int COMPLETED = 2;
    protected static final int CQ_OVERFLOWS = 3;
    protected static final int NO_BUFFERS = 4;
    protected static final int DROPPED = 5;
    protected static final int WAKEUPS = 6;
    protected static final int TASKS = 7;
    protected static final int ZC_COPIED = 8;
    protected static final int CQ_OVERFLOW_EVENTS = 9;
    private static final int COUNT = 10;

    private final long[] values = new long[COUNT];
    private final long id = IDS.incrementAndGet();
    private final EngineKind engine;

    protected LoopCounters(EngineKind engine) {
        this.engine = engine;
    }

    /** {@return the identity of the loop within this JVM, as JFR events show it} */
    public final long id() {
        return id;
    }

    /** {@return the engine the loop runs on} */
    public final EngineKind engine() {
        return engine;
    }

    /** Adds to one counter: the owner thread only. */
    protected final void add(int slot, long delta) {
        SLOT.setOpaque(values, slot, (long) SLOT.getOpaque(values, slot) + delta);
    }

    private long get(int slot) {
        return (long) SLOT.getOpaque(values, slot);
    }

    /** {@return how many system calls the loop made} (io_uring_enter, epoll/select waits, reads and writes). */
    public long syscalls() {
        return get(SYSCALLS);
    }

    /** {@return how many operations were handed to the kernel or the selector} */
    public long submittedOps() {
        return get(SUBMITTED);
    }

    /** {@return how many completions were dispatched} */
    public long completions() {
        return get(COMPLETED);
    }

    /**
     * {@return how many completions the kernel dropped because the CQ ring was full: the increase of the CQ ring's
     * {@code overflow} word ({@code io_uring(7)}, {@code struct io_cqring_offsets.overflow})} With
     * {@code IORING_FEAT_NODROP} (every kernel since 5.5, so Linux 6.18 too) a completion that finds the
     * CQ full is parked in the kernel and delivered later, in order, and is not counted here; the counter
     * moves only if parking itself failed (no memory). Completions that were merely delayed are counted
     * by {@link #cqOverflowEvents()}. Always 0 on the NIO engine, whose completion queue grows.
     */
    public long cqOverflows() {
        return get(CQ_OVERFLOWS);
    }

    /**
     * {@return how many times the loop found the kernel holding completions back because the CQ ring was full
     * ({@code IORING_SQ_CQ_OVERFLOW} in the SQ ring's flags): completions delayed, not lost; a sign that
     * {@code cqEntries} is too small} Always 0 on the NIO engine.
     */
    public long cqOverflowEvents() {
        return get(CQ_OVERFLOW_EVENTS);
    }

    /** {@return how many times a provided-buffer ring ran dry ({@code -ENOBUFS})} */
    public long noBufferEvents() {
        return get(NO_BUFFERS);
    }

    /** {@return how many completions arrived for handlers already unregistered} */
    public long droppedCompletions() {
        return get(DROPPED);
    }

    /** {@return how many wake-ups came from other threads} */
    public long wakeups() {
        return get(WAKEUPS);
    }

    /** {@return how many tasks from {@link EventLoop#execute} ran} */
    public long tasksRun() {
        return get(TASKS);
    }

    /** {@return how many zero-copy sends the kernel reported as copied} */
    public long zeroCopySendsCopied() {
        return get(ZC_COPIED);
    }

    @Override
    public String toString() {
        return "syscalls=" + syscalls() + " submitted=" + submittedOps() + " completions=" + completions()
                + " cqOverflows=" + cqOverflows() + " cqOverflowEvents=" + cqOverflowEvents()
                + " noBuffers=" + noBufferEvents()
                + " dropped=" + droppedCompletions() + " wakeups=" + wakeups() + " tasks=" + tasksRun()
                + " zcCopied=" + zeroCopySendsCopied();
    }
}
