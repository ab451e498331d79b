package io.zcnet.jmh.rx;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The messages, and their payload bytes, that the receiving handler has been given. One writer, the
 * receiving event loop, so counting is a plain load and a release store (no locked read-modify-write on
 * the per-message path); any thread reads with acquire. A reader may see the two counts one message
 * apart, which is nothing against millions.
 */
final class DeliveryCount {
    private final AtomicLong messages = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();

    /**
     * Counts one delivered message of {@code length} payload bytes. Only the receiving event loop calls
     * this; returns the messages counted so far, for that loop's own use (credits).
     */
    long add(int length) {
        bytes.setRelease(bytes.getPlain() + length);
        long counted = messages.getPlain() + 1;
        messages.setRelease(counted);
        return counted;
    }

    long messages() {
        return messages.getAcquire();
    }

    long bytes() {
        return bytes.getAcquire();
    }
}
