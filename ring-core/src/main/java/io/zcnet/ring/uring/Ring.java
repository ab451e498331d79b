package io.zcnet.ring.uring;

import io.zcnet.ring.internal.Counters;
import io.zcnet.ring.sys.Cqe;
import io.zcnet.ring.sys.ErrnoException;
import io.zcnet.ring.sys.GeteventsArg;
import io.zcnet.ring.sys.IoUring;
import io.zcnet.ring.sys.Linux;
import io.zcnet.ring.sys.Native;
import io.zcnet.ring.sys.Params;
import io.zcnet.ring.sys.Probe;
import io.zcnet.ring.sys.RsrcUpdate;
import io.zcnet.ring.sys.Sqe;
import io.zcnet.ring.sys.Timespec;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * One io_uring instance: setup with negotiated flags, the mapped submission and completion rings, and
 * the single {@code io_uring_enter(2)} that submits and waits.
 *
 * <h2>Threading and memory order</h2>
 * Owner thread only (the ring is set up with {@code SINGLE_ISSUER} where the kernel has it). Shared
 * ring words are the kernel's; this class keeps private copies beside them (liburing's
 * {@code sqe_tail}/{@code khead} split): SQEs are filled at a private tail that reaches the kernel with
 * one release store per batch, and CQEs are read up to a tail loaded with acquire and handed back with
 * one release store of the head per reap.
 *
 * <h2>Flag negotiation</h2>
 * {@link #open} asks for {@link #WANTED} and, while the kernel answers EINVAL, drops one flag at a
 * time, newest kernel feature first ({@link #DROP_ORDER}); every drop is recorded in {@link #notes()}.
 * DEFER_TASKRUN is dropped before SINGLE_ISSUER, which it needs, and TASKRUN_FLAG before COOP_TASKRUN, which it
 * needs once DEFER_TASKRUN is gone; SQPOLL is never asked for.
 *
 * <p>Follows {@code io_uring_setup(2)}, {@code io_uring_enter(2)}, {@code io_uring_register(2)} and
 * liburing's {@code src/setup.c} ring mapping.
 */
public final class Ring implements AutoCloseable {
    private static final VarHandle INT = JAVA_INT.varHandle();

    /** The flags asked for first. */
    public static final int WANTED = IoUring.SETUP_SINGLE_ISSUER | IoUring.SETUP_DEFER_TASKRUN
            | IoUring.SETUP_COOP_TASKRUN | IoUring.SETUP_TASKRUN_FLAG | IoUring.SETUP_SUBMIT_ALL | IoUring.SETUP_CQSIZE
            | IoUring.SETUP_NO_SQARRAY | IoUring.SETUP_R_DISABLED;

    /** Flags dropped on EINVAL, in this order: the most recent kernel addition first (6.6 .. 5.10). */
    static final int[] DROP_ORDER = {
        IoUring.SETUP_NO_SQARRAY, IoUring.SETUP_DEFER_TASKRUN, IoUring.SETUP_SINGLE_ISSUER,
        IoUring.SETUP_TASKRUN_FLAG, IoUring.SETUP_COOP_TASKRUN, IoUring.SETUP_SUBMIT_ALL, IoUring.SETUP_R_DISABLED
    };

    /** Features the ring cannot work without: EXT_ARG for timed waits, SUBMIT_STABLE for the slots. */
    static final int REQUIRED_FEATURES = IoUring.FEAT_EXT_ARG | IoUring.FEAT_SUBMIT_STABLE;

    private final Native sys;
    private final Counters counters;
    private final int ringFd;
    private final int setupFlags;
    private final int features;
    private final List<String> notes;

    private final MemorySegment sqRing;
    private final MemorySegment cqRing;
    private final MemorySegment sqes;
    private final long sqRingSize;
    private final long cqRingSize;
    private final long sqesSize;

    private final int sqEntries;
    private final int sqMask;
    private final int cqEntries;
    private final int cqMask;
    private final long kSqHead;
    private final long kSqTail;
    private final long kSqFlags;
    private final long kCqHead;
    private final long kCqTail;
    private final long kCqOverflow;
    private final long cqesOffset;
    private final int cqeShift;

    private final long[] supportedOps = new long[4];
    private final Sqe sqe = new Sqe();
    private final MemorySegment waitArg;
    private final MemorySegment waitTimeout;

    /** Next SQE to fill (private; the kernel sees it only when published). */
    private int sqeTail;
    /** The tail last stored into the kernel's SQ tail. */
    private int publishedTail;
    /** Next CQE to read (private; equals the kernel's CQ head after every reap). */
    private int cqHead;
    private int lastOverflow;

    private int enterFd;
    private int enterFlags;
    private int registeredIndex = -1;
    private boolean enabled;
    private boolean closed;

    private Ring(Native sys, Arena arena, Counters counters, int ringFd, MemorySegment params,
            List<String> notes) throws ErrnoException {
        this.sys = sys;
        this.counters = counters;
        this.ringFd = ringFd;
        this.enterFd = ringFd;
        this.notes = notes;
        this.setupFlags = params.get(JAVA_INT, Params.FLAGS);
        this.features = params.get(JAVA_INT, Params.FEATURES);
        this.sqEntries = params.get(JAVA_INT, Params.SQ_ENTRIES);
        this.cqEntries = params.get(JAVA_INT, Params.CQ_ENTRIES);
        this.cqeShift = (setupFlags & IoUring.SETUP_CQE32) != 0 ? 5 : 4;

        long sqArray = params.get(JAVA_INT, Params.SQ_OFF_ARRAY);
        long sqSize = sqArray + (long) sqEntries * JAVA_INT.byteSize();
        long cqSize = params.get(JAVA_INT, Params.CQ_OFF_CQES) + ((long) cqEntries << cqeShift);
        boolean singleMmap = (features & IoUring.FEAT_SINGLE_MMAP) != 0;
        if (singleMmap) {
            sqSize = Math.max(sqSize, cqSize);
            cqSize = sqSize;
        }
        this.sqRingSize = sqSize;
        this.cqRingSize = singleMmap ? 0 : cqSize;
        this.sqesSize = (long) sqEntries * Sqe.SIZE;
        MemorySegment sq = map(sqSize, IoUring.OFF_SQ_RING, "SQ ring");
        MemorySegment cq;
        MemorySegment entries;
        try {
            cq = singleMmap ? sq : map(cqSize, IoUring.OFF_CQ_RING, "CQ ring");
            try {
                entries = map(sqesSize, IoUring.OFF_SQES, "SQEs");
            } catch (ErrnoException e) {
                if (!singleMmap) {
                    sys.munmap(cq.address(), cqSize);
                }
                throw e;
            }
        } catch (ErrnoException e) {
            sys.munmap(sq.address(), sqSize);
            throw e;
        }
        this.sqRing = sq;
        this.cqRing = cq;
        this.sqes = entries;

        this.kSqHead = params.get(JAVA_INT, Params.SQ_OFF_HEAD);
        this.kSqTail = params.get(JAVA_INT, Params.SQ_OFF_TAIL);
        this.kSqFlags = params.get(JAVA_INT, Params.SQ_OFF_FLAGS);
        this.sqMask = sq.get(JAVA_INT, params.get(JAVA_INT, Params.SQ_OFF_RING_MASK));
        this.kCqHead = params.get(JAVA_INT, Params.CQ_OFF_HEAD);
        this.kCqTail = params.get(JAVA_INT, Params.CQ_OFF_TAIL);
        this.kCqOverflow = params.get(JAVA_INT, Params.CQ_OFF_OVERFLOW);
        this.cqesOffset = params.get(JAVA_INT, Params.CQ_OFF_CQES);
        this.cqMask = cq.get(JAVA_INT, params.get(JAVA_INT, Params.CQ_OFF_RING_MASK));

        if ((setupFlags & IoUring.SETUP_NO_SQARRAY) == 0) {
            // Without NO_SQARRAY the kernel reads SQE indexes through this array: map slot i to entry i
            // once, so submission never touches it again.
            for (int i = 0; i < sqEntries; i++) {
                sq.set(JAVA_INT, sqArray + (long) i * JAVA_INT.byteSize(), i);
            }
        }
        this.sqeTail = (int) INT.getAcquire(sq, kSqTail); // acquire: first look at kernel-owned words
        this.publishedTail = sqeTail;
        this.cqHead = (int) INT.getAcquire(cq, kCqHead); // acquire: first look at kernel-owned words
        this.lastOverflow = (int) INT.getAcquire(cq, kCqOverflow); // acquire: kernel-written counter

        this.waitTimeout = arena.allocate(Timespec.LAYOUT);
        this.waitArg = arena.allocate(GeteventsArg.LAYOUT);
        this.enabled = (setupFlags & IoUring.SETUP_R_DISABLED) == 0;
    }

    /**
     * Sets up a ring with at least {@code sqEntries} SQEs and {@code cqEntries} CQEs, negotiating flags.
     * Allocates its small argument buffers in {@code arena}, which must outlive the ring.
     *
     * @throws ErrnoException with the setup errno (ENOSYS, EPERM, ENOMEM, ...) when no ring can be made
     */
    public static Ring open(Native sys, Arena arena, Counters counters, int sqEntries, int cqEntries)
            throws ErrnoException {
        return open(sys, arena, counters, sqEntries, cqEntries, WANTED);
    }

    /** {@link #open} asking for {@code wanted} first; tests use it to watch the negotiation work. */
    static Ring open(Native sys, Arena arena, Counters counters, int sqEntries, int cqEntries, int wanted)
            throws ErrnoException {
        return open(sys, arena, counters, sqEntries, cqEntries, wanted, true);
    }

    /**
     * Sets up a ring with exactly {@code flags}, dropping none: for a ring whose users the kernel refuses
     * without those flags (a zcrx queue needs {@code DEFER_TASKRUN} and {@code CQE32}), where a ring
     * negotiated down would only fail later for a reason that is ours. Add {@code SETUP_CQSIZE} for
     * {@code cqEntries} to count.
     *
     * @throws ErrnoException with the setup errno, EINVAL included, when the kernel refuses the flags
     */
    static Ring openExact(Native sys, Arena arena, Counters counters, int sqEntries, int cqEntries, int flags)
            throws ErrnoException {
        return open(sys, arena, counters, sqEntries, cqEntries, flags, false);
    }

    private static Ring open(Native sys, Arena arena, Counters counters, int sqEntries, int cqEntries, int wanted,
            boolean negotiate) throws ErrnoException {
        if (sqEntries < 1 || cqEntries < sqEntries) {
            throw new IllegalArgumentException("need 1 <= sqEntries <= cqEntries, got " + sqEntries + "/" + cqEntries);
        }
        MemorySegment params = arena.allocate(Params.LAYOUT);
        List<String> notes = new ArrayList<>();
        int flags = wanted;
        int dropped = 0;
        while (true) {
            params.fill((byte) 0);
            params.set(JAVA_INT, Params.FLAGS, flags);
            params.set(JAVA_INT, Params.CQ_ENTRIES, cqEntries);
            int fd = sys.ioUringSetup(sqEntries, params);
            if (fd >= 0) {
                int features = params.get(JAVA_INT, Params.FEATURES);
                if ((features & REQUIRED_FEATURES) != REQUIRED_FEATURES) {
                    sys.close(fd);
                    throw new ErrnoException("io_uring_setup", -io.zcnet.ring.Errno.EOPNOTSUPP,
                            "kernel lacks IORING_FEAT_EXT_ARG/SUBMIT_STABLE (needs Linux 5.11+)");
                }
                try {
                    Ring ring = new Ring(sys, arena, counters, fd, params, notes);
                    ring.probe(arena);
                    return ring;
                } catch (ErrnoException | RuntimeException e) {
                    sys.close(fd);
                    throw e;
                }
            }
            if (!negotiate || fd != -io.zcnet.ring.Errno.EINVAL || dropped == DROP_ORDER.length) {
                throw new ErrnoException("io_uring_setup", fd, "flags " + String.join("|",
                        IoUring.setupFlagNames(flags)));
            }
            int drop = DROP_ORDER[dropped++];
            flags &= ~drop;
            notes.add("setup flag " + IoUring.setupFlagNames(drop)[0] + " refused by the kernel (EINVAL); running without it");
        }
    }

    private MemorySegment map(long size, long offset, String what) throws ErrnoException {
        long address = sys.mmap(size, Linux.PROT_READ | Linux.PROT_WRITE, Linux.MAP_SHARED | Linux.MAP_POPULATE,
                ringFd, offset);
        if (address < 0 && address > -4096) {
            throw new ErrnoException("mmap " + what, (int) address, size + " bytes");
        }
        return Native.view(address, size);
    }

    private void probe(Arena arena) throws ErrnoException {
        MemorySegment probe = arena.allocate(Probe.size(Probe.MAX_OPS), 8);
        int r = sys.ioUringRegister(ringFd, IoUring.REGISTER_PROBE, probe, Probe.MAX_OPS);
        if (r < 0) {
            notes.add("IORING_REGISTER_PROBE failed (" + io.zcnet.ring.Errno.name(r) + "); opcode support unknown");
            return;
        }
        int opsLen = probe.get(JAVA_BYTE, Probe.OPS_LEN) & 0xFF;
        for (int i = 0; i < opsLen; i++) {
            long entry = Probe.HEADER_SIZE + i * Probe.OP_SIZE;
            int op = probe.get(JAVA_BYTE, entry + Probe.OP_OP) & 0xFF;
            int flags = probe.get(JAVA_SHORT, entry + Probe.OP_FLAGS) & 0xFFFF;
            if ((flags & IoUring.OP_SUPPORTED) != 0) {
                supportedOps[op >>> 6] |= 1L << (op & 63);
            }
        }
    }

    // ---------------------------------------------------------------- owner-thread setup

    /**
     * Enables a ring set up with {@code R_DISABLED} (which makes the caller the single issuer) and
     * registers the ring fd with the calling task so every enter skips the fd lookup. Both are
     * per-task, so the owner thread calls this once, before its first submission.
     */
    public void enableOnOwner() throws ErrnoException {
        if (!enabled) {
            ErrnoException.check("io_uring_register(ENABLE_RINGS)",
                    sys.ioUringRegister(ringFd, IoUring.REGISTER_ENABLE_RINGS, MemorySegment.NULL, 0));
            enabled = true;
        }
        if (registeredIndex < 0) {
            try (Arena scratch = Arena.ofConfined()) {
                MemorySegment update = scratch.allocate(RsrcUpdate.LAYOUT);
                update.set(JAVA_INT, RsrcUpdate.OFFSET, RsrcUpdate.OFFSET_AUTO);
                update.set(JAVA_LONG, RsrcUpdate.DATA, ringFd);
                int r = sys.ioUringRegister(ringFd, IoUring.REGISTER_RING_FDS, update, 1);
                if (r == 1) {
                    registeredIndex = update.get(JAVA_INT, RsrcUpdate.OFFSET);
                    enterFd = registeredIndex;
                    enterFlags = IoUring.ENTER_REGISTERED_RING;
                } else {
                    notes.add("IORING_REGISTER_RING_FDS failed (" + io.zcnet.ring.Errno.name(r)
                            + "); entering with the plain ring fd");
                }
            }
        }
    }

    // ---------------------------------------------------------------- submission

    /** SQEs that can be prepared before the SQ is full. */
    public int sqSpace() {
        // acquire: the kernel has finished reading every SQE below its head, so those may be reused.
        return sqEntries - (sqeTail - (int) INT.getAcquire(sqRing, kSqHead));
    }

    /**
     * Returns the flyweight on the next free SQE, zeroed. The caller must have checked
     * {@link #sqSpace()} (flushing with {@link #submit} when short).
     */
    public Sqe nextSqe() {
        long offset = (long) (sqeTail & sqMask) * Sqe.SIZE;
        sqeTail++;
        return sqe.wrap(sqes, offset);
    }

    /** Index in the SQE array of the entry {@link #nextSqe()} returned last (keys per-entry side slots). */
    public int lastSqeIndex() {
        return (sqeTail - 1) & sqMask;
    }

    /**
     * The most recently prepared SQE, reopened without clearing, or null when it has already been
     * published to the kernel (or nothing was prepared).
     */
    public Sqe lastUnsubmittedSqe() {
        if (sqeTail == publishedTail) {
            return null;
        }
        return sqe.reopen(sqes, (long) ((sqeTail - 1) & sqMask) * Sqe.SIZE);
    }

    /** SQEs prepared and not yet consumed by the kernel. */
    public int unsubmitted() {
        // acquire: pairs with the kernel's store of its head after consuming SQEs.
        return sqeTail - (int) INT.getAcquire(sqRing, kSqHead);
    }

    /**
     * Publishes every prepared SQE and makes one {@code io_uring_enter}: submits them and, with
     * {@code getEvents}, runs deferred task work and waits for {@code minComplete} completions or
     * {@code timeoutNanos} (negative: no limit). Counts the syscall and the SQEs the kernel took.
     *
     * @return the kernel's result: SQEs submitted, or {@code -errno} (ETIME and EINTR are normal ends
     *         of a wait; EBUSY/EAGAIN mean the CQ must be drained first)
     */
    public int submit(boolean getEvents, int minComplete, long timeoutNanos) {
        if (sqeTail != publishedTail) {
            INT.setRelease(sqRing, kSqTail, sqeTail); // release: SQE contents are visible before the new tail
            publishedTail = sqeTail;
        }
        int headBefore = (int) INT.getAcquire(sqRing, kSqHead); // acquire: kernel-owned head
        int toSubmit = sqeTail - headBefore;
        int flags = enterFlags;
        MemorySegment arg = MemorySegment.NULL;
        long argSize = 0;
        if (getEvents) {
            flags |= IoUring.ENTER_GETEVENTS;
            if (minComplete > 0) {
                flags |= IoUring.ENTER_EXT_ARG;
                arg = waitArg;
                argSize = GeteventsArg.SIZE;
                if (timeoutNanos >= 0) {
                    Timespec.set(waitTimeout, 0, timeoutNanos);
                    waitArg.set(JAVA_LONG, GeteventsArg.TS, waitTimeout.address());
                } else {
                    waitArg.set(JAVA_LONG, GeteventsArg.TS, 0L);
                }
            }
        }
        int r = sys.ioUringEnter(enterFd, toSubmit, minComplete, flags, arg, argSize);
        counters.syscall();
        int taken = (int) INT.getAcquire(sqRing, kSqHead) - headBefore; // acquire: kernel-owned head
        if (taken > 0) {
            counters.submitted(taken);
        }
        return r;
    }

    // ---------------------------------------------------------------- completion

    /** Position of the next CQE to read (the private head). */
    public int cqHead() {
        return cqHead;
    }

    /** The kernel's CQ tail: entries below it are complete and readable. */
    public int cqTail() {
        return (int) INT.getAcquire(cqRing, kCqTail); // acquire: CQE contents are visible before the tail
    }

    /** Whether completions are waiting to be read. */
    public boolean cqReady() {
        return cqTail() != cqHead;
    }

    public long cqeUserData(int position) {
        return cqRing.get(JAVA_LONG, cqeOffset(position) + Cqe.USER_DATA);
    }

    public int cqeRes(int position) {
        return cqRing.get(JAVA_INT, cqeOffset(position) + Cqe.RES);
    }

    public int cqeFlags(int position) {
        return cqRing.get(JAVA_INT, cqeOffset(position) + Cqe.FLAGS);
    }

    /** Where the CQE at {@code position} starts in {@link #cqRing()}; 32 bytes apart with {@code CQE32}. */
    long cqeOffset(int position) {
        return cqesOffset + ((long) (position & cqMask) << cqeShift);
    }

    /**
     * The mapped CQ ring, for flyweights that read a whole CQE in place (the zcrx fields of a CQE32 entry)
     * at {@link #cqeOffset}; read-only by contract, between {@link #cqHead()} and {@link #cqTail()}.
     */
    MemorySegment cqRing() {
        return cqRing;
    }

    /** Hands every CQE below {@code newHead} back to the kernel: one release store per reap. */
    public void releaseCqHead(int newHead) {
        cqHead = newHead;
        INT.setRelease(cqRing, kCqHead, newHead); // release: the CQEs were read before the kernel may reuse them
    }

    /**
     * Completions the kernel dropped since the last call (the CQ ring's {@code overflow} counter). With
     * {@code FEAT_NODROP} completions that find the ring full are parked in the kernel's overflow list
     * instead ({@link #overflowPending()}) and do not count here; only those it could not park do.
     */
    public int droppedCompletions() {
        int now = (int) INT.getAcquire(cqRing, kCqOverflow); // acquire: kernel-written counter
        int lost = now - lastOverflow;
        lastOverflow = now;
        return lost;
    }

    /**
     * Whether an enter may have completions to post: always, unless the ring was set up with
     * {@code TASKRUN_FLAG}, whose {@code IORING_SQ_TASKRUN} the kernel raises when it queues task work (every
     * completion of a {@code DEFER_TASKRUN} ring is posted by task work run inside an enter) and clears when it
     * runs it.
     */
    public boolean mayHaveTaskWork() {
        return (setupFlags & IoUring.SETUP_TASKRUN_FLAG) == 0
                || ((int) INT.getAcquire(sqRing, kSqFlags) & IoUring.SQ_TASKRUN) != 0; // acquire: kernel flag
    }

    /** Whether completions wait in the kernel's overflow list ({@code IORING_SQ_CQ_OVERFLOW}). */
    public boolean overflowPending() {
        return ((int) INT.getAcquire(sqRing, kSqFlags) & IoUring.SQ_CQ_OVERFLOW) != 0; // acquire: kernel flag
    }

    // ---------------------------------------------------------------- information

    public int fd() {
        return ringFd;
    }

    public int setupFlags() {
        return setupFlags;
    }

    public int features() {
        return features;
    }

    public int sqEntries() {
        return sqEntries;
    }

    public int cqEntries() {
        return cqEntries;
    }

    public boolean registeredRing() {
        return registeredIndex >= 0;
    }

    /** Whether the kernel's probe reported {@code opcode} as supported. */
    public boolean supports(int opcode) {
        return opcode >= 0 && opcode < 256 && (supportedOps[opcode >>> 6] & (1L << (opcode & 63))) != 0;
    }

    /** Names of the supported opcodes, lowest first. */
    public List<String> supportedOpNames() {
        List<String> names = new ArrayList<>();
        for (int op = 0; op < 256; op++) {
            if (supports(op)) {
                names.add(IoUring.opName(op));
            }
        }
        return names;
    }

    /** What negotiation dropped or failed, with the reason. */
    public List<String> notes() {
        return notes;
    }

    /**
     * Unregisters the ring fd (owner thread: the registration is per task), unmaps the rings and
     * closes the ring fd. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (registeredIndex >= 0) {
            try (Arena scratch = Arena.ofConfined()) {
                MemorySegment update = scratch.allocate(RsrcUpdate.LAYOUT);
                update.set(JAVA_INT, RsrcUpdate.OFFSET, registeredIndex);
                sys.ioUringRegister(ringFd, IoUring.UNREGISTER_RING_FDS, update, 1);
            }
            registeredIndex = -1;
        }
        sys.munmap(sqes.address(), sqesSize);
        sys.munmap(sqRing.address(), sqRingSize);
        if (cqRingSize != 0) {
            sys.munmap(cqRing.address(), cqRingSize);
        }
        sys.close(ringFd);
    }

    @Override
    public String toString() {
        return "Ring[fd=" + ringFd + " sq=" + sqEntries + " cq=" + cqEntries + " flags="
                + String.join("|", IoUring.setupFlagNames(setupFlags)) + " unsubmitted=" + (sqeTail - publishedTail)
                + " cqHead=" + cqHead + (registeredIndex >= 0 ? " registered=" + registeredIndex : "")
                + (closed ? " closed" : "") + "]";
    }
}
