package io.zcnet.ring.sys;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The C library and system calls zcnet needs, bound once through the FFM linker: the only place in
 * zcnet that links native code or widens a raw address into a segment.
 *
 * <p>Every call returns the kernel's convention: a non-negative result, or {@code -errno}
 * ({@link io.zcnet.ring.Errno}) captured with {@code Linker.Option.captureCallState("errno")}, so
 * failures cost neither an allocation nor an exception. The errno is captured into a small segment
 * owned by this instance.
 *
 * <p><b>Thread-safety:</b> an instance belongs to one thread at a time (its errno buffer is not shared);
 * each event loop owns one. {@link #signalEventFd} is the only call any thread may make.
 *
 * <p>Follows {@code syscall(2)}, {@code io_uring_setup(2)}, {@code io_uring_enter(2)},
 * {@code io_uring_register(2)}, {@code mmap(2)}, {@code socket(2)}, {@code bind(2)}, {@code setsockopt(2)},
 * {@code getpeername(2)}, {@code eventfd(2)}, {@code getrlimit(2)}, {@code if_nametoindex(3)},
 * {@code getpagesize(2)}, {@code sched_getcpu(3)}. Syscall numbers are those of x86_64 and of the generic
 * table (aarch64), which agree for io_uring.
 */
public final class Native {
    /** {@code __NR_io_uring_setup}. */
    public static final int SYS_IO_URING_SETUP = 425;
    /** {@code __NR_io_uring_enter}. */
    public static final int SYS_IO_URING_ENTER = 426;
    /** {@code __NR_io_uring_register}. */
    public static final int SYS_IO_URING_REGISTER = 427;

    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO =
            CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    private static final String LINK_ERROR;
    private static final MethodHandle SETUP;
    private static final MethodHandle ENTER;
    private static final MethodHandle REGISTER;
    private static final MethodHandle MMAP;
    private static final MethodHandle MUNMAP;
    private static final MethodHandle SOCKET;
    private static final MethodHandle BIND;
    private static final MethodHandle LISTEN;
    private static final MethodHandle SETSOCKOPT;
    private static final MethodHandle GETSOCKOPT;
    private static final MethodHandle GETSOCKNAME;
    private static final MethodHandle GETPEERNAME;
    private static final MethodHandle CLOSE;
    private static final MethodHandle EVENTFD;
    private static final MethodHandle READ;
    private static final MethodHandle WRITE_NO_ERRNO;
    private static final MethodHandle GETRLIMIT;
    private static final MethodHandle IF_NAMETOINDEX;
    private static final MethodHandle GETPAGESIZE;
    private static final MethodHandle SCHED_GETCPU;
    /** The 8-byte counter value 1 that {@link #signalEventFd} writes; never modified, so shared. */
    private static final MemorySegment ONE;

    static {
        MethodHandle setup = null, enter = null, register = null, mmap = null, munmap = null, socket = null;
        MethodHandle bind = null, listen = null, setsockopt = null, getsockopt = null, getsockname = null;
        MethodHandle getpeername = null;
        MethodHandle close = null, eventfd = null, read = null, writeNoErrno = null;
        MethodHandle getrlimit = null, ifNameToIndex = null, getpagesize = null, schedGetcpu = null;
        String error = null;
        try {
            // syscall(long number, ...): every variadic argument is passed as a full 64-bit long, as the
            // kernel reads whole registers and glibc's syscall() takes them with va_arg(long).
            setup = downcall("syscall", FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS), true, 1);
            enter = downcall("syscall", FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG,
                    JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG), true, 1);
            register = downcall("syscall", FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG,
                    ADDRESS, JAVA_LONG), true, 1);
            mmap = downcall("mmap", FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT,
                    JAVA_INT, JAVA_LONG), true, -1);
            munmap = downcall("munmap", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG), true, -1);
            socket = downcall("socket", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), true, -1);
            bind = downcall("bind", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT), true, -1);
            listen = downcall("listen", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), true, -1);
            setsockopt = downcall("setsockopt",
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT), true, -1);
            getsockopt = downcall("getsockopt",
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS), true, -1);
            getsockname = downcall("getsockname",
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS), true, -1);
            getpeername = downcall("getpeername",
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS), true, -1);
            close = downcall("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT), true, -1);
            eventfd = downcall("eventfd", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), true, -1);
            read = downcall("read", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), true, -1);
            writeNoErrno = downcall("write", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG),
                    false, -1);
            getrlimit = downcall("getrlimit", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS), true, -1);
            ifNameToIndex = downcall("if_nametoindex", FunctionDescriptor.of(JAVA_INT, ADDRESS), true, -1);
            getpagesize = downcall("getpagesize", FunctionDescriptor.of(JAVA_INT), false, -1);
            // Read from the rseq area or the vDSO, never blocking: no thread-state transition needed.
            schedGetcpu = criticalDowncall("sched_getcpu", FunctionDescriptor.of(JAVA_INT));
        } catch (IllegalCallerException e) {
            error = "native access to libc is refused (" + e.getMessage() + "): start the JVM with "
                    + "--enable-native-access=io.zcnet.ring (module path) or --enable-native-access=ALL-UNNAMED"
                    + " (class path)";
        } catch (RuntimeException e) {
            error = "cannot link libc functions: " + e;
        }
        LINK_ERROR = error;
        SETUP = setup;
        ENTER = enter;
        REGISTER = register;
        MMAP = mmap;
        MUNMAP = munmap;
        SOCKET = socket;
        BIND = bind;
        LISTEN = listen;
        SETSOCKOPT = setsockopt;
        GETSOCKOPT = getsockopt;
        GETSOCKNAME = getsockname;
        GETPEERNAME = getpeername;
        CLOSE = close;
        EVENTFD = eventfd;
        READ = read;
        WRITE_NO_ERRNO = writeNoErrno;
        GETRLIMIT = getrlimit;
        IF_NAMETOINDEX = ifNameToIndex;
        GETPAGESIZE = getpagesize;
        SCHED_GETCPU = schedGetcpu;
        ONE = Arena.global().allocate(JAVA_LONG);
        ONE.set(JAVA_LONG, 0, 1L);
    }

    private final MemorySegment callState;

    /** Allocates this caller's errno buffer in {@code arena}; fails with the reason if linking was refused. */
    public Native(Arena arena) {
        requireLinked();
        this.callState = arena.allocate(CALL_STATE);
    }

    /** Why libc could not be linked (native access refused), or null when it was. */
    public static String linkError() {
        return LINK_ERROR;
    }

    /** Throws {@link UnsupportedOperationException} with {@link #linkError()} if linking was refused. */
    public static void requireLinked() {
        if (LINK_ERROR != null) {
            throw new UnsupportedOperationException(LINK_ERROR);
        }
    }

    // ---------------------------------------------------------------- the restricted corner

    @SuppressWarnings("restricted")
    private static MethodHandle downcall(String name, FunctionDescriptor descriptor, boolean captureErrno,
            int firstVariadicArg) {
        Linker linker = Linker.nativeLinker();
        MemorySegment symbol = linker.defaultLookup().findOrThrow(name);
        if (captureErrno && firstVariadicArg >= 0) {
            return linker.downcallHandle(symbol, descriptor, Linker.Option.captureCallState("errno"),
                    Linker.Option.firstVariadicArg(firstVariadicArg));
        }
        if (captureErrno) {
            return linker.downcallHandle(symbol, descriptor, Linker.Option.captureCallState("errno"));
        }
        return linker.downcallHandle(symbol, descriptor);
    }

    /** A function that never blocks and touches no Java heap: called without a thread-state transition. */
    @SuppressWarnings("restricted")
    private static MethodHandle criticalDowncall(String name, FunctionDescriptor descriptor) {
        Linker linker = Linker.nativeLinker();
        return linker.downcallHandle(linker.defaultLookup().findOrThrow(name), descriptor, Linker.Option.critical(false));
    }

    /**
     * Views {@code size} bytes of native memory at {@code address} that the caller owns by other means
     * (an {@code mmap} it will {@code munmap}); the segment does not free anything itself.
     */
    @SuppressWarnings("restricted")
    public static MemorySegment view(long address, long size) {
        if (address == 0 || size < 0) {
            throw new IllegalArgumentException("bad native range: address=" + address + " size=" + size);
        }
        return MemorySegment.ofAddress(address).reinterpret(size);
    }

    // ---------------------------------------------------------------- io_uring

    /** {@code io_uring_setup(entries, params)}: the ring fd or {@code -errno}. */
    public int ioUringSetup(int entries, MemorySegment params) {
        try {
            return result((long) SETUP.invokeExact(callState, (long) SYS_IO_URING_SETUP,
                    (long) entries, params));
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /**
     * {@code io_uring_enter(fd, toSubmit, minComplete, flags, arg, argSize)}: SQEs consumed or
     * {@code -errno}. {@code fd} is a registered ring index when {@code flags} has
     * {@link IoUring#ENTER_REGISTERED_RING}.
     */
    public int ioUringEnter(int fd, int toSubmit, int minComplete, int flags, MemorySegment arg, long argSize) {
        try {
            return result((long) ENTER.invokeExact(callState, (long) SYS_IO_URING_ENTER, (long) fd,
                    (long) toSubmit, (long) minComplete, (long) flags, arg, argSize));
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code io_uring_register(fd, opcode, arg, nrArgs)}: opcode-specific result or {@code -errno}. */
    public int ioUringRegister(int fd, int opcode, MemorySegment arg, int nrArgs) {
        try {
            return result((long) REGISTER.invokeExact(callState, (long) SYS_IO_URING_REGISTER, (long) fd,
                    (long) opcode, arg, (long) nrArgs));
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    // ---------------------------------------------------------------- memory

    /**
     * {@code mmap(NULL, length, prot, flags, fd, offset)}: the address, or {@code -errno} (addresses
     * from the kernel are never in the last page, where {@code -4095..-1} live).
     */
    public long mmap(long length, int prot, int flags, int fd, long offset) {
        try {
            long address = (long) MMAP.invokeExact(callState, 0L, length, prot, flags, fd, offset);
            return address == -1L ? -errno() : address;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code munmap(address, length)}: 0 or {@code -errno}. */
    public int munmap(long address, long length) {
        try {
            return result((int) MUNMAP.invokeExact(callState, address, length));
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code getrlimit(resource)}: the soft limit ({@link Long#MAX_VALUE} when unlimited) or {@code -errno}. */
    public long softLimit(int resource, Arena scratch) {
        MemorySegment rlimit = scratch.allocate(JAVA_LONG, 2);
        try {
            int r = result((int) GETRLIMIT.invokeExact(callState, resource, rlimit));
            if (r < 0) {
                return r;
            }
            long soft = rlimit.get(JAVA_LONG, 0);
            return soft == Linux.RLIM_INFINITY ? Long.MAX_VALUE : soft;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code getpagesize()}: the page size the kernel aligns mappings and pinned ranges to. */
    public static int pageSize() {
        requireLinked();
        try {
            return (int) GETPAGESIZE.invokeExact();
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code sched_getcpu()}: the CPU the calling thread ran on a moment ago, or -1 if unknown (also unlinked). */
    public static int currentCpu() {
        if (SCHED_GETCPU == null) {
            return -1;
        }
        try {
            return (int) SCHED_GETCPU.invokeExact();
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    // ---------------------------------------------------------------- sockets and files

    /**
     * {@code if_nametoindex(name)}: the interface index (positive) in the calling thread's network
     * namespace, or {@code -errno} (ENODEV when there is no such interface).
     *
     * @param name a NUL-terminated interface name
     */
    public int ifNameToIndex(MemorySegment name) {
        try {
            int index = (int) IF_NAMETOINDEX.invokeExact(callState, name);
            return index == 0 ? -errno() : index;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code socket(domain, type, protocol)}: the fd or {@code -errno}. */
    public int socket(int domain, int type, int protocol) {
        try {
            return result((int) SOCKET.invokeExact(callState, domain, type, protocol));
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code bind(fd, addr, addrLen)}: 0 or {@code -errno}. */
    public int bind(int fd, MemorySegment addr, int addrLen) {
        try {
            return result((int) BIND.invokeExact(callState, fd, addr, addrLen));
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code listen(fd, backlog)}: 0 or {@code -errno}. */
    public int listen(int fd, int backlog) {
        try {
            return result((int) LISTEN.invokeExact(callState, fd, backlog));
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code setsockopt(fd, level, name, value, valueLen)}: 0 or {@code -errno}. */
    public int setsockopt(int fd, int level, int name, MemorySegment value, int valueLen) {
        try {
            return result((int) SETSOCKOPT.invokeExact(callState, fd, level, name, value, valueLen));
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code getsockopt(fd, level, name, value, valueLenInOut)}: 0 or {@code -errno}. */
    public int getsockopt(int fd, int level, int name, MemorySegment value, MemorySegment valueLen) {
        try {
            return result((int) GETSOCKOPT.invokeExact(callState, fd, level, name, value, valueLen));
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code getsockname(fd, addr, addrLenInOut)}: 0 or {@code -errno}. */
    public int getsockname(int fd, MemorySegment addr, MemorySegment addrLen) {
        try {
            return result((int) GETSOCKNAME.invokeExact(callState, fd, addr, addrLen));
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code getpeername(fd, addr, addrLenInOut)}: 0 or {@code -errno} ({@code -ENOTCONN} unless connected). */
    public int getpeername(int fd, MemorySegment addr, MemorySegment addrLen) {
        try {
            return result((int) GETPEERNAME.invokeExact(callState, fd, addr, addrLen));
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code close(fd)}: 0 or {@code -errno}. */
    public int close(int fd) {
        try {
            return result((int) CLOSE.invokeExact(callState, fd));
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code eventfd(initval, flags)}: the fd or {@code -errno}. */
    public int eventfd(int initialValue, int flags) {
        try {
            return result((int) EVENTFD.invokeExact(callState, initialValue, flags));
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code read(fd, buf, count)}: bytes read or {@code -errno}. */
    public long read(int fd, MemorySegment buffer, long count) {
        try {
            long r = (long) READ.invokeExact(callState, fd, buffer, count);
            return r < 0 ? -errno() : r;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /**
     * Adds 1 to an eventfd's counter. Any thread may call it: it captures no errno and writes a shared
     * constant. Returns whether the write succeeded (it fails only on a closed fd or a counter at its
     * maximum, where the reader is awake anyway).
     */
    public static boolean signalEventFd(int eventFd) {
        requireLinked();
        try {
            return (long) WRITE_NO_ERRNO.invokeExact(eventFd, ONE, 8L) == 8L;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    // ---------------------------------------------------------------- errno

    /** The errno of this instance's last failed call. */
    public int errno() {
        return (int) ERRNO.get(callState, 0L);
    }

    private int result(long r) {
        return r < 0 ? -errno() : (int) r;
    }

    private int result(int r) {
        return r < 0 ? -errno() : r;
    }

    private static RuntimeException unexpected(Throwable t) {
        if (t instanceof RuntimeException re) {
            return re;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException("native call failed", t);
    }
}
