package io.zcnet.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.zcnet.ring.EventLoopConfig.Choice;
import io.zcnet.ring.uring.Uring;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

/**
 * Which engine {@link EventLoops} opens, and which configurations {@link EventLoopConfig} refuses.
 * Engine-independent; each loop is opened, used and closed on the test thread.
 */
class EngineSelectionTest {

    @Test
    void explicitNioOpensTheNioEngine() throws Exception {
        try (EventLoop loop = EventLoops.open(EventLoopConfig.defaults().withEngine(Choice.NIO))) {
            assertEquals(EngineKind.NIO, loop.engine());
            assertEquals(EngineKind.NIO, loop.features().engine());
        }
    }

    @Test
    void autoPicksUringWhereverItIsUsable() throws Exception {
        Availability uring = Uring.availability();
        EngineKind expected = uring.usable() ? EngineKind.URING : EngineKind.NIO;
        assertEquals(expected, EventLoops.bestEngine(), "bestEngine with availability " + uring);
        try (EventLoop loop = EventLoops.open(EventLoopConfig.defaults().withEngine(Choice.AUTO))) {
            assertEquals(expected, loop.engine(), "AUTO with availability " + uring);
        }
        if (!uring.usable()) {
            assertFalse(uring.reason().isBlank(), "an unusable engine says why");
        }
    }

    @Test
    void uringIsUsableWhereNothingForbidsIt() throws Exception {
        // Linux >= 6.1 with kernel.io_uring_disabled = 0 and no seccomp filter must give a usable engine;
        // anywhere else (containers, old kernels, other systems) the probe may refuse, so this test skips.
        assumeTrue(System.getProperty("os.name").equals("Linux"), "not Linux");
        String[] release = System.getProperty("os.version").split("[.-]");
        int major = Integer.parseInt(release[0]);
        int minor = Integer.parseInt(release[1]);
        assumeTrue(major > 6 || major == 6 && minor >= 1, "kernel older than 6.1");
        Path disabled = Path.of("/proc/sys/kernel/io_uring_disabled");
        assumeTrue(!Files.exists(disabled) || Files.readString(disabled).trim().equals("0"), "io_uring_disabled set");
        assumeTrue(Files.readAllLines(Path.of("/proc/self/status")).contains("Seccomp:\t0"), "seccomp filter active");

        Availability uring = Uring.availability();
        assertTrue(uring.usable(), "io_uring should be usable here: " + uring.reason());
        assertEquals("", uring.reason());
        assertEquals(EngineKind.URING, EventLoops.bestEngine());
    }

    @Test
    void explicitUringOpensUringWithNegotiatedFeatures() throws Exception {
        assumeTrue(Uring.availability().usable(), () -> Uring.availability().reason());
        try (EventLoop loop = EventLoops.open(EventLoopConfig.defaults().withEngine(Choice.URING))) {
            assertEquals(EngineKind.URING, loop.engine());
            EngineFeatures f = loop.features();
            assertEquals(EngineKind.URING, f.engine());
            assertFalse(f.setupFlags().isEmpty(), "negotiated setup flags: " + f);
            assertTrue(f.setupFlagBits() != 0, "raw setup flags: " + f);
            assertTrue(f.supportedOps().contains("SEND_ZC") || f.supportedOps().stream().anyMatch(o -> o.contains("SEND_ZC")),
                    "probe lists SEND_ZC: " + f.supportedOps());
        }
    }

    @Test
    void parseChoiceAcceptsWhatUsersTypeAndNamesTheChoicesOtherwise() {
        assertEquals(Choice.URING, EventLoopConfig.parseChoice("uring"));
        assertEquals(Choice.URING, EventLoopConfig.parseChoice("io_uring"));
        assertEquals(Choice.URING, EventLoopConfig.parseChoice("URING"));
        assertEquals(Choice.NIO, EventLoopConfig.parseChoice("nio"));
        assertEquals(Choice.NIO, EventLoopConfig.parseChoice(" NIO "));
        assertEquals(Choice.AUTO, EventLoopConfig.parseChoice("auto"));
        assertEquals(Choice.AUTO, EventLoopConfig.parseChoice(""));
        for (String junk : List.of("epoll", "urin", "nio2", "0")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> EventLoopConfig.parseChoice(junk), junk);
            String message = e.getMessage();
            assertTrue(message.contains(junk), "message names the input: " + message);
            assertTrue(message.contains("auto") && message.contains("uring") && message.contains("nio"),
                    "message names the accepted values: " + message);
        }
    }

    @Test
    void systemPropertyChoosesTheDefaultEngine() {
        String before = System.getProperty(EventLoopConfig.ENGINE_PROPERTY);
        try {
            System.setProperty(EventLoopConfig.ENGINE_PROPERTY, "nio");
            assertEquals(Choice.NIO, EventLoopConfig.defaults().engine());
            System.clearProperty(EventLoopConfig.ENGINE_PROPERTY);
            assertEquals(Choice.AUTO, EventLoopConfig.defaults().engine());
            System.setProperty(EventLoopConfig.ENGINE_PROPERTY, "bogus");
            assertThrows(IllegalArgumentException.class, EventLoopConfig::defaults);
        } finally {
            if (before == null) {
                System.clearProperty(EventLoopConfig.ENGINE_PROPERTY);
            } else {
                System.setProperty(EventLoopConfig.ENGINE_PROPERTY, before);
            }
        }
    }

    /** A configuration that must be refused, and the field its message must name. */
    private record Invalid(String field, Supplier<EventLoopConfig> make) {
    }

    @Test
    void invalidConfigurationsAreRejectedWithTheirName() {
        List<Invalid> cases = List.of(
                new Invalid("sqEntries", () -> new EventLoopConfig(Choice.AUTO, 100, 512, 1024, null)),
                new Invalid("sqEntries", () -> new EventLoopConfig(Choice.AUTO, 0, 512, 1024, null)),
                new Invalid("sqEntries", () -> new EventLoopConfig(Choice.AUTO, 65536, 65536, 1024, null)),
                new Invalid("sqEntries", () -> EventLoopConfig.defaults().withEntries(3, 1024)),
                new Invalid("cqEntries", () -> new EventLoopConfig(Choice.AUTO, 256, 1000, 1024, null)),
                new Invalid("cqEntries", () -> new EventLoopConfig(Choice.AUTO, 256, 128, 1024, null)),
                new Invalid("taskCapacity", () -> new EventLoopConfig(Choice.AUTO, 256, 1024, 1000, null)),
                new Invalid("engine", () -> new EventLoopConfig(null, 256, 1024, 1024, null)));
        List<String> wrong = new ArrayList<>();
        for (Invalid c : cases) {
            try {
                wrong.add(c.field() + ": accepted " + c.make().get());
            } catch (IllegalArgumentException e) {
                if (e.getMessage() == null || !e.getMessage().contains(c.field())) {
                    wrong.add(c.field() + ": message does not name it: " + e.getMessage());
                }
            }
        }
        assertEquals(List.of(), wrong, "configurations that were not refused properly");
    }
}
