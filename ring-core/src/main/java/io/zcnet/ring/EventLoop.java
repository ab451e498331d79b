package io.zcnet.ring;

import io.zcnet.buffer.BufferPool;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.ring.internal.Counters;
import io.zcnet.ring.internal.UserData;

import org.jctools.queues.atomic.MpscAtomicArrayQueue;
import org.jctools.queues.atomic.MpscUnboundedAtomicArrayQueue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

/**
 * One engine instance driven by one thread: an io_uring ({@link EngineKind#URING}) or a
 * {@code java.nio} selector ({@link EngineKind#NIO}) with the same operations and the same
 * completions.
 *
 * <h2>Threading</h2>
 * An event loop is confined to its owner, the first thread that calls {@link #poll(long)} or submits an
 * operation (with io_uring's SINGLE_ISSUER the kernel enforces this; when several threads race for a
 * fresh loop, a CAS makes exactly one the owner). Every method is owner-only except
 * {@link #execute(Runnable)}, {@link #wakeup()}, {@link #engine()}, {@link #features()} and
 * {@link #counters()}, which any thread may call. {@link EventLoopThread} runs a loop on a thread of its
 * own. {@link #poll(long)} is not re-entrant: a completion handler or task that calls it gets an
 * {@link IllegalStateException} (a nested poll would dispatch completions twice or out of order).
 *
 * <h2>Handler ids</h2>
 * A handler id stays bound to its handler while any operation prepared under it is in flight
 * ({@link #inFlight(int)}): {@link #unregisterHandler} retires the id, its late completions are dropped
 * and counted ({@link LoopCounters#droppedCompletions()}), and the id is handed out again only after the
 * last of them. A completion therefore never reaches a handler registered after its operation was prepared.
 *
 * <h2>Operations and completions</h2>
 * Each asynchronous method prepares one operation and returns its {@code user_data}
 * (handler id, operation and tag packed into 64 bits), the value {@link #cancel} takes. Nothing reaches the kernel or the selector
 * until the next {@link #poll(long)}, which submits everything prepared in one system call, waits, and
 * calls {@link CompletionHandler#onCompletion} for each completion. Results follow the kernel: a byte
 * count, a socket handle, 0, or {@code -errno} ({@link Errno}).
 *
 * <p>Memory given to an operation ({@code send}, {@code recv}) must stay alive and untouched until its
 * completion; for {@link #sendZeroCopy} until the {@link CqeFlags#NOTIF} completion when the first one
 * had {@link CqeFlags#MORE}.
 *
 * <p>Socket handles are small non-negative ints owned by this loop (a file descriptor on io_uring, a
 * table slot on NIO); they mean nothing to another loop.
 *
 * <h2>Errors</h2>
 * What fails at run time (a refused connection, a reset, an empty buffer ring) completes with
 * {@code -errno}; nothing is thrown for it. The methods that prepare operations throw only for the
 * caller's mistakes, before anything reaches the kernel: {@link IllegalArgumentException} for a handler id
 * that is not registered, a negative socket handle, memory that is not alive or a range outside it,
 * {@code msg_flags} other than {@link MsgFlags}, an unresolved address or a negative duration;
 * {@link IllegalStateException} off the owner thread, after {@link #close()}, or for a link that does not
 * follow the operation it chains; {@link UnsupportedOperationException} for an operation this kernel's
 * io_uring lacks ({@link #supports}). The socket and registration methods ({@link #listen},
 * {@link #socket}, {@link #bind}, the socket options, {@link #registerFixedBuffers},
 * {@link #createBufferRing}) make their system calls at once and throw {@link IOException} naming the
 * errno when one fails.
 *
 * <p>Sealed: the two engines are its only subclasses, so its {@code protected} members are the engines'
 * shared bookkeeping inside this module, not an extension point.
 */
