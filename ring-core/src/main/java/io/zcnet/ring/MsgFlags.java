package io.zcnet.ring;

import io.zcnet.ring.sys.Linux;

/**
 * The {@code msg_flags} a send or receive takes ({@code send(2)}, {@code recv(2)}), as an int so they
 * combine as the kernel's do. {@code MSG_NOSIGNAL} is always added to sends: a peer that closes never
 * raises {@code SIGPIPE} in a JVM. Flags the NIO engine could not honour are refused on both engines.
 */
public final class MsgFlags {
    /** No flags. */
    public static final int NONE = 0;
    /** {@code MSG_WAITALL}: all bytes or an error (or EOF on a receive); a short result breaks a link. */
    public static final int WAITALL = Linux.MSG_WAITALL;
    /** {@code MSG_MORE}: more data follows, the kernel may hold this back to fill a segment (a hint). */
    public static final int MORE = Linux.MSG_MORE;

    private static final int SEND = WAITALL | MORE;
    private static final int RECEIVE = WAITALL;

    private MsgFlags() {
    }

    static void checkSend(int msgFlags) {
        if ((msgFlags & ~SEND) != 0) {
            throw new IllegalArgumentException("send msg_flags may combine MsgFlags.WAITALL and MsgFlags.MORE only, got 0x"
                    + Integer.toHexString(msgFlags));
        }
    }

    static void checkReceive(int msgFlags) {
        if ((msgFlags & ~RECEIVE) != 0) {
            throw new IllegalArgumentException("receive msg_flags may be MsgFlags.WAITALL or NONE only, got 0x"
                    + Integer.toHexString(msgFlags));
        }
    }
}
