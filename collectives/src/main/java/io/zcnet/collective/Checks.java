package io.zcnet.collective;

import java.lang.foreign.MemorySegment;

/**
 * Argument checks of the communicator's operations, each failing with an {@link IllegalArgumentException}
 * that names the argument and what is wrong. They run before anything is sent, so a refused call leaves
 * the communicator usable. Stateless; nothing allocates unless a check fails.
 */
final class Checks {
    private Checks() {
    }

    static void type(DataType type) {
        if (type == null) {
            throw new IllegalArgumentException("type is null");
        }
    }

    static void reduction(DataType type, ReduceOp op) {
        type(type);
        if (op == null) {
            throw new IllegalArgumentException("op is null");
        }
    }

    static void count(long count, String what) {
        if (count < 0) {
            throw new IllegalArgumentException(what + " " + count + " is negative");
        }
    }

    static void root(int root, int size) {
        if (root < 0 || root >= size) {
            throw new IllegalArgumentException("root " + root + " outside 0.." + (size - 1));
        }
    }

    /** {@code segment} holds {@code count} elements of {@code type}, native and aligned to the element. */
    static void holds(MemorySegment segment, String name, long count, DataType type) {
        if (segment == null) {
            throw new IllegalArgumentException(name + " is null");
        }
        if (!segment.isNative()) {
            throw new IllegalArgumentException(name + " is not native memory: collectives take off-heap segments");
        }
        // Found now rather than halfway through, when the other ranks would be left with half an operation.
        if (!segment.scope().isAlive()) {
            throw new IllegalArgumentException(name + " belongs to an arena that is closed");
        }
        if (!segment.isAccessibleBy(Thread.currentThread())) {
            throw new IllegalArgumentException(name + " is confined to another thread");
        }
        int e = type.byteSize();
        if (segment.address() % e != 0) {
            throw new IllegalArgumentException(name + " at 0x" + Long.toHexString(segment.address())
                    + " is not aligned to its " + e + "-byte " + type + " elements");
        }
        if (count > segment.byteSize() / e) {
            throw new IllegalArgumentException(name + " has " + segment.byteSize() + " bytes, too few for " + count + " "
                    + type + " elements");
        }
    }

    /** As {@link #holds}, and writable. */
    static void receives(MemorySegment segment, String name, long count, DataType type) {
        holds(segment, name, count, type);
        if (segment.isReadOnly()) {
            throw new IllegalArgumentException(name + " is read-only");
        }
    }

    /**
     * The {@code inputBytes} at {@code input} and {@code outputBytes} at {@code output} either do not overlap or
     * the input starts exactly {@code inPlaceAt} bytes into the output (the operation in place, as NCCL
     * defines it; -1 where an operation has no in-place form).
     */
    static void apartOrInPlace(MemorySegment input, long inputBytes, MemorySegment output, long outputBytes,
            long inPlaceAt) {
        long in = input.address();
        long out = output.address();
        if (in < out + outputBytes && out < in + inputBytes && !(inPlaceAt >= 0 && in == out + inPlaceAt)) {
            throw new IllegalArgumentException("input [0x" + Long.toHexString(in) + ", +" + inputBytes + ") and output [0x"
                    + Long.toHexString(out) + ", +" + outputBytes + ") overlap" + (inPlaceAt < 0
                    ? ": this operation has no in-place form"
                    : "; in place, the input must start " + inPlaceAt + " bytes into the output"));
        }
    }

    /** {@code counts} has one non-negative count per rank; returns their sum. */
    static long counts(long[] counts, int size, String name) {
        if (counts == null || counts.length != size) {
            throw new IllegalArgumentException(name + " must have one count per rank (" + size + "), has "
                    + (counts == null ? "none" : counts.length));
        }
        long sum = 0;
        for (int r = 0; r < size; r++) {
            if (counts[r] < 0) {
                throw new IllegalArgumentException(name + "[" + r + "] = " + counts[r] + " is negative");
            }
            sum += counts[r];
            if (sum < 0) {
                throw new IllegalArgumentException(name + " add up to more than " + Long.MAX_VALUE);
            }
        }
        return sum;
    }

    /** {@code count} copies of {@code each} elements, or an exception if that overflows. */
    static long times(long each, int count, String name) {
        if (each > Long.MAX_VALUE / Math.max(1, count)) {
            throw new IllegalArgumentException(name + " " + each + " times " + count + " ranks overflows");
        }
        return each * count;
    }
}
