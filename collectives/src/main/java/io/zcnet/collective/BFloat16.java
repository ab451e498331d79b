package io.zcnet.collective;

/**
 * bfloat16, the upper 16 bits of an IEEE 754 binary32: widening is a shift, narrowing rounds to nearest
 * with ties to even, as the hardware that uses the format does, and keeps a NaN a (quiet) NaN. Stateless.
 */
final class BFloat16 {
    private BFloat16() {
    }

    static float toFloat(short bits) {
        return Float.intBitsToFloat(bits << 16);
    }

    static short fromFloat(float f) {
        int bits = Float.floatToRawIntBits(f);
        if (Float.isNaN(f)) {
            // Truncating could clear every fraction bit left and make an infinity: set the quiet bit.
            return (short) (bits >>> 16 | 0x0040);
        }
        // Adding 0x7FFF, plus one when the kept part is odd, carries into it exactly when rounding goes up.
        return (short) ((bits + 0x7FFF + (bits >>> 16 & 1)) >>> 16);
    }
}
