package io.zcnet.ring;

/**
 * The operation kinds an {@link EventLoop} reports to its {@link CompletionHandler}s. They are zcnet's
 * own numbers (carried in {@code user_data}), not kernel opcodes, so both engines share them.
 */
public final class Op {
    /** {@link EventLoop#nop}. */
    public static final int NOP = 1;
    /** {@link EventLoop#accept}. */
    public static final int ACCEPT = 2;
    /** {@link EventLoop#connect}. */
    public static final int CONNECT = 3;
    /** {@link EventLoop#send}. */
    public static final int SEND = 4;
    /** {@link EventLoop#sendZeroCopy}. */
    public static final int SEND_ZC = 5;
    /** {@link EventLoop#recv}. */
    public static final int RECV = 6;
    /** {@link EventLoop#recvMultishot}. */
    public static final int RECV_MULTISHOT = 7;
    /** {@link EventLoop#shutdown}. */
    public static final int SHUTDOWN = 8;
    /** {@link EventLoop#close(int, int, int)}. */
    public static final int CLOSE = 9;
    /** {@link EventLoop#timeout}. */
    public static final int TIMEOUT = 10;
    /** {@link EventLoop#linkTimeout}. */
    public static final int LINK_TIMEOUT = 11;
    /** {@link EventLoop#cancel}. */
    public static final int CANCEL = 12;
    // 13 is the loop's own wake-up read (UserData.WAKEUP_OP), which never reaches a user handler.
    /** {@link EventLoop#sendMessage}. */
    public static final int SENDMSG = 14;
    /** {@link EventLoop#sendMessageZeroCopy}. */
    public static final int SENDMSG_ZC = 15;
    /** {@link EventLoop#recvSelect}: a single receive into a buffer the engine picks from a {@link BufferRing}. */
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

    /**
     * {@return the constant's name, or {@code OP(n)} for a number that names no operation}
     *
     * @param op an op number, as a {@link CompletionHandler} receives it
     */
    public static String name(int op) {
        return op > 0 && op < NAMES.length ? NAMES[op] : "OP(" + op + ")";
    }
}
