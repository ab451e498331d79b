package io.zcnet.collective;

import io.zcnet.qp.QpContext;
import io.zcnet.qp.QueuePair;
import io.zcnet.ring.EngineKind;
import io.zcnet.ring.LoopJob;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.Map;

/**
 * A group of N ranks (processes, or threads of one process, each with a communicator of its own) that run
 * collective operations together, as an MPI communicator or a Gloo context does. Created by
 * {@link #rendezvous}: every rank calls it with the same size and store address and its own rank; or by
 * {@link #fromEnvironment}, which reads those from what the launcher (mpirun, srun, torchrun) set.
 *
 * <h2>Operations</h2>
 * Allreduce, reduce-scatter, allgather, broadcast, reduce, all-to-all and barrier on native
 * {@link MemorySegment}s of {@link DataType} elements (segments aligned to the element). Every rank must
 * call the same operations in the same order with matching counts, root and algorithm; the messages carry
 * enough to notice when they do not ({@link Immediate}), and the operation then fails instead of mixing
 * data (a rank that only sends in it, such as the root of a broadcast, fails in its next operation). An
 * operation is a blocking call: it returns when this rank's part is done, its output complete and
 * its input no longer needed (other ranks may still be finishing). Out-of-place operations need input and
 * output that do not overlap, or that overlap exactly as the in-place form of the operation says. A count
 * of 0 returns at once without communicating. Results are the same on every rank that receives them, and
 * the same from run to run for the same algorithm and rank count: every element is reduced in a fixed
 * order. Floating-point results still depend on that order, so different algorithms may differ in the last
 * bits.
 *
 * <h2>Algorithms</h2>
 * Each operation takes an {@link Algorithm}, or picks one ({@link Algorithm#AUTO}) by its size and the rank
 * count: ring for large messages, halving-doubling (allreduce), binomial tree (broadcast, reduce) or
 * direct (allgather) for small ones.
 *
 * <h2>How data moves</h2>
 * Every pair of ranks has one queue pair, and every rank registers an inbox and an outbox of
 * {@link CommunicatorConfig#slots()} slots of {@link CommunicatorConfig#slotBytes()} per peer, whose keys
 * the rendezvous exchanges once. A rank copies (or reduces) what it sends into an outbox slot and RDMA
 * WRITEs it with immediate data into the peer's inbox slot; the immediate says which piece of which
 * operation it is, and the receiver reduces or copies it from there as soon as its completion arrives,
 * while later pieces are still on the wire. The receive credits of the queue pair are the slot flow
 * control ({@link Link}). User memory is never registered, so it may be any native segment and is free
 * again the moment an operation returns.
 *
 * <h2 id="errors">Errors</h2>
 * Errors are collective. When a peer dies, its host goes silent (the queue pairs' silence timeout), a
 * queue pair fails, the ranks disagree about the operation, or nothing moves for
 * {@link CommunicatorConfig#timeout()}, the operation throws a {@link CollectiveException} naming the peer
 * where one is to blame, and the communicator is broken: it closes its queue pairs, so every other rank's
 * operation fails promptly too rather than waiting, and every later call throws at once. Interrupting the
 * calling thread, before or during an operation, fails it the same way (saying so) and keeps the thread's
 * interrupt status.
 *
 * <p>Argument errors throw {@link IllegalArgumentException} before anything is sent, with a message that
 * names the argument, and leave the communicator usable. Every operation refuses a segment that is null, not
 * native, of a closed arena, confined to another thread, misaligned for its type or too small for its
 * elements; an output that is read-only; input and output that overlap other than in place; a null type, op
 * or algorithm, or an algorithm the operation does not have; a negative count; and counts whose total
 * overflows a {@code long}. What else an operation refuses its own comment says.
 *
 * <h2>Threads</h2>
 * The caller hands an operation to the queue pairs' loop thread, which runs it and waits for each round's
 * message in the kernel itself, so a round or a slice costs one thread wake-up instead of the two of a caller
 * waiting for the loop thread. An operation larger than {@link CommunicatorConfig#loopThreadBytes()} (by
 * default none is) runs on the calling thread instead, which reduces and copies while the loop thread moves
 * the bytes: that overlap pays only where each rank has cores to spare. An operation also stays on the
 * calling thread when a segment is confined to that thread (the loop thread may not touch it), so segments
 * of a confined arena work too, only slower. With
 * {@link CommunicatorConfig#busyPoll()} the rank has no loop thread: the thread that joined drives it, polling
 * and yielding the core, so no round waits for a wake-up, at the price of the cores; only that thread may then
 * call. A communicator runs one operation at a time: any thread may call, but calls must not overlap (a second
 * concurrent call throws {@link IllegalStateException}); what one call wrote happens-before the next call on
 * the same communicator returns. The steady-state data path allocates nothing.
 */
