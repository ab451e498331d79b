package io.zcnet.qp;

import io.zcnet.framing.Msn;
import java.util.Arrays;

/**
 * Keeps every copy of a frame that may still reach the peer at most half the MSN space behind the peer's window
 * start, where the receiver drops it as an old copy (wire-format.md §7); further behind, it would be refused or
 * taken for a new message. Only two kinds of copy can lag that far, since a message is acknowledged only once
 * each of its segments was read from some subflow:
 * <ul>
 *   <li>a resend on a live subflow, queued behind that subflow's earlier frames, whose original arrived first;
 *   <li>whatever a failed subflow still carried when it failed, whose resends arrived first.
 * </ul>
 * So the claim of new MSNs stops {@link #REACH} past the oldest such copy until that copy is known gone: a live
 * subflow's resends once the peer acknowledges a message whose only copy left on that subflow after them (to
 * complete it, the peer read the subflow past them); a failed subflow's frames a grace period after the subflow
 * was reset (closed abortively, it sends nothing more, and what was on its way arrives within a round trip).
 * MSNs here count from the queue pair's start, unwrapped. Loop thread only.
 */
final class ResendFence {

    /** How far past the oldest copy that may still arrive the claimed MSNs may reach. */
    static final long REACH = Msn.MODULUS / 2;

    private static final long NONE = -1;

    /** Per subflow index: the oldest MSN among its resends not yet known read, or NONE. */
    private final long[] floor;
    /** Per subflow index with a floor: a message sent on it after its last resend, whose acknowledgement lifts the floor; or NONE. */
    private final long[] proof;
    /** Subflows with a floor. */
    private int fenced;
    /** The oldest MSN that failed subflows may still deliver, or NONE. */
    private long goneFloor = NONE;
    /** When ({@link System#nanoTime}) what the failed subflows carried is taken as gone. */
    private long goneUntil;

    ResendFence(int subflows) {
        floor = new long[subflows];
        proof = new long[subflows];
        Arrays.fill(floor, NONE);
        Arrays.fill(proof, NONE);
    }

    /** A frame of the message {@code msn} (or of one after it) was resent on {@code subflow}. */
    void resent(int subflow, long msn) {
        if (floor[subflow] == NONE) {
            fenced++;
            floor[subflow] = msn;
        } else {
            floor[subflow] = Math.min(floor[subflow], msn);
        }
        proof[subflow] = NONE; // a proof must have left after every resend
    }

    /** A frame whose only copy carries message {@code msn} (or one before it) left on {@code subflow}. */
    void sentFresh(int subflow, long msn) {
        if (fenced != 0 && floor[subflow] != NONE && proof[subflow] == NONE) {
            proof[subflow] = msn;
        }
    }

    /**
     * {@code subflow} failed and was reset, with the messages from {@code acknowledged} on unacknowledged: what it
     * still carried counts as able to arrive for {@code graceNanos} more.
     */
    void failed(int subflow, long acknowledged, long nowNanos, long graceNanos) {
        long oldest = acknowledged;
        if (floor[subflow] != NONE) {
            oldest = Math.min(oldest, floor[subflow]);
            floor[subflow] = NONE;
            proof[subflow] = NONE;
            fenced--;
        }
        long until = nowNanos + graceNanos;
        if (goneFloor == NONE) {
            goneFloor = oldest;
            goneUntil = until;
        } else {
            goneFloor = Math.min(goneFloor, oldest);
            goneUntil = until - goneUntil > 0 ? until : goneUntil;
        }
    }

    /**
     * A live subflow whose resends still wait for their proof once the claims, at {@code claimed}, have come
     * halfway to the limit they set: the next frame should leave on it, or the fence would stop the claims
     * for good should the scheduler prefer the others. -1 when there is none.
     */
    int proofWanted(long claimed) {
        if (fenced == 0) {
            return -1;
        }
        for (int i = 0; i < floor.length; i++) {
            if (floor[i] != NONE && proof[i] == NONE && claimed - floor[i] >= REACH / 2) {
                return i;
            }
        }
        return -1;
    }

    /** The peer acknowledged every message below {@code acknowledged}: lifts the floors whose proof it covers. */
    void acknowledged(long acknowledged) {
        if (fenced == 0) {
            return;
        }
        for (int i = 0; i < floor.length; i++) {
            if (floor[i] != NONE && proof[i] != NONE && proof[i] < acknowledged) {
                floor[i] = NONE;
                proof[i] = NONE;
                fenced--;
            }
        }
    }

    /**
     * Whether claiming MSNs up to (not including) {@code claimEnd} keeps every copy that may still arrive within
     * {@link #REACH}; forgets failed subflows' copies whose grace ended by {@code nowNanos}.
     */
    boolean allows(long claimEnd, long nowNanos) {
        if (goneFloor != NONE && nowNanos - goneUntil >= 0) {
            goneFloor = NONE;
        }
        return claimEnd <= limit();
    }

    /** The end below which MSNs may be claimed now ({@link Long#MAX_VALUE} with nothing fenced). */
    long limit() {
        long oldest = goneFloor == NONE ? Long.MAX_VALUE : goneFloor;
        if (fenced != 0) {
            for (long f : floor) {
                if (f != NONE) {
                    oldest = Math.min(oldest, f);
                }
            }
        }
        return oldest == Long.MAX_VALUE ? Long.MAX_VALUE : oldest + REACH;
    }

    /** Whether the limit is held by a failed subflow's copies, which only time lifts, until {@link #goneUntil}. */
    boolean heldByFailedSubflows() {
        return goneFloor != NONE && goneFloor + REACH == limit();
    }

    long goneUntil() {
        return goneUntil;
    }
}
