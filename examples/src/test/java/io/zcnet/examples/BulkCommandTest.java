package io.zcnet.examples;

import io.zcnet.qp.QpConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.InetSocketAddress;
import java.time.Duration;

import static io.zcnet.examples.CliTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code zcnet bulk}'s argument checking: each bad value fails before any socket opens, with one line naming it. */
class BulkCommandTest {

    @ParameterizedTest(name = "bulk {0}")
    @CsvSource(delimiter = '|', value = {
            "--message 0                          | --message must be at least 1 byte",
            "--message 16M                        | --message must be 1..16777215 bytes (one message)",
            "--message 12x                        | --message: '12x' is not a byte count",
            "--bytes -5                           | --bytes must be at least 1 byte",
            "--bytes 1M --seconds 1               | --bytes and --seconds are exclusive",
            "--seconds 0                          | --seconds must be in (0, 86400]",
            "--window 0                           | --window must be 1..1024",
            "--window 1024 --message 2M           | needs more than 1 GiB of message slots",
            "--subflows 0                         | --subflows must be 1..64",
            "--subflows 2 --path 127.0.0.1        | --subflows and --path are exclusive",
            "--path 127.0.0.1=                    | --path: bad address '' in path '127.0.0.1='",
            "--path 127.0.0.1=127.0.0.1:99999     | --path: bad address '127.0.0.1:99999'",
            "--connect 127.0.0.1                  | --connect needs HOST:PORT",
            "--connect 127.0.0.1:0                | --connect: port '0' is not in 1..65535",
            "--listen 127.0.0.1:x                 | --listen: port 'x' is not in 0..65535",
            "--listen 0 --connect 127.0.0.1:9     | --listen and --connect are exclusive",
            "--listen 0 --op read                 | --op is the client's choice",
            "--listen 0 --verify                  | --verify is the client's choice",
            "--engine quantum --seconds 0.1       | unknown engine 'quantum': use auto, uring or nio",
            "--interval-ms 0                      | --interval-ms must be 1..3600000",
            "--listen 0 --interval-ms 100         | --interval-ms is the client's choice",
            "--silence-ms 19                      | --silence-ms must be 20..3600000",
            "--listen 0 --silence-ms 0            | --silence-ms must be 20..3600000",
    })
    void badArgumentsFailWithOneLineNamingThem(String args, String expected) {
        String output = run(1, ("bulk " + args.trim()).split(" +"));
        assertTrue(output.contains("zcnet bulk: ") && output.contains(expected), output);
        assertEquals(1, output.strip().lines().count(), "one line: " + output);
    }

    @Test
    void anUnknownOperationIsRefusedByName() {
        assertTrue(run(2, "bulk", "--op", "jump").contains("jump"));
    }

    @Test
    void byteCountsTakeBinaryMultiples() {
        assertEquals(1, BulkCommand.byteCount("--bytes", "1"));
        assertEquals(64 * 1024, BulkCommand.byteCount("--bytes", "64k"));
        assertEquals(3L << 20, BulkCommand.byteCount("--bytes", "3M"));
        assertEquals(5L << 30, BulkCommand.byteCount("--bytes", "5G"));
        assertThrows(IllegalArgumentException.class, () -> BulkCommand.byteCount("--bytes", "M"));
        assertThrows(IllegalArgumentException.class, () -> BulkCommand.byteCount("--bytes", "9999999999G"));
    }

    @ParameterizedTest(name = "--window {0}: message window {1}")
    @CsvSource({"1, 1", "5, 8", "32, 32", "33, 64", "1024, 1024"})
    void theClientAsksForItsOwnWindowRoundedUpToAPowerOfTwo(int window, int messageWindow) {
        QpConfig config = new BulkPlan(BulkOp.READ, 4096, window, 0, 1, false).queuePairConfig();
        assertEquals(messageWindow, config.messageWindow());
        assertTrue(config.sendQueueDepth() >= window && config.receiveQueueDepth() >= window, config::toString);
        assertEquals(BulkPlan.MAX_WINDOW, BulkServer.config().messageWindow(), "the server offers the widest");
    }

    @Test
    void eachSideSetsItsOwnSilenceTimeout() {
        QpConfig config = QpConfig.defaults();
        assertEquals(Duration.ofMillis(250), BulkCommand.withSilence(config, 250).silenceTimeout());
        assertEquals(config.handshakeTimeout(), BulkCommand.withSilence(config, 250).handshakeTimeout());
        assertEquals(config, BulkCommand.withSilence(config, null));
    }

    @Test
    void addressesAreHostAndPortOrPortAlone() {
        assertEquals(new InetSocketAddress(7000), BulkCommand.listenAddress("7000"));
        assertEquals(new InetSocketAddress("127.0.0.1", 0), BulkCommand.listenAddress("127.0.0.1:0"));
        assertEquals(new InetSocketAddress("::1", 7000), BulkCommand.connectAddress("[::1]:7000"));
        assertEquals(new InetSocketAddress("127.0.0.1", 7000), BulkCommand.connectAddress("127.0.0.1:7000"));
    }
}
