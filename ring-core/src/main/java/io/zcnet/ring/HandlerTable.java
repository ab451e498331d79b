package io.zcnet.ring;

import io.zcnet.ring.internal.UserData;

import java.util.Arrays;

/**
 * The index table completions are dispatched through: a handler id is a slot number, so finding the
 * handler for a {@code user_data} is one array load.
 *
 * <p>Each slot counts its operations in flight (prepared, final completion not yet dispatched). A slot
 * freed while some are in flight is <em>retired</em>, not reused: its late completions (a multishot's
 * last CQE, a {@code SEND_ZC} notification of a torn-down subflow) are dropped, and the slot returns to
 * the free list only when its count reaches zero. So a {@code user_data} can never name a handler that
 * registered after the operation was prepared, without spending {@code user_data} bits on a generation.
 * Owner-thread only.
 */
final class HandlerTable {
    private CompletionHandler[] slots = new CompletionHandler[64];
    private int[] inFlight = new int[64];
    private boolean[] retired = new boolean[64];
    private int[] freeSlots = new int[64];
    private int freeCount;
    private int used;

    int add(CompletionHandler handler) {
        if (handler == null) {
            throw new IllegalArgumentException("handler is null");
        }
        int id;
        if (freeCount > 0) {
            id = freeSlots[--freeCount];
        } else {
            if (used == UserData.MAX_HANDLERS) {
                throw new IllegalStateException("more than " + UserData.MAX_HANDLERS + " handlers (registered or"
                        + " retired with operations in flight)");
            }
            if (used == slots.length) {
                int grown = Math.min(slots.length * 2, UserData.MAX_HANDLERS);
                slots = Arrays.copyOf(slots, grown);
                inFlight = Arrays.copyOf(inFlight, grown);
                retired = Arrays.copyOf(retired, grown);
            }
            id = used++;
        }
        slots[id] = handler;
        return id;
    }

    /** Frees {@code id} now, or retires it until its operations in flight have completed. */
    void remove(int id) {
        if (!isRegistered(id)) {
            throw new IllegalArgumentException("no handler with id " + id);
        }
        slots[id] = null;
        if (inFlight[id] > 0) {
            retired[id] = true;
        } else {
            free(id);
        }
    }

    /** Whether {@code id} names a registered handler (not a free or retired slot). */
    boolean isRegistered(int id) {
        return id >= 0 && id < used && slots[id] != null;
    }

    /** The handler of {@code id}, or null when the slot is free or retired. */
    CompletionHandler get(int id) {
        return id < used ? slots[id] : null;
    }

    /** An operation of {@code id} was prepared. */
    void started(int id) {
        inFlight[id]++;
    }

    /** An operation of {@code id} had its final completion (or was dropped); a retired slot may free. */
    void finished(int id) {
        if (id >= used || inFlight[id] == 0) {
            return; // the engine's own completions and ids it never counted
        }
        if (--inFlight[id] == 0 && retired[id]) {
            retired[id] = false;
            free(id);
        }
    }

    int inFlight(int id) {
        if (id < 0 || id >= UserData.MAX_HANDLERS) {
            throw new IllegalArgumentException("handler id must be in [0, " + UserData.MAX_HANDLERS + "), got " + id);
        }
        return id < used ? inFlight[id] : 0;
    }

    /** Forgets every count (the loop closed: nothing is in flight any more) and frees retired slots. */
    void clearInFlight() {
        for (int id = 0; id < used; id++) {
            inFlight[id] = 0;
            if (retired[id]) {
                retired[id] = false;
                free(id);
            }
        }
    }

    private void free(int id) {
        if (freeCount == freeSlots.length) {
            freeSlots = Arrays.copyOf(freeSlots, freeSlots.length * 2);
        }
        freeSlots[freeCount++] = id;
    }
}
