package io.zcnet.examples;

import io.zcnet.collective.Algorithm;
import io.zcnet.collective.CollectiveException;
import io.zcnet.collective.Communicator;
import io.zcnet.collective.DataType;
import io.zcnet.collective.ReduceOp;

import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What every rank of {@code zcnet allreduce} runs: each operation of the plan at each size, timed and
 * checked the way bench/collectives/gloo_bench.cc does it, so that the figures compare with Gloo's and
 * MPI's. Per size: one operation on fresh data, checked, that counts as warm-up; more warm-up until the
 * slowest rank has spent {@code warmup} seconds in it; then timed operations until the slowest rank has
 * spent {@code budget} seconds in them (at least {@code minIters}, at most {@code maxIters}), in batches of
 * 1, 2, 4, ... after each of which the ranks agree, off the clock, whether to go on, so every rank runs the
 * same count. Inputs are filled again every {@link Workload#refillEvery} operations, off the clock (a barrier
 * after the fill keeps it off every rank's), and the output of the last operations is checked after the
 * timed ones. The ranks agree through an allreduce of the largest of four doubles. Rank 0 prints one
 * {@link CollectiveResult} line per operation and size. One thread. Sizes that are no whole number of floats
 * per rank where the operation splits them into one block per rank are rounded down to one, as nccl-tests
 * does (bench/collectives.sh's sizes, powers of two among four ranks, need none of it).
 */
final class RankBenchmark {

    /** An operation and the algorithm asked for it; {@code label} is op:algo as --ops takes it. */
    record Item(CollectiveOp op, Algorithm algorithm) {
        String label() {
            return op.label() + ":" + CollectiveOp.algorithmLabel(algorithm);
        }
    }

    /**
     * Sizes in bytes from {@code minBytes}, doubling, up to {@code maxBytes}; times in seconds. {@code jitWarmup}
     * comes once, before everything: untimed operations of every item at every size of the plan up to
     * {@link #JIT_WARMUP_MAX_BYTES}, an equal share of the time each.
     */
    record Plan(List<Item> items, long minBytes, long maxBytes, double budget, double warmup, double jitWarmup,
            long minIters, long maxIters) {
    }

    /**
     * Largest size the JIT warm-up runs: above the small-message algorithms and the loop-thread limit (64 KiB),
     * so the ring on the caller's thread is compiled too, and small enough that every size gets many operations.
     */
    static final long JIT_WARMUP_MAX_BYTES = 1L << 20;
    static final String JIT_WARMUP_MAX_LABEL = "1 MiB";

    private final Communicator comm;
    private final Plan plan;
    private final int refillEvery;
    private final Arena agreeArena = Arena.ofShared();
    private final MemorySegment agreed = agreeArena.allocate(ValueLayout.JAVA_DOUBLE, 6);
    private int sinceFill;

    private RankBenchmark(Communicator comm, Plan plan) {
        this.comm = comm;
        this.plan = plan;
        this.refillEvery = Workload.refillEvery(comm.size());
    }

    /**
     * Runs the whole plan on {@code comm}, rank 0 printing the RESULT lines to {@code out} (and which sizes an
     * operation skips to {@code err}); returns whether every check passed on every rank.
     */
    static boolean run(Communicator comm, Plan plan, PrintWriter out, PrintWriter err) throws CollectiveException {
        RankBenchmark bench = new RankBenchmark(comm, plan);
        try {
            return bench.runAll(out, err);
        } finally {
            bench.agreeArena.close();
        }
    }

    private boolean runAll(PrintWriter out, PrintWriter err) throws CollectiveException {
        if (plan.jitWarmup() > 0) {
            warmUpJit(out);
        }
        boolean allOk = true;
        for (Item item : plan.items()) {
            for (long size = first(item); size <= last(item); size = Math.max(1, size * 2)) {
                long bytes = bytes(item, size);
                if (bytes == 0 && item.op() != CollectiveOp.BARRIER) {
                    if (comm.rank() == 0) {
                        err.println("zcnet allreduce: " + item.label() + " skips " + size + " bytes (less than "
                                + item.op().unit(comm.size()) + ", a float per rank)");
                        err.flush();
                    }
                    continue;
                }
                CollectiveResult r = measure(item, bytes);
                allOk &= r.ok();
                if (comm.rank() == 0) {
                    out.println(r.line());
                    out.flush();
                }
            }
        }
        return allOk;
    }

    private long first(Item item) {
        return item.op() == CollectiveOp.BARRIER ? 0 : plan.minBytes();
    }

    private long last(Item item) {
        return item.op() == CollectiveOp.BARRIER ? 0 : plan.maxBytes();
    }

    /** {@code size} rounded down to a whole number of floats per rank where the operation splits it so. */
    private long bytes(Item item, long size) {
        return size - size % item.op().unit(comm.size());
    }

    /**
     * Untimed operations of every item at every size of the plan up to {@link #JIT_WARMUP_MAX_BYTES} (or at its
     * first size, when that is larger), each
     * for an equal share of {@code jitWarmup} seconds (of the slowest rank), so the timed ones that follow
     * find compiled code: four JVMs on two cores compile for tens of seconds, which the first sizes would
     * otherwise measure. Rank 0 says so in a comment line.
     */
    private void warmUpJit(PrintWriter out) throws CollectiveException {
        List<Item> items = new ArrayList<>();
        List<Long> sizes = new ArrayList<>();
        for (Item item : plan.items()) {
            for (long size = first(item); size <= warmUpLimit(item); size = Math.max(1, size * 2)) {
                if (bytes(item, size) > 0 || item.op() == CollectiveOp.BARRIER) {
                    items.add(item);
                    sizes.add(bytes(item, size));
                }
            }
        }
        long ops = 0;
        for (int k = 0; k < items.size(); k++) {
            Item item = items.get(k);
            try (Arena arena = Arena.ofShared()) {
                Workload w = Workload.of(item.op(), comm, arena, sizes.get(k), item.op().resolve(item.algorithm()));
                w.fill();
                sinceFill = 0;
                ops += batches(w, plan.jitWarmup() / items.size(), 1, plan.maxIters()).count;
            }
        }
        if (comm.rank() == 0) {
            long largest = sizes.stream().mapToLong(Long::longValue).max().orElse(0);
            out.println("# JIT warm-up: " + plan.jitWarmup() + " s, " + ops + " untimed operations at " + items.size()
                    + " operation sizes up to " + ResultTable.size(largest));
            out.flush();
        }
    }

    /** The largest size the JIT warm-up runs for {@code item}: at least the plan's first. */
    private long warmUpLimit(Item item) {
        return Math.max(first(item), Math.min(last(item), JIT_WARMUP_MAX_BYTES));
    }

    private CollectiveResult measure(Item item, long bytes) throws CollectiveException {
        CollectiveOp op = item.op();
        Algorithm algorithm = op.resolve(item.algorithm());
        try (Arena arena = Arena.ofShared()) {
            Workload w = Workload.of(op, comm, arena, bytes, algorithm);
            w.fill();
            comm.barrier();
            long start = System.nanoTime();
            w.run();
            double first = (System.nanoTime() - start) / 1e9;
            sinceFill = 1;
            double[] firstAgreed = agree(first, w.check(sinceFill) ? 0 : 1, 0, 0, 0, 0);
            boolean ok = firstAgreed[1] == 0;
            // More warm-up only while the first operation took less than the warm-up time.
            long warmOps = firstAgreed[0] < plan.warmup()
                    ? batches(w, plan.warmup() - firstAgreed[0], 0, plan.maxIters()).count : 0;
            double cpuBefore = processCpuSeconds();
            Batches timed = batches(w, plan.budget(), plan.minIters(), plan.maxIters());
            double cpuPerOp = (processCpuSeconds() - cpuBefore) / timed.count;
            boolean lastOk = w.check(sinceFill);
            double[] slowest = agree(timed.mean(), timed.fastest(), timed.median(), lastOk ? 0 : 1, timed.slowest(),
                    cpuPerOp);
            ok &= slowest[3] == 0;
            int n = comm.size();
            double algbw = bytes * 8 / slowest[0] / 1e9;
            return new CollectiveResult(op.label(), op.algoLabel(algorithm), n, bytes, warmOps + 1, timed.count,
                    slowest[0] * 1e6, slowest[1] * 1e6, slowest[2] * 1e6, slowest[4] * 1e6, slowest[5] * 1e6, algbw,
                    algbw * op.busFactor(n), ok);
        }
    }

    /**
     * Operations in batches of 1, 2, 4, ... until the slowest rank has spent {@code seconds} in them and at
     * least {@code minOps} ran, or {@code maxOps} ran.
     */
    private Batches batches(Workload w, double seconds, long minOps, long maxOps) throws CollectiveException {
        Batches b = new Batches();
        long batch = 1;
        while (b.count < maxOps) {
            for (long i = 0; i < batch; i++) {
                if (sinceFill == refillEvery) {
                    w.fill();
                    sinceFill = 0;
                    // Off every rank's clock: without it, a rank done filling first times its wait for the rest.
                    comm.barrier();
                }
                long start = System.nanoTime();
                w.run();
                b.add(System.nanoTime() - start);
                sinceFill++;
            }
            if (b.count >= minOps && agree(b.total / 1e9, 0, 0, 0, 0, 0)[0] >= seconds) {
                break;
            }
            batch = Math.min(batch * 2, maxOps - b.count);
        }
        return b;
    }

    /**
     * This process's CPU time so far, user and system, all threads: what a rank costs per operation, which
     * on a machine with fewer cores than ranks decides how fast the others can go. The kernel's work for the
     * rank's sockets counts where it runs in the rank's system calls, not where softirqs run it elsewhere.
     */
    private static double processCpuSeconds() {
        return ProcessHandle.current().info().totalCpuDuration().map(d -> d.toNanos() / 1e9).orElse(0.0);
    }

    /** The largest of every rank's six values, element by element. */
    private double[] agree(double a, double b, double c, double d, double e, double f) throws CollectiveException {
        agreed.setAtIndex(ValueLayout.JAVA_DOUBLE, 0, a);
        agreed.setAtIndex(ValueLayout.JAVA_DOUBLE, 1, b);
        agreed.setAtIndex(ValueLayout.JAVA_DOUBLE, 2, c);
        agreed.setAtIndex(ValueLayout.JAVA_DOUBLE, 3, d);
        agreed.setAtIndex(ValueLayout.JAVA_DOUBLE, 4, e);
        agreed.setAtIndex(ValueLayout.JAVA_DOUBLE, 5, f);
        comm.allreduce(agreed, 6, DataType.DOUBLE, ReduceOp.MAX);
        return agreed.toArray(ValueLayout.JAVA_DOUBLE);
    }

    /** One rank's times of a run of batches, in nanoseconds. */
    private static final class Batches {
        long count;
        long total;
        private long fastest = Long.MAX_VALUE;
        private long slowest;
        private long[] times = new long[64];

        void add(long nanos) {
            if (count == times.length) {
                times = Arrays.copyOf(times, times.length * 2);
            }
            times[(int) count++] = nanos;
            total += nanos;
            fastest = Math.min(fastest, nanos);
            slowest = Math.max(slowest, nanos);
        }

        double mean() {
            return total / 1e9 / count;
        }

        double fastest() {
            return fastest / 1e9;
        }

        double slowest() {
            return slowest / 1e9;
        }

        /** The upper median, as gloo_bench's nth_element at count/2. */
        double median() {
            long[] sorted = Arrays.copyOf(times, (int) count);
            Arrays.sort(sorted);
            return sorted[(int) (count / 2)] / 1e9;
        }
    }
}
