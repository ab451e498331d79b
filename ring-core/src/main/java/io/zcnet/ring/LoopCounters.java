package io.zcnet.ring;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counters of one event loop. The owner thread is the only writer; any thread may read, seeing each
 * counter's latest value (opaque access: no tearing, no ordering between counters). While the loop is
 * open they also appear in JFR recordings as the periodic {@code io.zcnet.LoopStatistics} event.
 */
public final class LoopCounters {
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(long[].class);
    private static final AtomicLong IDS = new AtomicLong();

    private static final int SYSCALLS = 0;
    private static final int SUBMITTED = 1;
    private static final int COMPLETED = 2;
    private static final int CQ_OVERFLOWS = 3;
    private static final int NO_BUFFERS = 4;
    private static final int DROPPED = 5;
    private static final int WAKEUPS = 6;
    private static final int TASKS = 7;
    private static final int ZC_COPIED = 8;
    private static final int CQ_OVERFLOW_EVENTS = 9;
    private static final int COUNT = 10;

    private final long[] values = new long[COUNT];
    private final long id = IDS.incrementAndGet();
    private final EngineKind engine;

    private LoopCounters(EngineKind engine) {
        this.engine = engine;
    }

    /** Counters of a loop that is opening: reported in JFR recordings until {@link #retire()}. */
    public static LoopCounters forLoop(EngineKind engine) {
        LoopCounters counters = new LoopCounters(engine);
        LoopStatisticsEvent.track(counters);
        return counters;
    }

    /** Counters for internal rings (availability probes) that no recording should show. */
    public static LoopCounters untracked(EngineKind engine) {
        return new LoopCounters(engine);
    }

    /** Stops reporting these counters to JFR: the loop has closed. Idempotent. */
    public void retire() {
        LoopStatisticsEvent.untrack(this);
    }

    /** Identity of the loop within this JVM, as JFR events show it. */
    public long id() {
        return id;
    }

    public EngineKind engine() {
        return engine;
    }

    private void add(int slot, long delta) {
        SLOT.setOpaque(values, slot, (long) SLOT.getOpaque(values, slot) + delta);
    }

    private long get(int slot) {
        return (long) SLOT.getOpaque(values, slot);
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

    /** System calls made by the loop (io_uring_enter, epoll/select waits, reads and writes). */
    public long syscalls() {
        return get(SYSCALLS);
    }

    /** Operations handed to the kernel or the selector. */
    public long submittedOps() {
        return get(SUBMITTED);
    }

    /** Completions dispatched. */
    public long completions() {
        return get(COMPLETED);
    }

    /**
     * Completions the kernel dropped because the CQ ring was full: the increase of the CQ ring's
     * {@code overflow} word ({@code io_uring(7)}, {@code struct io_cqring_offsets.overflow}). With
     * {@code IORING_FEAT_NODROP} (every kernel since 5.5, so Linux 6.18 too) a completion that finds the
     * CQ full is parked in the kernel and delivered later, in order, and is not counted here; the counter
     * moves only if parking itself failed (no memory). Completions that were merely delayed are counted
     * by {@link #cqOverflowEvents()}. Always 0 on the NIO engine, whose completion queue grows.
     */
    public long cqOverflows() {
        return get(CQ_OVERFLOWS);
    }

    /**
     * Times the loop found the kernel holding completions back because the CQ ring was full
     * ({@code IORING_SQ_CQ_OVERFLOW} in the SQ ring's flags): completions delayed, not lost; a sign that
     * {@code cqEntries} is too small. Always 0 on the NIO engine.
     */
    public long cqOverflowEvents() {
        return get(CQ_OVERFLOW_EVENTS);
    }

    /** Times a provided-buffer ring ran dry ({@code -ENOBUFS}). */
    public long noBufferEvents() {
        return get(NO_BUFFERS);
    }

    /** Completions for handlers that were already unregistered. */
    public long droppedCompletions() {
        return get(DROPPED);
    }

    /** Wake-ups from other threads. */
    public long wakeups() {
        return get(WAKEUPS);
    }

    /** Tasks run from {@link EventLoop#execute}. */
    public long tasksRun() {
        return get(TASKS);
    }

    /** Zero-copy sends that the kernel reported as copied. */
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
