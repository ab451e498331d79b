package io.zcnet.ring;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Period;
import jdk.jfr.StackTrace;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A periodic JFR event with the {@link LoopCounters} of every open event loop, so a recording shows
 * why a run was slow (syscalls per completion, buffer shortages, CQ overflow) without a profiler.
 * Enabled by default every second in a recording; configure with
 * {@code jfr configure io.zcnet.LoopStatistics#period=...} or a {@code .jfc} file.
 *
 * <p>The values are cumulative since the loop opened, read with the counters' opaque semantics.
 */
@Name("io.zcnet.LoopStatistics")
@Label("zcnet Event Loop Statistics")
@Category({"zcnet", "Event Loop"})
@Description("Cumulative counters of one zcnet event loop")
@Period("1 s")
@StackTrace(false)
final class LoopStatisticsEvent extends Event {
    private static final Set<LoopCounters> LIVE = ConcurrentHashMap.newKeySet();

    static {
        FlightRecorder.addPeriodicEvent(LoopStatisticsEvent.class, LoopStatisticsEvent::emitAll);
    }

    @Label("Loop")
    @Description("Identity of the loop within this JVM")
    long loop;

    @Label("Engine")
    String engine;

    @Label("System Calls")
    long syscalls;

    @Label("Submitted Operations")
    long submitted;

    @Label("Completions")
    long completions;

    @Label("CQ Overflow Events")
    @Description("Times completions were held back by the kernel because the CQ ring was full")
    long cqOverflowEvents;

    @Label("Dropped CQEs")
    long cqOverflows;

    @Label("Buffer Ring Shortages")
    long noBuffers;

    @Label("Dropped Completions")
    @Description("Completions for handlers already unregistered")
    long dropped;

    @Label("Wake-ups")
    long wakeups;

    @Label("Tasks")
    long tasks;

    @Label("Zero-copy Sends Copied")
    long zeroCopyCopied;

    static void track(LoopCounters counters) {
        LIVE.add(counters);
    }

    static void untrack(LoopCounters counters) {
        LIVE.remove(counters);
    }

    private static void emitAll() {
        for (LoopCounters c : LIVE) {
            LoopStatisticsEvent e = new LoopStatisticsEvent();
            e.loop = c.id();
            e.engine = c.engine().name();
            e.syscalls = c.syscalls();
            e.submitted = c.submittedOps();
            e.completions = c.completions();
            e.cqOverflowEvents = c.cqOverflowEvents();
            e.cqOverflows = c.cqOverflows();
            e.noBuffers = c.noBufferEvents();
            e.dropped = c.droppedCompletions();
            e.wakeups = c.wakeups();
            e.tasks = c.tasksRun();
            e.zeroCopyCopied = c.zeroCopySendsCopied();
            e.commit();
        }
    }
}
