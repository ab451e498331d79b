package io.zcnet.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;

/**
 * Plain blocking {@code java.net} peers for the loop under test, so that the other end of every
 * connection is code the engines share nothing with. Every blocking call has a socket timeout and an
 * overall deadline. Test-thread helpers; {@link Writer} runs on a thread of its own.
 */
final class Peers {
    static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    static final int IO_TIMEOUT_MILLIS = 5_000;
    static final long DEADLINE_NANOS = 20_000_000_000L;

    private Peers() {
    }

    static InetSocketAddress loopback(int port) {
        return new InetSocketAddress(LOOPBACK, port);
    }

    /** A blocking client connected to {@code address}, with read timeouts and no Nagle delay. */
    static Socket connect(InetSocketAddress address) throws IOException {
        Socket s = new Socket();
        try {
            s.setSoTimeout(IO_TIMEOUT_MILLIS);
            s.setTcpNoDelay(true);
            s.connect(address, IO_TIMEOUT_MILLIS);
            return s;
        } catch (IOException e) {
            s.close();
            throw e;
        }
    }

    /** A listener on an ephemeral loopback port whose accept times out. */
    static ServerSocket listener() throws IOException {
        ServerSocket server = new ServerSocket(0, 64, LOOPBACK);
        server.setSoTimeout(IO_TIMEOUT_MILLIS);
        return server;
    }

    /** A loopback port that nothing listens on (bound once, then released). */
    static int unusedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, LOOPBACK)) {
            return s.getLocalPort();
        }
    }

    /** Reads exactly {@code length} bytes or fails saying how many came. */
    static byte[] readExactly(Socket socket, int length) throws IOException {
        byte[] out = new byte[length];
        InputStream in = socket.getInputStream();
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        int got = 0;
        while (got < length) {
            if (System.nanoTime() > deadline) {
                fail("read " + got + " of " + length + " bytes before the deadline");
            }
            int n;
            try {
                n = in.read(out, got, length - got);
            } catch (SocketTimeoutException e) {
                return fail("read " + got + " of " + length + " bytes, then nothing for " + IO_TIMEOUT_MILLIS + " ms");
            }
            if (n < 0) {
                fail("EOF after " + got + " of " + length + " bytes");
            }
            got += n;
        }
        return out;
    }

    /** Asserts the peer closed its side and sent nothing more. */
    static void assertEof(Socket socket) throws IOException {
        int b = socket.getInputStream().read();
        assertEquals(-1, b, "expected EOF, got a byte");
    }

    static byte[] randomBytes(int length, long seed) {
        byte[] b = new byte[length];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    static long crc32c(byte[] data) {
        CRC32C crc = new CRC32C();
        crc.update(data);
        return crc.getValue();
    }

    /** Asserts two payloads are equal, naming the first differing offset instead of dumping arrays. */
    static void assertSameBytes(byte[] expected, byte[] actual, String what) {
        assertEquals(expected.length, actual.length, what + ": length");
        int at = Arrays.mismatch(expected, actual);
        assertEquals(-1, at, what + ": first difference at byte " + at);
        assertEquals(crc32c(expected), crc32c(actual), what + ": CRC32C");
    }

    /** Writes a payload from a thread of its own, so the test thread can read the echo at the same time. */
    static final class Writer {
        private final Thread thread;
        private final AtomicReference<Throwable> failure = new AtomicReference<>();

        Writer(Socket socket, byte[] data, int chunk, boolean shutdownOutputAfter) {
            this.thread = Thread.ofPlatform().daemon(true).name("peer-writer").start(() -> {
                try {
                    var out = socket.getOutputStream();
                    for (int off = 0; off < data.length; off += chunk) {
                        out.write(data, off, Math.min(chunk, data.length - off));
                    }
                    out.flush();
                    if (shutdownOutputAfter) {
                        socket.shutdownOutput();
                    }
                } catch (Throwable t) {
                    failure.set(t);
                }
            });
        }

        /** Waits (bounded) for the writer and fails with its exception if it had one. */
        void join() throws InterruptedException {
            thread.join(DEADLINE_NANOS / 1_000_000);
            assertFalse(thread.isAlive(), "writer still blocked after the deadline");
            if (failure.get() != null) {
                throw new AssertionError("writer failed", failure.get());
            }
        }
    }
}
