package io.zcnet.ring.uring;

/**
 * Which buffer ring each armed multishot receive takes its buffers from, keyed by the receive's
 * {@code user_data}: a CQE names its buffer id ({@code IORING_CQE_F_BUFFER}) but not the group, and the
 * loop must mark the buffer as held by the application in the right ring. An open-addressing table
 * (linear probing, deletion by backward shift) so that the per-completion lookup allocates nothing;
 * one entry counts the receives armed under the same {@code user_data}. A multishot receive's
 * {@code user_data} is never 0 (its op byte is not), so 0 marks a free slot. Owner-thread only.
 */
final class ReceiveRings {
    private long[] keys = new long[16];
    private UringBufferRing[] rings = new UringBufferRing[16];
    private int[] armed = new int[16];
    private int size;

    /** The ring armed under {@code userData}, or null. */
    UringBufferRing get(long userData) {
        int i = find(userData);
        return i < 0 ? null : rings[i];
    }

    /** One more receive armed under {@code userData}; the caller has checked that the ring is the same. */
    void arm(long userData, UringBufferRing ring) {
        int i = find(userData);
        if (i >= 0) {
            armed[i]++;
            return;
        }
        if (2 * (size + 1) > keys.length) {
            grow();
        }
        insert(userData, ring, 1);
        size++;
    }

    /** A receive armed under {@code userData} posted its last completion. */
    void disarm(long userData) {
        int i = find(userData);
        if (i >= 0 && --armed[i] == 0) {
            delete(i);
            size--;
        }
    }

    private static int hash(long key) {
        return (int) ((key * 0x9E37_79B9_7F4A_7C15L) >>> 32);
    }

    private int find(long key) {
        int mask = keys.length - 1;
        for (int i = hash(key) & mask; keys[i] != 0; i = (i + 1) & mask) {
            if (keys[i] == key) {
                return i;
            }
        }
        return -1;
    }

    private void insert(long key, UringBufferRing ring, int count) {
        int mask = keys.length - 1;
        int i = hash(key) & mask;
        while (keys[i] != 0) {
            i = (i + 1) & mask;
        }
        keys[i] = key;
        rings[i] = ring;
        armed[i] = count;
    }

    private void grow() {
        long[] oldKeys = keys;
        UringBufferRing[] oldRings = rings;
        int[] oldArmed = armed;
        keys = new long[oldKeys.length * 2];
        rings = new UringBufferRing[oldKeys.length * 2];
        armed = new int[oldKeys.length * 2];
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldKeys[i] != 0) {
                insert(oldKeys[i], oldRings[i], oldArmed[i]);
            }
        }
    }

    /** Empties slot {@code hole} and moves later entries of its probe run back so every key stays findable. */
    private void delete(int hole) {
        int mask = keys.length - 1;
        for (int j = (hole + 1) & mask; keys[j] != 0; j = (j + 1) & mask) {
            int home = hash(keys[j]) & mask;
            // The entry at j may fill the hole unless its home lies cyclically in (hole, j].
            boolean homeBetween = hole <= j ? hole < home && home <= j : hole < home || home <= j;
            if (!homeBetween) {
                keys[hole] = keys[j];
                rings[hole] = rings[j];
                armed[hole] = armed[j];
                hole = j;
            }
        }
        keys[hole] = 0;
        rings[hole] = null;
        armed[hole] = 0;
    }
}
