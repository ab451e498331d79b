package io.zcnet.jmh.rx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.jmh.rx.QueuePairLatency.Op;
import io.zcnet.jmh.rx.QueuePairLatency.Options;
import io.zcnet.ring.EventLoopConfig;

import org.junit.jupiter.api.Test;

/**
 * QueuePairLatency's command line: what bench/qp-latency.sh and bench/qp-latency-sweep.sh pass is read as
 * meant, and a bad value stops the run with a message naming the option, never measuring a default.
 */
class QueuePairLatencyTest {
    @Test
    void defaultsAreThoseOfQpLatencySh() {
        Options o = Options.parse(new String[0]);
        assertEquals(EventLoopConfig.Choice.URING, o.engine());
        assertEquals(Op.SEND, o.op());
        assertEquals(64, o.size());
        assertEquals(MeasuredInterval.MESSAGES_WARMUP.toSeconds(), o.warmupSeconds());
        assertFalse(o.busyPoll());
        assertEquals("zcnet-qp-send-uring", o.impl());
    }

    @Test
    void readsEveryOperationAndTheSweepsSizes() {
        Options o = Options.parse(new String[] {"--op", "write-imm", "--engine", "nio", "--size", "1048576",
                "--busy-poll", "true", "--seconds", "2"});
        assertEquals(Op.WRITE_IMM, o.op());
        assertEquals(QueuePairLatency.MAX_SIZE, o.size());
        assertTrue(o.busyPoll());
        assertEquals(2, o.seconds());
        assertEquals("zcnet-qp-write-imm-nio-busy-poll", o.impl());
        assertEquals(Op.READ, Options.parse(new String[] {"--op", "read", "--size", "8"}).op());
        assertEquals(1, Options.parse(new String[] {"--size", "1"}).size());
    }

    @Test
    void rejectsASizeOutsideOneByteToOneMebibyte() {
        assertMessage("--size wants 1..1048576, not 0", "--size", "0");
        assertMessage("--size wants 1..1048576, not 1048577", "--size", "1048577");
        assertMessage("--size wants 1..1048576, not -64", "--size", "-64");
        assertMessage("--size wants a whole number, not '4k'", "--size", "4k");
    }

    @Test
    void rejectsAnUnknownOperationFlagOrOption() {
        assertMessage("--op wants send, write-imm or read, not 'write'", "--op", "write");
        assertMessage("--busy-poll wants true or false, not 'yes'", "--busy-poll", "yes");
        assertMessage("--seconds wants 1..2147483647, not 0", "--seconds", "0");
        assertMessage("--size needs a value", "--size");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Options.parse(new String[] {"--sizes", "64"}));
        assertTrue(e.getMessage().startsWith("unknown option '--sizes'"), e.getMessage());
    }

    private static void assertMessage(String message, String... args) {
        assertEquals(message, assertThrows(IllegalArgumentException.class, () -> Options.parse(args)).getMessage());
    }
}