public final class Communicator implements AutoCloseable {
    // Joining is Bootstrap's, checking a call and choosing its schedule OperationPlan's, running it
    // ScheduleRunner's, admitting it CallGate's; what stays here is the public face, closing and aborting.
    private final int rank;
    private final int size;
    private final CommunicatorConfig config;
    private final QpContext context;
    private final Staging staging;
    private final Links links;
    private final boolean coresShared;
    private final OperationPlan plan;
    private final ScheduleRunner runner;
    private final CallGate gate;
    /** Allreduces through an aggregator, or null when none is configured. */
    private final AggregatedAllreduce aggregated;
    /** Why the release of what this rank holds failed, for every later close to say again; null if it did not. */
    private IllegalStateException releaseFailure;

    private Communicator(int rank, int size, Bootstrap.Joined joined) {
        this.rank = rank;
        this.size = size;
        this.config = joined.config();
        this.context = joined.context();
        // With busy polling the thread that joined is the one that drives the rank.
        this.gate = new CallGate(context.isDrivenByCallingThread() ? Thread.currentThread() : null);
        this.staging = joined.staging();
        Mesh.Connected mesh = joined.mesh();
        this.links = new Links(rank, context, mesh.links(), config.timeout().toNanos());
        for (Link l : links.all()) {
            l.qp.onCompletions(links.wakeUp);
        }
        this.coresShared = mesh.coresShared();
        this.plan = new OperationPlan(rank, size, config, coresShared);
        this.runner = new ScheduleRunner(rank, size, links, context, config, mesh, plan);
        if (config.aggregation().isEnabled()) {
            OperationPlan own = new OperationPlan(rank, size, config, coresShared);
            this.aggregated = new AggregatedAllreduce(rank, size, context, config, mesh.listens(), own,
                    new ScheduleRunner(runner, rank, size, config, own));
        } else {
            this.aggregated = null;
        }
    }

    /**
     * Joins the communicator of {@code size} ranks whose rendezvous store is at {@code store}, as
     * {@code rank}: rank 0 runs the store there (unless {@link CommunicatorConfig#hostStore()} is off), every
     * rank publishes where it listens and the key of its inbox, and queue pairs are connected between every
     * pair of ranks. Returns when every rank has connected every queue pair; the ranks may start in any
     * order within {@link CommunicatorConfig#connectTimeout()}.
     *
     * @param rank   this rank, 0 .. {@code size - 1}; every rank passes a different one
     * @param size   the number of ranks (1 .. 65536), the same on every rank
     * @param store  the rendezvous store's address, the same on every rank; rank 0 listens there when it hosts
     *               the store
     * @param config how this rank joins and runs the communicator; {@code slots} and {@code slotBytes} must be
     *               the same on every rank
     * @return the connected communicator, ready for operations; {@link #close()} it, on every rank, when done
     * @throws IOException              if the store cannot be reached or hosted, a rank does not join or connect
     *                                  in time (the message names which), or the ranks' configurations disagree;
     *                                  everything this rank opened is closed again
     * @throws IllegalArgumentException if {@code size} or {@code rank} is out of range, {@code store} or
     *                                  {@code config} is null, or {@code store} cannot be resolved
     */
    public static Communicator rendezvous(int rank, int size, InetSocketAddress store, CommunicatorConfig config)
            throws IOException {
        return new Communicator(rank, size, Bootstrap.join(rank, size, store, config));
    }

