package io.zcnet.ring.sys;

/**
 * Linux constants outside io_uring that zcnet passes to the kernel, named once: sockets
 * ({@code sys/socket.h}, {@code netinet/in.h}, {@code netinet/tcp.h}, asm-generic {@code socket.h},
 * {@code net/if.h}),
 * memory mapping ({@code sys/mman.h}), eventfd ({@code sys/eventfd.h}) and resource limits
 * ({@code sys/resource.h}). Values are those of x86_64 and aarch64 (asm-generic).
 */
public final class Linux {
    private Linux() {
    }

    // ---------------------------------------------------------------- sockets
    public static final int AF_INET = 2;
    public static final int AF_INET6 = 10;
    public static final int SOCK_STREAM = 1;
    public static final int SOCK_NONBLOCK = 0x800;
    public static final int SOCK_CLOEXEC = 0x80000;
    public static final int IPPROTO_TCP = 6;

    public static final int SOL_SOCKET = 1;
    public static final int SO_REUSEADDR = 2;
    public static final int SO_SNDBUF = 7;
    public static final int SO_RCVBUF = 8;
    public static final int SO_LINGER = 13;
    public static final int TCP_NODELAY = 1;
    /** {@code TCP_USER_TIMEOUT} ({@code linux/tcp.h}): milliseconds sent data may stay unacknowledged. */
    public static final int TCP_USER_TIMEOUT = 18;

    public static final int MSG_WAITALL = 0x100;
    public static final int MSG_NOSIGNAL = 0x4000;
    public static final int MSG_MORE = 0x8000;
    /** {@code UIO_MAXIOV}: the most iovecs one {@code sendmsg} takes. */
    public static final int UIO_MAXIOV = 1024;
    /** {@code IFNAMSIZ} ({@code net/if.h}): an interface name and its terminating NUL. */
    public static final int IFNAMSIZ = 16;

    // ---------------------------------------------------------------- mmap
    public static final int PROT_READ = 1;
    public static final int PROT_WRITE = 2;
    public static final int MAP_SHARED = 1;
    public static final int MAP_PRIVATE = 2;
    public static final int MAP_ANONYMOUS = 0x20;
    public static final int MAP_POPULATE = 0x8000;

    // ---------------------------------------------------------------- eventfd, rlimit
    public static final int EFD_NONBLOCK = 0x800;
    public static final int EFD_CLOEXEC = 0x80000;
    public static final int RLIMIT_MEMLOCK = 8;
    /** {@code RLIM_INFINITY}: all bits set. */
    public static final long RLIM_INFINITY = -1L;
}
