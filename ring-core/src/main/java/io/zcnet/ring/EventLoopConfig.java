package io.zcnet.ring;

import java.util.Locale;

/**
 * How to build an {@link EventLoop}.
 *
 * @param engine       which engine; {@link Choice#AUTO} takes io_uring when usable (override with
 *                     {@code -Dzcnet.engine=uring|nio})
 * @param sqEntries    submission queue entries (power of two, 1..32768)
 * @param cqEntries    completion queue entries (power of two, at least {@code sqEntries}); multishot
 *                     receives produce many completions per submission, so this defaults to 4×
 * @param taskCapacity bound of the queue other threads hand tasks through (power of two)
 * @param idle         null: {@link EventLoopThread} blocks in the kernel when idle; otherwise it polls
 *                     without blocking and idles with this strategy (busy-poll mode)
 */
public record EventLoopConfig(Choice engine, int sqEntries, int cqEntries, int taskCapacity, LoopIdle idle) {

    /** Engine choice. */
    public enum Choice {
        /** io_uring where this machine allows it, NIO otherwise (saying why, once). */
        AUTO,
        /** io_uring or nothing: opening fails with the reason where it cannot run. */
        URING,
        /** The {@code java.nio} engine. */
        NIO
    }

    /** The system property that overrides {@link Choice#AUTO}. */
    public static final String ENGINE_PROPERTY = "zcnet.engine";

    /** Checks every component; {@link #defaults()} and the {@code with} methods build valid ones. */
    public EventLoopConfig {
        if (engine == null) {
            throw new IllegalArgumentException("engine is null (use AUTO)");
        }
        requirePowerOfTwo("sqEntries", sqEntries, 1, 32768);
        requirePowerOfTwo("cqEntries", cqEntries, sqEntries, 1 << 20);
        requirePowerOfTwo("taskCapacity", taskCapacity, 2, 1 << 20);
    }

    private static void requirePowerOfTwo(String name, int value, int min, int max) {
        if (value < min || value > max || Integer.bitCount(value) != 1) {
            throw new IllegalArgumentException(
                    name + " must be a power of two in [" + min + ", " + max + "], got " + value);
        }
    }

    /** {@return 256 submission entries, 1024 completion entries, blocking idle, engine from the system property} */
    public static EventLoopConfig defaults() {
        return new EventLoopConfig(choiceFromProperty(), 256, 1024, 1024, null);
    }

    /**
     * {@return this configuration with another engine choice}
     *
     * @param choice the engine choice
     */
    public EventLoopConfig withEngine(Choice choice) {
        return new EventLoopConfig(choice, sqEntries, cqEntries, taskCapacity, idle);
    }

    /**
     * {@return this configuration with other queue sizes}
     *
     * @param sq submission queue entries (power of two, 1..32768)
     * @param cq completion queue entries (power of two, at least {@code sq})
     */
    public EventLoopConfig withEntries(int sq, int cq) {
        return new EventLoopConfig(engine, sq, cq, taskCapacity, idle);
    }

    /**
     * {@return this configuration in busy-poll mode, idling with {@code strategy}; null blocks in the kernel again}
     *
     * @param strategy how the loop thread idles between polls, or null
     */
    public EventLoopConfig withIdle(LoopIdle strategy) {
        return new EventLoopConfig(engine, sqEntries, cqEntries, taskCapacity, strategy);
    }

    /**
     * Parses {@code -Dzcnet.engine}: absent or "auto" is AUTO; "uring", "io_uring" or "nio".
     *
     * @return the choice the system property names
     */
    public static Choice choiceFromProperty() {
        return parseChoice(System.getProperty(ENGINE_PROPERTY, "auto"));
    }

    /**
     * Parses an engine name as users type it; rejects anything else with the accepted names.
     *
     * @param text "auto", "uring", "io_uring" or "nio", in any case
     * @return the choice it names
     */
    public static Choice parseChoice(String text) {
        return switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "auto", "" -> Choice.AUTO;
            case "uring", "io_uring", "iouring" -> Choice.URING;
            case "nio" -> Choice.NIO;
            default -> throw new IllegalArgumentException(
                    "unknown engine '" + text + "': use auto, uring or nio");
        };
    }
}
