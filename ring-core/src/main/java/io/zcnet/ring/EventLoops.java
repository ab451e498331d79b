package io.zcnet.ring;

import io.zcnet.ring.nio.NioEventLoop;
import io.zcnet.ring.uring.Uring;
import io.zcnet.ring.uring.UringEventLoop;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Opens event loops on the best engine: io_uring where the kernel allows it, otherwise the NIO engine.
 * When io_uring is refused (ENOSYS, EPERM from seccomp, {@code kernel.io_uring_disabled}, ENOMEM from
 * RLIMIT_MEMLOCK) the reason is reported once, on one line, through {@link System.Logger}.
 * Thread-safe.
 */
public final class EventLoops {
    private static final System.Logger LOG = System.getLogger("io.zcnet.ring");
    private static final AtomicBoolean FALLBACK_REPORTED = new AtomicBoolean();
    private static volatile String fallbackReason;

    private EventLoops() {
    }

    /**
     * Opens a loop as {@code config} asks; an explicit engine that cannot run is an error with its reason.
     *
     * @param config what to open
     * @return the loop; the first thread that polls or submits on it owns it
     * @throws IOException if the engine cannot run here, with its reason
     */
    public static EventLoop open(EventLoopConfig config) throws IOException {
        return switch (config.engine()) {
            case NIO -> NioEventLoop.open(config);
            case URING -> {
                Availability uring = Uring.availability();
                if (!uring.usable()) {
                    throw new IOException("io_uring engine requested but not usable: " + uring.reason());
                }
                yield UringEventLoop.open(config);
            }
            case AUTO -> openBest(config);
        };
    }

    /**
     * {@return {@link #open(EventLoopConfig)} with {@link EventLoopConfig#defaults()}}
     *
     * @throws IOException if no engine can run here, with the reason
     */
    public static EventLoop open() throws IOException {
        return open(EventLoopConfig.defaults());
    }

    /** {@return the engine {@link EventLoopConfig.Choice#AUTO} picks on this machine} */
    public static EngineKind bestEngine() {
        return Uring.availability().usable() ? EngineKind.URING : EngineKind.NIO;
    }

    /** {@return whether io_uring can run here, and if not why (probed once, then cached)} */
    public static Availability uringAvailability() {
        return Uring.availability();
    }

    /** {@return why the last automatic choice fell back to NIO, or null if it never did} */
    public static String fallbackReason() {
        return fallbackReason;
    }

    private static EventLoop openBest(EventLoopConfig config) throws IOException {
        Availability uring = Uring.availability();
        if (uring.usable()) {
            try {
                return UringEventLoop.open(config);
            } catch (IOException | UncheckedIOException e) {
                reportFallback(e.getMessage());
            }
        } else {
            reportFallback(uring.reason());
        }
        return NioEventLoop.open(config);
    }

    private static void reportFallback(String reason) {
        fallbackReason = reason;
        if (FALLBACK_REPORTED.compareAndSet(false, true)) {
            LOG.log(System.Logger.Level.WARNING, "zcnet: io_uring not usable (" + reason + "); using the NIO engine");
        }
    }
}
