package io.zcnet.examples;

import io.zcnet.ring.MsgFlags;
import io.zcnet.ring.CompletionHandler;
import io.zcnet.ring.EngineKind;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.EventLoops;
import io.zcnet.ring.Op;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * A load generator for any TCP echo server, driven by one zcnet event loop on the calling thread.
 *
 * <ul>
 *   <li>{@link Mode#PINGPONG}: each connection sends one message and waits for it to come back; the
 *       round-trip time of every message goes into an HdrHistogram.</li>
 *   <li>{@link Mode#PIPELINED}: each connection keeps {@code window} messages in flight, sending more as
 *       echoes return, with at most one send outstanding per connection so bytes never reorder; the
 *       latency recorded is from a message's send to its echo.</li>
 * </ul>
 * Not thread-safe: one run uses the caller's thread throughout.
 */
public final class EchoClient implements CompletionHandler {

    /** How messages are issued. */
    public enum Mode { PINGPONG, PIPELINED }

    /**
     * @param server      where to connect
     * @param size        message size in bytes
     * @param mode        ping-pong or pipelined
     * @param connections concurrent connections
     * @param duration    measured time
     * @param warmup      time run before measuring
     * @param window      messages in flight per connection in pipelined mode
     * @param loop        the engine to run on
     */
    public record Settings(InetSocketAddress server, int size, Mode mode, int connections, Duration duration,
            Duration warmup, int window, EventLoopConfig loop) {
        public Settings {
            if (size < 1 || size > 64 * 1024 * 1024) {
                throw new IllegalArgumentException("size must be in [1, 64 MiB], got " + size);
            }
            if (connections < 1 || connections > 10_000) {
                throw new IllegalArgumentException("connections must be in [1, 10000], got " + connections);
            }
            if (window < 1 || (long) window * size > 256L * 1024 * 1024) {
                throw new IllegalArgumentException("window must be >= 1 and window*size <= 256 MiB");
            }
            if (duration.isNegative() || duration.isZero() || warmup.isNegative()) {
                throw new IllegalArgumentException("duration must be positive and warmup not negative");
            }
        }
    }

    /**
     * @param engine   the engine that ran the client
     * @param messages echoes received in the measured time
     * @param bytes    bytes received in the measured time
     * @param nanos    length of the measured time
     * @param latency  round-trip times in nanoseconds
     * @param syscalls system calls the client's loop made in the measured time
     * @param errors   connections that failed
     */
    public record Result(EngineKind engine, long messages, long bytes, long nanos, Histogram latency, long syscalls,
            int errors) {
        public double messagesPerSecond() {
            return messages * 1e9 / nanos;
        }

        public double megabytesPerSecond() {
            return bytes * 1e9 / nanos / (1024 * 1024);
        }

        public double syscallsPerMessage() {
            return messages == 0 ? 0 : (double) syscalls / messages;
        }

        /** Latency percentile in microseconds. */
        public double micros(double percentile) {
            return latency.getValueAtPercentile(percentile) / 1000.0;
        }
    }

    private static final int RECV_CHUNK = 256 * 1024;

    private final Settings settings;
    private final EventLoop loop;
    private final int handler;
    private final Histogram latency = new Histogram(10_000_000_000L, 3);
    private final int[] socket;
    private final MemorySegment sendBuffer;
    private final MemorySegment[] recvBuffer;
    private final long[][] sentAt;
    private final int[] sentHead;
    private final int[] sentTail;
    private final int[] inFlight;
    private final int[] owed;
    private final boolean[] sending;
    private final long[] partial;
    private final boolean[] failed;
    private long measureFrom;
    private long stopAt;
    private long messages;
    private long bytes;
    private int errors;

    private EchoClient(Settings settings, EventLoop loop, Arena arena) {
        this.settings = settings;
        this.loop = loop;
        this.handler = loop.registerHandler(this);
        int n = settings.connections();
        int window = settings.mode() == Mode.PINGPONG ? 1 : settings.window();
        socket = new int[n];
        sendBuffer = arena.allocate((long) settings.size() * window, 4096);
        for (long i = 0; i < sendBuffer.byteSize(); i++) {
            sendBuffer.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + 7));
        }
        recvBuffer = new MemorySegment[n];
        int recvSize = settings.mode() == Mode.PINGPONG ? settings.size() : RECV_CHUNK;
        for (int i = 0; i < n; i++) {
            recvBuffer[i] = arena.allocate(recvSize, 4096);
        }
        sentAt = new long[n][window];
        sentHead = new int[n];
        sentTail = new int[n];
        inFlight = new int[n];
        owed = new int[n];
        sending = new boolean[n];
        partial = new long[n];
        failed = new boolean[n];
    }

    /** Connects, runs warm-up and measurement, closes, and reports. */
    public static Result run(Settings settings) throws IOException {
        try (EventLoop loop = EventLoops.open(settings.loop()); Arena arena = Arena.ofConfined()) {
            return new EchoClient(settings, loop, arena).drive();
        }
    }

    private Result drive() throws IOException {
        for (int c = 0; c < socket.length; c++) {
            socket[c] = loop.socket(settings.server());
            loop.setTcpNoDelay(socket[c], true);
            loop.connect(handler, c, socket[c], settings.server());
        }
        long start = System.nanoTime();
        measureFrom = start + settings.warmup().toNanos();
        stopAt = measureFrom + settings.duration().toNanos();
        long syscallsAtStart = -1;
        long graceUntil = stopAt + 2_000_000_000L;
        while (System.nanoTime() < graceUntil) {
            long now = System.nanoTime();
            if (syscallsAtStart < 0 && now >= measureFrom) {
                syscallsAtStart = loop.counters().syscalls();
            }
            if (settings.loop().idle() != null) { // busy-poll mode: never sleep in the kernel
                settings.loop().idle().idle(loop.poll(0));
            } else {
                loop.poll(now < stopAt ? Math.min(stopAt - now, 100_000_000L) : 10_000_000L);
            }
            if (now >= stopAt && allDrained()) {
                break;
            }
        }
        long syscalls = loop.counters().syscalls() - Math.max(0, syscallsAtStart);
        for (int c = 0; c < socket.length; c++) {
            loop.close(handler, c, socket[c]);
        }
        long closeDeadline = System.nanoTime() + 2_000_000_000L;
        while (loop.pending() > 0 && System.nanoTime() < closeDeadline) {
            loop.poll(10_000_000L);
        }
        return new Result(loop.engine(), messages, bytes, settings.duration().toNanos(), latency, syscalls, errors);
    }

    private boolean allDrained() {
        for (int c = 0; c < socket.length; c++) {
            if (inFlight[c] > 0 && !failed[c]) {
                return false;
            }
        }
        return true;
    }

    @Override
    public void onCompletion(int op, int tag, int result, int flags) {
        int c = tag;
        switch (op) {
            case Op.CONNECT -> {
                if (result < 0) {
                    fail(c);
                } else {
                    armReceive(c);
                    sendMore(c, settings.mode() == Mode.PINGPONG ? 1 : settings.window());
                }
            }
            case Op.SEND -> {
                sending[c] = false;
                if (result < 0) {
                    fail(c);
                } else if (owed[c] > 0) {
                    sendMore(c, 0);
                }
            }
            case Op.RECV -> onReceive(c, result);
            default -> { }
        }
    }

    private void onReceive(int c, int result) {
        if (result <= 0) {
            if (inFlight[c] > 0) {
                fail(c);
            }
            return;
        }
        long now = System.nanoTime();
        int size = settings.size();
        partial[c] += result;
        int done = (int) (partial[c] / size);
        partial[c] -= (long) done * size;
        long[] stamps = sentAt[c];
        for (int i = 0; i < done; i++) {
            long sent = stamps[sentHead[c]];
            sentHead[c] = (sentHead[c] + 1) % stamps.length;
            if (sent >= measureFrom && now <= stopAt) {
                latency.recordValue(now - sent);
                messages++;
                bytes += size;
            }
        }
        inFlight[c] -= done;
        if (now < stopAt) {
            sendMore(c, done);
        }
        if (now < stopAt || inFlight[c] > 0) {
            armReceive(c);
        }
    }

    private void armReceive(int c) {
        MemorySegment buffer = recvBuffer[c];
        boolean exact = settings.mode() == Mode.PINGPONG;
        loop.recv(handler, c, socket[c], buffer, 0, (int) buffer.byteSize(), exact ? MsgFlags.WAITALL : MsgFlags.NONE);
    }

    private void sendMore(int c, int extra) {
        owed[c] += extra;
        if (sending[c] || owed[c] == 0) {
            return;
        }
        int count = owed[c];
        owed[c] = 0;
        long now = System.nanoTime();
        long[] stamps = sentAt[c];
        for (int i = 0; i < count; i++) {
            stamps[sentTail[c]] = now;
            sentTail[c] = (sentTail[c] + 1) % stamps.length;
        }
        inFlight[c] += count;
        sending[c] = true;
        loop.send(handler, c, socket[c], sendBuffer, 0, count * settings.size(), MsgFlags.WAITALL);
    }

    private void fail(int c) {
        if (!failed[c]) {
            failed[c] = true;
            errors++;
            inFlight[c] = 0;
        }
    }
}
