package io.zcnet.ring;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.zip.CRC32C;

/**
 * An echo server that lives on one event loop, written the way an application on this API should be:
 * one multishot accept; per connection one multishot receive into a shared {@link BufferRing}; the
 * received buffer is sent back as it is ({@code MSG_WAITALL}) and recycled only when that send has
 * completed. One send is in flight per connection at a time, because two sends queued on one stream
 * socket may interleave once the first has to wait for space. A receive that ends with {@code -ENOBUFS}
 * is re-armed as soon as a buffer comes back; EOF closes the connection once its echo has drained.
 *
 * <p>Loop-thread only, except {@link #errors()}, {@link #accepted()} and {@link #port()}. It keeps a
 * CRC32C and a byte count of what each connection received, so tests check both ends of the echo.
 */
final class EchoServer implements CompletionHandler {
    /** Tag of the listening socket's operations; connections are tagged by their index from 0. */
    private static final int LISTENER = Integer.MAX_VALUE;

    /** What one connection received, as seen by the server. */
    record ConnStats(long bytes, long crc32c, boolean eof, int sendErrors) {
    }

    private final EventLoop loop;
    private final BufferRing ring;
    private final int handler;
    private final int listenSocket;
    private final int port;
    private final List<Conn> conns = new ArrayList<>();
    private final ArrayDeque<Conn> starved = new ArrayDeque<>();
    private final List<String> errors = new CopyOnWriteArrayList<>();
    private volatile int accepted;
    private int openSockets;
    private boolean closing;
    private CompletableFuture<Void> allClosed;
    private long rearmsAfterNoBuffers;

    private static final class Conn {
        final int index;
        final int socket;
        final CRC32C crc = new CRC32C();
        final ArrayDeque<int[]> toSend = new ArrayDeque<>(); // {bufferId, length}
        long received;
        boolean sending;
        boolean eof;
        boolean closing;
        int sendErrors;

        Conn(int index, int socket) {
            this.index = index;
            this.socket = socket;
        }
    }

    private EchoServer(EventLoop loop, BufferRing ring) throws IOException {
        this.loop = loop;
        this.ring = ring;
        this.handler = loop.registerHandler(this);
        this.listenSocket = loop.listen(new InetSocketAddress(Peers.LOOPBACK, 0), 4096);
        this.port = loop.localAddress(listenSocket).getPort();
        this.openSockets = 1;
        loop.accept(handler, LISTENER, listenSocket, true);
    }

    /** Starts listening on an ephemeral loopback port. Loop thread. */
    static EchoServer start(EventLoop loop, BufferRing ring) throws IOException {
        return new EchoServer(loop, ring);
    }

    int port() {
        return port;
    }

    int accepted() {
        return accepted;
    }

    /** Anything that went wrong, as text; empty when the server saw only what it expected. */
    List<String> errors() {
        return errors;
    }

    /** Loop thread. */
    ConnStats stats(int connection) {
        Conn c = conns.get(connection);
        return new ConnStats(c.received, c.crc.getValue(), c.eof, c.sendErrors);
    }

    /** Loop thread. */
    long rearmsAfterNoBuffers() {
        return rearmsAfterNoBuffers;
    }

    /**
     * Closes the listener and every connection still open; the future completes (on the loop thread)
     * when the last close has completed, after which no receive uses the ring. Loop thread.
     */
    CompletableFuture<Void> closeAll() {
        if (allClosed == null) {
            allClosed = new CompletableFuture<>();
            closing = true;
            loop.close(handler, LISTENER, listenSocket);
            for (Conn c : conns) {
                closeConn(c);
            }
            if (openSockets == 0) {
                allClosed.complete(null);
            }
        }
        return allClosed;
    }

    @Override
    public void onCompletion(int op, int tag, int result, int flags) {
        switch (op) {
            case Op.ACCEPT -> onAccept(result, flags);
            case Op.RECV_MULTISHOT -> onReceive(conns.get(tag), result, flags);
            case Op.SEND -> onSent(conns.get(tag), result);
            case Op.CLOSE -> onClosed(tag, result);
            default -> errors.add("unexpected completion " + Op.name(op) + " tag=" + tag + " result=" + result);
        }
    }

