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

    /**
     * {@return {@code msn + n} mod 2^16}
     *
     * @param msn an MSN
     * @param n how many to add
     */
    public static int add(int msn, int n) {
        return (msn + n) & MASK;
    }

    /**
     * {@return how far {@code to} is ahead of {@code from}, 0 .. 65535}
     *
     * @param from an MSN
     * @param to an MSN
     */
    public static int distance(int from, int to) {
        return (to - from) & MASK;
    }
}
