package io.zcnet.collective;

/**
 * Element types of collective operations. Reductions of the two 16-bit types are computed in
 * {@code float} and rounded to nearest-even after every step, as reductions on accelerators do, so a
 * result may differ from one computed in {@code float} throughout.
 */
public enum DataType {
    /** IEEE 754 binary32. */
    FLOAT(4),
    /** IEEE 754 binary64. */
    DOUBLE(8),
    /** Two's complement 32-bit; sums and products wrap. */
    INT(4),
    /** Two's complement 64-bit; sums and products wrap. */
    LONG(8),
    /** bfloat16: the upper half of a binary32 (8 exponent bits, 7 fraction bits). */
    BFLOAT16(2),
    /** IEEE 754 binary16 ({@link Float#float16ToFloat(short)}). */
    FLOAT16(2);

    private final int byteSize;

    DataType(int byteSize) {
        this.byteSize = byteSize;
    }

    /** {@return the bytes per element}; segments of this type must be aligned to it. */
    public int byteSize() {
        return byteSize;
    }
}
