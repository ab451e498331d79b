package io.zcnet.ring;

/**
 * The operation kinds an {@link EventLoop} reports to its {@link CompletionHandler}s. They are zcnet's
 * own numbers (carried in {@code user_data}), not kernel opcodes, so both engines share them.
 */
public final class Op {
    public static final int NOP = 1;
    public static final int ACCEPT = 2;
    public static final int CONNECT = 3;
    public static final int SEND = 4;
    public static final int SEND_ZC = 5;
    public static final int RECV = 6;
    public static final int RECV_MULTISHOT = 7;
    public static final int SHUTDOWN = 8;
    public static final int CLOSE = 9;
    public static final int TIMEOUT = 10;
    public static final int LINK_TIMEOUT = 11;
    public static final int CANCEL = 12;
    /** Internal: the loop's own wake-up read. Never reaches a user handler. */
    public static final int WAKEUP = 13;
    public static final int SENDMSG = 14;
    public static final int SENDMSG_ZC = 15;
    /** A single receive into a buffer the engine picks from a {@link BufferRing}. */
    public static final int RECV_SELECT = 16;
    /** One more than the largest op number: the size of a per-op table. */
    public static final int COUNT = 17;

    private static final String[] NAMES = {
        "?", "NOP", "ACCEPT", "CONNECT", "SEND", "SEND_ZC", "RECV", "RECV_MULTISHOT",
        "SHUTDOWN", "CLOSE", "TIMEOUT", "LINK_TIMEOUT", "CANCEL", "WAKEUP", "SENDMSG", "SENDMSG_ZC",
        "RECV_SELECT"
    };

    private Op() {
    }

    public static String name(int op) {
        return op > 0 && op < NAMES.length ? NAMES[op] : "OP(" + op + ")";
    }
}
