package io.zcnet.ring.uring;

import io.zcnet.buffer.BufferPool;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.ring.BufferRing;
import io.zcnet.ring.CompletionHandler;
import io.zcnet.ring.CqeFlags;
import io.zcnet.ring.DetachedSocket;
import io.zcnet.ring.EngineFeatures;
import io.zcnet.ring.EngineKind;
import io.zcnet.ring.Errno;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.GatherList;
import io.zcnet.ring.LoopCounters;
import io.zcnet.ring.Op;
import io.zcnet.ring.internal.Counters;
import io.zcnet.ring.internal.UserData;
import io.zcnet.ring.sys.ErrnoException;
import io.zcnet.ring.sys.IoUring;
import io.zcnet.ring.sys.Linux;
import io.zcnet.ring.sys.Native;
import io.zcnet.ring.sys.SockAddr;
import io.zcnet.ring.sys.Sqe;
import io.zcnet.ring.sys.Timespec;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The io_uring engine: every {@link EventLoop} operation becomes one SQE (close: two, linked), and
 * {@link #poll} is one {@code io_uring_enter(2)} that submits the batch, runs deferred task work and
 * waits, followed by one pass over the CQ ring.
 *
 * <h2>Threading</h2>
 * Owner-thread only, as {@link EventLoop} says; the owner is the first thread that polls or prepares an
 * operation, and on that first call the ring is enabled ({@code IORING_REGISTER_ENABLE_RINGS}, which
 * makes it the {@code SINGLE_ISSUER}) and its fd registered with that thread. {@link #execute},
 * {@link #wakeup}, {@link #engine}, {@link #features} and {@link #counters} are for any thread. A task
 * queued by {@link #execute} happens-before its run on the loop (JCTools MPSC queue).
 *
 * <h2>Wake-ups</h2>
 * An eventfd with a READ kept armed on the ring. A waker writes to it only when the loop announced
 * that it may sleep ({@code WakeupLatch}), so a busy loop costs other threads no system call.
 *
 * <h2>Memory that must outlive an SQE</h2>
 * Connect addresses and timeout timespecs live in a side slot keyed by the SQE's index. The ring is
 * set up only with {@code IORING_FEAT_SUBMIT_STABLE}, so the kernel has copied them when the submitting
 * {@code io_uring_enter} returns, which is exactly when the SQE index can be reused.
 *
 * <h2>Completions</h2>
 * An operation is pending until its CQE without {@link CqeFlags#MORE}: a multishot until its last
 * completion, a SEND_ZC until its {@link CqeFlags#NOTIF}. Notifications whose result has
 * {@link CqeFlags#ZC_COPIED} are counted in {@link LoopCounters#zeroCopySendsCopied()}; a multishot
 * receive ending with {@code -ENOBUFS} in {@link LoopCounters#noBufferEvents()}; completions the
 * kernel dropped (the CQ ring's {@code overflow} counter) in {@link LoopCounters#cqOverflows()}.
 * Completions the kernel only parked in its overflow list ({@code IORING_SQ_CQ_OVERFLOW} with
 * {@code FEAT_NODROP}) are flushed by the next poll, in order, and not counted as lost; reaps that found
 * such an overflow are counted in {@link LoopCounters#cqOverflowEvents()}, and the first adds a note to
 * {@link #features()} saying the CQ is too small.
 *
 * <h2>Buffers and sockets the loop keeps track of</h2>
 * A completion with {@link CqeFlags#BUFFER} marks that buffer as the application's in its ring, found
 * by the receive's {@code user_data} (looked up before a final completion disarms the receive, since the
 * kernel may end a multishot with a data-carrying CQE without MORE when the CQ fills), so
 * {@link UringBufferRing} rejects a double recycle and refuses to close while a receive is armed on it. The fds of
 * {@link #listen}, {@link #socket} and accepted connections are kept in a bitset until the user closes
 * them through {@link #close(int, int, int)}; {@link #close()} closes those left, as the NIO engine does.
 * Nothing on the data path allocates: no lambdas, boxing or per-operation objects.
 */
public final class UringEventLoop extends EventLoop {
    /** SQEs the ring keeps free beyond an operation's own, so a link timeout can follow any op. */
    private static final int LINK_RESERVE = 1;
    /** The smallest SQ that leaves room for close's two SQEs plus a link timeout and the wake-up read. */
    private static final int MIN_SQ_ENTRIES = 8;
    /** Side-slot bytes per SQE: room for a sockaddr_in6 (28) or a __kernel_timespec (16). */
    private static final long SLOT_SIZE = 32;

    private final Counters counters = counterSet();
    private final Arena arena;
    private final Native sys;
    private final Ring ring;
    private final int eventFd;
    private final WakeupLatch wakeups;
    private final MemorySegment eventValue;
    /** One side slot per SQE index, and one more for the refused entry. */
    private final MemorySegment slots;
    /** Where operations refused while closing are prepared: an SQE that never reaches the ring. */
    private final MemorySegment refusedEntry;
    private final Sqe refusedSqe = new Sqe();
    private final ControlPath control;
    private final CloseDrain closer;
    private final int internalHandler;
    private final long wakeupUserData;
    private final long cancelUserData;
    private final int[] pendingByOp = new int[Op.COUNT];
    private final List<UringBufferRing> bufferRings = new ArrayList<>();
    private final OpenFds openFds = new OpenFds();
    private final ReceiveRings receiveRings = new ReceiveRings();
    /** Degradations the loop itself made (the ring keeps its own). */
    private final List<String> notes;

    private volatile EngineFeatures features;
    private int userPending;
    private int internalPending;
    private boolean wakeupArmed;
    /** Set while completions are dispatched: the rings must stay mapped until the pass ends. */
    private boolean reaping;
    private boolean closeRequested;
    /** {@link #linkNext()} flagged the last SQE: the next operation must reach the kernel in the same batch. */
    private boolean linkOpen;

    private UringEventLoop(EventLoopConfig config, Arena arena) throws IOException {
        super(config, EngineKind.URING);
        this.arena = arena;
        this.sys = new Native(arena);
        int sq = Math.max(config.sqEntries(), MIN_SQ_ENTRIES);
        int cq = Math.max(config.cqEntries(), sq);
        try {
            this.ring = Ring.open(sys, arena, counters, sq, cq);
        } catch (ErrnoException e) {
            throw new IOException(e.errno() == Errno.EINVAL ? e.getMessage() : Uring.explain(-e.errno()), e);
        }
        this.notes = new ArrayList<>();
        if (sq != config.sqEntries()) {
            notes.add("sqEntries raised from " + config.sqEntries() + " to " + sq + " (close and link timeouts need spare SQEs)");
        }
        int efd = sys.eventfd(0, Linux.EFD_CLOEXEC);
        if (efd < 0) {
            ring.close();
            throw new ErrnoException("eventfd", efd, "wake-up descriptor");
        }
        this.eventFd = efd;
        this.wakeups = new WakeupLatch(() -> Native.signalEventFd(efd));
        this.eventValue = arena.allocate(JAVA_LONG);
        this.slots = arena.allocate(SLOT_SIZE * (ring.sqEntries() + 1), 8);
        this.refusedEntry = arena.allocate(Sqe.LAYOUT);
        this.control = new ControlPath(sys, arena, ring.fd(), openFds);
        this.internalHandler = registerInternalHandler(new InternalHandler());
        this.wakeupUserData = UserData.pack(internalHandler, UserData.WAKEUP_OP, 0);
        this.cancelUserData = UserData.pack(internalHandler, Op.CANCEL, 0);
        this.closer = new CloseDrain(this, sys, arena, ring, openFds, bufferRings, wakeups, efd);
        refreshFeatures();
    }

    /**
     * Sets up an io_uring event loop.
     *
     * @throws IOException with the reason when io_uring cannot be set up (see {@link Uring#availability()})
     */
    public static UringEventLoop open(EventLoopConfig config) throws IOException {
        checkConfig(config);
        String linkError = Native.linkError();
        if (linkError != null) {
            throw new IOException(linkError);
        }
        Arena arena = Arena.ofShared();
        try {
            return new UringEventLoop(config, arena);
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /** Never called: completions for the internal id are handled in {@link #reap()} before dispatch. */
    private static final class InternalHandler implements CompletionHandler {
        @Override
        public void onCompletion(int op, int tag, int result, int flags) {
            throw new IllegalStateException("internal completion dispatched to a handler: " + Op.name(op));
        }
    }

    @Override
    public EngineKind engine() {
        return EngineKind.URING;
    }

    @Override
    public EngineFeatures features() {
        return features;
    }

    private void refreshFeatures() {
        features = new EngineFeatures(EngineKind.URING, List.of(IoUring.setupFlagNames(ring.setupFlags())),
                ring.setupFlags(), List.of(IoUring.featureNames(ring.features())), ring.supportedOpNames(),
                ring.sqEntries(), ring.cqEntries(), ring.registeredRing(), allNotes());
    }

    private List<String> allNotes() {
        List<String> all = new ArrayList<>(ring.notes());
        all.addAll(notes);
        return all;
    }

    // ---------------------------------------------------------------- ownership

    /** Confines to the owner; on the owner's first call enables the ring and arms the wake-up read. */
    private void ensureOwner() {
        if (claimOwner()) {
            try {
                ring.enableOnOwner();
            } catch (ErrnoException e) {
                throw new IllegalStateException("cannot enable the io_uring on " + Thread.currentThread().getName(), e);
            }
            refreshFeatures();
            armWakeup();
        }
        if (closer.closed()) {
            throw new IllegalStateException("event loop is closed");
        }
    }

    private void armWakeup() {
        Prep.read(take(1), eventFd, eventValue.address(), (int) JAVA_LONG.byteSize(), 0).userData(wakeupUserData);
        wakeupArmed = true;
    }

    // ---------------------------------------------------------------- submission helpers

    /**
     * The next SQE of an operation that needs {@code count} consecutive entries. Keeps
     * {@link #LINK_RESERVE} more free, flushing the prepared batch to the kernel first when short.
     */
    private Sqe take(int count) {
        if (ring.sqSpace() < count + LINK_RESERVE) {
            if (linkOpen) { // a flush would cut the chain in two: the kernel links only within one submission
                if (ring.sqSpace() < count) {
                    throw new IllegalStateException("a linked chain cannot be longer than the submission queue ("
                            + ring.sqEntries() + " entries)");
                }
            } else {
                flush();
            }
        }
        return ring.nextSqe();
    }

    private void flush() {
        int r = ring.submit(false, 0, 0);
        if (ring.sqSpace() < 2 + LINK_RESERVE) {
            throw new IllegalStateException("submission queue stays full after a flush (io_uring_enter: "
                    + (r < 0 ? Errno.name(r) : r + " submitted") + "); " + this);
        }
    }

    /**
     * Prologue of every operation, after its own argument checks: confines to the owner, checks the
     * handler id and makes the user_data. Counts nothing: {@link #end} does, once the operation's SQEs
     * are in the SQ, because {@link #take} may still throw (SQ stuck full) and an operation that never
     * reached the ring must not stay pending.
     */
    private long begin(int handler, int op, int tag) {
        ensureOwner();
        checkHandler(handler);
        return UserData.pack(handler, op, tag);
    }

    /**
     * The SQE of a one-entry operation, with its user_data: the next free entry, or while {@link #close()}
     * drains the refused entry, which is never submitted, so that every operation has one shape.
     */
    private Sqe sqe(long userData) {
        Sqe sqe = closer.closing() ? refusedSqe.wrap(refusedEntry, 0) : take(1);
        return sqe.userData(userData);
    }

    /** Offset in {@link #slots} of the side slot of the entry {@link #sqe} or {@link Ring#nextSqe} gave last. */
    private long slot() {
        return SLOT_SIZE * (closer.closing() ? ring.sqEntries() : ring.lastSqeIndex());
    }

    /** Writes {@code nanos} as a {@code __kernel_timespec} into the last entry's slot: its address. */
    private long timespec(long nanos) {
        long slot = slot();
        Timespec.set(slots, slot, nanos);
        return slots.address() + slot;
    }

    /**
     * Epilogue of every operation: it is pending until its final completion. One prepared while
     * {@link #close()} drains is refused: it completes {@code -ECANCELED} from the drain ({@link CloseDrain}).
     */
    private long end(long userData) {
        if (closer.closing()) {
            closer.refuse(userData);
        }
        linkOpen = false;
        operationStarted(userData);
        userPending++;
        pendingByOp[UserData.op(userData)]++;
        return userData;
    }

    /** The address the kernel reads or writes: {@code buffer} must be native, the range checked already. */
    private static long address(MemorySegment buffer, long offset) {
        if (!buffer.isNative()) {
            throw new IllegalArgumentException("buffer must be native (off-heap) memory");
        }
        return buffer.address() + offset;
    }

    // ---------------------------------------------------------------- asynchronous operations

    @Override
    public long nop(int handler, int tag) {
        long ud = begin(handler, Op.NOP, tag);
        Prep.nop(sqe(ud));
        return end(ud);
    }

    @Override
    public long accept(int handler, int tag, int listenSocket, boolean multishot) {
        checkSocket(listenSocket);
        long ud = begin(handler, Op.ACCEPT, tag);
        Prep.accept(sqe(ud), listenSocket, Linux.SOCK_CLOEXEC, multishot);
        return end(ud);
    }

    @Override
    public long connect(int handler, int tag, int socket, InetSocketAddress remote) {
        checkSocket(socket);
        checkAddress(remote, "remote");
        long ud = begin(handler, Op.CONNECT, tag);
        Sqe sqe = sqe(ud);
        long slot = slot();
        Prep.connect(sqe, socket, slots.address() + slot, SockAddr.write(slots, slot, remote));
        return end(ud);
    }

    @Override
    public long send(int handler, int tag, int socket, MemorySegment buffer, long offset, int length,
            int msgFlags) {
        checkSocket(socket);
        checkBuffer(buffer, offset, length);
        checkSendFlags(msgFlags);
        long addr = address(buffer, offset);
        long ud = begin(handler, Op.SEND, tag);
        Prep.send(sqe(ud), socket, addr, length, Linux.MSG_NOSIGNAL | msgFlags);
        return end(ud);
    }

    @Override
    public long sendZeroCopy(int handler, int tag, int socket, MemorySegment buffer, long offset, int length,
            int fixedBufferIndex, int msgFlags) {
        checkSocket(socket);
        checkBuffer(buffer, offset, length);
        checkSendFlags(msgFlags);
        long addr = address(buffer, offset);
        checkFixedBuffer(fixedBufferIndex, buffer, offset, length);
        requireOpcode(IoUring.OP_SEND_ZC);
        long ud = begin(handler, Op.SEND_ZC, tag);
        int flags = Linux.MSG_NOSIGNAL | msgFlags;
        if (fixedBufferIndex >= 0) {
            Prep.sendZcFixed(sqe(ud), socket, addr, length, flags, IoUring.SEND_ZC_REPORT_USAGE, fixedBufferIndex);
        } else {
            Prep.sendZc(sqe(ud), socket, addr, length, flags, IoUring.SEND_ZC_REPORT_USAGE);
        }
        return end(ud);
    }

    @Override
    public long sendMessage(int handler, int tag, int socket, GatherList message, int msgFlags) {
        checkSocket(socket);
        checkMessage(message);
        checkSendFlags(msgFlags);
        requireOpcode(IoUring.OP_SENDMSG);
        long ud = begin(handler, Op.SENDMSG, tag);
        Prep.sendmsg(sqe(ud), socket, messageHeaderAddress(message), Linux.MSG_NOSIGNAL | msgFlags);
        return end(ud);
    }

    @Override
    public long sendMessageZeroCopy(int handler, int tag, int socket, GatherList message, int msgFlags) {
        checkSocket(socket);
        checkMessage(message);
        checkSendFlags(msgFlags);
        requireOpcode(IoUring.OP_SENDMSG_ZC);
        long ud = begin(handler, Op.SENDMSG_ZC, tag);
        Prep.sendmsgZc(sqe(ud), socket, messageHeaderAddress(message), Linux.MSG_NOSIGNAL | msgFlags,
                IoUring.SEND_ZC_REPORT_USAGE);
        return end(ud);
    }

    @Override
    public long recv(int handler, int tag, int socket, MemorySegment buffer, long offset, int length,
            int msgFlags) {
        checkSocket(socket);
        checkReceiveBuffer(buffer, offset, length);
        checkReceiveFlags(msgFlags);
        long addr = address(buffer, offset);
        long ud = begin(handler, Op.RECV, tag);
        Prep.recv(sqe(ud), socket, addr, length, msgFlags);
        return end(ud);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Like {@link #recvMultishot}, the loop finds the completion's ring by its {@code user_data}.
     */
    @Override
    public long recvSelect(int handler, int tag, int socket, BufferRing ring) {
        checkSocket(socket);
        UringBufferRing own = (UringBufferRing) checkRing(ring);
        checkReceiveRingFree(handler, Op.RECV_SELECT, tag, own);
        long ud = begin(handler, Op.RECV_SELECT, tag);
        // Up to one buffer's size, picked from the group when the kernel issues the receive.
        Prep.selectBuffer(Prep.recv(sqe(ud), socket, 0, own.bufferSize(), 0), own.groupId());
        if (!closer.closing()) { // a refused receive takes no buffer
            receiveRings.arm(ud, own);
            own.armed();
        }
        return end(ud);
    }

    /** Throws if a receive with the same user_data is armed on another ring: completions find rings by it. */
    private void checkReceiveRingFree(int handler, int op, int tag, UringBufferRing own) {
        UringBufferRing armed = receiveRings.get(UserData.pack(handler, op, tag));
        if (armed != null && armed != own) {
            throw new IllegalArgumentException("a buffer-select receive with handler " + handler + " and tag " + tag
                    + " is armed on buffer group " + armed.groupId() + "; use another tag for group " + own.groupId());
        }
    }

    @Override
    public void linkNext() {
        ensureOwner();
        Sqe previous = ring.lastUnsubmittedSqe();
        if (previous == null || UserData.handler(previous.userData()) == internalHandler) {
            throw new IllegalStateException("linkNext must directly follow the operation it chains, before the next poll()");
        }
        if (previous.opcode() == IoUring.OP_LINK_TIMEOUT) {
            throw new IllegalStateException("linkNext cannot follow a linkTimeout (it ends its chain)");
        }
        previous.addFlags(IoUring.IOSQE_IO_LINK);
        linkOpen = true;
    }

    /** Refuses an opcode the kernel's probe did not list, before anything is prepared. */
    private void requireOpcode(int opcode) {
        if (!ring.supports(opcode)) {
            throw new UnsupportedOperationException("this kernel's io_uring lacks IORING_OP_" + IoUring.opName(opcode)
                    + " (probe); check EventLoop.supports() first");
        }
    }

    @Override
    public boolean supports(int op) {
        int opcode = switch (op) {
            case Op.SEND_ZC -> IoUring.OP_SEND_ZC;
            case Op.SENDMSG -> IoUring.OP_SENDMSG;
            case Op.SENDMSG_ZC -> IoUring.OP_SENDMSG_ZC;
            case Op.SHUTDOWN -> IoUring.OP_SHUTDOWN;
            default -> -1;
        };
        return opcode < 0 ? op > 0 && op < Op.COUNT && op != UserData.WAKEUP_OP : ring.supports(opcode);
    }

    /**
     * {@inheritDoc}
     *
     * <p>The loop finds a completion's ring by its {@code user_data}, so receives armed at the same time
     * on different rings need different handler ids or tags.
     *
     * @throws IllegalArgumentException if a receive with the same handler and tag is armed on another ring
     */
    @Override
    public long recvMultishot(int handler, int tag, int socket, BufferRing ring) {
        checkSocket(socket);
        UringBufferRing own = (UringBufferRing) checkRing(ring);
        checkReceiveRingFree(handler, Op.RECV_MULTISHOT, tag, own);
        long ud = begin(handler, Op.RECV_MULTISHOT, tag);
        // No address, length 0 (no per-shot cap): buffers are picked from the group.
        Prep.selectBuffer(Prep.recvMultishot(sqe(ud), socket, 0, 0, 0), own.groupId());
        if (!closer.closing()) { // a refused receive takes no buffer
            receiveRings.arm(ud, own);
            own.armed();
        }
        return end(ud);
    }

    @Override
    public long shutdown(int handler, int tag, int socket, int how) {
        checkSocket(socket);
        checkShutdownHow(how);
        requireOpcode(IoUring.OP_SHUTDOWN);
        long ud = begin(handler, Op.SHUTDOWN, tag);
        Prep.shutdown(sqe(ud), socket, how);
        return end(ud);
    }

    @Override
    public long close(int handler, int tag, int socket) {
        checkSocket(socket);
        long ud = begin(handler, Op.CLOSE, tag);
        if (closer.closing()) {
            return end(ud); // refused; the fd stays tracked: close() closes it with the others
        }
        // Cancel everything on the fd, then close it. The hard link runs the close even when the cancel
        // finds nothing (-ENOENT); the cancel's completion stays internal.
        Prep.cancelFd(take(2), socket, IoUring.ASYNC_CANCEL_ALL)
                .flags(IoUring.IOSQE_IO_HARDLINK)
                .userData(cancelUserData);
        internalPending++;
        Prep.close(ring.nextSqe(), socket).userData(ud);
        // Forgotten now (take() can no longer throw), not at the completion: once the kernel frees the fd
        // an accept may reuse it.
        openFds.remove(socket);
        return end(ud);
    }

    @Override
    public long timeout(int handler, int tag, long nanos) {
        checkNanos(nanos);
        long ud = begin(handler, Op.TIMEOUT, tag);
        Sqe sqe = sqe(ud);
        Prep.timeout(sqe, timespec(nanos), 0, 0); // count 0: a pure timer, not "after N completions"
        return end(ud);
    }

    @Override
    public long linkTimeout(int handler, int tag, long nanos) {
        checkNanos(nanos);
        ensureOwner();
        if (closer.closing()) {
            return end(begin(handler, Op.LINK_TIMEOUT, tag)); // refused, as what it bounds was
        }
        Sqe previous = ring.lastUnsubmittedSqe();
        if (previous == null || UserData.handler(previous.userData()) == internalHandler) {
            throw new IllegalStateException("linkTimeout must directly follow the operation it bounds, "
                    + "before the next poll()");
        }
        if (previous.opcode() == IoUring.OP_LINK_TIMEOUT) {
            throw new IllegalStateException("linkTimeout cannot follow another linkTimeout");
        }
        long ud = begin(handler, Op.LINK_TIMEOUT, tag);
        previous.addFlags(IoUring.IOSQE_IO_LINK);
        // No flush here: the linked SQE must reach the kernel in the same batch. take() kept a spare.
        Sqe sqe = ring.nextSqe().userData(ud);
        Prep.linkTimeout(sqe, timespec(nanos), 0);
        return end(ud);
    }

    @Override
    public long cancel(int handler, int tag, long target) {
        long ud = begin(handler, Op.CANCEL, tag);
        Prep.cancel(sqe(ud), target, 0);
        return end(ud);
    }

    // ---------------------------------------------------------------- driving the loop

    @Override
    public int poll(long timeoutNanos) {
        ensureOwner();
        beginPoll();
        int handled;
        try {
            // Tasks queued before this turn (a post's doorbell) run first, as in the NIO engine: what they
            // prepare leaves in this turn's enter, which also takes the completions it finds (an inline
            // send's), instead of an enter for the tasks and another, woken at once by that send, to submit.
            handled = hasTasks() ? runTasks() : 0;
            boolean wait = timeoutNanos != 0 && handled == 0 && !hasTasks() && !ring.cqReady();
            if (wait || userPending > 0 && ring.mayHaveTaskWork() || ring.unsubmitted() > 0 || ring.overflowPending()) {
                enter(wait, timeoutNanos);
            }
            handled += reap();
            if (!closeRequested) {
                return handled + runTasks();
            }
        } finally {
            endPoll();
        }
        close();
        return handled;
    }

    private void enter(boolean wait, long timeoutNanos) {
        boolean announced = false;
        if (wait) {
            announced = wakeups.announceSleep();
            if (!announced || hasTasks()) { // a task's waker is on its way: no need to wait for its write
                wait = false;
            }
        }
        // With DEFER_TASKRUN completions are posted only inside an enter with GETEVENTS, so a non-waiting poll
        // enters while operations are pending and the kernel flags task work (Ring.mayHaveTaskWork).
        int r = ring.submit(true, wait ? 1 : 0, timeoutNanos);
        if (announced) {
            wakeups.endSleep();
        }
        // ETIME/EINTR end a wait; EAGAIN/EBUSY ask for the CQ to be drained; EBADR reports dropped
        // completions, which the CQ's overflow counter already counts.
        if (r < 0 && r != -Errno.ETIME && r != -Errno.EINTR && r != -Errno.EAGAIN && r != -Errno.EBUSY
                && r != -IoUring.ENTER_ERR_DROPPED) {
            throw new IllegalStateException("io_uring_enter failed: " + Errno.name(r) + "; " + this);
        }
    }

    private int reap() {
        int head = ring.cqHead();
        int tail = ring.cqTail();
        int dispatched = 0;
        reaping = true;
        try {
            while (head != tail) {
                long userData = ring.cqeUserData(head);
                int result = ring.cqeRes(head);
                int flags = ring.cqeFlags(head);
                head++; // consumed before dispatch: a throwing handler does not see the same CQE again
                if (UserData.handler(userData) == internalHandler) {
                    onInternal(UserData.op(userData), result);
                    continue;
                }
                int op = UserData.op(userData);
                // Looked up before a final completion disarms it: the last CQE of a multishot may carry data.
                UringBufferRing buffers = op == Op.RECV_MULTISHOT || op == Op.RECV_SELECT
                        ? receiveRings.get(userData) : null;
                if ((flags & CqeFlags.MORE) == 0) {
                    userPending--;
                    pendingByOp[op]--;
                    if (buffers != null) {
                        receiveRings.disarm(userData);
                        buffers.disarmed();
                    }
                }
                if ((flags & CqeFlags.BUFFER) != 0) {
                    if (buffers != null && !buffers.isClosed()) {
                        buffers.delivered(CqeFlags.bufferId(flags));
                    } else {
                        // Unreachable while closing a ring with an armed receive is refused; should the
                        // kernel still hand out a buffer of a closed ring, the memory is not the app's.
                        result = -Errno.ECANCELED;
                        flags &= ~CqeFlags.BUFFER & ((1 << CqeFlags.BUFFER_SHIFT) - 1);
                    }
                } else if (op == Op.ACCEPT && result >= 0) {
                    openFds.add(result); // tracked even if its handler is gone, so close() frees it
                }
                if ((flags & CqeFlags.NOTIF) != 0 && (result & CqeFlags.ZC_COPIED) != 0) {
                    counters.zeroCopyCopied();
                } else if (result == -Errno.ENOBUFS && (op == Op.RECV_MULTISHOT || op == Op.RECV_SELECT)) {
                    counters.noBuffers();
                }
                dispatched++;
                dispatch(userData, result, flags);
            }
        } finally {
            reaping = false;
            if (head != ring.cqHead()) {
                ring.releaseCqHead(head);
            }
            if (dispatched > 0) {
                counters.completed(dispatched);
            }
        }
        int dropped = ring.droppedCompletions();
        if (dropped > 0) {
            counters.cqOverflow(dropped);
        }
        if (ring.overflowPending()) {
            overflowSlowPath();
        }
        return dispatched;
    }

    /**
     * Completions wait in the kernel's overflow list (FEAT_NODROP: delayed, not lost). The next poll
     * enters to flush them; the user learns once, through {@link #features()}, that the CQ is too small.
     */
    private void overflowSlowPath() {
        counters.cqOverflowEvent();
        if (counters.cqOverflowEvents() == 1) {
            notes.add("CQ ring overflowed (" + ring.cqEntries() + " entries); completions were delayed, "
                    + "not lost: raise cqEntries");
            refreshFeatures();
        }
    }

    private void onInternal(int op, int result) {
        if (op == UserData.WAKEUP_OP) {
            wakeupArmed = false;
            if (result >= 0) {
                counters.wakeup();
            }
            if (!closer.closing()) {
                armWakeup();
            }
        } else {
            internalPending--;
        }
    }

    @Override
    public void execute(Runnable task) {
        offerTask(task);
        if (!inLoop()) {
            wakeup();
        }
    }

    @Override
    public void wakeup() {
        wakeups.wakeup();
    }

    @Override
    public int pending() {
        return userPending;
    }

    // ---------------------------------------------------------------- control path

    @Override
    public int listen(InetSocketAddress address, int backlog) throws IOException {
        ensureOwner();
        checkAddress(address, "address");
        if (backlog < 1) {
            throw new IllegalArgumentException("backlog must be >= 1, got " + backlog);
        }
        return control.listen(address, backlog);
    }

    @Override
    public int socket(InetSocketAddress address) throws IOException {
        ensureOwner();
        checkAddress(address, "address");
        return control.socket(address);
    }

    @Override
    public void bind(int socket, InetSocketAddress local) throws IOException {
        ensureOwner();
        checkSocket(socket);
        checkAddress(local, "local");
        checkOpenSocket(socket);
        InetSocketAddress bound = control.localAddress(socket);
        checkBind(socket, SockAddr.family(bound) == Linux.AF_INET6, bound, control.peerAddress(socket), local);
        control.bind(socket, local);
    }

    @Override
    public InetSocketAddress localAddress(int socket) throws IOException {
        ensureOwner();
        checkSocket(socket);
        return control.localAddress(socket);
    }

    @Override
    public InetSocketAddress remoteAddress(int socket) throws IOException {
        ensureOwner();
        checkSocket(socket);
        return control.peerAddress(socket);
    }

    @Override
    public void setTcpNoDelay(int socket, boolean on) throws IOException {
        ensureOwner();
        checkSocket(socket);
        control.setTcpNoDelay(socket, on);
    }

    @Override
    public void setBufferSizes(int socket, int sendBytes, int receiveBytes) throws IOException {
        ensureOwner();
        checkSocket(socket);
        checkBufferSizes(sendBytes, receiveBytes);
        control.setBufferSizes(socket, sendBytes, receiveBytes);
    }

    @Override
    public boolean setUserTimeout(int socket, int millis) throws IOException {
        ensureOwner();
        checkSocket(socket);
        checkUserTimeout(millis);
        checkOpenSocket(socket);
        control.setUserTimeout(socket, millis);
        return true;
    }

    @Override
    public void setResetOnClose(int socket) throws IOException {
        ensureOwner();
        checkSocket(socket);
        checkOpenSocket(socket);
        control.setResetOnClose(socket);
    }

    @Override
    public DetachedSocket detach(int socket, int handler) throws IOException {
        ensureOwner();
        checkSocket(socket);
        checkOpenSocket(socket);
        checkQuiet(socket, handler);
        if (control.peerAddress(socket) == null) {
            throw new IOException("socket " + socket + " is not connected (listening, or not yet connected): only a"
                    + " connected socket may move to another loop");
        }
        openFds.remove(socket);
        return new DetachedFd(socket);
    }

    @Override
    public int adopt(DetachedSocket socket) {
        ensureOwner();
        checkDetached(socket, EngineKind.URING);
        if (closer.closing()) {
            throw new IllegalStateException("event loop is closing");
        }
        DetachedFd detached = (DetachedFd) socket;
        if (!detached.adopt()) {
            throw new IllegalStateException(socket + " was adopted or closed already");
        }
        openFds.add(detached.fd);
        return detached.fd;
    }

    /**
     * Throws unless this loop opened or accepted {@code socket} and it is not closed: an fd number alone
     * could name the ring, a closed socket's successor or a file of someone else's.
     */
    private void checkOpenSocket(int socket) throws IOException {
        if (!openFds.contains(socket)) {
            throw notOpen(socket);
        }
    }

    @Override
    protected void checkOpenOwner() {
        ensureOwner();
    }

    @Override
    protected void installFixedBuffers(List<MemoryRegion> all, int kept) throws IOException {
        control.installFixedBuffers(all, kept);
    }

    @Override
    public BufferRing createBufferRing(int groupId, BufferPool pool, int count, int bufferSize) throws IOException {
        ensureOwner();
        UringBufferRing created = new UringBufferRing(this, sys, ring.fd(), groupId, pool, count, bufferSize);
        bufferRings.add(created);
        return created;
    }

    void bufferRingClosed(UringBufferRing closedRing) {
        bufferRings.remove(closedRing);
    }

    // ---------------------------------------------------------------- close

    /**
     * Cancels everything in flight ({@code ASYNC_CANCEL ANY|ALL}), reaps (dispatching the cancelled
     * completions) until nothing is pending and every zero-copy notification is in, or until a deadline
     * of 5 s passes (then it reports on stderr what is stuck), closes the sockets the user left open, the
     * loop's buffer rings, the eventfd and the ring ({@code CloseDrain} does the work). An operation a
     * handler prepares meanwhile is not submitted: it completes {@code -ECANCELED} (bounded rounds, as
     * on NIO). When the deadline passed, the buffer rings and the loop's native memory are leaked on
     * purpose, since the kernel may still write into them. Owner thread only; idempotent. Called from a
     * completion handler, it takes effect when the current batch of completions has been dispatched.
     */
    @Override
    public void close() {
        if (closer.closing()) { // closed, or called again by a handler while the drain dispatches
            return;
        }
        if (reaping) {
            closeRequested = true;
            return;
        }
        boolean neverUsed = claimOwner();
        closeTasks();
        closer.close(neverUsed);
    }

    /** For {@link CloseDrain}, once the loop is closed: whether everything provably left the kernel. */
    void afterClose(boolean drained) {
        retireCounters();
        closeBookkeeping(drained);
    }

    /** For {@link CloseDrain}: the writable counters. */
    Counters writableCounters() {
        return counters;
    }

    /** For {@link CloseDrain}: prepares one cancel of everything in flight, an internal operation. */
    void cancelAll() {
        Prep.cancel(take(1), 0, IoUring.ASYNC_CANCEL_ANY | IoUring.ASYNC_CANCEL_ALL).userData(cancelUserData);
        internalPending++;
    }

    /** For {@link CloseDrain}: no operation, internal request or wake-up read is left in the kernel. */
    boolean nothingInKernel() {
        return userPending == 0 && internalPending == 0 && !wakeupArmed;
    }

    /** For {@link CloseDrain}: submits, waits up to {@code nanos} for a completion, and dispatches. */
    void waitAndReap(long nanos) {
        enter(true, nanos);
        reap();
    }

    /** For {@link CloseDrain}: a refused operation is no longer pending (completed or dropped). */
    void forget(long userData) {
        userPending--;
        pendingByOp[UserData.op(userData)]--;
    }

    /** For {@link CloseDrain}: a refused operation is dropped without a completion. */
    void drop(long userData) {
        forget(userData);
        operationDropped(userData);
    }

    /** For {@link CloseDrain}: dispatches a completion the kernel never posted. */
    void complete(long userData, int result, int flags) {
        dispatch(userData, result, flags);
    }

    @Override
    public String toString() {
        StringBuilder pendingOps = new StringBuilder();
        for (int op = 1; op < pendingByOp.length; op++) {
            if (pendingByOp[op] != 0) {
                pendingOps.append(pendingByOp[op]).append('x').append(Op.name(op)).append(' ');
            }
        }
        return "UringEventLoop[" + ring + " pending=" + userPending + (pendingOps.isEmpty() ? "" : " (" + pendingOps.toString().trim() + ")")
                + " internal=" + internalPending + (closer.refused() > 0 ? " refused=" + closer.refused() : "")
                + " openSockets=" + openFds.count()
                + (wakeupArmed ? " wakeup-armed" : "") + (closer.closed() ? " closed" : "")
                + " " + counters + "]";
    }
}