public abstract sealed class EventLoop implements AutoCloseable
        permits io.zcnet.ring.uring.UringEventLoop, io.zcnet.ring.nio.NioEventLoop {

    /** {@code SHUT_RD}, {@code SHUT_WR}, {@code SHUT_RDWR} from {@code sys/socket.h}. */
    public static final int SHUT_RD = 0;
    /** {@code SHUT_WR}: no more sends; the peer reads EOF. */
    public static final int SHUT_WR = 1;
    /** {@code SHUT_RDWR}: both directions. */
    public static final int SHUT_RDWR = 2;

    /** The fixed-buffer index of memory that is not a registered fixed buffer of this loop. */
    public static final int NO_FIXED_BUFFER = -1;

    // Threads race to own a fresh loop (CAS); producers and close() race on the task gate (Dekker: each
    // writes its own word, then reads the other's, all volatile).
    private static final VarHandle OWNER;
    private static final VarHandle TASK_PRODUCERS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            OWNER = lookup.findVarHandle(EventLoop.class, "owner", Thread.class);
            TASK_PRODUCERS = lookup.findVarHandle(EventLoop.class, "taskProducers", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final HandlerTable handlers = new HandlerTable();
    /** The engine's own handler id ({@link #registerInternalHandler}), or -1: users may not free it. */
    private int internalHandler = -1;
    // JCTools' atomic flavour: the same MPSC array queue without the Unsafe field offsets JDK 24+ warns about.
    private final MpscAtomicArrayQueue<Runnable> tasks;
    /**
     * Raised {@link LoopSignal}s, each at most once: unbounded only in name, since it never holds more than the
     * signals made, so a raise is never refused while the loop is open.
     */
    private final MpscUnboundedAtomicArrayQueue<LoopSignal> signals = new MpscUnboundedAtomicArrayQueue<>(64);
    /** Regions registered as fixed buffers, by index; each holds a pin until the loop closes. */
    private final List<MemoryRegion> fixedBuffers = new ArrayList<>();
    @SuppressWarnings("unused") // accessed through OWNER
    private volatile Thread owner;
    /** Threads inside {@link #offerTask} right now. */
    @SuppressWarnings("unused") // accessed through TASK_PRODUCERS
    private volatile int taskProducers;
    private volatile boolean tasksClosed;
    private boolean polling;

    private final Counters counters;

    /** Counters are reported to JFR from here until {@link #retireCounters()}. */
    protected EventLoop(EventLoopConfig config, EngineKind engine) {
        this.tasks = new MpscAtomicArrayQueue<>(config.taskCapacity());
        this.counters = new Counters(engine);
        LoopStatisticsEvent.track(counters);
    }

    /** {@return which engine runs this loop} */
    public abstract EngineKind engine();

    /** {@return what was negotiated with the kernel (setup flags, features, supported opcodes), for display} */
    public abstract EngineFeatures features();

    /**
     * {@return whether this loop can run operations of kind {@code op} ({@link Op}): io_uring answers from the
     * kernel's probe (an operation the kernel lacks is refused with {@link UnsupportedOperationException}
     * when prepared); the NIO engine runs every kind} Any thread.
     *
     * @param op an {@link Op} number
     */
    public abstract boolean supports(int op);

    /**
     * {@return the live counters of this loop (syscalls, submissions, completions, overflows, buffer shortages)} Any
     * thread.
     */
    public final LoopCounters counters() {
        return counters;
    }

    /** The writable counters, for the engine. */
    protected final Counters counterSet() {
        return counters;
    }

    /** Stops reporting the counters to JFR: the loop has closed. Idempotent. */
    protected final void retireCounters() {
        LoopStatisticsEvent.untrack(counters);
    }

    // ---------------------------------------------------------------- handlers

    /**
     * Adds a handler to the dispatch table; the returned id goes into every operation it should receive.
     * Owner thread.
     *
     * @param handler receives the completions of every operation prepared under the returned id
     * @return the handler id to pass to operations
     */
    public final int registerHandler(CompletionHandler handler) {
        return handlers.add(handler);
    }

    /**
     * Unregisters a handler. Completions still arriving for its operations are dropped and counted; the
     * id is not handed out again before the last of them ({@link #inFlight(int)} reaches 0). Owner thread.
     *
     * @param handlerId an id {@link #registerHandler} returned
     * @throws IllegalArgumentException if no handler has that id, or it is the engine's own
     */
    public final void unregisterHandler(int handlerId) {
        if (handlerId == internalHandler) {
            throw new IllegalArgumentException("handler id " + handlerId + " was not returned by registerHandler"
                    + " (it is the engine's own)");
        }
        handlers.remove(handlerId);
    }

    /**
     * {@return how many operations prepared under {@code handlerId} have not had their final completion}
     * An operation counts until its final completion (the one without {@link CqeFlags#MORE}) is dispatched,
     * also after the handler was unregistered: what a failover must wait for before it may reuse the memory
     * those operations use. 0 for an id with nothing in flight; once an unregistered id reads 0 it may be
     * handed out again. Owner thread.
     *
     * @param handlerId an id {@link #registerHandler} returned
     * @throws IllegalArgumentException if the id is outside [0, 2<sup>24</sup>)
     */
    public final int inFlight(int handlerId) {
        return handlers.inFlight(handlerId);
    }

    /** Registers the engine's own handler, once: {@link #unregisterHandler} refuses its id. */
    protected final int registerInternalHandler(CompletionHandler handler) {
        if (internalHandler >= 0) {
            throw new IllegalStateException("the internal handler is registered already");
        }
        internalHandler = handlers.add(handler);
        return internalHandler;
    }

    /**
     * Routes one completion to its handler: the engines call this for every reaped completion of an
     * operation they counted with {@link #operationStarted}. A final completion (no {@link CqeFlags#MORE})
     * ends the operation before its handler runs, so a handler that throws cannot leave it counted.
     */
    protected final void dispatch(long userData, int result, int flags) {
        int id = UserData.handler(userData);
        if ((flags & CqeFlags.MORE) == 0) {
            handlers.finished(id);
        }
        CompletionHandler handler = handlers.get(id);
        if (handler == null) {
            counters.droppedCompletion();
            return;
        }
        handler.onCompletion(UserData.op(userData), UserData.tag(userData), result, flags);
    }

    /** An operation is prepared: it is in flight for its handler until its final completion. */
    protected final void operationStarted(long userData) {
        handlers.started(UserData.handler(userData));
    }

    /** An operation ends without a completion (dropped while the loop closes). */
    protected final void operationDropped(long userData) {
        handlers.finished(UserData.handler(userData));
    }

    // ---------------------------------------------------------------- confinement and tasks

    /**
     * Makes the calling thread the owner on first use and rejects every other thread afterwards.
     *
     * @return true if this call made the caller the owner (the engine may then finish thread-bound setup)
     */
    protected final boolean claimOwner() {
        Thread current = Thread.currentThread();
        Thread seen = (Thread) OWNER.getAcquire(this);
        if (seen == current) {
            return false;
        }
        if (seen == null) {
            seen = (Thread) OWNER.compareAndExchange(this, (Thread) null, current); // volatile CAS: one winner
            if (seen == null) {
                return true;
            }
        }
        throw new IllegalStateException("event loop is owned by " + seen.getName()
                + "; called from " + current.getName() + " (use execute() from other threads)");
    }

    /** {@return whether the caller is the owner thread} */
    public final boolean inLoop() {
        return OWNER.getAcquire(this) == Thread.currentThread();
    }

    /**
     * The start of every {@link #poll(long)}, once the owner is checked.
     *
     * @throws IllegalStateException when called from inside a poll of this loop (a handler or a task)
     */
    protected final void beginPoll() {
        if (polling) {
            throw new IllegalStateException("poll() re-entered from a completion handler or task of the same"
                    + " loop: return to the loop instead (a nested poll would dispatch completions twice)");
        }
        polling = true;
    }

    /** The end of every {@link #poll(long)} that {@link #beginPoll()} started, also when a handler threw. */
    protected final void endPoll() {
        polling = false;
    }

    /** Whether a {@link #poll(long)} is running on the owner thread (its handlers and tasks are). */
    protected final boolean isPolling() {
        return polling;
    }

    /**
     * Queues a task for the owner thread; the engine wakes itself afterwards. The queue is bounded
     * (JCTools MPSC array queue): a full queue is a {@link RejectedExecutionException}, never a block,
     * and so is a loop that is closing or closed ({@link #closeTasks}).
     */
    protected final void offerTask(Runnable task) {
        if (task == null) {
            throw new IllegalArgumentException("task is null");
        }
        TASK_PRODUCERS.getAndAdd(this, 1); // volatile: close() sees this producer, or it sees the gate shut
        try {
            if (tasksClosed) {
                throw new RejectedExecutionException("event loop is closed");
            }
            if (!tasks.offer(task)) {
                throw new RejectedExecutionException("event loop task queue is full (" + tasks.capacity() + ")");
            }
        } finally {
            TASK_PRODUCERS.getAndAdd(this, -1);
        }
    }

    /**
     * {@return a signal whose {@link LoopSignal#raise()} has this loop run {@code action} once, on its thread}
     * Any thread; made once per object it wakes, not per wake-up.
     *
     * @param action what to run on the loop thread; it must not block the loop
     */
    public final LoopSignal newSignal(Runnable action) {
        if (action == null) {
            throw new IllegalArgumentException("action is null");
        }
        return new LoopSignal(this, action);
    }

    /** Queues a signal its raise just flagged, and wakes the loop from another thread; false once closing. */
    final boolean offerSignal(LoopSignal signal) {
        TASK_PRODUCERS.getAndAdd(this, 1); // volatile: close() sees this producer, or it sees the gate shut
        try {
            if (tasksClosed) {
                return false;
            }
            signals.offer(signal);
        } finally {
            TASK_PRODUCERS.getAndAdd(this, -1);
        }
        if (!inLoop()) {
            wakeup();
        }
        return true;
    }

    /**
     * Shuts the task gate at the start of {@link #close()}: later {@link #execute} calls are rejected, and
     * every task accepted before runs now, on the owner thread, so none is silently lost.
     */
    protected final void closeTasks() {
        tasksClosed = true; // volatile: a producer that has not yet read the gate will see it shut
        while ((int) TASK_PRODUCERS.getVolatile(this) != 0) {
            Thread.onSpinWait(); // a producer between its check and its offer: a few instructions
        }
        while (hasTasks()) {
            runTasks();
        }
    }

    /**
     * {@return whether tasks are waiting for the next poll} The engine then does not block in it; a thread that
     * drives the loop itself polls again rather than leave them.
     */
    public final boolean hasTasks() {
        return !signals.isEmpty() || !tasks.isEmpty();
    }

    /**
     * Runs the raised signals, then the queued tasks: at most those raised or queued when it started, so one that
     * raises or queues another cannot starve I/O.
     */
    protected final int runTasks() {
        int ran = signals.isEmpty() ? 0 : signals.drain(LoopSignal::run, signals.size());
        ran += tasks.drain(Runnable::run, tasks.capacity());
        if (ran > 0) {
            counters.tasks(ran);
        }
        return ran;
    }

    // ---------------------------------------------------------------- control path (synchronous)

    /**
     * Opens a TCP listening socket bound to {@code address}.
     *
     * @param address the address to bind; port 0 picks a free one
     * @param backlog the kernel's accept queue length, at least 1
     * @return the listening socket's handle, for {@link #accept}
     * @throws IOException if the socket cannot be opened, bound or put into listening state (the errno's name is in the
     *                     message)
     */
    public abstract int listen(InetSocketAddress address, int backlog) throws IOException;

    /**
     * Opens an unconnected TCP socket for {@code address}'s family, ready for {@link #connect}.
     *
     * @param address the remote address, for its family
     * @return the socket's handle
     * @throws IOException if the socket cannot be opened
     */
    public abstract int socket(InetSocketAddress address) throws IOException;

    /**
     * Binds {@code socket}, an unconnected socket from {@link #socket}, to {@code local} so that its
     * {@link #connect} leaves from that address: one TCP subflow per network path. io_uring:
     * {@code bind(2)}; NIO: {@code SocketChannel.bind}. Port 0 takes a free ephemeral port at once, which
     * {@link #localAddress} then reports. Only the source address is chosen: the kernel still picks the
     * outgoing interface by its routes, so a host with one route per path needs source rules
     * ({@code ip rule add from ADDRESS table T}) for each path's packets to leave through its interface.
     * Owner thread.
     *
     * @param socket an unconnected socket from {@link #socket}
     * @param local the source address (port 0: any free port)
     * @throws IllegalArgumentException if {@code local} is null or unresolved, or not of the family the
     *                                  socket was opened for
     * @throws IOException              if the socket is not open on this loop, has a local address already
     *                                  (bound before, connected, or connecting), or the kernel refuses the
     *                                  address ({@code EADDRNOTAVAIL}: not one of this host's;
     *                                  {@code EADDRINUSE})
     */
    public abstract void bind(int socket, InetSocketAddress local) throws IOException;

    /**
     * {@return the local address a socket is bound to}
     *
     * @param socket a socket handle of this loop
     * @throws IOException if the handle is not open
     */
    public abstract InetSocketAddress localAddress(int socket) throws IOException;

    /**
     * {@return the connected peer's address, or null while the socket is not connected (or is a listener)}
     *
     * @param socket a socket handle of this loop
     * @throws IOException if the handle is not open
     */
    public abstract InetSocketAddress remoteAddress(int socket) throws IOException;

    /**
     * Sets {@code TCP_NODELAY}.
     *
     * @param socket a socket handle of this loop
     * @param on whether small segments leave at once rather than waiting for Nagle's algorithm
     * @throws IOException if the option cannot be set
     */
    public abstract void setTcpNoDelay(int socket, boolean on) throws IOException;

    /**
     * Sets {@code SO_SNDBUF} and {@code SO_RCVBUF}; a value of 0 leaves that one alone.
     *
     * @param socket a socket handle of this loop
     * @param sendBytes {@code SO_SNDBUF} in bytes, or 0 to leave it
     * @param receiveBytes {@code SO_RCVBUF} in bytes, or 0 to leave it
     * @throws IOException if an option cannot be set
     */
    public abstract void setBufferSizes(int socket, int sendBytes, int receiveBytes) throws IOException;

    /**
     * Sets {@code TCP_USER_TIMEOUT} (tcp(7)): the longest time, in milliseconds, that data sent on
     * {@code socket} may stay unacknowledged before the kernel gives the connection up, so that a path
     * that silently drops everything is found within a bound instead of after the retransmission limit
     * ({@code tcp_retries2}, about 15 minutes). Its operations then complete {@code -ETIMEDOUT}. It only
     * runs while sent data waits for its acknowledgement (or keepalive probes go unanswered): a path that
     * carries nothing is not probed by it. 0 restores the system default. Set on a listening socket, it is
     * inherited by the sockets accepted from it. Owner thread.
     *
     * @return whether the option reached the kernel: always on io_uring; never on NIO, which has no way
     *         to set it (the JDK offers no such option, {@code jdk.net.ExtendedSocketOptions} of JDK 25
     *         included, and a channel's file descriptor is out of reach without opening JDK internals).
     *         A caller that gets false must bound the wait itself, e.g. with {@link #linkTimeout}.
     * @param socket a socket handle of this loop
     * @param millis the bound in milliseconds; 0 restores the kernel's default
     * @throws IllegalArgumentException if {@code millis} is negative
     * @throws IOException              if the socket is not open on this loop, or the kernel refuses
     */
    public abstract boolean setUserTimeout(int socket, int millis) throws IOException;

    /**
     * Makes the {@link #close} of stream socket {@code socket} abortive: {@code SO_LINGER} on with a timeout of 0
     * (socket(7)), so the kernel drops what it still holds to send and resets the connection (RST) instead of
     * sending that and a FIN. For a connection given up as failed: nothing it still held reaches the peer
     * afterwards, and a dead path costs no retransmissions of orphaned data. Owner thread.
     *
     * @param socket a socket handle of this loop; a listening socket has no connection, and is closed as before
     * @throws IOException if the socket is not open on this loop, or the kernel refuses
     */
    public abstract void setResetOnClose(int socket) throws IOException;

    /**
     * Lets go of connected socket {@code socket} so that another loop of the same engine may {@link #adopt} it: the
     * way a connection accepted on one loop thread is served by another. The socket stays open and connected
     * (nothing reaches the peer); its handle here is freed at once and means nothing to this loop afterwards, and
     * this loop's {@link #close()} no longer closes it. io_uring: the fd leaves the loop's set of open sockets; NIO:
     * the channel's selection key is cancelled and its table slot freed. Bytes the kernel has received and nobody
     * read yet stay in the socket for the adopter. Owner thread.
     *
     * <p>Refused while an operation on the socket is in flight, since its completion would come here for a socket
     * this loop no longer knows. The loop counts operations per handler, not per socket (a completion carries no
     * socket), so the caller names the handler every operation on the socket was prepared under, and the socket
     * should have a handler of its own; the NIO engine refuses as well while any operation waits on the socket
     * itself.
     *
     * @param socket  a connected (accepted, or connected through this loop) socket of this loop
     * @param handler the handler of the socket's operations
     * @return the socket, for exactly one {@link #adopt}; {@link DetachedSocket#close()} closes it if nobody does
     * @throws IllegalStateException    if {@code handler} (or, on NIO, the socket) has operations in flight, or off
     *                                  the owner thread, or after {@link #close()}
     * @throws IllegalArgumentException if {@code handler} is not registered
     * @throws IOException              if the socket is not open on this loop, or not connected (a listening
     *                                  socket, or one whose connect has not completed)
     */
    public abstract DetachedSocket detach(int socket, int handler) throws IOException;

    /**
     * Takes over a socket another loop of this engine {@linkplain #detach detached}: it becomes a socket of this loop
     * like one it accepted, closed by this loop's {@link #close()} if the user has not closed it. Owner thread.
     *
     * @param socket the detached socket; taken by this call, so a second adopt of it is refused
     * @return the socket's handle on this loop
     * @throws IllegalArgumentException if {@code socket} is null or was detached by the other engine
     * @throws IllegalStateException    if it was adopted or closed already, or off the owner thread, or after
     *                                  {@link #close()}
     * @throws IOException              if the engine cannot take it (NIO: the selector refuses the channel); the
     *                                  socket is then closed
     */
    public abstract int adopt(DetachedSocket socket) throws IOException;

    /** Throws unless {@code socket} is of {@code engine}: what both engines' {@link #adopt} check first. */
    protected static void checkDetached(DetachedSocket socket, EngineKind engine) {
        if (socket == null) {
            throw new IllegalArgumentException("detached socket is null");
        }
        if (socket.engine() != engine) {
            throw new IllegalArgumentException("a socket detached from an " + socket.engine() + " loop cannot be adopted"
                    + " by an " + engine + " loop");
        }
    }

    /** Throws while {@code handler} has operations in flight: what both engines' {@link #detach} check. */
    protected final void checkQuiet(int socket, int handler) {
        checkHandler(handler);
        int n = inFlight(handler);
        if (n > 0) {
            throw new IllegalStateException("cannot detach socket " + socket + ": " + n + " operation(s) of handler "
                    + handler + " in flight; wait for their completions (or cancel them) first");
        }
    }

    /**
     * Registers regions as this loop's fixed buffers for {@link #sendZeroCopy}
     * ({@code IORING_REGISTER_BUFFERS}); the NIO engine numbers them the same way, so callers need not
     * care. A region registered already keeps its index, a new one gets the next; indices belong to this
     * loop ({@link #fixedBufferIndex}). Each region is {@linkplain MemoryRegion#pin() pinned} until the
     * loop closes, since the kernel may read it any time: it cannot be deregistered, nor its pool closed,
     * meanwhile. Owner thread.
     *
     * @return each given region's index, in argument order
     * @param regions registered regions of native memory
     * @throws IllegalArgumentException if a region is missing, deregistered or not native memory
     * @throws IOException              if the kernel refuses (the table then stays as it was)
     */
    public final int[] registerFixedBuffers(MemoryRegion... regions) throws IOException {
        checkOpenOwner();
        checkRegions(regions);
        List<MemoryRegion> added = new ArrayList<>();
        for (MemoryRegion region : regions) {
            if (!fixedBuffers.contains(region) && !added.contains(region)) {
                added.add(region);
            }
        }
        int pinned = 0;
        try {
            for (MemoryRegion region : added) {
                if (!region.pin()) {
                    throw new IllegalArgumentException("region is deregistered: " + region);
                }
                pinned++;
            }
            if (!added.isEmpty()) {
                List<MemoryRegion> all = new ArrayList<>(fixedBuffers);
                all.addAll(added);
                installFixedBuffers(all, fixedBuffers.size());
                fixedBuffers.addAll(added);
            }
        } catch (IOException | RuntimeException e) {
            for (int i = 0; i < pinned; i++) {
                added.get(i).unpin();
            }
            throw e;
        }
        int[] indices = new int[regions.length];
        for (int i = 0; i < regions.length; i++) {
            indices[i] = fixedBuffers.indexOf(regions[i]);
        }
        return indices;
    }

    /**
     * {@return the index {@code region} has in this loop's fixed buffers, or {@link #NO_FIXED_BUFFER}} Owner thread.
     *
     * @param region a registered region
     */
    public final int fixedBufferIndex(MemoryRegion region) {
        return fixedBuffers.indexOf(region);
    }

    /**
     * Makes {@code all} the engine's fixed-buffer table; its first {@code kept} entries are the table
     * as it was and keep their indices. Throws, changing nothing, if the engine refuses.
     */
    protected abstract void installFixedBuffers(List<MemoryRegion> all, int kept) throws IOException;

    /** The regions registered as fixed buffers, by index: for the engines' checks. */
    protected final List<MemoryRegion> fixedBuffers() {
        return fixedBuffers;
    }

    /**
     * The end of {@link #close()}: forgets the handlers' operations in flight, and, when {@code drained}
     * (nothing can be in the kernel any more), gives back the fixed buffers' pins. Otherwise they stay
     * pinned for good: the kernel may still read them.
     */
    protected final void closeBookkeeping(boolean drained) {
        handlers.clearInFlight();
        if (drained) {
            for (MemoryRegion region : fixedBuffers) {
                region.unpin();
            }
            fixedBuffers.clear();
        }
    }

    /** Throws unless the caller owns the loop and it is open: the checks of every control-path call. */
    protected abstract void checkOpenOwner();

    /**
     * Creates a provided-buffer ring of {@code count} buffers leased from {@code pool}'s size class that
     * fits {@code bufferSize}, for {@link #recvMultishot} and {@link #recvSelect}. Owner thread.
     *
     * @param groupId the buffer group id ({@code bgid}) operations name the ring by, unique within this loop
     * @param pool where the buffers are leased from
     * @param count number of buffers, a power of two
     * @param bufferSize bytes each buffer must hold
     * @return the ring; close it before the pool
     * @throws IOException if the kernel refuses to register the ring (the errno's name is in the message)
     */
    public abstract BufferRing createBufferRing(int groupId, BufferPool pool, int count, int bufferSize)
            throws IOException;

    // ---------------------------------------------------------------- asynchronous operations

    /**
     * Completes with result 0 and no side effect: measures the submission/completion round trip.
     *
     * @param handler the id {@link #registerHandler} returned for the handler that receives the completion
     * @param tag any value, handed back with the completion
     * @return the operation's {@code user_data}, for {@link #cancel}
     */
    public abstract long nop(int handler, int tag);

    /**
     * Accepts connections on a listening socket. Each completion's result is a new socket handle. With
     * {@code multishot} it stays armed while completions carry {@link CqeFlags#MORE}.
     *
     * @param handler the id {@link #registerHandler} returned for the handler that receives the completions
     * @param tag any value, handed back with each completion
     * @param listenSocket a socket from {@link #listen}
     * @param multishot whether one operation accepts connection after connection
     * @return the operation's {@code user_data}, for {@link #cancel}
     */
    public abstract long accept(int handler, int tag, int listenSocket, boolean multishot);

    /**
     * Connects a socket from {@link #socket}; result 0 or {@code -errno} (e.g. ECONNREFUSED).
     *
     * @param handler the id {@link #registerHandler} returned for the handler that receives the completion
     * @param tag any value, handed back with the completion
     * @param socket an unconnected socket from {@link #socket}
     * @param remote the address to connect to
     * @return the operation's {@code user_data}, for {@link #cancel}
     */
    public abstract long connect(int handler, int tag, int socket, InetSocketAddress remote);

    /**
     * Sends {@code length} bytes at {@code offset} in {@code buffer}. The result may be short unless
     * {@code msgFlags} has {@link MsgFlags#WAITALL}, in which case it is all bytes or an error.
     *
     * @param msgFlags {@link MsgFlags#NONE}, or {@link MsgFlags#WAITALL} and {@link MsgFlags#MORE} combined
     * @param handler the id {@link #registerHandler} returned for the handler that receives the completion
     * @param tag any value, handed back with the completion
     * @param socket a connected socket of this loop
     * @param buffer native memory that stays alive and unchanged until the completion
     * @param offset where the bytes start in {@code buffer}
     * @param length how many bytes to send
     * @return the operation's {@code user_data}, for {@link #cancel}
     */
    public abstract long send(int handler, int tag, int socket, MemorySegment buffer, long offset, int length,
            int msgFlags);

    /**
     * Zero-copy send ({@code IORING_OP_SEND_ZC} with {@code IORING_SEND_ZC_REPORT_USAGE}). The first
     * completion carries the byte count and, normally, {@link CqeFlags#MORE}; a second one with
     * {@link CqeFlags#NOTIF} says the buffer is free, its result having {@link CqeFlags#ZC_COPIED} when
     * the kernel copied after all. {@code fixedBufferIndex} is this loop's index of the region that holds
     * the range ({@link #fixedBufferIndex}), or {@link #NO_FIXED_BUFFER}.
     *
     * @param handler the id {@link #registerHandler} returned for the handler that receives the completions
     * @param tag any value, handed back with each completion
     * @param socket a connected socket of this loop
     * @param buffer native memory that stays alive and unchanged until the {@link CqeFlags#NOTIF} completion
     * @param offset where the bytes start in {@code buffer}
     * @param length how many bytes to send
     * @param fixedBufferIndex {@link #fixedBufferIndex} of the region holding the bytes, or {@link #NO_FIXED_BUFFER}
     * @param msgFlags {@link MsgFlags#NONE}, or {@link MsgFlags#WAITALL} and {@link MsgFlags#MORE} combined
     * @return the operation's {@code user_data}, for {@link #cancel}
     */
    public abstract long sendZeroCopy(int handler, int tag, int socket, MemorySegment buffer, long offset,
            int length, int fixedBufferIndex, int msgFlags);

    /**
     * Sends the pieces of {@code message} in order as one byte stream ({@code IORING_OP_SENDMSG}; NIO: a
     * gathering write): headers and payload slices go out in one system call with no copy in user space.
     * The result is the byte count (short unless {@link MsgFlags#WAITALL}) or {@code -errno}. The list
     * must stay unchanged until the completion.
     *
     * @param handler the id {@link #registerHandler} returned for the handler that receives the completion
     * @param tag any value, handed back with the completion
     * @param socket a connected socket of this loop
     * @param message the pieces to send, in order
     * @param msgFlags {@link MsgFlags#NONE}, or {@link MsgFlags#WAITALL} and {@link MsgFlags#MORE} combined
     * @return the operation's {@code user_data}, for {@link #cancel}
     */
    public abstract long sendMessage(int handler, int tag, int socket, GatherList message, int msgFlags);

    /**
     * {@link #sendMessage} without copying the payload into the socket buffer
     * ({@code IORING_OP_SENDMSG_ZC}): completes like {@link #sendZeroCopy}, a byte count with
     * {@link CqeFlags#MORE}, then a {@link CqeFlags#NOTIF} once every piece's memory is free again.
     *
     * @param handler the id {@link #registerHandler} returned for the handler that receives the completions
     * @param tag any value, handed back with each completion
     * @param socket a connected socket of this loop
     * @param message the pieces to send, in order, unchanged until the {@link CqeFlags#NOTIF} completion
     * @param msgFlags {@link MsgFlags#NONE}, or {@link MsgFlags#WAITALL} and {@link MsgFlags#MORE} combined
     * @return the operation's {@code user_data}, for {@link #cancel}
     */
    public abstract long sendMessageZeroCopy(int handler, int tag, int socket, GatherList message, int msgFlags);

    /**
     * Receives up to {@code length} bytes at {@code offset} in {@code buffer}; with
     * {@link MsgFlags#WAITALL} exactly {@code length} unless EOF or an error comes first. Result 0 is EOF.
     *
     * @param handler the id {@link #registerHandler} returned for the handler that receives the completion
     * @param tag any value, handed back with the completion
     * @param socket a connected socket of this loop
     * @param buffer writable native memory that stays alive until the completion
     * @param offset where the received bytes go in {@code buffer}
     * @param length the most bytes to receive
     * @param msgFlags {@link MsgFlags#NONE} or {@link MsgFlags#WAITALL}
     * @return the operation's {@code user_data}, for {@link #cancel}
     */
    public abstract long recv(int handler, int tag, int socket, MemorySegment buffer, long offset, int length,
            int msgFlags);

    /**
     * One receive into a buffer the engine picks from {@code ring} when data arrives
     * ({@code IORING_OP_RECV} with {@code IOSQE_BUFFER_SELECT}): the completion has {@link CqeFlags#BUFFER}
     * and the buffer id, and the handler gives the buffer back with {@link BufferRing#recycle}. An empty
     * ring completes {@code -ENOBUFS}, the data staying in the socket. Up to the ring's buffer size.
     *
     * @param handler the id {@link #registerHandler} returned for the handler that receives the completion
     * @param tag any value, handed back with the completion
     * @param socket a connected socket of this loop
     * @param ring a ring this loop created
     * @return the operation's {@code user_data}, for {@link #cancel}
     */
    public abstract long recvSelect(int handler, int tag, int socket, BufferRing ring);

    /**
     * Chains the operation prepared last to the next one prepared ({@code IOSQE_IO_LINK}): the next
     * starts only once this one completed, and if this one fails (a negative result, or fewer bytes than
     * asked with {@link MsgFlags#WAITALL}) every later operation of the chain completes
     * {@code -ECANCELED} without running. Calls may repeat to chain more; a chain left open when
     * {@link #poll} submits ends there. Owner thread.
     *
     * @throws IllegalStateException if no operation was prepared since the last poll, or the last one is a
     *                               {@link #linkTimeout} (which ends its chain)
     */
    public abstract void linkNext();

    /**
     * Multishot receive into buffers the engine picks from {@code ring}: each completion has
     * {@link CqeFlags#BUFFER} and the buffer id; the handler gives the buffer back with
     * {@link BufferRing#recycle}. When the ring runs dry the last completion is {@code -ENOBUFS} without
     * {@link CqeFlags#MORE}: no data is lost, the caller recycles and arms again.
     *
     * @param handler the id {@link #registerHandler} returned for the handler that receives the completions
     * @param tag any value, handed back with each completion
     * @param socket a connected socket of this loop
     * @param ring a ring this loop created
     * @return the operation's {@code user_data}, for {@link #cancel}
     */
    public abstract long recvMultishot(int handler, int tag, int socket, BufferRing ring);

    /**
     * Shuts down one or both directions ({@link #SHUT_RD}, {@link #SHUT_WR}, {@link #SHUT_RDWR}).
     *
     * @param handler the id {@link #registerHandler} returned for the handler that receives the completion
     * @param tag any value, handed back with the completion
     * @param socket a connected socket of this loop
     * @param how {@link #SHUT_RD}, {@link #SHUT_WR} or {@link #SHUT_RDWR}
     * @return the operation's {@code user_data}, for {@link #cancel}
     */
    public abstract long shutdown(int handler, int tag, int socket, int how);

    /**
     * Cancels every operation still pending on {@code socket}, then closes it; the socket handle is free
     * once this completes.
     *
     * @param handler the id {@link #registerHandler} returned for the handler that receives the completion
     * @param tag any value, handed back with the completion
     * @param socket a socket handle of this loop
     * @return the operation's {@code user_data}
     */
    public abstract long close(int handler, int tag, int socket);

    /**
     * Completes after {@code nanos} with {@code -ETIME}, or {@code -ECANCELED} if cancelled first.
     *
     * @param handler the id {@link #registerHandler} returned for the handler that receives the completion
     * @param tag any value, handed back with the completion
     * @param nanos how long to wait, at least 0
     * @return the operation's {@code user_data}, for {@link #cancel}
     */
    public abstract long timeout(int handler, int tag, long nanos);

    /**
     * Bounds the operation prepared just before this call: if it has not completed within
     * {@code nanos} it completes with {@code -ECANCELED} and this one with {@code -ETIME}; otherwise
     * this one completes with {@code -ECANCELED} (io_uring's {@code IORING_OP_LINK_TIMEOUT}).
     *
     * @param handler the id {@link #registerHandler} returned for the handler that receives the completion
     * @param tag any value, handed back with the completion
     * @param nanos the bound, at least 0
     * @return the operation's {@code user_data}
     */
    public abstract long linkTimeout(int handler, int tag, long nanos);

    /**
     * Cancels the pending operation whose {@code user_data} is {@code target}. The target completes with
     * {@code -ECANCELED}; this operation's result is 0, {@code -ENOENT} (not found) or {@code -EALREADY}.
     *
     * @param handler the id {@link #registerHandler} returned for the handler that receives the completion
     * @param tag any value, handed back with the completion
     * @param target what the operation to cancel returned when it was prepared
     * @return this operation's {@code user_data}
     */
    public abstract long cancel(int handler, int tag, long target);

    // ---------------------------------------------------------------- driving the loop

    /**
     * Submits everything prepared, waits up to {@code timeoutNanos} for at least one completion (0:
     * do not wait; negative: wait without limit), runs queued tasks and dispatches what completed.
     *
     * @return the number of completions and tasks handled
     * @param timeoutNanos how long to wait for a first completion: 0 not at all, negative without limit
     */
    public abstract int poll(long timeoutNanos);

    /**
     * Queues {@code task} to run on the loop thread and wakes the loop; callable from any thread.
     *
     * @param task what to run; it must not block the loop
     */
    public abstract void execute(Runnable task);

    /** Interrupts a blocking {@link #poll(long)} from any thread. */
    public abstract void wakeup();

    /** {@return the operations submitted and not yet finally completed} */
    public abstract int pending();

    /**
     * Cancels everything still in flight (each operation completes, {@code -ECANCELED} or its partial
     * byte count, and is dispatched), waits (bounded) for the kernel to hand back every buffer, closes
     * every socket handle this loop created ({@link #listen}, {@link #socket}) or accepted that was not
     * closed with {@link #close(int, int, int)} (so a peer sees EOF), closes the buffer rings still open
     * (their buffers go back to the pool), and releases the ring or selector. Both engines behave alike.
     * Owner thread only; calling it again does nothing.
     */
    @Override
    public abstract void close();

    // ---------------------------------------------------------------- argument checks shared by the engines

    /** The address of {@code message}'s {@code struct msghdr}: what io_uring's SENDMSG SQEs carry. */
    protected static long messageHeaderAddress(GatherList message) {
        return message.messageHeaderAddress();
    }

    /** Throws unless {@code config} is given: for the engines' {@code open} methods. */
    protected static void checkConfig(EventLoopConfig config) {
        if (config == null) {
            throw new IllegalArgumentException("config is null");
        }
    }

    /** Throws unless {@code handler} is registered with this loop (not the engine's own, not retired). */
    protected final void checkHandler(int handler) {
        if (!handlers.isRegistered(handler) || handler == internalHandler) {
            throw new IllegalArgumentException("handler id " + handler + " is not registered with this loop"
                    + " (registerHandler gives ids; an unregistered id cannot take new operations)");
        }
    }

    /** Throws if {@code socket} cannot be a socket handle. */
    protected static void checkSocket(int socket) {
        if (socket < 0) {
            throw new IllegalArgumentException("socket handle must be >= 0, got " + socket);
        }
    }

    /**
     * Throws unless {@code buffer} is alive and {@code [offset, offset + length)} lies inside it. A dead
     * segment's memory may already belong to someone else: the kernel must never be handed its address.
     */
    protected static void checkBuffer(MemorySegment buffer, long offset, int length) {
        if (buffer == null) {
            throw new IllegalArgumentException("buffer is null");
        }
        if (!buffer.scope().isAlive()) {
            throw new IllegalArgumentException("buffer segment is not alive (its arena was closed)");
        }
        if (offset < 0 || length < 0 || offset > buffer.byteSize() - length) {
            throw new IllegalArgumentException("range [" + offset + ", " + offset + " + " + length
                    + ") is outside the segment of " + buffer.byteSize() + " bytes");
        }
    }

    /** {@link #checkBuffer}, and the segment must be writable: a receive fills it. */
    protected static void checkReceiveBuffer(MemorySegment buffer, long offset, int length) {
        checkBuffer(buffer, offset, length);
        if (buffer.isReadOnly()) {
            throw new IllegalArgumentException("cannot receive into a read-only segment");
        }
    }

    /**
     * Throws unless {@code index} is {@link #NO_FIXED_BUFFER}, or the index of one of this loop's fixed
     * buffers that holds the whole range.
     */
    protected final void checkFixedBuffer(int index, MemorySegment buffer, long offset, int length) {
        if (index == NO_FIXED_BUFFER) {
            return;
        }
        List<MemoryRegion> registered = fixedBuffers;
        if (index < 0 || index >= registered.size()) {
            throw new IllegalArgumentException("fixed buffer index " + index + " is not registered ("
                    + registered.size() + " fixed buffers; -1 for none)");
        }
        MemorySegment region = registered.get(index).segment();
        long start = buffer.address() + offset;
        if (!buffer.isNative() || start < region.address() || start + length > region.address() + region.byteSize()) {
            throw new IllegalArgumentException("range [" + offset + ", " + offset + " + " + length
                    + ") of the segment is outside fixed buffer " + index);
        }
    }

    /** Throws unless every region is given, still registered with its registry, and native memory. */
    protected static void checkRegions(MemoryRegion... regions) {
        if (regions == null || regions.length == 0) {
            throw new IllegalArgumentException("no regions given");
        }
        for (int i = 0; i < regions.length; i++) {
            if (regions[i] == null) {
                throw new IllegalArgumentException("region " + i + " is null");
            }
            if (!regions[i].isValid()) {
                throw new IllegalArgumentException("region " + i + " is deregistered: " + regions[i]);
            }
            if (!regions[i].segment().isNative()) {
                throw new IllegalArgumentException("region " + i + " is not native memory: " + regions[i]);
            }
        }
    }

    /** Throws unless {@code message} is given, not empty, and all its memory alive. */
    protected static void checkMessage(GatherList message) {
        if (message == null) {
            throw new IllegalArgumentException("message is null");
        }
        if (message.count() == 0) {
            throw new IllegalArgumentException("message has no pieces");
        }
        if (!message.isAlive()) {
            throw new IllegalArgumentException("a segment of the message is not alive (its arena was closed)");
        }
    }

    /** Throws unless {@code msgFlags} are ones a send takes ({@link MsgFlags}). */
    protected static void checkSendFlags(int msgFlags) {
        MsgFlags.checkSend(msgFlags);
    }

    /** Throws unless {@code msgFlags} are ones a receive takes ({@link MsgFlags}). */
    protected static void checkReceiveFlags(int msgFlags) {
        MsgFlags.checkReceive(msgFlags);
    }

    /** Throws unless {@code address} is given and resolved. */
    protected static void checkAddress(InetSocketAddress address, String name) {
        if (address == null) {
            throw new IllegalArgumentException(name + " is null");
        }
        if (address.isUnresolved()) {
            throw new IllegalArgumentException(name + " " + address + " is unresolved");
        }
    }

    /** Throws if a duration is negative. */
    protected static void checkNanos(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("nanos must be >= 0, got " + nanos);
        }
    }

    /** Throws unless {@code how} is {@link #SHUT_RD}, {@link #SHUT_WR} or {@link #SHUT_RDWR}. */
    protected static void checkShutdownHow(int how) {
        if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR) {
            throw new IllegalArgumentException("how must be SHUT_RD (0), SHUT_WR (1) or SHUT_RDWR (2), got " + how);
        }
    }

    /** The failure of a control-path call on a handle that is not one of this loop's open sockets. */
    protected static IOException notOpen(int socket) {
        return new IOException("socket " + socket + " is not open on this loop (EBADF): use a handle that"
                + " listen, socket or accept of this loop returned, before it is closed");
    }

    /**
     * Throws unless {@code socket} may be bound to {@code local}, for {@link #bind}: the socket's state
     * as each engine reads it, checked in one place so both refuse alike.
     *
     * @param inet6 whether the socket was opened for IPv6
     * @param bound its local address (port 0 while unbound)
     * @param peer  the address it is connected to, or null
     */
    protected static void checkBind(int socket, boolean inet6, InetSocketAddress bound, InetSocketAddress peer,
            InetSocketAddress local) throws IOException {
        if (peer != null) {
            throw new IOException("socket " + socket + " is connected to " + peer + " already (EISCONN):"
                    + " bind it before connect");
        }
        if (bound.getPort() != 0) {
            throw new IOException("socket " + socket + " has the local address " + bound + " already (EINVAL):"
                    + " bind it once, before connect (a connect in progress binds it too)");
        }
        if ((local.getAddress() instanceof Inet6Address) != inet6) {
            throw new IllegalArgumentException("local " + local + " is " + (inet6 ? "IPv4" : "IPv6")
                    + " but socket " + socket + " was opened for " + (inet6 ? "IPv6" : "IPv4")
                    + ": open it with socket() for an address of local's family");
        }
    }

    /** Throws if a {@code TCP_USER_TIMEOUT} is negative (0 means the system default). */
    protected static void checkUserTimeout(int millis) {
        if (millis < 0) {
            throw new IllegalArgumentException("user timeout must be >= 0 ms (0 = system default), got " + millis);
        }
    }

    /** Throws if a socket buffer size is negative (0 means unchanged). */
    protected static void checkBufferSizes(int sendBytes, int receiveBytes) {
        if (sendBytes < 0 || receiveBytes < 0) {
            throw new IllegalArgumentException("buffer sizes must be >= 0 (0 = unchanged), got send " + sendBytes
                    + ", receive " + receiveBytes);
        }
    }

    /**
     * The ring as this loop's own, open buffer ring.
     *
     * @throws IllegalArgumentException if another loop (or no engine) created it, or it is closed
     */
    protected final AbstractBufferRing checkRing(BufferRing ring) {
        if (!(ring instanceof AbstractBufferRing own) || !own.belongsTo(this)) {
            throw new IllegalArgumentException("buffer ring " + ring + " was not created by this loop");
        }
        if (own.isClosed()) {
            throw new IllegalArgumentException("buffer group " + own.groupId() + " is closed");
        }
        return own;
    }
}
