package io.zcnet.ring.internal;

/**
 * Packs what a completion must be routed by into the 64-bit {@code user_data} of an SQE.
 *
 * <pre>
 *  63                         40 39        32 31                              0
 * +-----------------------------+------------+---------------------------------+
 * |      handler id (24 bits)   |  op (8)    |          tag (32 bits)          |
 * +-----------------------------+------------+---------------------------------+
 * </pre>
 *
 * The handler id indexes the loop's handler table, so dispatch is an array load: no map, no boxing.
 */
public final class UserData {
    public static final int MAX_HANDLERS = 1 << 24;
    /** The op number of the loop's own wake-up read: between the public {@code Op} numbers, never reported. */
    public static final int WAKEUP_OP = 13;

    private UserData() {
    }

    public static long pack(int handler, int op, int tag) {
        return ((long) handler << 40) | ((long) (op & 0xFF) << 32) | (tag & 0xFFFF_FFFFL);
    }

    public static int handler(long userData) {
        return (int) (userData >>> 40);
    }

    public static int op(long userData) {
        return (int) (userData >>> 32) & 0xFF;
    }

    public static int tag(long userData) {
        return (int) userData;
    }
}
