package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.junit.jupiter.api.Test;

class ReductionsTest {

    @Test
    void everyTypeAndOperationMatchesAScalarReductionInPlaceAndApart() {
        int n = 1031; // not a multiple of any vector width: the tail runs too
        try (Arena arena = Arena.ofConfined()) {
            for (DataType type : DataType.values()) {
                for (ReduceOp op : ReduceOp.values()) {
                    int e = type.byteSize();
                    MemorySegment a = arena.allocate((long) n * e + 64, 64);
                    MemorySegment b = arena.allocate((long) n * e, 64);
                    MemorySegment d = arena.allocate((long) n * e, 64);
                    // offsets in bytes, one element in: the kernels must not assume aligned vectors
                    Data.fill(type, a, 1, n, 0, 0, 3, op);
                    Data.fill(type, b, 0, n, 1, 0, 3, op);
                    Reductions.apply(type, op, d, 0, a, e, b, 0, n);
                    Data.check(type, d, 0, n, 0, i -> combine(op, Data.value(0, i, 3, op), Data.value(1, i, 3, op)),
                            type + " " + op);
                    Reductions.apply(type, op, a, e, a, e, b, 0, n);
                    Data.check(type, a, 1, n, 0, i -> combine(op, Data.value(0, i, 3, op), Data.value(1, i, 3, op)),
                            type + " " + op + " in place");
                }
            }
        }
    }

    @Test
    void sixteenBitTypesRoundEveryStepToNearestEven() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(2);
            MemorySegment b = arena.allocate(2);
            Data.put(DataType.BFLOAT16, a, 0, 256);
            Data.put(DataType.BFLOAT16, b, 0, 1);
            Reductions.apply(DataType.BFLOAT16, ReduceOp.SUM, a, 0, a, 0, b, 0, 1);
            assertEquals(256.0, Data.get(DataType.BFLOAT16, a, 0), "257 is a tie, rounded to the even 256");
            Data.put(DataType.FLOAT16, a, 0, 2048);
            Data.put(DataType.FLOAT16, b, 0, 3);
            Reductions.apply(DataType.FLOAT16, ReduceOp.SUM, a, 0, a, 0, b, 0, 1);
            assertEquals(2052.0, Data.get(DataType.FLOAT16, a, 0), "2051 is a tie between 2050 and 2052");
        }
    }

    @Test
    void integerSumsWrapAndFloatMinimaFollowMath() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(8);
            MemorySegment b = arena.allocate(8);
            a.set(java.lang.foreign.ValueLayout.JAVA_INT, 0, Integer.MAX_VALUE);
            b.set(java.lang.foreign.ValueLayout.JAVA_INT, 0, 1);
            Reductions.apply(DataType.INT, ReduceOp.SUM, a, 0, a, 0, b, 0, 1);
            assertEquals(Integer.MIN_VALUE, a.get(java.lang.foreign.ValueLayout.JAVA_INT, 0));
            a.set(java.lang.foreign.ValueLayout.JAVA_FLOAT, 0, 0f);
            b.set(java.lang.foreign.ValueLayout.JAVA_FLOAT, 0, -0f);
            Reductions.apply(DataType.FLOAT, ReduceOp.MIN, a, 0, a, 0, b, 0, 1);
            assertEquals(-0f, a.get(java.lang.foreign.ValueLayout.JAVA_FLOAT, 0));
            b.set(java.lang.foreign.ValueLayout.JAVA_FLOAT, 0, Float.NaN);
            Reductions.apply(DataType.FLOAT, ReduceOp.MAX, a, 0, a, 0, b, 0, 1);
            assertEquals(Float.NaN, a.get(java.lang.foreign.ValueLayout.JAVA_FLOAT, 0));
        }
    }

    private static double combine(ReduceOp op, double x, double y) {
        return switch (op) {
            case SUM -> x + y;
            case PROD -> x * y;
            case MIN -> Math.min(x, y);
            case MAX -> Math.max(x, y);
        };
    }
}
