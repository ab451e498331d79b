package io.zcnet.ring.uring;

import io.zcnet.buffer.MemoryRegion;
import io.zcnet.ring.Errno;
import io.zcnet.ring.sys.ErrnoException;
import io.zcnet.ring.sys.IoUring;
import io.zcnet.ring.sys.Iovec;
import io.zcnet.ring.sys.Linux;
import io.zcnet.ring.sys.Native;
import io.zcnet.ring.sys.SockAddr;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The synchronous system calls of an {@link UringEventLoop}: sockets ({@code socket(2)},
 * {@code bind(2)}, {@code listen(2)}, {@code getsockname(2)}, {@code getpeername(2)}, {@code setsockopt(2)})
 * and the fixed-buffer table ({@code IORING_REGISTER_BUFFERS}). Arguments are checked by the loop;
 * failures are {@link ErrnoException}s naming the call. The sockets it opens are tracked in the loop's
 * {@link OpenFds}, so the loop's close closes those left open. Owner-thread only: the arguments pass
 * through one scratch segment.
 */
final class ControlPath {
    /** Scratch: a sockaddr_in6 at 0, its length word, an int option value. */
    private static final long CONTROL_SIZE = 64;
    private static final long CONTROL_LEN = 40;
    private static final long CONTROL_OPT = 48;

    private final Native sys;
    private final int ringFd;
    private final OpenFds openFds;
    private final MemorySegment control;

    /** Allocates its scratch in {@code arena}, which must outlive it. */
    ControlPath(Native sys, Arena arena, int ringFd, OpenFds openFds) {
        this.sys = sys;
        this.ringFd = ringFd;
        this.openFds = openFds;
        this.control = arena.allocate(CONTROL_SIZE, 8);
    }

    /** A TCP socket bound to {@code address} with {@code SO_REUSEADDR}, listening; tracked. */
    int listen(InetSocketAddress address, int backlog) throws IOException {
        int fd = newSocket(address);
        try {
            setIntOption(fd, Linux.SOL_SOCKET, Linux.SO_REUSEADDR, 1, "SO_REUSEADDR");
            bind(fd, address);
            ErrnoException.check("listen", sys.listen(fd, backlog));
            openFds.add(fd);
            return fd;
        } catch (IOException | RuntimeException e) {
            sys.close(fd);
            throw e;
        }
    }

    /** An unconnected TCP socket of {@code address}'s family; tracked. */
    int socket(InetSocketAddress address) throws IOException {
        int fd = newSocket(address);
        openFds.add(fd);
        return fd;
    }

    private int newSocket(InetSocketAddress address) throws ErrnoException {
        int family = SockAddr.family(address);
        int fd = sys.socket(family, Linux.SOCK_STREAM | Linux.SOCK_CLOEXEC, Linux.IPPROTO_TCP);
        if (fd < 0) {
            throw new ErrnoException("socket", fd, family == Linux.AF_INET6 ? "AF_INET6" : "AF_INET");
        }
        return fd;
    }

    /** {@code bind(2)}; the loop has checked that {@code socket} may still be bound. */
    void bind(int socket, InetSocketAddress local) throws ErrnoException {
        int length = SockAddr.write(control, 0, local);
        int r = sys.bind(socket, control, length);
        if (r < 0) {
            throw new ErrnoException("bind", r, local.toString());
        }
    }

    /** The bound address; an unbound socket has its family's wildcard address and port 0. */
    InetSocketAddress localAddress(int socket) throws IOException {
        control.set(JAVA_INT, CONTROL_LEN, (int) SockAddr.MAX_SIZE);
        ErrnoException.check("getsockname", sys.getsockname(socket, control, control.asSlice(CONTROL_LEN, 4)));
        return SockAddr.read(control, 0);
    }

    /** The connected peer, or null: {@code getpeername(2)} says ENOTCONN, also while a connect is in progress. */
    InetSocketAddress peerAddress(int socket) throws IOException {
        control.set(JAVA_INT, CONTROL_LEN, (int) SockAddr.MAX_SIZE);
        int r = sys.getpeername(socket, control, control.asSlice(CONTROL_LEN, 4));
        if (r == -Errno.ENOTCONN) {
            return null;
        }
        ErrnoException.check("getpeername", r);
        return SockAddr.read(control, 0);
    }