    /**
     * Joins the communicator that the launcher which started this process describes in its environment
     * (mpirun, srun, torchrun and the like: {@link LaunchEnvironment#detect}), as {@link #rendezvous} does,
     * with the rank, size and store address from there, and the job secret from
     * {@value LaunchEnvironment#JOB_SECRET_VARIABLE} if {@code config} has none. Rank 0 hosts the store when the
     * address is one of its host's (and {@link CommunicatorConfig#hostStore()} is on); otherwise it is expected to run apart. Prints
     * one line to standard error naming the launcher, rank, size, local rank and store.
     *
     * @param config how this rank joins and runs the communicator, as for {@link #rendezvous}
     * @return the connected communicator; {@link #close()} it, on every rank, when done
     * @throws IOException              as {@link #rendezvous} throws it
     * @throws IllegalArgumentException if {@code config} is null, or the environment names no launch, a bad or
     *                                  contradictory one, or a store that cannot be resolved (the message names
     *                                  the variable)
     */
    public static Communicator fromEnvironment(CommunicatorConfig config) throws IOException {
        return fromEnvironment(System.getenv(), config);
    }

    /**
     * {@link #fromEnvironment(CommunicatorConfig)} with the variables of {@code environment} in place of the
     * process's own.
     *
     * @param environment the variables to read, name to value
     * @param config      how this rank joins and runs the communicator, as for {@link #rendezvous}
     * @return the connected communicator; {@link #close()} it, on every rank, when done
     * @throws IOException              as {@link #rendezvous} throws it
     * @throws IllegalArgumentException as {@link #fromEnvironment(CommunicatorConfig)} throws it, and if
     *                                  {@code environment} is null
     */
    public static Communicator fromEnvironment(Map<String, String> environment, CommunicatorConfig config)
            throws IOException {
        if (config == null) {
            throw new IllegalArgumentException("a config is required");
        }
        return LaunchEnvironment.detect(environment).join(LaunchEnvironment.withJobSecretOf(environment, config));
    }

    /** {@return this rank, 0 .. {@code size() - 1}}; any thread. */
    public int rank() {
        return rank;
    }

    /** {@return the number of ranks}; any thread. */
    public int size() {
        return size;
    }

    /** {@return the configuration this rank joined with}; any thread. */
    public CommunicatorConfig config() {
        return config;
    }

    /**
     * {@return whether the ranks share CPU cores, as every rank decided alike from the rendezvous
     * ({@link CoreSharing}): then small allreduces fold ranks in pairs first}; any thread
     */
    public boolean coresShared() {
        return coresShared;
    }

    /**
     * The parts of this rank that tests look into ({@code Probe} in the tests: messages sent per link, the CPU the
     * adaptive fold is told, the queue pairs, whether the staging memory is freed); never used by the library.
     */
    record Parts(Links links, HalvingDoubling halvingDoubling, Staging staging) {
    }

    Parts parts() {
        return new Parts(links, runner.halvingDoubling, staging);
    }

    /** {@return the engine the queue pairs run on}; any thread. */
    public EngineKind engine() {
        return context.engine();
    }

    // ---------------------------------------------------------------- operations

    /**
     * Returns once every rank has called it: no rank returns before the last one has entered.
     *
     * @throws CollectiveException   if it failed, which breaks the communicator ({@linkplain ##errors Errors})
     * @throws IllegalStateException if the communicator is closed, or another thread's call on it is running
     */
    public void barrier() throws CollectiveException {
        try (CallGate.Admission _ = gate.enter()) {
            plan.barrier();
            perform();
        }
    }

    /**
     * {@link #allreduce(MemorySegment, MemorySegment, long, DataType, ReduceOp, Algorithm)} in place, with AUTO.
     *
     * @param buffer the {@code count} elements to reduce, replaced by the result
     * @param count  elements per rank, the same on every rank; 0 returns at once
     * @param type   the element type, the same on every rank
     * @param op     how elements combine, the same on every rank
     * @throws CollectiveException as that method throws it, and so for what else it throws
     */
    public void allreduce(MemorySegment buffer, long count, DataType type, ReduceOp op) throws CollectiveException {
        allreduce(buffer, buffer, count, type, op, Algorithm.AUTO);
    }

    /**
     * {@link #allreduce(MemorySegment, MemorySegment, long, DataType, ReduceOp, Algorithm)} with AUTO.
     *
     * @param input  the {@code count} elements this rank contributes
     * @param output room for the {@code count} elements of the result; {@code input} itself for in place
     * @param count  elements per rank, the same on every rank; 0 returns at once
     * @param type   the element type, the same on every rank
     * @param op     how elements combine, the same on every rank
     * @throws CollectiveException as that method throws it, and so for what else it throws
     */
    public void allreduce(MemorySegment input, MemorySegment output, long count, DataType type, ReduceOp op)
            throws CollectiveException {
        allreduce(input, output, count, type, op, Algorithm.AUTO);
    }

