package com.example.gettingstarted;

import io.zcnet.ring.CompletionHandler;
import io.zcnet.ring.Errno;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.EventLoops;
import io.zcnet.ring.MsgFlags;
import io.zcnet.ring.Op;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * Connects to an echo server, sends one message and prints what comes back. The operations are
 * asynchronous; this program simply waits for each one's completion before it submits the next.
 *
 * <p>Usage: {@code EchoClient host port message}.
 */
public final class EchoClient {
    private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);

    public static void main(String[] args) throws IOException {
        InetSocketAddress server = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
        byte[] message = args[2].getBytes(StandardCharsets.UTF_8);
        try (EventLoop loop = EventLoops.open(); Arena arena = Arena.ofConfined()) {
            // Memory handed to an operation is native and stays untouched until the operation completes.
            MemorySegment out = arena.allocate(message.length);
            MemorySegment.copy(message, 0, out, ValueLayout.JAVA_BYTE, 0, message.length);
            MemorySegment in = arena.allocate(message.length);

            LastCompletion last = new LastCompletion();
            int handler = loop.registerHandler(last);
            int socket = loop.socket(server);
            loop.connect(handler, 0, socket, server);
            last.await(loop, Op.CONNECT);
            loop.send(handler, 0, socket, out, 0, message.length, MsgFlags.WAITALL);
            last.await(loop, Op.SEND);
            loop.recv(handler, 0, socket, in, 0, message.length, MsgFlags.WAITALL);
            int received = last.await(loop, Op.RECV);
            System.out.println("echoed: " + new String(in.asSlice(0, received).toArray(ValueLayout.JAVA_BYTE),
                    StandardCharsets.UTF_8));
            loop.close(handler, 0, socket);
            last.await(loop, Op.CLOSE);
        }
    }

    /** Keeps the latest completion, so the program can wait for the one it needs. */
    private static final class LastCompletion implements CompletionHandler {
        private int op;
        private int result;

        @Override
        public void onCompletion(int op, int tag, int result, int flags) {
            this.op = op;
            this.result = result;
        }

        /** Polls the loop until an operation of kind {@code expected} completes; returns its result. */
        int await(EventLoop loop, int expected) throws IOException {
            op = 0;
            long deadline = System.nanoTime() + WAIT_NANOS;
            while (op != expected) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IOException(Op.name(expected) + " did not complete in time");
                }
                loop.poll(left);
            }
            if (result < 0) {
                throw new IOException(Op.name(expected) + " failed: " + Errno.name(result));
            }
            return result;
        }
    }
}
