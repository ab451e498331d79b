package io.zcnet.jmh.echo;

import io.zcnet.ring.MsgFlags;
import io.zcnet.ring.CompletionHandler;
import io.zcnet.ring.Errno;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.EventLoops;
import io.zcnet.ring.LoopCounters;
import io.zcnet.ring.Op;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The zcnet client as a zcnet user writes it: an event loop owned by the calling thread, one handler
 * registered once, off-heap send and receive buffers allocated once, one receive always armed, one send
 * in flight carrying every message the window allows. Nothing is allocated per message.
 *
 * <p>Confined to the thread that created it (the loop's owner).
 */
final class ZcnetStreamClient extends StreamClient implements CompletionHandler {
    private static final long CONNECT_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final EventLoop loop;
    private final Arena arena = Arena.ofConfined();
    private final MemorySegment pattern;
    private final MemorySegment receiveBuffer;
    private final int handler;
    private final int socket;
    private boolean connected;
    private boolean closing;
    private boolean sending;
    private int sendLength;

    ZcnetStreamClient(EventLoopConfig config, InetSocketAddress server, int size, int window, long seed)
            throws IOException {
        super(size, window);
        this.loop = EventLoops.open(config);
        try {
            pattern = arena.allocate(2L * period, 4096);
            MemorySegment.copy(pattern(period, seed), 0, pattern, ValueLayout.JAVA_BYTE, 0, 2 * period);
            receiveBuffer = arena.allocate(period, 4096);
            handler = loop.registerHandler(this);
            socket = loop.socket(server);
            loop.setTcpNoDelay(socket, true);
            loop.connect(handler, 0, socket, server);
            long deadline = System.nanoTime() + CONNECT_NANOS;
            while (!connected) {
                verifyAlive();
                if (System.nanoTime() > deadline) {
                    throw new IOException("zcnet " + loop.engine() + ": no connection to " + server + " within 5 s");
                }
                loop.poll(POLL_NANOS);
            }
        } catch (IOException | RuntimeException e) {
            closeQuietly();
            throw e;
        }
    }

    private void verifyAlive() {
        try {
            check();
        } catch (IllegalStateException e) {
            throw new IllegalStateException("connect failed: " + e.getMessage(), e);
        }
    }

    LoopCounters counters() {
        return loop.counters();
    }

    @Override
    public void onCompletion(int op, int tag, int result, int flags) {
        if (closing) {
            return; // the close cancels the receive in flight: not an error
        }
        switch (op) {
            case Op.CONNECT -> {
                if (result < 0) {
                    fail("connect: " + Errno.name(result));
                } else {
                    connected = true;
                    armReceive();
                }
            }
            case Op.SEND -> {
                sending = false;
                if (result != sendLength) {
                    fail("send of " + sendLength + " bytes completed with " + describe(result));
                } else {
                    sendMore();
                }
            }
            case Op.RECV -> {
                if (result <= 0) {
                    fail("receive completed with " + describe(result));
                    return;
                }
                int offset = received(result);
                if (offset >= 0 && MemorySegment.mismatch(receiveBuffer, 0, result, pattern, offset,
                        offset + result) != -1) {
                    mismatch(offset, result);
                }
                armReceive();
                sendMore();
            }
            default -> { }
        }
    }

    private static String describe(int result) {
        return result == 0 ? "EOF" : result < 0 ? Errno.name(result) : result + " bytes";
    }

    private void armReceive() {
        // Never more than one period can be in flight, so a receive never needs more room than that.
        loop.recv(handler, 0, socket, receiveBuffer, 0, period, MsgFlags.NONE);
    }

    @Override
    boolean canSend() {
        return connected && !sending;
    }

    @Override
    void transmit(int offset, int length) {
        sending = true;
        sendLength = length;
        loop.send(handler, 0, socket, pattern, offset, length, MsgFlags.WAITALL);
    }

    @Override
    int runLoop(long nanos) {
        return loop.poll(nanos);
    }

    @Override
    String transportName() {
        return "zcnet-" + loop.engine().name().toLowerCase(Locale.ROOT);
    }

    @Override
    public void close() {
        closing = true;
        loop.close(handler, 0, socket);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (loop.pending() > 0 && System.nanoTime() < deadline) {
            loop.poll(POLL_NANOS);
        }
        closeQuietly();
    }

    private void closeQuietly() {
        try {
            loop.close();
        } finally {
            arena.close();
        }
    }
}
