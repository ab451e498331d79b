package io.zcnet.examples;

import io.zcnet.ring.EventLoopConfig;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static io.zcnet.examples.BulkRunTest.assumeUsable;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The queue-pair part of {@code zcnet demo}, on each engine: four operations, each landing intact. */
class QueuePairDemoTest {

    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void sendWriteWithImmediateReadAndInlineSendLandIntact(EventLoopConfig.Choice engine) throws Exception {
        assumeUsable(engine);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        boolean ok = QueuePairDemo.run(engine, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String output = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(ok, output);
        assertTrue(output.contains("3 subflows"), output);
        assertTrue(output.contains("immediate 0xc0ffee"), output);
        assertTrue(output.contains("SEND inline"), output);
        assertEquals(4, output.lines().filter(l -> l.endsWith(" ok")).count(), output);
    }
}
