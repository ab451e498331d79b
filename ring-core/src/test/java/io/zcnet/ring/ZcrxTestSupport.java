package io.zcnet.ring;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * What the zcrx tests need from the system and zcnet does not: the process's privilege, {@code ip}
 * commands, and threads that enter a network namespace or give up {@code CAP_NET_ADMIN}. Both are
 * per-thread in Linux ({@code setns(2)} with {@code CLONE_NEWNET}, {@code capset(2)} on the calling
 * thread), so each such thread is fresh and dies after its one task: nothing else ever runs on it.
 */
public final class ZcrxTestSupport {
    /** {@code CAP_NET_ADMIN} ({@code linux/capability.h}). */
    static final int CAP_NET_ADMIN = 12;
    private static final int CLONE_NEWNET = 0x40000000;
    private static final int O_RDONLY_CLOEXEC = 0x80000;
    /** {@code _LINUX_CAPABILITY_VERSION_3}: two 32-bit words per set. */
    private static final int CAPABILITY_VERSION_3 = 0x20080522;

    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle OPEN;
    private static final MethodHandle SETNS;
    private static final MethodHandle CLOSE;
    private static final MethodHandle CAPGET;
    private static final MethodHandle CAPSET;

    static {
        Linker linker = Linker.nativeLinker();
        Linker.Option errno = Linker.Option.captureCallState("errno");
        OPEN = linker.downcallHandle(linker.defaultLookup().findOrThrow("open"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), errno, Linker.Option.firstVariadicArg(2));
        SETNS = linker.downcallHandle(linker.defaultLookup().findOrThrow("setns"),
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), errno);
        CLOSE = linker.downcallHandle(linker.defaultLookup().findOrThrow("close"),
                FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        CAPGET = linker.downcallHandle(linker.defaultLookup().findOrThrow("capget"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), errno);
        CAPSET = linker.downcallHandle(linker.defaultLookup().findOrThrow("capset"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), errno);
    }

    private ZcrxTestSupport() {
    }

    /** Whether this process has {@code CAP_NET_ADMIN} in its effective set ({@code CapEff} of /proc/self/status). */
    public static boolean hasNetAdmin() throws IOException {
        return (capEff() & (1L << CAP_NET_ADMIN)) != 0;
    }

    private static long capEff() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("CapEff:")) {
                return Long.parseUnsignedLong(line.substring("CapEff:".length()).trim(), 16);
            }
        }
        throw new IOException("no CapEff line in /proc/self/status");
    }

    /** Whether this process runs as uid 0 (real), which {@code ip netns} and {@code ip link add} need. */
    static boolean isRoot() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("Uid:")) {
                return line.substring("Uid:".length()).trim().split("\\s+")[0].equals("0");
            }
        }
        throw new IOException("no Uid line in /proc/self/status");
    }

    /** Runs {@code ip args...}; fails with its output unless it exits 0. */
    static void ip(String... args) throws IOException, InterruptedException {
        String output = ipTolerant(args);
        if (output != null) {
            throw new IOException("ip " + String.join(" ", args) + " failed: " + output);
        }
    }

    /** Runs {@code ip args...}; returns null on success, its output otherwise (for clean-ups that may find nothing). */
    static String ipTolerant(String... args) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(concat("ip", args)).redirectErrorStream(true).start();
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return "timed out";
        }
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        return p.exitValue() == 0 ? null : "exit " + p.exitValue() + ": " + output;
    }

    private static List<String> concat(String head, String... tail) {
        String[] all = new String[tail.length + 1];
        all[0] = head;
        System.arraycopy(tail, 0, all, 1, tail.length);
        return List.of(all);
    }

    /** A setup step that runs first on the fresh thread. */
    interface ThreadSetup {
        void apply() throws Throwable;
    }

    /** Runs {@code body} on a fresh platform thread after {@code setup}; the thread then ends. */
    static <T> T onFreshThread(ThreadSetup setup, Callable<T> body) throws Exception {
        AtomicReference<T> result = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread thread = Thread.ofPlatform().name("zcrx-test").start(() -> {
            try {
                setup.apply();
                result.set(body.call());
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        thread.join(TimeUnit.SECONDS.toMillis(30));
        if (thread.isAlive()) {
            throw new AssertionError("zcrx test thread still running after 30 s");
        }
        if (failure.get() instanceof Exception e) {
            throw e;
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        return result.get();
    }

    /** Moves the calling thread, and only it, into network namespace {@code name} (from {@code ip netns add}). */
    static void enterNetns(String name) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            int fd = (int) OPEN.invokeExact(state, arena.allocateFrom("/run/netns/" + name), O_RDONLY_CLOEXEC);
            if (fd < 0) {
                throw new IOException("open /run/netns/" + name + ": errno " + (int) ERRNO.get(state, 0L));
            }
            try {
                if ((int) SETNS.invokeExact(state, fd, CLONE_NEWNET) != 0) {
                    throw new IOException("setns " + name + ": errno " + (int) ERRNO.get(state, 0L));
                }
            } finally {
                int ignored = (int) CLOSE.invokeExact(fd);
            }
        }
    }

    /** Clears {@code CAP_NET_ADMIN} from the calling thread's effective set, the set the kernel checks. */
    static void dropNetAdmin() throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            MemorySegment header = arena.allocate(JAVA_INT, 2); // version, pid (0: the calling thread)
            MemorySegment data = arena.allocate(JAVA_INT, 6);   // {effective, permitted, inheritable} x 2
            header.setAtIndex(JAVA_INT, 0, CAPABILITY_VERSION_3);
            if ((int) CAPGET.invokeExact(state, header, data) != 0) {
                throw new IOException("capget: errno " + (int) ERRNO.get(state, 0L));
            }
            data.setAtIndex(JAVA_INT, 0, data.getAtIndex(JAVA_INT, 0) & ~(1 << CAP_NET_ADMIN));
            if ((int) CAPSET.invokeExact(state, header, data) != 0) {
                throw new IOException("capset: errno " + (int) ERRNO.get(state, 0L));
            }
        }
    }
}
