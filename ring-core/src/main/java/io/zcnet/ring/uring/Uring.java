package io.zcnet.ring.uring;

import io.zcnet.ring.Availability;
import io.zcnet.ring.Errno;
import io.zcnet.ring.EngineKind;
import io.zcnet.ring.internal.Counters;
import io.zcnet.ring.sys.ErrnoException;
import io.zcnet.ring.sys.IoUring;
import io.zcnet.ring.sys.Linux;
import io.zcnet.ring.sys.Native;
import io.zcnet.ring.sys.Params;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Whether io_uring can run in this process, and if not, why, in one line a user can act on; plus the
 * facts {@code zcnet info} prints.
 *
 * <p>{@link #availability()} sets up (and closes) a two-entry ring once per JVM and caches the answer;
 * it maps the failure to its usual cause: ENOSYS (a kernel without io_uring, or seccomp answering
 * ENOSYS), EPERM (seccomp, or {@code kernel.io_uring_disabled}, whose value it reads to say which),
 * ENOMEM (RLIMIT_MEMLOCK, with the limit), or native access refused by the JVM. Thread-safe.
 */
public final class Uring {
    private static final Path IO_URING_DISABLED = Path.of("/proc/sys/kernel/io_uring_disabled");
    private static final Path OS_RELEASE = Path.of("/proc/sys/kernel/osrelease");

    private Uring() {
    }

    /** Whether io_uring works here (probed once, then cached). */
    public static Availability availability() {
        return Probed.AVAILABILITY;
    }

    private static final class Probed {
        static final Availability AVAILABILITY = probe();
    }

    private static Availability probe() {
        String linkError = Native.linkError();
        if (linkError != null) {
            return Availability.unusable(linkError);
        }
        try (Arena arena = Arena.ofConfined()) {
            Native sys = new Native(arena);
            MemorySegment params = arena.allocate(Params.LAYOUT);
            int fd = sys.ioUringSetup(2, params);
            if (fd < 0) {
                return Availability.unusable(explain(fd));
            }
            sys.close(fd);
            return Availability.USABLE;
        } catch (RuntimeException | LinkageError e) {
            return Availability.unusable("io_uring probe failed: " + e);
        }
    }

    /** One line explaining an {@code io_uring_setup} failure ({@code -errno}). */
    static String explain(int negativeErrno) {
        String head = "io_uring_setup: " + Errno.name(negativeErrno);
        String cause = cause(-negativeErrno);
        return cause.isEmpty() ? head : head + " (" + cause + ")";
    }

    /** The usual cause of an {@code io_uring_setup} failure with {@code errno}, or "" when there is none to add. */
    static String cause(int errno) {
        return switch (errno) {
            case Errno.ENOSYS -> "kernel built without io_uring, or a seccomp filter hides it";
            case Errno.EPERM -> explainEperm(ioUringDisabled());
            case Errno.ENOMEM -> "locked-memory limit RLIMIT_MEMLOCK is " + formatLimit(memlockLimit())
                    + "; raise it with ulimit -l or LimitMEMLOCK=";
            default -> "";
        };
    }

    private static String explainEperm(int disabled) {
        return switch (disabled) {
            case 2 -> "kernel.io_uring_disabled=2: io_uring is disabled for every process";
            case 1 -> "kernel.io_uring_disabled=1: only members of kernel.io_uring_group (or CAP_SYS_ADMIN) may use it";
            case 0 -> "blocked by a seccomp filter (kernel.io_uring_disabled=0); containers: allow io_uring_* syscalls";
            default -> "blocked by seccomp or kernel.io_uring_disabled";
        };
    }

    /** {@code kernel.io_uring_disabled} (0, 1, 2), or -1 when the kernel has no such sysctl. */
    public static int ioUringDisabled() {
        try {
            return Integer.parseInt(Files.readString(IO_URING_DISABLED).trim());
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
    }

    /** The running kernel's release ({@code uname -r}), or "unknown". */
    public static String kernelRelease() {
        try {
            return Files.readString(OS_RELEASE).trim();
        } catch (IOException e) {
            return "unknown";
        }
    }

    /** The soft RLIMIT_MEMLOCK in bytes ({@link Long#MAX_VALUE} when unlimited), or -1 if unreadable. */
    public static long memlockLimit() {
        if (Native.linkError() != null) {
            return -1;
        }
        try (Arena arena = Arena.ofConfined()) {
            long limit = new Native(arena).softLimit(Linux.RLIMIT_MEMLOCK, arena);
            return limit < 0 ? -1 : limit;
        }
    }

    static String formatLimit(long bytes) {
        if (bytes == Long.MAX_VALUE) {
            return "unlimited";
        }
        return bytes < 0 ? "unknown" : (bytes / 1024) + " KiB";
    }

    /**
     * What {@code zcnet info} shows about io_uring on this machine.
     *
     * @param availability     {@link #availability()}
     * @param kernelRelease    {@code uname -r}
     * @param ioUringDisabled  {@code kernel.io_uring_disabled}, -1 if absent
     * @param memlockLimit     soft RLIMIT_MEMLOCK bytes, {@link Long#MAX_VALUE} unlimited, -1 unknown
     * @param setupFlags       the flags a default ring (256/1024) negotiates, by name
     * @param kernelFeatures   {@code io_uring_params.features}, by name
     * @param supportedOps     opcodes the kernel's probe reports
     * @param notes            flags dropped during negotiation, with the reason
     */
    public record Info(Availability availability, String kernelRelease, int ioUringDisabled, long memlockLimit,
            List<String> setupFlags, List<String> kernelFeatures, List<String> supportedOps, List<String> notes) {

        public Info {
            setupFlags = List.copyOf(setupFlags);
            kernelFeatures = List.copyOf(kernelFeatures);
            supportedOps = List.copyOf(supportedOps);
            notes = List.copyOf(notes);
        }

        /** Several lines for a terminal. */
        public String describe() {
            return "io_uring: " + (availability.usable() ? "usable" : "NOT usable: " + availability.reason())
                    + "\nkernel: " + kernelRelease
                    + "\nkernel.io_uring_disabled: " + (ioUringDisabled < 0 ? "absent" : ioUringDisabled)
                    + "\nRLIMIT_MEMLOCK: " + formatLimit(memlockLimit)
                    + "\nsetup flags: " + String.join("|", setupFlags)
                    + "\nfeatures: " + String.join(" ", kernelFeatures)
                    + "\nopcodes: " + String.join(" ", supportedOps)
                    + (notes.isEmpty() ? "" : "\nnotes: " + String.join("; ", notes));
        }
    }

    /** Gathers {@link Info}; sets up and closes one default-sized ring when io_uring is usable. */
    public static Info info() {
        Availability availability = availability();
        String release = kernelRelease();
        int disabled = ioUringDisabled();
        long memlock = memlockLimit();
        if (!availability.usable()) {
            return new Info(availability, release, disabled, memlock, List.of(), List.of(), List.of(), List.of());
        }
        try (Arena arena = Arena.ofConfined()) {
            Native sys = new Native(arena);
            try (Ring ring = Ring.open(sys, arena, new Counters(EngineKind.URING), 256, 1024)) {
                return new Info(availability, release, disabled, memlock,
                        List.of(IoUring.setupFlagNames(ring.setupFlags())),
                        List.of(IoUring.featureNames(ring.features())), ring.supportedOpNames(), ring.notes());
            }
        } catch (ErrnoException e) {
            return new Info(Availability.unusable(e.getMessage()), release, disabled, memlock, List.of(), List.of(),
                    List.of(), List.of());
        }
    }
}
