package io.zcnet.collective;

import io.zcnet.qp.QpContext;
import io.zcnet.ring.LoopJob;

import java.lang.foreign.MemorySegment;

/**
 * Runs a communicator's planned operations ({@link OperationPlan}): holds the rank's algorithms, picks the
 * thread an operation runs on, and hands the plan's {@link Schedule} to the algorithm that implements it.
 * Called by the communicator's caller, one operation at a time; the algorithm then runs on the loop thread or
 * on that caller. Nothing allocates.
 */
final class ScheduleRunner {
    private final Links links;
    private final QpContext context;
    private final OperationPlan plan;
    private final long loopThreadBytes;
    private final int slots;
    private final int slotBytes;
    private final Ring ring;
    final HalvingDoubling halvingDoubling;
    private final BinomialTree tree;
    private final Chain chain;
    private final Direct direct;
    private final Barrier barrier;
    /** The plan's operation as the loop thread takes it: made once, so that the hand-off allocates nothing. */
    private final LoopJob planned = this::dispatch;

    ScheduleRunner(int rank, int size, Links links, QpContext context, CommunicatorConfig config, Mesh.Connected mesh,
            OperationPlan plan) {
        this(rank, size, links, context, config, plan, new HalvingDoubling(new Streams(links, rank, size), rank, size,
                mesh.coresShared(), mesh.sameKernel()));
    }

    /**
     * A runner of another plan on {@code sharing}'s links, with its halving-doubling: the adaptive fold of that
     * changes with every operation, and every rank must see the same ones, whichever runner ran them.
     */
    ScheduleRunner(ScheduleRunner sharing, int rank, int size, CommunicatorConfig config, OperationPlan plan) {
        this(rank, size, sharing.links, sharing.context, config, plan, sharing.halvingDoubling);
    }

    private ScheduleRunner(int rank, int size, Links links, QpContext context, CommunicatorConfig config,
            OperationPlan plan, HalvingDoubling halvingDoubling) {
        this.links = links;
        this.context = context;
        this.plan = plan;
        this.loopThreadBytes = config.loopThreadBytes();
        this.slots = config.slots();
        this.slotBytes = config.slotBytes();
        this.ring = new Ring(links, rank, size, plan.blocks);
        this.halvingDoubling = halvingDoubling;
        this.tree = new BinomialTree(links, rank, size);
        this.chain = new Chain(links, rank, size);
        this.direct = new Direct(new Streams(links, rank, size), rank, size);
        this.barrier = new Barrier(links, rank, size);
    }

    /**
     * Performs what the plan holds and forgets its memory. With a schedule: on the context's loop thread when it
     * moves at most {@link CommunicatorConfig#loopThreadBytes()} (unless that is 0) and the loop thread may touch
     * its segments, so each of its waits is one wake-up of that thread; else on this thread, which reduces and
     * copies while the loop thread moves the bytes. Without one, what a rank alone copies, here.
     */
    void perform() throws CollectiveException {
        if (plan.schedule == null) {
            if (plan.aloneBytes > 0) {
                Ring.copyUnlessSame(plan.input, 0, plan.output, 0, plan.aloneBytes);
            }
            plan.release();
            return;
        }
        boolean here = !context.isDrivenByCallingThread() && (loopThreadBytes == 0 || plan.bytes > loopThreadBytes
                || !loopCanAccess(plan.input) || !loopCanAccess(plan.output));
        links.run(planned, here);
    }

    private boolean loopCanAccess(MemorySegment segment) {
        return segment == null || context.loopCanAccess(segment);
    }

    /** The plan's schedule, on the thread {@link #perform} chose. */
    private void dispatch() throws CollectiveException {
        OperationPlan p = plan;
        try {
            links.begin(p.schedule);
            switch (p.schedule) {
                case BARRIER -> barrier.run();
                case ALLREDUCE_RING -> ring.run(Ring.ALLREDUCE, p.input, p.output, p.type, p.op, 0, slots, slotBytes);
                case ALLREDUCE_HALVING_DOUBLING ->
                        halvingDoubling.allreduce(p.input, p.output, p.count, p.type, p.op, slotBytes);
                case ALLREDUCE_FOLDED ->
                        halvingDoubling.foldedAdaptively(p.input, p.output, p.count, p.type, p.op, slotBytes);
                case REDUCE_SCATTER_RING ->
                        ring.run(Ring.REDUCE_SCATTER, p.input, p.output, p.type, p.op, 0, slots, slotBytes);
                case ALLGATHER_RING -> ring.run(Ring.ALLGATHER, p.input, p.output, p.type, null, 0, slots, slotBytes);
                case ALLGATHER_DIRECT -> direct.allgather(p.input, p.output, p.blocks.starts, p.type, slotBytes);
                case BROADCAST_TREE -> tree.broadcast(p.input, p.count, p.type.byteSize(), p.root, slotBytes);
                case BROADCAST_RING -> chain.broadcast(p.input, p.count, p.type.byteSize(), p.root, slotBytes);
                case BROADCAST_DIRECT -> direct.broadcast(p.input, p.count, p.type, p.root, slotBytes);
                case REDUCE_TREE -> tree.reduce(p.input, p.output, p.count, p.type, p.op, p.root, slotBytes);
                case REDUCE_RING -> ring.run(Ring.REDUCE, p.input, p.output, p.type, p.op, p.root, slots, slotBytes);
                case ALL_TO_ALL ->
                        direct.allToAll(p.input, p.sendStarts, p.output, p.receiveStarts, p.type, slotBytes);
            }
        } finally {
            p.release();
        }
    }
}
