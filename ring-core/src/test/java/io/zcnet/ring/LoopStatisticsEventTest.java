package io.zcnet.ring;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The loop counters as a user sees them in a JFR recording, on each engine. */
class LoopStatisticsEventTest {
    private static final String EVENT = "io.zcnet.LoopStatistics";

    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void aRecordingShowsAnOpenLoopsCountersAndForgetsItOnceClosed(EventLoopConfig.Choice choice,
            @TempDir Path dir) throws Exception {
        RequiresUring.assumeUsable(choice);
        EventLoop loop = EventLoops.open(EventLoopConfig.defaults().withEngine(choice));
        long id = loop.counters().id();
        int[] completed = new int[1];
        int handler = loop.registerHandler((op, tag, result, flags) -> completed[0]++);
        for (int i = 0; i < 10; i++) {
            loop.nop(handler, i);
        }
        for (int polls = 0; completed[0] < 10 && polls < 1000; polls++) {
            loop.poll(1_000_000);
        }
        assertEquals(10, completed[0]);

        List<RecordedEvent> whileOpen = record(dir.resolve("open.jfr"));
        RecordedEvent mine = whileOpen.stream().filter(e -> e.getLong("loop") == id).reduce((a, b) -> b)
                .orElseThrow(() -> new AssertionError("no " + EVENT + " event for loop " + id + " in " + whileOpen));
        assertEquals(loop.engine().name(), mine.getString("engine"));
        assertTrue(mine.getLong("completions") >= 10, "completions: " + mine);
        assertTrue(mine.getLong("submitted") >= 10, "submitted: " + mine);

        loop.close();
        List<RecordedEvent> afterClose = record(dir.resolve("closed.jfr"));
        assertTrue(afterClose.stream().noneMatch(e -> e.getLong("loop") == id),
                "a closed loop is no longer reported: " + afterClose);
    }

    /** Records the statistics event for a moment and returns what was recorded. */
    private static List<RecordedEvent> record(Path file) throws Exception {
        try (Recording recording = new Recording()) {
            recording.enable(EVENT).withPeriod(Duration.ofMillis(50));
            recording.start();
            Thread.sleep(300);
            recording.stop();
            recording.dump(file);
        }
        return RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals(EVENT)).toList();
    }
}