    private void onAccept(int result, int flags) {
        if (result < 0) {
            if (!(closing && result == -Errno.ECANCELED)) {
                errors.add("accept failed: " + Recorder.describe(result));
            }
            return;
        }
        Conn c = new Conn(conns.size(), result);
        conns.add(c);
        openSockets++;
        accepted = conns.size();
        if (closing) {
            closeConn(c);
            return;
        }
        arm(c);
        if (!CqeFlags.hasMore(flags)) {
            // The kernel may end a multishot accept (e.g. after CQ overflow); the contract is to re-arm.
            loop.accept(handler, LISTENER, listenSocket, true);
        }
    }

    private void arm(Conn c) {
        loop.recvMultishot(handler, c.index, c.socket, ring);
    }

    private void onReceive(Conn c, int result, int flags) {
        if (CqeFlags.hasBuffer(flags)) {
            int bufferId = CqeFlags.bufferId(flags);
            if (result > 0 && !c.closing) {
                MemorySegment data = ring.buffer(bufferId).asSlice(0, result);
                c.crc.update(data.asByteBuffer());
                c.received += result;
                c.toSend.add(new int[] {bufferId, result});
                pump(c);
            } else {
                ring.recycle(bufferId);
            }
        } else if (result > 0) {
            errors.add("conn " + c.index + ": data completion of " + result + " bytes without a buffer id");
        }
        if (CqeFlags.hasMore(flags)) {
            return;
        }
        if (result == -Errno.ENOBUFS) {
            starved.add(c);
            rearmStarved();
        } else if (result == 0) {
            c.eof = true;
            closeWhenDrained(c);
        } else if (result > 0) {
            if (!c.closing) {
                arm(c);
            }
        } else {
            if (!c.closing && result != -Errno.ECONNRESET) {
                errors.add("conn " + c.index + ": receive failed: " + Recorder.describe(result));
            }
            closeConn(c);
        }
    }

    private void pump(Conn c) {
        if (c.sending || c.closing) {
            return;
        }
        int[] next = c.toSend.peek();
        if (next != null) {
            c.sending = true;
            loop.send(handler, c.index, c.socket, ring.buffer(next[0]), 0, next[1], MsgFlags.WAITALL);
        }
    }

    private void onSent(Conn c, int result) {
        int[] sent = c.toSend.poll();
        c.sending = false;
        if (sent == null) {
            errors.add("conn " + c.index + ": send completion with nothing in flight");
            return;
        }
        ring.recycle(sent[0]);
        if (result != sent[1]) {
            c.sendErrors++;
            if (!c.closing && result != -Errno.EPIPE && result != -Errno.ECONNRESET) {
                errors.add("conn " + c.index + ": send of " + sent[1] + " gave " + Recorder.describe(result));
            }
        }
        if (c.closing) {
            recycleQueued(c);
        } else {
            pump(c);
        }
        rearmStarved();
        closeWhenDrained(c);
    }

    private void rearmStarved() {
        while (!starved.isEmpty() && ring.available() > 0) {
            Conn c = starved.poll();
            if (!c.closing) {
                rearmsAfterNoBuffers++;
                arm(c);
            }
        }
    }

    private void closeWhenDrained(Conn c) {
        if (c.eof && !c.sending && c.toSend.isEmpty()) {
            closeConn(c);
        }
    }

    private void closeConn(Conn c) {
        if (!c.closing) {
            c.closing = true;
            loop.close(handler, c.index, c.socket);
        }
    }

    /** The socket is going away: its queued buffers go back to the engine instead of out. */
    private void recycleQueued(Conn c) {
        for (int[] queued; (queued = c.toSend.poll()) != null; ) {
            ring.recycle(queued[0]);
        }
    }

    private void onClosed(int tag, int result) {
        if (result != 0) {
            errors.add((tag == LISTENER ? "listener" : "conn " + tag) + ": close gave " + Recorder.describe(result));
        }
        if (tag != LISTENER && !conns.get(tag).sending) {
            recycleQueued(conns.get(tag));
        }
        openSockets--;
        if (allClosed != null && openSockets == 0) {
            allClosed.complete(null);
        }
    }
}
