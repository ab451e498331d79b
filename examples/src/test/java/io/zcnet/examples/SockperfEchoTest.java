package io.zcnet.examples;

import io.zcnet.ring.EventLoopConfig;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.zcnet.examples.SockperfParserTest.concat;
import static io.zcnet.examples.SockperfParserTest.expectedReplies;
import static io.zcnet.examples.SockperfParserTest.message;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The echo server in sockperf mode, on each engine: against a Java client speaking sockperf's framing,
 * and against the real {@code sockperf} client when it is installed.
 */
class SockperfEchoTest {
    private static final int CP = SockperfHeader.CLIENT | SockperfHeader.PONG_REQUEST;
    private static final Path SOCKPERF = Path.of("/usr/bin/sockperf");

    private static EchoServer start(EventLoopConfig.Choice engine) throws IOException {
        BulkRunTest.assumeUsable(engine);
        return EchoServer.start(EventLoopConfig.defaults().withEngine(engine),
                new InetSocketAddress("127.0.0.1", 0), EchoServer.Protocol.SOCKPERF);
    }

    private static Socket connect(EchoServer server) throws IOException {
        Socket socket = new Socket();
        socket.connect(server.address(), 5_000);
        socket.setTcpNoDelay(true);
        socket.setSoTimeout(10_000); // a missing reply fails the test instead of hanging it
        return socket;
    }

    /** Reads exactly {@code n} bytes or fails. */
    private static byte[] read(InputStream in, int n) throws IOException {
        byte[] got = in.readNBytes(n);
        assertEquals(n, got.length, "connection ended early");
        return got;
    }

    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void answersOnlyPongRequestsInOrder(EventLoopConfig.Choice engine) throws Exception {
        try (EchoServer server = start(engine); Socket socket = connect(server)) {
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            List<byte[]> messages = List.of(message(1, CP, 64), message(2, SockperfHeader.CLIENT, 64),
                    message(3, CP | SockperfHeader.WARMUP, 64), message(4, CP, 14), message(5, CP, 1000));
            out.write(concat(messages)); // coalesced: several messages per received buffer
            out.flush();
            byte[] expected = expectedReplies(messages);
            assertArrayEquals(expected, read(in, expected.length));

            byte[] cut = concat(List.of(message(6, CP, 100), message(7, SockperfHeader.CLIENT, 30),
                    message(8, CP, 20)));
            for (byte b : cut) { // split: one byte per write, so headers and bodies are cut everywhere
                out.write(b);
                out.flush();
            }
            byte[] cutExpected = expectedReplies(List.of(message(6, CP, 100), message(8, CP, 20)));
            assertArrayEquals(cutExpected, read(in, cutExpected.length));

            byte[] probe = message(9, CP, 30);
            out.write(probe);
            out.flush();
            assertArrayEquals(expectedReplies(List.of(probe)), read(in, probe.length),
                    "nothing was sent for the dropped messages");
            assertEquals(0, server.protocolErrors());
        }
    }

    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void pipelinedStreamsOnSeveralConnectionsComeBackExactly(EventLoopConfig.Choice engine) throws Exception {
        // Own threads: the common pool may have a single worker on a small machine, and each client blocks.
        try (EchoServer server = start(engine); ExecutorService threads = Executors.newCachedThreadPool()) {
            List<CompletableFuture<Void>> clients = new ArrayList<>();
            for (int c = 0; c < 3; c++) {
                long seed = c;
                clients.add(CompletableFuture.runAsync(() -> pipeline(server, seed, threads), threads));
            }
            for (CompletableFuture<Void> client : clients) {
                client.get(60, TimeUnit.SECONDS);
            }
            assertEquals(3, server.connectionsAccepted());
            assertEquals(0, server.protocolErrors());
            assertTrue(server.bytesEchoed() > 0);
        }
    }

