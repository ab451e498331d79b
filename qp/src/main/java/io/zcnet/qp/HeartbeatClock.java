package io.zcnet.qp;

import io.zcnet.ring.CompletionHandler;
import io.zcnet.ring.EventLoop;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * The one timer a context's queue pairs tick on: queue pairs with the same tick period share one loop timeout,
 * armed while any of them runs, and each expiry walks them all. A thousand queue pairs so cost one timer
 * operation per period, not a thousand, and the loop sleeps in between. A queue pair that stops ticking (in ERROR,
 * closed) is dropped at the walk after. When the last one has gone, the clock ticks on only while the work after
 * each tick asks for it (the senders' spaces still above their floor), so a loop left without queue pairs gives
 * back a burst's memory too. Owner thread of the loop.
 */
final class HeartbeatClock implements CompletionHandler {
    private final EventLoop loop;
    private final int handlerId;
    /** Groups by period; a group's tag in the loop's timeouts is its index in {@link #groups}. */
    private final Map<Long, Group> byPeriod = new HashMap<>();
    private final List<Group> groups = new ArrayList<>();

    /** The queue pairs of one tick period and whether their timeout is armed. */
    private static final class Group {
        final long periodNanos;
        final int tag;
        final List<QpEngine> members = new ArrayList<>();
        boolean armed;

        Group(long periodNanos, int tag) {
            this.periodNanos = periodNanos;
            this.tag = tag;
        }
    }

    /** Run after every walk of a group; true while it wants ticks when no queue pair ticks. */
    private final BooleanSupplier afterTick;

    /**
     * Loop thread.
     *
     * @param afterTick what else runs at each tick, after the queue pairs'; returns whether it wants another tick
     *                  though no queue pair ticks
     */
    HeartbeatClock(EventLoop loop, BooleanSupplier afterTick) {
        this.loop = loop;
        this.afterTick = afterTick;
        this.handlerId = loop.registerHandler(this);
    }

    /** {@code engine} ticks every {@code periodNanos} from now on, until its tick says it stops. */
    void join(QpEngine engine, long periodNanos) {
        Group g = byPeriod.get(periodNanos);
        if (g == null) {
            g = new Group(periodNanos, groups.size());
            byPeriod.put(periodNanos, g);
            groups.add(g);
        }
        g.members.add(engine);
        if (!g.armed) {
            g.armed = true;
            loop.timeout(handlerId, g.tag, periodNanos);
        }
    }

    @Override
    public void onCompletion(int op, int tag, int result, int flags) {
        if (tag < 0 || tag >= groups.size()) {
            return;
        }
        Group g = groups.get(tag);
        g.armed = false;
        List<QpEngine> members = g.members;
        int kept = 0;
        // Walked by index and compacted in place: queue pairs that join during the walk tick from the next one.
        int n = members.size();
        for (int i = 0; i < n; i++) {
            QpEngine e = members.get(i);
            if (e.onHeartbeat()) {
                members.set(kept++, e);
            }
        }
        for (int i = n; i < members.size(); i++) {
            members.set(kept++, members.get(i));
        }
        while (members.size() > kept) {
            members.removeLast();
        }
        boolean more = afterTick.getAsBoolean();
        if (!members.isEmpty() || more && !anyArmed()) {
            g.armed = true;
            loop.timeout(handlerId, g.tag, g.periodNanos);
        }
    }

    private boolean anyArmed() {
        for (Group g : groups) {
            if (g.armed) {
                return true;
            }
        }
        return false;
    }

    /** {@return how many queue pairs tick} */
    int ticking() {
        int n = 0;
        for (Group g : groups) {
            n += g.members.size();
        }
        return n;
    }
}
