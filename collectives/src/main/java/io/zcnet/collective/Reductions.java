package io.zcnet.collective;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.MemorySegment;

/**
 * The element-wise reductions {@code dst[i] = a[i] op b[i]}, one plain loop per type and operation: the
 * shape C2's SuperWord vectorizes, where a per-element switch or a lambda would not. On JDK 25 it does not
 * yet vectorize them, because it cannot rule out that three native segments overlap (the run-time aliasing
 * check it needs is JDK-8324751; measured with and without {@code -XX:-UseSuperWord}, same speed); they run
 * scalar at about 9 GB/s of float output on this machine, more than a link carries, so the Vector API
 * (an incubator module) is not used. Offsets are in bytes and aligned to the element (the communicator
 * checks user segments; staging slots are page-aligned); {@code dst} may be {@code a} or {@code b} at the
 * same offset. Counts are ints: the algorithms reduce one slot-sized piece at a time. Stateless,
 * thread-safe.
 */
final class Reductions {
    private Reductions() {
    }

    static void apply(DataType type, ReduceOp op, MemorySegment dst, long d, MemorySegment a, long x, MemorySegment b,
            long y, int n) {
        switch (type) {
            case FLOAT -> floats(op, dst, d, a, x, b, y, n);
            case DOUBLE -> doubles(op, dst, d, a, x, b, y, n);
            case INT -> ints(op, dst, d, a, x, b, y, n);
            case LONG -> longs(op, dst, d, a, x, b, y, n);
            case BFLOAT16, FLOAT16 -> halves(type == DataType.BFLOAT16, op, dst, d, a, x, b, y, n);
        }
    }

    private static void floats(ReduceOp op, MemorySegment dst, long d, MemorySegment a, long x, MemorySegment b, long y,
            int n) {
        switch (op) {
            case SUM -> {
                for (int i = 0; i < n; i++) {
                    long o = (long) i << 2;
                    dst.set(JAVA_FLOAT, d + o, a.get(JAVA_FLOAT, x + o) + b.get(JAVA_FLOAT, y + o));
                }
            }
            case PROD -> {
                for (int i = 0; i < n; i++) {
                    long o = (long) i << 2;
                    dst.set(JAVA_FLOAT, d + o, a.get(JAVA_FLOAT, x + o) * b.get(JAVA_FLOAT, y + o));
                }
            }
            case MIN -> {
                for (int i = 0; i < n; i++) {
                    long o = (long) i << 2;
                    dst.set(JAVA_FLOAT, d + o, Math.min(a.get(JAVA_FLOAT, x + o), b.get(JAVA_FLOAT, y + o)));
                }
            }
            case MAX -> {
                for (int i = 0; i < n; i++) {
                    long o = (long) i << 2;
                    dst.set(JAVA_FLOAT, d + o, Math.max(a.get(JAVA_FLOAT, x + o), b.get(JAVA_FLOAT, y + o)));
                }
            }
        }
    }

    private static void doubles(ReduceOp op, MemorySegment dst, long d, MemorySegment a, long x, MemorySegment b,
            long y, int n) {
        switch (op) {
            case SUM -> {
                for (int i = 0; i < n; i++) {
                    long o = (long) i << 3;
                    dst.set(JAVA_DOUBLE, d + o, a.get(JAVA_DOUBLE, x + o) + b.get(JAVA_DOUBLE, y + o));
                }
            }
            case PROD -> {
                for (int i = 0; i < n; i++) {
                    long o = (long) i << 3;
                    dst.set(JAVA_DOUBLE, d + o, a.get(JAVA_DOUBLE, x + o) * b.get(JAVA_DOUBLE, y + o));
                }
            }
            case MIN -> {
                for (int i = 0; i < n; i++) {
                    long o = (long) i << 3;
                    dst.set(JAVA_DOUBLE, d + o, Math.min(a.get(JAVA_DOUBLE, x + o), b.get(JAVA_DOUBLE, y + o)));
                }
            }
            case MAX -> {
                for (int i = 0; i < n; i++) {
                    long o = (long) i << 3;
                    dst.set(JAVA_DOUBLE, d + o, Math.max(a.get(JAVA_DOUBLE, x + o), b.get(JAVA_DOUBLE, y + o)));
                }
            }
        }
    }

    private static void ints(ReduceOp op, MemorySegment dst, long d, MemorySegment a, long x, MemorySegment b, long y,
            int n) {
        switch (op) {
            case SUM -> {
                for (int i = 0; i < n; i++) {
                    long o = (long) i << 2;
                    dst.set(JAVA_INT, d + o, a.get(JAVA_INT, x + o) + b.get(JAVA_INT, y + o));
                }
            }
            case PROD -> {
                for (int i = 0; i < n; i++) {
                    long o = (long) i << 2;
                    dst.set(JAVA_INT, d + o, a.get(JAVA_INT, x + o) * b.get(JAVA_INT, y + o));
                }
            }
            case MIN -> {
                for (int i = 0; i < n; i++) {
                    long o = (long) i << 2;
                    dst.set(JAVA_INT, d + o, Math.min(a.get(JAVA_INT, x + o), b.get(JAVA_INT, y + o)));
                }
            }
            case MAX -> {
                for (int i = 0; i < n; i++) {
                    long o = (long) i << 2;
                    dst.set(JAVA_INT, d + o, Math.max(a.get(JAVA_INT, x + o), b.get(JAVA_INT, y + o)));
                }
            }
        }
    }

    private static void longs(ReduceOp op, MemorySegment dst, long d, MemorySegment a, long x, MemorySegment b, long y,
            int n) {
        switch (op) {
            case SUM -> {
                for (int i = 0; i < n; i++) {
                    long o = (long) i << 3;
                    dst.set(JAVA_LONG, d + o, a.get(JAVA_LONG, x + o) + b.get(JAVA_LONG, y + o));
                }
            }
            case PROD -> {
                for (int i = 0; i < n; i++) {
                    long o = (long) i << 3;
                    dst.set(JAVA_LONG, d + o, a.get(JAVA_LONG, x + o) * b.get(JAVA_LONG, y + o));
                }
            }
            case MIN -> {
                for (int i = 0; i < n; i++) {
                    long o = (long) i << 3;
                    dst.set(JAVA_LONG, d + o, Math.min(a.get(JAVA_LONG, x + o), b.get(JAVA_LONG, y + o)));
                }
            }
            case MAX -> {
                for (int i = 0; i < n; i++) {
                    long o = (long) i << 3;
                    dst.set(JAVA_LONG, d + o, Math.max(a.get(JAVA_LONG, x + o), b.get(JAVA_LONG, y + o)));
                }
            }
        }
    }

    /**
     * The 16-bit types, widened to {@code float}, combined, and rounded back to nearest-even: the conversions
     * dominate, so one loop with the operation chosen per element costs little more than four.
     */
    private static void halves(boolean bfloat, ReduceOp op, MemorySegment dst, long d, MemorySegment a, long x,
            MemorySegment b, long y, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i << 1;
            short p = a.get(JAVA_SHORT, x + o);
            short q = b.get(JAVA_SHORT, y + o);
            float u = bfloat ? BFloat16.toFloat(p) : Float.float16ToFloat(p);
            float v = bfloat ? BFloat16.toFloat(q) : Float.float16ToFloat(q);
            float r = switch (op) {
                case SUM -> u + v;
                case PROD -> u * v;
                case MIN -> Math.min(u, v);
                case MAX -> Math.max(u, v);
            };
            dst.set(JAVA_SHORT, d + o, bfloat ? BFloat16.fromFloat(r) : Float.floatToFloat16(r));
        }
    }
}
