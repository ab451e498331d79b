package io.zcnet.ring;

/**
 * Completion flags as the kernel defines them for {@code io_uring_cqe.flags}
 * ({@code include/uapi/linux/io_uring.h}, {@code IORING_CQE_F_*}). The NIO engine sets the same bits
 * with the same meaning.
 */
public final class CqeFlags {
    /** {@code IORING_CQE_F_BUFFER}: the upper 16 bits name the provided buffer that holds the data. */
    public static final int BUFFER = 1;
    /** {@code IORING_CQE_F_MORE}: the operation stays armed; more completions will follow. */
    public static final int MORE = 1 << 1;
    /** {@code IORING_CQE_F_SOCK_NONEMPTY}: the socket had more data queued after this receive. */
    public static final int SOCK_NONEMPTY = 1 << 2;
    /** {@code IORING_CQE_F_NOTIF}: zero-copy send notification: the buffer is free again. */
    public static final int NOTIF = 1 << 3;
    /** {@code IORING_CQE_F_BUF_MORE}: an incremental buffer will be filled further. */
    public static final int BUF_MORE = 1 << 4;
    /** {@code IORING_CQE_BUFFER_SHIFT}. */
    public static final int BUFFER_SHIFT = 16;
    /**
     * {@code IORING_NOTIF_USAGE_ZC_COPIED}: found in the {@code result} of a {@link #NOTIF} completion
     * when the kernel copied the data instead of sending the pages.
     */
    public static final int ZC_COPIED = 1 << 31;

    private CqeFlags() {
    }

    /**
     * {@return whether {@link #MORE} is set: the operation stays armed}
     *
     * @param flags a completion's flags
     */
    public static boolean hasMore(int flags) {
        return (flags & MORE) != 0;
    }

    /**
     * {@return whether {@link #BUFFER} is set: the data is in a provided buffer}
     *
     * @param flags a completion's flags
     */
    public static boolean hasBuffer(int flags) {
        return (flags & BUFFER) != 0;
    }

    /**
     * {@return whether {@link #NOTIF} is set: a zero-copy send's buffer is free again}
     *
     * @param flags a completion's flags
     */
    public static boolean isNotification(int flags) {
        return (flags & NOTIF) != 0;
    }

    /**
     * {@return the provided-buffer id of a completion that has {@link #BUFFER}}
     *
     * @param flags a completion's flags
     */
    public static int bufferId(int flags) {
        return flags >>> BUFFER_SHIFT;
    }
}
