package io.zcnet.examples;

import io.zcnet.ring.Availability;
import io.zcnet.ring.EngineFeatures;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.EventLoops;
import io.zcnet.ring.uring.Uring;
import picocli.CommandLine.Command;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/** {@code zcnet info}: what this machine offers zcnet, and what a ring negotiates here. */
@Command(name = "info", mixinStandardHelpOptions = true,
        description = "Kernel, io_uring availability and why not, negotiated setup flags, opcodes, memlock limit.")
final class InfoCommand implements Callable<Integer> {

    @Override
    public Integer call() {
        System.out.println("kernel              " + read("/proc/sys/kernel/osrelease"));
        System.out.println("io_uring_disabled   " + read("/proc/sys/kernel/io_uring_disabled")
                + "   (0 = allowed, 1 = privileged only, 2 = disabled)");
        System.out.println("memlock limit       " + memlockLimit());
        System.out.println("java                " + Runtime.version() + " (" + System.getProperty("java.vm.name") + ")");
        Availability uring = Uring.availability();
        System.out.println("io_uring usable     " + (uring.usable() ? "yes" : "no: " + uring.reason()));
        System.out.println("default engine      " + EventLoops.bestEngine().name().toLowerCase(java.util.Locale.ROOT)
                + "   (override: --engine or -Dzcnet.engine=uring|nio)");
        if (!uring.usable()) {
            return 0;
        }
        try (EventLoop loop = EventLoops.open(EventLoopConfig.defaults().withEngine(EventLoopConfig.Choice.URING))) {
            loop.poll(0); // the ring is enabled, and its fd registered, on first use by its owner
            EngineFeatures f = loop.features();
            System.out.println("ring                sq=" + f.sqEntries() + " cq=" + f.cqEntries()
                    + " registered-ring-fd=" + f.registeredRing());
            System.out.println("setup flags         " + String.join(" ", f.setupFlags())
                    + String.format(" (0x%x)", f.setupFlagBits()));
            System.out.println("kernel features     " + String.join(" ", f.kernelFeatures()));
            System.out.println("opcodes (" + f.supportedOps().size() + ")       " + String.join(" ", f.supportedOps()));
            for (String note : f.notes()) {
                System.out.println("note                " + note);
            }
        } catch (IOException e) {
            System.out.println("opening a ring failed: " + e.getMessage());
            return 1;
        }
        return 0;
    }

    private static String read(String path) {
        try {
            return Files.readString(Path.of(path)).trim();
        } catch (IOException e) {
            return "unknown (" + path + " not readable)";
        }
    }

    private static String memlockLimit() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
                if (line.startsWith("Max locked memory")) {
                    String[] f = line.substring("Max locked memory".length()).trim().split("\\s+");
                    return "soft " + f[0] + ", hard " + f[1] + " " + (f.length > 2 ? f[2] : "")
                            + "   (io_uring accounts registered buffers against it)";
                }
            }
        } catch (IOException e) {
            return "unknown";
        }
        return "unknown";
    }
}
