package io.zcnet.ring;

/**
 * Linux errno values (asm-generic/errno-base.h, asm-generic/errno.h) that completions carry negated,
 * named once for both engines.
 */
public final class Errno {
    /** {@code EPERM}: operation not permitted (io_uring refused by seccomp or {@code kernel.io_uring_disabled}). */
    public static final int EPERM = 1;
    /** {@code ENOENT}: no such entry: a cancel found no operation with that {@code user_data}. */
    public static final int ENOENT = 2;
    /** {@code EINTR}: interrupted system call. */
    public static final int EINTR = 4;
    /** {@code EIO}: input/output error. */
    public static final int EIO = 5;
    /** {@code EBADF}: bad file descriptor: the socket handle is not open. */
    public static final int EBADF = 9;
    /** {@code EAGAIN}: try again: nothing to do without blocking. */
    public static final int EAGAIN = 11;
    /** {@code ENOMEM}: out of memory, or over {@code RLIMIT_MEMLOCK} for io_uring's rings. */
    public static final int ENOMEM = 12;
    /** {@code EACCES}: permission denied. */
    public static final int EACCES = 13;
    /** {@code EFAULT}: bad address handed to the kernel. */
    public static final int EFAULT = 14;
    /** {@code EBUSY}: device or resource busy. */
    public static final int EBUSY = 16;
    /** {@code EEXIST}: already exists. */
    public static final int EEXIST = 17;
    /** {@code ENODEV}: no such device (an unknown network interface). */
    public static final int ENODEV = 19;
    /** {@code EINVAL}: invalid argument. */
    public static final int EINVAL = 22;
    /** {@code EMFILE}: the process has too many open files. */
    public static final int EMFILE = 24;
    /** {@code ENOSPC}: no space left (a kernel table is full). */
    public static final int ENOSPC = 28;
    /** {@code EPIPE}: broken pipe: the peer closed and a send found the connection gone. */
    public static final int EPIPE = 32;
    /** {@code ERANGE}: out of range. */
    public static final int ERANGE = 34;
    /** {@code ENOSYS}: the kernel lacks the system call (no io_uring). */
    public static final int ENOSYS = 38;
    /** {@code ETIME}: A timeout expired: the result of {@link EventLoop#timeout} and {@link EventLoop#linkTimeout}. */
    public static final int ETIME = 62;
    /** {@code EOPNOTSUPP}: operation not supported (e.g. zcrx on a device without it). */
    public static final int EOPNOTSUPP = 95;
    /** {@code EAFNOSUPPORT}: address family not supported. */
    public static final int EAFNOSUPPORT = 97;
    /** {@code EADDRINUSE}: address already in use. */
    public static final int EADDRINUSE = 98;
    /** {@code EADDRNOTAVAIL}: the address is not one of this host's. */
    public static final int EADDRNOTAVAIL = 99;
    /** {@code ENETUNREACH}: network unreachable. */
    public static final int ENETUNREACH = 101;
    /** {@code ECONNABORTED}: connection aborted before it was accepted. */
    public static final int ECONNABORTED = 103;
    /** {@code ECONNRESET}: connection reset by the peer. */
    public static final int ECONNRESET = 104;
    /** {@code ENOBUFS}: no buffer: a provided-buffer ring ran dry (the data stays in the socket). */
    public static final int ENOBUFS = 105;
    /** {@code EISCONN}: the socket is already connected. */
    public static final int EISCONN = 106;
    /** {@code ENOTCONN}: the socket is not connected. */
    public static final int ENOTCONN = 107;
    /** {@code ETIMEDOUT}: connection timed out (connect, or {@code TCP_USER_TIMEOUT}). */
    public static final int ETIMEDOUT = 110;
    /** {@code ECONNREFUSED}: connection refused: nothing listens there. */
    public static final int ECONNREFUSED = 111;
    /** {@code EHOSTUNREACH}: no route to host. */
    public static final int EHOSTUNREACH = 113;
    /** {@code EALREADY}: A cancel found its target already completing. */
    public static final int EALREADY = 114;
    /** {@code EINPROGRESS}: operation in progress. */
    public static final int EINPROGRESS = 115;
    /** {@code ECANCELED}: the operation was cancelled (by {@link EventLoop#cancel}, a link timeout or a close). */
    public static final int ECANCELED = 125;

    private Errno() {
    }

    /**
     * {@return the symbolic name of an errno value, negative or positive} ({@code -111} gives "ECONNREFUSED";
     * a value not named here gives its number.)
     *
     * @param errno an errno value, or a completion's negative result
     */
    public static String name(int errno) {
        return switch (Math.abs(errno)) {
            case EPERM -> "EPERM";
            case ENOENT -> "ENOENT";
            case EINTR -> "EINTR";
            case EIO -> "EIO";
            case EBADF -> "EBADF";
            case EAGAIN -> "EAGAIN";
            case ENOMEM -> "ENOMEM";
            case EACCES -> "EACCES";
            case EFAULT -> "EFAULT";
            case EBUSY -> "EBUSY";
            case EEXIST -> "EEXIST";
            case ENODEV -> "ENODEV";
            case EINVAL -> "EINVAL";
            case EMFILE -> "EMFILE";
            case ENOSPC -> "ENOSPC";
            case EPIPE -> "EPIPE";
            case ERANGE -> "ERANGE";
            case ENOSYS -> "ENOSYS";
            case ETIME -> "ETIME";
            case EOPNOTSUPP -> "EOPNOTSUPP";
            case EAFNOSUPPORT -> "EAFNOSUPPORT";
            case EADDRINUSE -> "EADDRINUSE";
            case EADDRNOTAVAIL -> "EADDRNOTAVAIL";
            case ENETUNREACH -> "ENETUNREACH";
            case ECONNABORTED -> "ECONNABORTED";
            case ECONNRESET -> "ECONNRESET";
            case ENOBUFS -> "ENOBUFS";
            case EISCONN -> "EISCONN";
            case ENOTCONN -> "ENOTCONN";
            case ETIMEDOUT -> "ETIMEDOUT";
            case ECONNREFUSED -> "ECONNREFUSED";
            case EHOSTUNREACH -> "EHOSTUNREACH";
            case EALREADY -> "EALREADY";
            case EINPROGRESS -> "EINPROGRESS";
            case ECANCELED -> "ECANCELED";
            default -> "errno " + Math.abs(errno);
        };
    }
}
