package io.zcnet.examples;

import io.zcnet.qp.QpConfig;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The queue-pair configuration {@code qp-server} and {@code qp-load} share: {@code --queue-depth} (deeper queues and a
 * window as wide, so one queue pair may keep as much in flight as many queue pairs do together, the comparison of
 * {@code bench/qp-many.sh}) and the pre-shared key of {@value #KEY_VARIABLE}, with which a stranger that does not hold
 * it is refused in the handshake, before anything but a handshake record is allocated for it.
 */
final class QueuePairSettings {
    /**
     * The variable holding the pre-shared key (16 to 64 bytes of text, {@link QpConfig#withPreSharedKey}): an
     * environment variable rather than an option, since a command line is visible to every user of the host.
     */
    static final String KEY_VARIABLE = "ZCNET_QP_KEY";

    private QueuePairSettings() {
    }

    /**
     * {@return the defaults for depth 0, else queues {@code depth} deep with a message window of {@code depth}; with
     * the pre-shared key {@code env} gives in {@value #KEY_VARIABLE}, if any}
     */
    static QpConfig config(int depth, Map<String, String> env) {
        QpConfig config = QpConfig.defaults();
        if (depth != 0) {
            if (depth < 1 || depth > 1 << 15 || Integer.bitCount(depth) != 1) {
                throw new IllegalArgumentException("--queue-depth must be 0 or a power of two up to 32768, got " + depth);
            }
            config = config.withQueueDepths(depth, depth).withMessageWindow(depth);
        }
        String key = env.get(KEY_VARIABLE);
        if (key == null) {
            return config;
        }
        byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
        if (bytes.length < 16 || bytes.length > 64) {
            throw new IllegalArgumentException(KEY_VARIABLE + " must be 16..64 bytes, it has " + bytes.length);
        }
        return config.withPreSharedKey(bytes);
    }
}
