package io.zcnet.collective;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.MemorySegment;

/**
 * Test data: small integers, different for every rank, element and seed, which every type holds exactly
 * and whose sums and products over eight ranks every type still holds exactly, so a result is compared
 * with a plain sequential reduction element by element with {@code ==}, whatever order an algorithm
 * reduced in. PROD draws from {-2, -1, 1, 2}, so products stay powers of two up to 2^8.
 */
final class Data {
    private Data() {
    }

    static double value(int rank, long i, int seed, ReduceOp op) {
        long h = (rank + 1) * 0x9E3779B97F4A7C15L + i * 0xBF58476D1CE4E5B9L + seed * 0x94D049BB133111EBL;
        h ^= h >>> 31;
        if (op == ReduceOp.PROD) {
            int v = (int) Math.floorMod(h, 4L);
            return v < 2 ? v - 2 : v - 1;
        }
        return Math.floorMod(h, 13L) - 6;
    }

    /** What element {@code i} of the reduction over {@code size} ranks is. */
    static double reduced(ReduceOp op, int size, long i, int seed) {
        double r = value(0, i, seed, op);
        for (int rank = 1; rank < size; rank++) {
            double v = value(rank, i, seed, op);
            r = switch (op) {
                case SUM -> r + v;
                case PROD -> r * v;
                case MIN -> Math.min(r, v);
                case MAX -> Math.max(r, v);
            };
        }
        return r;
    }

    /** Fills {@code count} elements from element {@code at} with rank {@code rank}'s values from element {@code from}. */
    static void fill(DataType type, MemorySegment s, long at, long count, int rank, long from, int seed, ReduceOp op) {
        for (long i = 0; i < count; i++) {
            put(type, s, at + i, value(rank, from + i, seed, op));
        }
    }

    static void put(DataType type, MemorySegment s, long i, double v) {
        switch (type) {
            case FLOAT -> s.setAtIndex(JAVA_FLOAT, i, (float) v);
            case DOUBLE -> s.setAtIndex(JAVA_DOUBLE, i, v);
            case INT -> s.setAtIndex(JAVA_INT, i, (int) v);
            case LONG -> s.setAtIndex(JAVA_LONG, i, (long) v);
            case BFLOAT16 -> s.setAtIndex(JAVA_SHORT, i, BFloat16.fromFloat((float) v));
            case FLOAT16 -> s.setAtIndex(JAVA_SHORT, i, Float.floatToFloat16((float) v));
        }
    }

    static double get(DataType type, MemorySegment s, long i) {
        return switch (type) {
            case FLOAT -> s.getAtIndex(JAVA_FLOAT, i);
            case DOUBLE -> s.getAtIndex(JAVA_DOUBLE, i);
            case INT -> s.getAtIndex(JAVA_INT, i);
            case LONG -> s.getAtIndex(JAVA_LONG, i);
            case BFLOAT16 -> BFloat16.toFloat(s.getAtIndex(JAVA_SHORT, i));
            case FLOAT16 -> Float.float16ToFloat(s.getAtIndex(JAVA_SHORT, i));
        };
    }

    /** What an element should be. */
    @FunctionalInterface
    interface Expected {
        double at(long i);
    }

    /** Asserts {@code count} elements from {@code at} equal {@code expected} from {@code from}, element by element. */
    static void check(DataType type, MemorySegment s, long at, long count, long from, Expected expected, String what) {
        for (long i = 0; i < count; i++) {
            double want = expected.at(from + i);
            double got = get(type, s, at + i);
            if (Double.doubleToLongBits(want) != Double.doubleToLongBits(got) && want != got) {
                throw new AssertionError(what + ": element " + (from + i) + " is " + got + ", expected " + want);
            }
        }
    }
}
