package io.zcnet.framing;

/**
 * Message sequence number arithmetic modulo 2^16 (serial number arithmetic as in RFC 1982, for a
 * 16-bit space). Stateless, thread-safe.
 */
public final class Msn {

    /** MSNs wrap at this value. */
    public static final int MODULUS = 1 << 16;
    static final int MASK = MODULUS - 1;

    private Msn() {
    }

    /** {@code msn + n} mod 2^16. */
    public static int add(int msn, int n) {
        return (msn + n) & MASK;
    }

    /** How far {@code to} is ahead of {@code from}, 0 .. 65535. */
    public static int distance(int from, int to) {
        return (to - from) & MASK;
    }
}
