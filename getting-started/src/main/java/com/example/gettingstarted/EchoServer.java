package com.example.gettingstarted;

import io.zcnet.ring.CompletionHandler;
import io.zcnet.ring.CqeFlags;
import io.zcnet.ring.Errno;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.EventLoops;
import io.zcnet.ring.MsgFlags;
import io.zcnet.ring.Op;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;

/**
 * Sends back every byte it receives, to any number of clients, on one event loop that runs on the main
 * thread. Each operation is submitted with the socket as its tag, and its completion comes back to
 * {@link #onCompletion} with that tag: accept, then receive, send what arrived, receive again, until the
 * client closes.
 *
 * <p>Usage: {@code EchoServer [port]} (default 7777; 0 picks a free port). It prints the port it listens
 * on and runs until the process is stopped.
 */
public final class EchoServer implements CompletionHandler {
    private static final int BUFFER_BYTES = 64 * 1024;

    private final EventLoop loop;
    private final int handler;
    private final int listener;
    /** Each connection's receive buffer, in an arena of its own that is closed with the connection. */
    private final Map<Integer, Arena> arenas = new HashMap<>();
    private final Map<Integer, MemorySegment> buffers = new HashMap<>();

    private EchoServer(EventLoop loop, int port) throws IOException {
        this.loop = loop;
        this.handler = loop.registerHandler(this);
        this.listener = loop.listen(new InetSocketAddress(port), 128);
        loop.accept(handler, listener, listener, true);
    }

    public static void main(String[] args) throws IOException {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 7777;
        try (EventLoop loop = EventLoops.open()) {
            EchoServer server = new EchoServer(loop, port);
            System.out.println("echo server listening on port " + loop.localAddress(server.listener).getPort()
                    + " (" + loop.engine() + ")");
            while (true) {
                loop.poll(-1);
            }
        }
    }

    @Override
    public void onCompletion(int op, int tag, int result, int flags) {
        switch (op) {
            case Op.ACCEPT -> accepted(result, flags);
            case Op.RECV -> received(tag, result);
            case Op.SEND -> sent(tag, result);
            case Op.CLOSE -> closed(tag);
            default -> throw new IllegalStateException("unexpected completion of " + Op.name(op));
        }
    }

    private void accepted(int socket, int flags) {
        if (socket >= 0) {
            Arena arena = Arena.ofConfined();
            arenas.put(socket, arena);
            buffers.put(socket, arena.allocate(BUFFER_BYTES));
            receive(socket);
        } else {
            System.err.println("accept failed: " + Errno.name(socket));
        }
        if (!CqeFlags.hasMore(flags)) {
            loop.accept(handler, listener, listener, true); // the kernel ended the multishot accept: arm it again
        }
    }

    private void receive(int socket) {
        loop.recv(handler, socket, socket, buffers.get(socket), 0, BUFFER_BYTES, MsgFlags.NONE);
    }

    private void received(int socket, int bytes) {
        if (bytes > 0) {
            // WAITALL: the send completes when every byte is with the kernel, or fails.
            loop.send(handler, socket, socket, buffers.get(socket), 0, bytes, MsgFlags.WAITALL);
        } else {
            loop.close(handler, socket, socket); // 0 is the client's end of stream, negative an error
        }
    }

    private void sent(int socket, int result) {
        if (result >= 0) {
            receive(socket);
        } else {
            loop.close(handler, socket, socket);
        }
    }

    private void closed(int socket) {
        buffers.remove(socket);
        arenas.remove(socket).close();
    }
}
