package io.zcnet.qp;

/**
 * The clock of the header timestamps: microseconds of {@link System#nanoTime()}, truncated to the 32 bits
 * of {@code timestamp} and {@code timestamp_echo}. Only differences of values from one side's clock are ever
 * taken (the peer echoes this side's own values), so the origin does not matter and the wrap every 71
 * minutes is harmless to int arithmetic.
 */
final class QpClock {

    private QpClock() {
    }

    static int micros() {
        return (int) (System.nanoTime() / 1000);
    }
}