    /**
     * Reduces the first {@code count} elements of every rank's {@code input} with {@code op} into every
     * rank's {@code output}. In place when {@code input} and {@code output} start at the same address. With an
     * aggregator configured ({@link CommunicatorConfig#withAggregators}) and AUTO, the elements go through the
     * {@link Aggregator} in chunks and come back summed; where it cannot serve (absent, refusing, a type it does not
     * take) or fails in the middle, the hosts do it, or finish it, with the same result, and one log line says why.
     *
     * @param input     the {@code count} elements this rank contributes
     * @param output    room for the {@code count} elements of the result; {@code input} itself for in place
     * @param count     elements per rank, the same on every rank; 0 returns at once
     * @param type      the element type, the same on every rank
     * @param op        how elements combine, the same on every rank
     * @param algorithm RING, HALVING_DOUBLING or AUTO ({@link Algorithm}), the same on every rank
     * @throws CollectiveException      if it failed, which breaks the communicator ({@linkplain ##errors Errors})
     * @throws IllegalArgumentException if an argument is refused ({@linkplain ##errors Errors})
     * @throws IllegalStateException    if the communicator is closed, or another thread's call on it is running
     */
    public void allreduce(MemorySegment input, MemorySegment output, long count, DataType type, ReduceOp op,
            Algorithm algorithm) throws CollectiveException {
        try (CallGate.Admission _ = gate.enter()) {
            plan.allreduce(input, output, count, type, op, algorithm);
            if (aggregated != null && algorithm == Algorithm.AUTO && plan.schedule != null && !links.isBroken()
                    && aggregated.applies()) {
                plan.release();
                aggregated.allreduce(input, output, count, type, op);
            } else {
                perform();
            }
        }
    }

    /**
     * Reduces every rank's {@code input} of {@code size * count} elements with {@code op}, and gives rank r
     * block r of the result ({@code count} elements from element {@code r * count}) in {@code output}. In
     * place when {@code output} starts at block r of {@code input}. Ring only.
     *
     * @param input  the {@code size() * count} elements this rank contributes
     * @param output room for this rank's block of the result, {@code count} elements; block r of {@code input}
     *               for in place
     * @param count  elements each rank receives, the same on every rank; 0 returns at once
     * @param type   the element type, the same on every rank
     * @param op     how elements combine, the same on every rank
     * @throws CollectiveException      if it failed, which breaks the communicator ({@linkplain ##errors Errors})
     * @throws IllegalArgumentException if an argument is refused ({@linkplain ##errors Errors}), or
     *                                  {@code size() * count} overflows
     * @throws IllegalStateException    if the communicator is closed, or another thread's call on it is running
     */
    public void reduceScatter(MemorySegment input, MemorySegment output, long count, DataType type, ReduceOp op)
            throws CollectiveException {
        try (CallGate.Admission _ = gate.enter()) {
            plan.reduceScatter(input, output, count, type, op);
            perform();
        }
    }

    /**
     * Reduce-scatter with blocks of different sizes: rank r gets the {@code counts[r]} elements of the
     * result that follow the blocks of the ranks before it. In place when {@code output} starts at block r
     * of {@code input}. Ring only.
     *
     * @param input  the elements this rank contributes, as many as {@code counts} add up to
     * @param output room for this rank's block of the result, {@code counts[rank()]} elements; block r of
     *               {@code input} for in place
     * @param counts the elements of every rank's block, one count per rank, the same on every rank
     * @param type   the element type, the same on every rank
     * @param op     how elements combine, the same on every rank
     * @throws CollectiveException      if it failed, which breaks the communicator ({@linkplain ##errors Errors})
     * @throws IllegalArgumentException if an argument is refused ({@linkplain ##errors Errors}), or {@code counts}
     *                                  does not hold one count per rank
     * @throws IllegalStateException    if the communicator is closed, or another thread's call on it is running
     */
    public void reduceScatter(MemorySegment input, MemorySegment output, long[] counts, DataType type, ReduceOp op)
            throws CollectiveException {
        try (CallGate.Admission _ = gate.enter()) {
            plan.reduceScatter(input, output, counts, type, op);
            perform();
        }
    }

