package com.example.gettingstarted;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Where a peer may write: the remote key of a registered region and an offset in it, 16 bytes as the
 * receiver SENDs them to the writer (verbs applications trade keys the same way, over the connection).
 */
final class WriteTarget {
    static final int BYTES = 16;
    private static final long RKEY_AT = 0;
    private static final long OFFSET_AT = 8;

    private WriteTarget() {
    }

    static void put(MemorySegment into, int remoteKey, long offset) {
        into.set(ValueLayout.JAVA_INT, RKEY_AT, remoteKey);
        into.set(ValueLayout.JAVA_LONG, OFFSET_AT, offset);
    }

    static int remoteKey(MemorySegment from) {
        return from.get(ValueLayout.JAVA_INT, RKEY_AT);
    }

    static long offset(MemorySegment from) {
        return from.get(ValueLayout.JAVA_LONG, OFFSET_AT);
    }
}
