package io.zcnet.examples;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The progress of a run: a plain line per second, or one line redrawn in place and cleared at the end, or
 * plain lines at a given interval wherever the output goes.
 */
class ProgressMeterTest {
    private static final long SECOND = 1_000_000_000L;
    private static final BulkPlan TEN_SECONDS = new BulkPlan(BulkOp.WRITE, 1 << 20, 32, 0, 10 * SECOND, false);

    @Test
    void elsewhereOneLinePerSecond() {
        StringWriter text = new StringWriter();
        ProgressMeter meter = new ProgressMeter(new PrintWriter(text), false, TEN_SECONDS);
        meter.start(0);
        for (long t = 0; t <= 3 * SECOND; t += SECOND / 10) {
            meter.update(t, t / 8); // 1 Gbit/s
        }
        meter.finish();
        String[] lines = text.toString().split("\n");
        assertEquals(3, lines.length, text::toString);
        assertEquals("progress: seconds=1.0 gbit/s=1.000 bytes=125000000", lines[0]);
    }

    @Test
    void onATerminalOneLineRedrawnInPlaceAndCleared() {
        StringWriter text = new StringWriter();
        ProgressMeter meter = new ProgressMeter(new PrintWriter(text), true, TEN_SECONDS);
        meter.start(0);
        meter.update(5 * SECOND, 5 * SECOND / 8);
        String drawn = text.toString();
        assertTrue(drawn.startsWith("\r[###############---------------]  50%") && !drawn.contains("\n"), drawn);
        meter.finish();
        assertTrue(text.toString().endsWith("\r") && !text.toString().contains("\n"), text::toString);
    }

    @Test
    void atAGivenIntervalPlainLinesWithMillisecondsEvenOnATerminal() {
        StringWriter text = new StringWriter();
        ProgressMeter meter = ProgressMeter.plainEvery(new PrintWriter(text), TEN_SECONDS, SECOND / 5);
        meter.start(0);
        assertEquals(SECOND / 5, meter.due());
        for (long t = 0; t <= SECOND; t += SECOND / 20) {
            meter.update(t, t / 8); // 1 Gbit/s
        }
        meter.finish();
        String[] lines = text.toString().split("\n");
        assertEquals(5, lines.length, text::toString);
        assertEquals("progress: seconds=0.200 gbit/s=1.000 bytes=25000000", lines[0]);
        assertEquals("progress: seconds=1.000 gbit/s=1.000 bytes=125000000", lines[4]);
        assertEquals(SECOND + SECOND / 5, meter.due());
    }

    @Test
    void anIntervalBelowAMillisecondIsRefused() {
        assertThrows(IllegalArgumentException.class,
                () -> ProgressMeter.plainEvery(new PrintWriter(new StringWriter()), TEN_SECONDS, 999_999));
    }
}