    /**
     * {@link #allgather(MemorySegment, MemorySegment, long, DataType, Algorithm)} with AUTO.
     *
     * @param input  the {@code count} elements this rank contributes
     * @param output room for every rank's block, {@code size() * count} elements
     * @param count  elements each rank contributes, the same on every rank; 0 returns at once
     * @param type   the element type, the same on every rank
     * @throws CollectiveException as that method throws it, and so for what else it throws
     */
    public void allgather(MemorySegment input, MemorySegment output, long count, DataType type)
            throws CollectiveException {
        allgather(input, output, count, type, Algorithm.AUTO);
    }

    /**
     * Gathers every rank's {@code count} elements of {@code input} into every rank's {@code output}, rank r's
     * at element {@code r * count}. In place when {@code input} starts at block r of {@code output}.
     *
     * @param input     the {@code count} elements this rank contributes
     * @param output    room for every rank's block, {@code size() * count} elements
     * @param count     elements each rank contributes, the same on every rank; 0 returns at once
     * @param type      the element type, the same on every rank
     * @param algorithm RING, DIRECT or AUTO ({@link Algorithm}), the same on every rank
     * @throws CollectiveException      if it failed, which breaks the communicator ({@linkplain ##errors Errors})
     * @throws IllegalArgumentException if an argument is refused ({@linkplain ##errors Errors}), or
     *                                  {@code size() * count} overflows
     * @throws IllegalStateException    if the communicator is closed, or another thread's call on it is running
     */
    public void allgather(MemorySegment input, MemorySegment output, long count, DataType type, Algorithm algorithm)
            throws CollectiveException {
        try (CallGate.Admission _ = gate.enter()) {
            plan.allgather(input, output, count, type, algorithm);
            perform();
        }
    }

    /**
     * Allgather of blocks of different sizes: rank r contributes {@code counts[r]} elements, placed after the
     * blocks of the ranks before it. In place when {@code input} starts at block r of {@code output}.
     *
     * @param input     the {@code counts[rank()]} elements this rank contributes
     * @param output    room for every rank's block, as many elements as {@code counts} add up to
     * @param counts    the elements every rank contributes, one count per rank, the same on every rank
     * @param type      the element type, the same on every rank
     * @param algorithm RING, DIRECT or AUTO ({@link Algorithm}), the same on every rank
     * @throws CollectiveException      if it failed, which breaks the communicator ({@linkplain ##errors Errors})
     * @throws IllegalArgumentException if an argument is refused ({@linkplain ##errors Errors}), or {@code counts}
     *                                  does not hold one count per rank
     * @throws IllegalStateException    if the communicator is closed, or another thread's call on it is running
     */
    public void allgather(MemorySegment input, MemorySegment output, long[] counts, DataType type, Algorithm algorithm)
            throws CollectiveException {
        try (CallGate.Admission _ = gate.enter()) {
            plan.allgather(input, output, counts, type, algorithm);
            perform();
        }
    }

    /**
     * {@link #broadcast(MemorySegment, long, DataType, int, Algorithm)} with AUTO.
     *
     * @param buffer at the root, the {@code count} elements to send; at every other rank, room for them
     * @param count  elements, the same on every rank; 0 returns at once
     * @param type   the element type, the same on every rank
     * @param root   the rank whose elements are sent, the same on every rank
     * @throws CollectiveException as that method throws it, and so for what else it throws
     */
    public void broadcast(MemorySegment buffer, long count, DataType type, int root) throws CollectiveException {
        broadcast(buffer, count, type, root, Algorithm.AUTO);
    }

