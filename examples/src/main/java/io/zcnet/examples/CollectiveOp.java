package io.zcnet.examples;

import io.zcnet.collective.Algorithm;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The operations {@code zcnet allreduce} measures, by the names of their RESULT lines, with what nccl-tests
 * calls a row's size (the whole buffer reduced, gathered, scattered or sent by each rank) and its bus
 * bandwidth factor: busbw = algbw * {@link #busFactor}, the share of the size every rank must move over its
 * own link, so that one bound, busbw at most the link rate, holds for all of them.
 */
enum CollectiveOp {
    ALLREDUCE(EnumSet.of(Algorithm.RING, Algorithm.HALVING_DOUBLING), false),
    ALLGATHER(EnumSet.of(Algorithm.RING, Algorithm.DIRECT), true),
    REDUCE_SCATTER(EnumSet.of(Algorithm.RING), true),
    BROADCAST(EnumSet.of(Algorithm.TREE, Algorithm.RING, Algorithm.DIRECT), false),
    REDUCE(EnumSet.of(Algorithm.TREE, Algorithm.RING), false),
    ALLTOALL(EnumSet.of(Algorithm.DIRECT), true),
    /** Moves no data: one row of size 0, its time the barrier's. */
    BARRIER(EnumSet.noneOf(Algorithm.class), false);

    /** The algorithms the library offers for it (Algorithm's javadoc table); AUTO picks among them. */
    final Set<Algorithm> algorithms;
    /** Whether the size splits into one block per rank, so it must be a multiple of N floats. */
    final boolean perRankBlocks;

    CollectiveOp(Set<Algorithm> algorithms, boolean perRankBlocks) {
        this.algorithms = algorithms;
        this.perRankBlocks = perRankBlocks;
    }

    /** The name in --ops and in RESULT lines: allreduce, reduce_scatter, ... */
    String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    static CollectiveOp parse(String text) {
        for (CollectiveOp op : values()) {
            if (op.label().equals(text.trim().toLowerCase(Locale.ROOT))) {
                return op;
            }
        }
        throw new IllegalArgumentException("--ops: no operation '" + text + "'; use allreduce, allgather, reduce_scatter,"
                + " broadcast, reduce, alltoall or barrier");
    }

    /**
     * The bus bandwidth factor among {@code n} ranks, as nccl-tests defines it: 2(n-1)/n for allreduce,
     * (n-1)/n for allgather, reduce-scatter and all-to-all, 1 for broadcast and reduce.
     */
    double busFactor(int n) {
        return switch (this) {
            case ALLREDUCE -> 2.0 * (n - 1) / n;
            case ALLGATHER, REDUCE_SCATTER, ALLTOALL -> (double) (n - 1) / n;
            case BROADCAST, REDUCE -> 1;
            case BARRIER -> 0;
        };
    }

    /** The bytes a row's size must be a multiple of among {@code n} ranks: whole floats, per rank where split. */
    long unit(int n) {
        return Float.BYTES * (perRankBlocks ? (long) n : 1);
    }

    /**
     * The algorithm to run for {@code asked}: as asked, AUTO left to the library where it has a choice, or
     * the operation's only one; refuses one the operation does not have.
     */
    Algorithm resolve(Algorithm asked) {
        if (algorithms.size() <= 1 && asked == Algorithm.AUTO) {
            return algorithms.isEmpty() ? Algorithm.AUTO : algorithms.iterator().next();
        }
        if (asked != Algorithm.AUTO && !algorithms.contains(asked)) {
            List<String> names = new ArrayList<>(List.of("auto"));
            algorithms.forEach(a -> names.add(algorithmLabel(a)));
            throw new IllegalArgumentException(label() + " has no " + algorithmLabel(asked) + " algorithm; it takes "
                    + (algorithms.isEmpty() ? "none" : String.join(", ", names.subList(0, names.size() - 1)) + " or "
                    + names.getLast()));
        }
        return asked;
    }

    /** The algo= of a RESULT line: the algorithm's name, the barrier's kind for the barrier. */
    String algoLabel(Algorithm resolved) {
        return this == BARRIER ? "dissemination" : algorithmLabel(resolved);
    }

    static String algorithmLabel(Algorithm a) {
        return a.name().toLowerCase(Locale.ROOT);
    }

    static Algorithm parseAlgorithm(String text) {
        for (Algorithm a : Algorithm.values()) {
            if (algorithmLabel(a).equals(text.trim().toLowerCase(Locale.ROOT))) {
                return a;
            }
        }
        throw new IllegalArgumentException("no algorithm '" + text + "'; use auto, ring, halving_doubling, tree or direct");
    }
}
