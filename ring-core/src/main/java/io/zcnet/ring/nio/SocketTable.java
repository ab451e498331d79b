package io.zcnet.ring.nio;

import java.io.IOException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;

/**
 * The NIO engine's socket handles: slot {@code h} of this table is socket handle {@code h}, so a lookup
 * is an array load, as an fd indexes the kernel's file table. Freed handles are reused (lowest free
 * first is not promised, unlike fds). Owner-thread only.
 */
final class SocketTable {
    private final Selector selector;
    private NioSocket[] sockets = new NioSocket[64];
    private int count;
    private int[] free = new int[64];
    private int freeCount;

    SocketTable(Selector selector) {
        this.selector = selector;
    }

    /** Makes {@code channel} non-blocking, registers it with the selector and returns its new handle. */
    int add(SelectableChannel channel, ServerSocketChannel listener, SocketChannel stream) throws IOException {
        channel.configureBlocking(false);
        int handle;
        if (freeCount > 0) {
            handle = free[--freeCount];
        } else {
            if (count == sockets.length) {
                sockets = Arrays.copyOf(sockets, count * 2);
            }
            handle = count++;
        }
        NioSocket s = sockets[handle];
        if (s == null) {
            s = new NioSocket(handle);
            sockets[handle] = s;
        }
        try {
            s.key = channel.register(selector, 0, s);
        } catch (IOException | RuntimeException e) {
            release(handle);
            throw e;
        }
        s.open(listener, stream);
        return handle;
    }

    /** The open socket with this handle, or null. */
    NioSocket lookup(int handle) {
        if (handle < 0 || handle >= count) {
            return null;
        }
        NioSocket s = sockets[handle];
        return s != null && s.isOpen() ? s : null;
    }

    /** Closes the channel behind {@code s} and frees its handle: 0, or {@code -errno} if the close failed. */
    int close(NioSocket s) {
        int result = closeChannel(s);
        s.reset();
        release(s.handle);
        return result;
    }

    /**
     * Gives up {@code s} without closing its channel: its key is cancelled (the channel may then be registered with
     * another loop's selector) and its handle freed. The caller checked that nothing waits on it.
     */
    SocketChannel detach(NioSocket s) {
        SocketChannel channel = s.stream;
        s.key.cancel();
        s.reset();
        release(s.handle);
        return channel;
    }

    /** Closes every channel still open (the loop is closing: nothing may leak). */
    void closeAll() {
        for (int handle = 0; handle < count; handle++) {
            NioSocket s = sockets[handle];
            if (s != null && s.isOpen()) {
                close(s);
            }
        }
    }

    private void release(int handle) {
        if (freeCount == free.length) {
            free = Arrays.copyOf(free, freeCount * 2);
        }
        free[freeCount++] = handle;
    }

    private static int closeChannel(NioSocket s) {
        if (s.key != null) {
            s.key.cancel();
        }
        try {
            s.channel.close();
            return 0;
        } catch (IOException e) {
            return -ErrnoMapper.errno(e);
        }
    }

    /** Appends each open socket and what waits on it, for the loop's {@code toString()}. */
    void describe(StringBuilder text) {
        for (int handle = 0; handle < count; handle++) {
            NioSocket s = sockets[handle];
            if (s != null && s.isOpen()) {
                text.append(", ").append(s);
            }
        }
    }
}