    /**
     * Copies the first {@code count} elements of the root's {@code buffer} into every other rank's. The root
     * only sends, so when the ranks disagree about the operation the root learns it in its next operation.
     *
     * @param buffer    at the root, the {@code count} elements to send; at every other rank, room for them
     *                  (the root's may be read-only)
     * @param count     elements, the same on every rank; 0 returns at once
     * @param type      the element type, the same on every rank
     * @param root      the rank whose elements are sent, the same on every rank
     * @param algorithm TREE, RING, DIRECT or AUTO ({@link Algorithm}), the same on every rank
     * @throws CollectiveException      if it failed, which breaks the communicator ({@linkplain ##errors Errors})
     * @throws IllegalArgumentException if an argument is refused ({@linkplain ##errors Errors}), or {@code root} is
     *                                  not a rank
     * @throws IllegalStateException    if the communicator is closed, or another thread's call on it is running
     */
    public void broadcast(MemorySegment buffer, long count, DataType type, int root, Algorithm algorithm)
            throws CollectiveException {
        try (CallGate.Admission _ = gate.enter()) {
            plan.broadcast(buffer, count, type, root, algorithm);
            perform();
        }
    }

    /**
     * {@link #reduce(MemorySegment, MemorySegment, long, DataType, ReduceOp, int, Algorithm)} with AUTO.
     *
     * @param input  the {@code count} elements this rank contributes
     * @param output at the root, room for the {@code count} elements of the result ({@code input} itself for in
     *               place); unused, and may be null, at every other rank
     * @param count  elements per rank, the same on every rank; 0 returns at once
     * @param type   the element type, the same on every rank
     * @param op     how elements combine, the same on every rank
     * @param root   the rank that receives the result, the same on every rank
     * @throws CollectiveException as that method throws it, and so for what else it throws
     */
    public void reduce(MemorySegment input, MemorySegment output, long count, DataType type, ReduceOp op, int root)
            throws CollectiveException {
        reduce(input, output, count, type, op, root, Algorithm.AUTO);
    }

    /**
     * Reduces the first {@code count} elements of every rank's {@code input} with {@code op} into the root's
     * {@code output}; {@code output} is not used elsewhere (it may be null there). In place at the root when
     * {@code input} and {@code output} start at the same address.
     *
     * @param input     the {@code count} elements this rank contributes
     * @param output    at the root, room for the {@code count} elements of the result ({@code input} itself for
     *                  in place); unused, and may be null, at every other rank
     * @param count     elements per rank, the same on every rank; 0 returns at once
     * @param type      the element type, the same on every rank
     * @param op        how elements combine, the same on every rank
     * @param root      the rank that receives the result, the same on every rank
     * @param algorithm TREE, RING or AUTO ({@link Algorithm}), the same on every rank
     * @throws CollectiveException      if it failed, which breaks the communicator ({@linkplain ##errors Errors})
     * @throws IllegalArgumentException if an argument is refused ({@linkplain ##errors Errors}; {@code output} only
     *                                  at the root), or {@code root} is not a rank
     * @throws IllegalStateException    if the communicator is closed, or another thread's call on it is running
     */
    public void reduce(MemorySegment input, MemorySegment output, long count, DataType type, ReduceOp op, int root,
            Algorithm algorithm) throws CollectiveException {
        try (CallGate.Admission _ = gate.enter()) {
            plan.reduce(input, output, count, type, op, root, algorithm);
            perform();
        }
    }

    /**
     * Sends block p of {@code input} ({@code count} elements from element {@code p * count}) to rank p,
     * which receives it as block r of its {@code output}. Out of place only.
     *
     * @param input  the {@code size() * count} elements to send, block p for rank p
     * @param output room for the {@code size() * count} elements received, block p from rank p; apart from
     *               {@code input}
     * @param count  elements from every rank to every rank, the same on every rank; 0 returns at once
     * @param type   the element type, the same on every rank
     * @throws CollectiveException      if it failed, which breaks the communicator ({@linkplain ##errors Errors})
     * @throws IllegalArgumentException if an argument is refused ({@linkplain ##errors Errors}), the segments
     *                                  overlap at all, or {@code size() * count} overflows
     * @throws IllegalStateException    if the communicator is closed, or another thread's call on it is running
     */
    public void allToAll(MemorySegment input, MemorySegment output, long count, DataType type)
            throws CollectiveException {
        try (CallGate.Admission _ = gate.enter()) {
            plan.allToAll(input, output, count, type);
            perform();
        }
    }

