package io.zcnet.collective;

/**
 * How reductions combine elements. MIN and MAX on floating-point types follow {@link Math#min(float, float)}
 * and {@link Math#max(float, float)}: a NaN wins, and -0.0 is smaller than 0.0.
 */
public enum ReduceOp {
    /** The sum; integer types wrap on overflow. */
    SUM,
    /** The product; integer types wrap on overflow. */
    PROD,
    /** The smaller element; for floating point as {@link Math#min(float, float)}. */
    MIN,
    /** The larger element; for floating point as {@link Math#max(float, float)}. */
    MAX
}
