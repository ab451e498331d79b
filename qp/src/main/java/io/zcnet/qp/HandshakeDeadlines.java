package io.zcnet.qp;

import io.zcnet.ring.CompletionHandler;
import io.zcnet.ring.Errno;
import io.zcnet.ring.EventLoop;

import java.util.concurrent.TimeUnit;

/**
 * The one timer a loop's handshakes are bounded by: the handshakes in progress are linked in a list, each with its
 * deadline, and one loop timeout, armed for the earliest, drops those past theirs. A handshake that ends leaves the
 * list and costs no timer operation, where a timeout and its cancel per handshake cost each side two submissions,
 * two completions and the kernel's search for what to cancel. An expiry lags its deadline by at most
 * {@link #LAG_NANOS}, so a flood of silent connections accepted together is swept in a few walks, not one per
 * connection. Owner thread of the loop.
 */
final class HandshakeDeadlines implements CompletionHandler {
    /** How late a handshake may be dropped after its deadline: what lets one walk take many. */
    static final long LAG_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** The tag of a cancel of a timer armed for a later deadline; timers' tags are generations, never negative. */
    private static final int TAG_CANCEL = -1;

    private final EventLoop loop;
    private final int handlerId;
    /** The handshakes in progress, oldest first. */
    private SubflowHandshake first;
    private SubflowHandshake last;
    /** Whether a timer is armed, when it fires, its user_data and its tag; older timers are ignored. */
    private boolean armed;
    private long armedFor;
    private long armedId;
    private int generation;

    /** Loop thread. */
    HandshakeDeadlines(EventLoop loop) {
        this.loop = loop;
        this.handlerId = loop.registerHandler(this);
    }

    /** {@code h} starts: it is dropped once its deadline has passed, unless it {@linkplain #remove ends} first. */
    void add(SubflowHandshake h) {
        h.earlier = last;
        h.later = null;
        if (last == null) {
            first = h;
        } else {
            last.later = h;
        }
        last = h;
        h.listed = true;
        armFor(h.deadlineNanos);
    }

    /** {@code h} ended (established, failed or moved to another loop); nothing if it was not listed. */
    void remove(SubflowHandshake h) {
        if (!h.listed) {
            return;
        }
        h.listed = false;
        if (h.earlier == null) {
            first = h.later;
        } else {
            h.earlier.later = h.later;
        }
        if (h.later == null) {
            last = h.earlier;
        } else {
            h.later.earlier = h.earlier;
        }
        h.earlier = null;
        h.later = null;
    }

    @Override
    public void onCompletion(int op, int tag, int result, int flags) {
        if (tag != generation || !armed || result != -Errno.ETIME) {
            return; // a cancel, or a timer replaced by one for an earlier deadline
        }
        armed = false;
        long now = System.nanoTime();
        // An expiry may end others (a listener's bookkeeping): the walk takes the next one before it.
        for (SubflowHandshake h = first; h != null; ) {
            SubflowHandshake next = h.later;
            if (h.deadlineNanos - now <= 0) {
                h.expire();
            }
            h = next;
        }
        boolean any = false;
        long earliest = 0;
        for (SubflowHandshake h = first; h != null; h = h.later) {
            if (!any || h.deadlineNanos - earliest < 0) {
                earliest = h.deadlineNanos;
                any = true;
            }
        }
        if (any) {
            armFor(earliest);
        }
    }

    /** Makes sure a timer fires within {@link #LAG_NANOS} after {@code deadline}. */
    private void armFor(long deadline) {
        long fireAt = deadline + LAG_NANOS;
        if (armed) {
            if (fireAt - armedFor >= 0) {
                return;
            }
            loop.cancel(handlerId, TAG_CANCEL, armedId);
        }
        generation = (generation + 1) & Integer.MAX_VALUE;
        armed = true;
        armedFor = fireAt;
        armedId = loop.timeout(handlerId, generation, Math.max(0, fireAt - System.nanoTime()));
    }
}
