package io.zcnet.ring.uring;

import io.zcnet.ring.CqeFlags;
import io.zcnet.ring.Errno;
import io.zcnet.ring.Op;
import io.zcnet.ring.internal.UserData;
import io.zcnet.ring.sys.Native;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * How an {@link UringEventLoop} closes: one cancel of everything in flight ({@code ASYNC_CANCEL
 * ANY|ALL}), reaps (dispatching the cancelled completions) until nothing is in the kernel and every
 * zero-copy notification is in, or until {@link #DEADLINE_NANOS} passes (then it reports on stderr what
 * is stuck); then it closes the sockets the user left open, the loop's buffer rings, the ring, the
 * eventfd (once no waker can write it) and the loop's native memory. When the deadline passed, the
 * buffer rings and the native memory are leaked on purpose, since the kernel may still write into them.
 *
 * <p>An operation a handler prepares while the drain dispatches is refused: never submitted (the
 * cancel-all has gone by, nothing would cancel it), it completes {@code -ECANCELED} from the drain, as
 * the kernel completes a request cancelled before it ran, in at most {@link #ROUNDS} rounds (the NIO
 * engine's bound too) so that a handler re-arming on every completion cannot hold the close up; the
 * rest are dropped. Owner-thread only.
 */
final class CloseDrain {
    /** How long {@link #close} waits for cancelled operations and zero-copy notifications. */
    static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /** Rounds of {@code -ECANCELED} completions for refused operations before the rest are dropped. */
    private static final int ROUNDS = 16;

    private final UringEventLoop loop;
    private final Native sys;
    private final Arena arena;
    private final Ring ring;
    private final OpenFds openFds;
    private final List<UringBufferRing> bufferRings;
    private final WakeupLatch wakeups;
    private final int eventFd;
    /** The user_data of refused operations, in the order handlers prepared them. */
    private long[] refused = new long[16];
    private int refusedCount;
    private boolean closing;
    private boolean closed;

    /** Takes over the loop's resources as they are when {@link #close} runs; it closes each of them. */
    CloseDrain(UringEventLoop loop, Native sys, Arena arena, Ring ring, OpenFds openFds,
            List<UringBufferRing> bufferRings, WakeupLatch wakeups, int eventFd) {
        this.loop = loop;
        this.sys = sys;
        this.arena = arena;
        this.ring = ring;
        this.openFds = openFds;
        this.bufferRings = bufferRings;
        this.wakeups = wakeups;
        this.eventFd = eventFd;
    }

    /** From the start of {@link #close} on: operations are refused, the wake-up read is not re-armed. */
    boolean closing() {
        return closing;
    }

    boolean closed() {
        return closed;
    }

    /** Operations refused and not yet completed. */
    int refused() {
        return refusedCount;
    }

    /** Records an operation prepared while closing, to complete it {@code -ECANCELED} unsubmitted. */
    void refuse(long userData) {
        if (refusedCount == refused.length) {
            refused = Arrays.copyOf(refused, refusedCount * 2);
        }
        refused[refusedCount++] = userData;
    }

    /**
     * Drains, unless the loop was never used, then closes everything; called once.
     *
     * @param neverUsed the ring was never enabled, so nothing ever reached the kernel
     */
    void close(boolean neverUsed) {
        closing = true;
        // Unless every operation provably left the kernel, the memory it may still write is leaked: the
        // kernel tears a ring down asynchronously after its fd is closed.
        boolean drained = neverUsed;
        try {
            if (!neverUsed) {
                drained = drain();
            }
        } finally {
            closed = true;
            loop.afterClose(drained);
            openFds.closeAll(sys);
            for (UringBufferRing open : new ArrayList<>(bufferRings)) {
                closeBufferRing(open, drained);
            }
            ring.close();
            wakeups.shutOut();
            sys.close(eventFd);
            if (drained) {
                arena.close(); // else leaked: the wake-up read may still write into it
            }
        }
    }

    private static void closeBufferRing(UringBufferRing open, boolean drained) {
        if (!drained) {
            open.leak();
            return;
        }
        try {
            open.close();
        } catch (IllegalStateException e) { // the rest of close() must still run; the ring leaked itself
            System.err.println("zcnet: " + e.getMessage());
        }
    }

    /**
     * One cancel-all, then reaps until nothing is in the kernel, completing refused operations in
     * rounds in between.
     *
     * @return true if everything left the kernel, false if the deadline passed first
     */
    private boolean drain() {
        loop.cancelAll();
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        int rounds = 0;
        while (true) {
            if (refusedCount > 0) {
                if (rounds++ < ROUNDS) {
                    completeRefused();
                    continue;
                }
                System.err.println("zcnet: io_uring event loop dropped " + refusedCount
                        + " operations that handlers kept preparing during close");
                for (int i = 0; i < refusedCount; i++) {
                    loop.drop(refused[i]);
                }
                refusedCount = 0;
            }
            if (loop.nothingInKernel()) {
                return true;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                System.err.println("zcnet: io_uring event loop closed with operations still in the kernel: " + loop);
                return false;
            }
            loop.waitAndReap(Math.min(left, POLL_NANOS));
        }
    }

    /**
     * Dispatches {@code -ECANCELED} for the operations refused so far (a SEND_ZC also gets its
     * notification); those refused meanwhile wait for the next round.
     */
    private void completeRefused() {
        int count = refusedCount;
        int done = 0;
        try {
            while (done < count) {
                long userData = refused[done++];
                loop.forget(userData);
                int op = UserData.op(userData);
                if (op == Op.SEND_ZC || op == Op.SENDMSG_ZC) {
                    loop.complete(userData, -Errno.ECANCELED, CqeFlags.MORE);
                    loop.complete(userData, 0, CqeFlags.NOTIF);
                } else {
                    loop.complete(userData, -Errno.ECANCELED, 0);
                }
            }
        } finally {
            refusedCount -= done;
            System.arraycopy(refused, done, refused, 0, refusedCount);
            if (done > 0) {
                loop.writableCounters().completed(done);
            }
        }
    }
}