    /**
     * All-to-all with blocks of different sizes: {@code sendCounts[p]} elements to rank p, the blocks one
     * after another in {@code input}; {@code receiveCounts[p]} elements from rank p, one after another in
     * {@code output}. What rank q sends to rank p must be what p expects from q. Out of place only.
     *
     * @param input         the elements to send, as many as {@code sendCounts} add up to, block p for rank p
     * @param sendCounts    the elements this rank sends to each rank, one count per rank
     * @param output        room for the elements received, as many as {@code receiveCounts} add up to, block p
     *                      from rank p; apart from {@code input}
     * @param receiveCounts the elements this rank receives from each rank, one count per rank
     * @param type          the element type, the same on every rank
     * @throws CollectiveException      if it failed, which breaks the communicator ({@linkplain ##errors Errors})
     * @throws IllegalArgumentException if an argument is refused ({@linkplain ##errors Errors}), the segments
     *                                  overlap at all, a count array does not hold one count per rank, or this
     *                                  rank's entries of the two differ
     * @throws IllegalStateException    if the communicator is closed, or another thread's call on it is running
     */
    public void allToAll(MemorySegment input, long[] sendCounts, MemorySegment output, long[] receiveCounts,
            DataType type) throws CollectiveException {
        try (CallGate.Admission _ = gate.enter()) {
            plan.allToAll(input, sendCounts, output, receiveCounts, type);
            perform();
        }
    }

    // ---------------------------------------------------------------- lifecycle

    /**
     * Leaves the communicator: a collective call, like the operations. When the communicator is healthy it
     * waits (up to the timeout) in a barrier, so no rank closes its queue pairs while another still needs
     * them, and for its last WRITEs to land; then it closes the queue pairs, the context and the staging
     * memory. A broken communicator closes at once. Idempotent; not concurrently with an operation.
     *
     * @throws IllegalStateException once everything this rank holds is freed, if freeing some of it failed (a
     *                               queue pair or the context did not close cleanly: the cause says why); a later
     *                               call throws it again instead of returning as if the close had been clean
     */
    @Override
    public void close() {
        if (gate.isClosed()) {
            throwReleaseFailure();
            return;
        }
        try (CallGate.Admission _ = gate.enter()) {
            if (!links.isBroken() && size > 1) {
                try {
                    plan.barrier();
                    perform();
                    links.drainSends();
                } catch (CollectiveException e) {
                    // A peer left without closing, or failed: there is nothing left to hand over.
                }
            }
            release();
        }
    }

    /**
     * Leaves at once, alone, as a failure would: the queue pairs close, so every other rank's running or
     * next operation fails with a {@link CollectiveException} naming this rank; then closes as
     * {@link #close()} does. For a rank that must give up (an error of its own, a shutdown) without the
     * others' cooperation. Idempotent; not concurrently with an operation.
     *
     * @throws IllegalStateException as {@link #close()} does
     */
    public void abort() {
        if (gate.isClosed()) {
            throwReleaseFailure();
            return;
        }
        try (CallGate.Admission _ = gate.enter()) {
            release();
        }
    }

    /**
     * Runs the planned operation on the hosts, once the last aggregated allreduce is settled: when it returned
     * without a vote, a rank whose own failed may be waiting for its result (AggregatedAllreduce, "One chunk,
     * no vote").
     */
    private void perform() throws CollectiveException {
        if (aggregated != null && !links.isBroken()) {
            aggregated.settle();
        }
        runner.perform();
    }

    /** Frees what this rank holds, all of it whatever fails on the way, and throws what failed. */
    private void release() {
        gate.shut();
        Teardown teardown = new Teardown();
        if (aggregated != null) {
            teardown.run(aggregated::close);
        }
        teardown.run(links::abort);
        teardown.run(context::close);
        teardown.run(staging::close);
        RuntimeException failure = teardown.failure();
        if (failure != null) {
            releaseFailure = new IllegalStateException("rank " + rank + " of " + size + " is closed, but not cleanly: "
                    + failure.getMessage(), failure);
            throw releaseFailure;
        }
    }

    private void throwReleaseFailure() {
        if (releaseFailure != null) {
            throw new IllegalStateException("rank " + rank + " was closed before, but not cleanly: "
                    + releaseFailure.getMessage(), releaseFailure);
        }
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("Communicator[rank ").append(rank).append(" of ").append(size);
        if (links.isBroken()) {
            b.append(" broken");
        }
        for (Link l : links.all()) {
            QueuePair qp = l.qp;
            b.append(' ').append(l).append(' ').append(qp.state());
        }
        return b.append(']').toString();
    }
}
