package io.zcnet.ring;

import java.util.Arrays;

/**
 * The index table completions are dispatched through: a handler id is a slot number, so finding the
 * handler for a {@code user_data} is one array load. Freed slots are reused through a free list.
 * Owner-thread only.
 */
final class HandlerTable {
    private CompletionHandler[] slots = new CompletionHandler[64];
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
                throw new IllegalStateException("more than " + UserData.MAX_HANDLERS + " handlers");
            }
            if (used == slots.length) {
                slots = Arrays.copyOf(slots, Math.min(slots.length * 2, UserData.MAX_HANDLERS));
            }
            id = used++;
        }
        slots[id] = handler;
        return id;
    }

    void remove(int id) {
        if (id < 0 || id >= used || slots[id] == null) {
            throw new IllegalArgumentException("no handler with id " + id);
        }
        slots[id] = null;
        if (freeCount == freeSlots.length) {
            freeSlots = Arrays.copyOf(freeSlots, freeSlots.length * 2);
        }
        freeSlots[freeCount++] = id;
    }

    CompletionHandler get(int id) {
        return id < used ? slots[id] : null;
    }
}