    /** One connection: a writer thread sends ~5 MB of random messages while this thread reads replies. */
    private static void pipeline(EchoServer server, long seed, ExecutorService threads) {
        Random random = new Random(seed);
        List<byte[]> messages = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            int length = random.nextInt(20) == 0 ? 14 + random.nextInt(60_000) : 14 + random.nextInt(300);
            messages.add(message(i, random.nextInt(4) == 0 ? SockperfHeader.CLIENT : CP, length));
        }
        byte[] stream = concat(messages);
        byte[] expected = expectedReplies(messages);
        try (Socket socket = connect(server)) {
            OutputStream out = socket.getOutputStream();
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                try {
                    for (int at = 0; at < stream.length; ) {
                        int n = Math.min(stream.length - at, 1 + random.nextInt(50_000));
                        out.write(stream, at, n);
                        at += n;
                    }
                    out.flush();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }, threads);
            assertArrayEquals(expected, read(socket.getInputStream(), expected.length), "seed " + seed);
            writer.get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("client " + seed + " failed", e);
        }
    }

    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void aBadLengthClosesOnlyThatConnection(EventLoopConfig.Choice engine) throws Exception {
        try (EchoServer server = start(engine)) {
            try (Socket bad = connect(server)) {
                byte[] good = message(1, CP, 64);
                byte[] header = ByteBuffer.allocate(14).putLong(2).putShort((short) CP).putInt(13).array();
                bad.getOutputStream().write(concat(List.of(good, header)));
                bad.getOutputStream().flush();
                InputStream in = bad.getInputStream();
                assertArrayEquals(expectedReplies(List.of(good)), read(in, good.length));
                int next;
                try {
                    next = in.read();
                } catch (SocketException reset) {
                    next = -1; // a reset is a close too
                }
                assertEquals(-1, next, "the server closes a connection that sent a bad length");
            }
            assertEquals(1, server.protocolErrors());
            try (Socket fine = connect(server)) {
                byte[] ping = message(3, CP, 64);
                fine.getOutputStream().write(ping);
                assertArrayEquals(expectedReplies(List.of(ping)), read(fine.getInputStream(), ping.length),
                        "the server still answers other connections");
            }
        }
    }

    /** Skips the calling test, with the reason, unless sockperf runs here (installed when missing, as root). */
    private static void assumeSockperf() {
        String missing = DebianPackages.ensure(() -> Files.isExecutable(SOCKPERF), "sockperf");
        assumeTrue(missing == null, "sockperf at " + SOCKPERF + ": " + missing);
    }

    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void realSockperfPingPongGetsReplies(EventLoopConfig.Choice engine) throws Exception {
        assumeSockperf();
        try (EchoServer server = start(engine)) {
            String output = sockperf(server, "ping-pong");
            Matcher valid = Pattern.compile("\\[Valid Duration\\].*ReceivedMessages=(\\d+)").matcher(output);
            assertTrue(valid.find(), output);
            assertTrue(Long.parseLong(valid.group(1)) > 0, output);
            assertTrue(output.contains("# dropped messages = 0; # duplicated messages = 0; # out-of-order messages = 0"),
                    output);
            assertEquals(0, server.protocolErrors());
        }
    }

    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void realSockperfThroughputRuns(EventLoopConfig.Choice engine) throws Exception {
        assumeSockperf();
        try (EchoServer server = start(engine)) {
            String output = sockperf(server, "throughput");
            Matcher rate = Pattern.compile("Message Rate is (\\d+)").matcher(output);
            assertTrue(rate.find(), output);
            assertTrue(Long.parseLong(rate.group(1)) > 0, output);
            assertEquals(0, server.protocolErrors());
            assertEquals(0, server.bytesEchoed(), "throughput messages ask for no reply");
        }
    }

    /** Runs {@code sockperf <mode> --tcp -m 64 -t 1} against the server, bounded, and returns its output. */
    private static String sockperf(EchoServer server, String mode) throws Exception {
        Path log = Files.createTempFile("sockperf-" + mode, ".log");
        try {
            Process p = new ProcessBuilder(SOCKPERF.toString(), mode, "--tcp", "-i", "127.0.0.1",
                    "-p", Integer.toString(server.address().getPort()), "-m", "64", "-t", "1")
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                throw new AssertionError("sockperf " + mode + " did not finish in 30 s: " + Files.readString(log));
            }
            String text = Files.readString(log);
            assertEquals(0, p.exitValue(), text);
            return text;
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