    void setTcpNoDelay(int socket, boolean on) throws IOException {
        setIntOption(socket, Linux.IPPROTO_TCP, Linux.TCP_NODELAY, on ? 1 : 0, "TCP_NODELAY");
    }

    void setUserTimeout(int socket, int millis) throws IOException {
        setIntOption(socket, Linux.IPPROTO_TCP, Linux.TCP_USER_TIMEOUT, millis, "TCP_USER_TIMEOUT");
    }

    void setResetOnClose(int socket) throws IOException {
        // struct linger: int l_onoff, then int l_linger (seconds)
        control.set(JAVA_INT, CONTROL_OPT, 1);
        control.set(JAVA_INT, CONTROL_OPT + 4, 0);
        int r = sys.setsockopt(socket, Linux.SOL_SOCKET, Linux.SO_LINGER, control.asSlice(CONTROL_OPT, 8), 8);
        if (r < 0) {
            throw new ErrnoException("setsockopt SO_LINGER", r, null);
        }
    }

    /** A size of 0 leaves that buffer alone. */
    void setBufferSizes(int socket, int sendBytes, int receiveBytes) throws IOException {
        if (sendBytes > 0) {
            setIntOption(socket, Linux.SOL_SOCKET, Linux.SO_SNDBUF, sendBytes, "SO_SNDBUF");
        }
        if (receiveBytes > 0) {
            setIntOption(socket, Linux.SOL_SOCKET, Linux.SO_RCVBUF, receiveBytes, "SO_RCVBUF");
        }
    }

    private void setIntOption(int fd, int level, int name, int value, String what) throws ErrnoException {
        control.set(JAVA_INT, CONTROL_OPT, value);
        int r = sys.setsockopt(fd, level, name, control.asSlice(CONTROL_OPT, 4), 4);
        if (r < 0) {
            throw new ErrnoException("setsockopt " + what, r, null);
        }
    }

    /**
     * Makes {@code all} the ring's fixed-buffer table ({@code IORING_REGISTER_BUFFERS}); its first
     * {@code kept} entries are the table as it was. The kernel's table cannot grow in place, so it is
     * replaced whole: requests in flight hold references to the old entries, which keeps their pages
     * pinned until they complete. Should the new table be refused, the old one is put back.
     */
    void installFixedBuffers(List<MemoryRegion> all, int kept) throws IOException {
        if (kept > 0) {
            ErrnoException.check("io_uring_register(UNREGISTER_BUFFERS)",
                    sys.ioUringRegister(ringFd, IoUring.UNREGISTER_BUFFERS, MemorySegment.NULL, 0));
        }
        int r = registerTable(all);
        if (r < 0) {
            if (kept > 0) {
                registerTable(all.subList(0, kept)); // the old table fitted before
            }
            long bytes = 0;
            for (MemoryRegion region : all) {
                bytes += region.segment().byteSize();
            }
            String detail = r == -Errno.ENOMEM
                    ? bytes + " bytes exceed the locked-memory limit RLIMIT_MEMLOCK of "
                            + Uring.formatLimit(Uring.memlockLimit()) + " (raise ulimit -l or grant CAP_IPC_LOCK)"
                    : all.size() + " regions, " + bytes + " bytes";
            throw new ErrnoException("io_uring_register(BUFFERS)", r, detail);
        }
    }

    private int registerTable(List<MemoryRegion> regions) {
        try (Arena scratch = Arena.ofConfined()) {
            MemorySegment iovecs = scratch.allocate(Iovec.LAYOUT, regions.size());
            for (int i = 0; i < regions.size(); i++) {
                MemorySegment segment = regions.get(i).segment();
                iovecs.set(JAVA_LONG, i * Iovec.SIZE + Iovec.IOV_BASE, segment.address());
                iovecs.set(JAVA_LONG, i * Iovec.SIZE + Iovec.IOV_LEN, segment.byteSize());
            }
            return sys.ioUringRegister(ringFd, IoUring.REGISTER_BUFFERS, iovecs, regions.size());
        }
    }
}
