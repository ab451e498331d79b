package io.zcnet.ring.nio;

import java.io.InputStream;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * One slot of a {@link NioEventLoop}'s socket table: the channel behind a socket handle, its selection
 * key, and the operations waiting on it. Per socket there is a FIFO of accepts, of sends and of
 * receives, one connect, and one armed multishot receive; only the head of a FIFO touches the channel,
 * so bytes go out and come in in the order the operations were prepared, as on a kernel socket.
 *
 * <p>Slot objects are reused when a handle is freed. Owner-thread only.
 */
final class NioSocket {
    static final int ACCEPTS = 0;
    static final int SENDS = 1;
    static final int RECVS = 2;
    private static final int QUEUES = 3;

    final int handle;
    SelectableChannel channel;
    /** Exactly one of these two is set while the slot is open. */
    ServerSocketChannel listener;
    SocketChannel stream;
    SelectionKey key;
    /** Interest ops last given to {@link #key}, to skip redundant updates. */
    int interest;
    /** A non-blocking connect was started and {@code finishConnect} has not succeeded yet. */
    boolean connecting;
    /** A reset was already reported by a receive: later receives see EOF, as on Linux. */
    boolean resetReported;
    NioOp connect;
    NioOp multishot;
    /**
     * The socket adaptor's input stream, created on first use and kept for the connection: only its
     * {@code available()} ({@code FIONREAD}) is called, to learn what the kernel's {@code msg_inq} tells
     * io_uring ({@link io.zcnet.ring.CqeFlags#SOCK_NONEMPTY}).
     */
    InputStream queued;
    /** Opened by {@code socket()} for IPv6: an unbound channel does not tell its family. */
    boolean inet6;
    /** Listener only: options accepted sockets inherit, as Linux copies them in {@code sk_clone}. */
    boolean noDelay;
    int sendBufferSize;
    int receiveBufferSize;

    private final NioOp[] heads = new NioOp[QUEUES];
    private final NioOp[] tails = new NioOp[QUEUES];

    NioSocket(int handle) {
        this.handle = handle;
    }

    boolean isOpen() {
        return channel != null;
    }

    void open(ServerSocketChannel listener, SocketChannel stream) {
        this.listener = listener;
        this.stream = stream;
        this.channel = listener != null ? listener : stream;
    }

    void reset() {
        channel = null;
        listener = null;
        stream = null;
        key = null;
        interest = 0;
        connecting = false;
        resetReported = false;
        connect = null;
        multishot = null;
        queued = null;
        inet6 = false;
        noDelay = false;
        sendBufferSize = 0;
        receiveBufferSize = 0;
        for (int q = 0; q < QUEUES; q++) {
            heads[q] = null;
            tails[q] = null;
        }
    }

    /** Whether any operation waits on this socket: one moving to another loop must have none. */
    boolean isBusy() {
        return connect != null || multishot != null || heads[ACCEPTS] != null || heads[SENDS] != null
                || heads[RECVS] != null;
    }

    NioOp head(int queue) {
        return heads[queue];
    }

    void append(int queue, NioOp op) {
        op.queue = queue;
        op.next = null;
        if (tails[queue] == null) {
            heads[queue] = op;
        } else {
            tails[queue].next = op;
        }
        tails[queue] = op;
    }

    NioOp removeHead(int queue) {
        NioOp op = heads[queue];
        heads[queue] = op.next;
        if (heads[queue] == null) {
            tails[queue] = null;
        }
        op.next = null;
        op.queue = -1;
        return op;
    }

    /** Unlinks {@code op} from whichever FIFO holds it: O(queue length), for cancellation only. */
    void remove(NioOp op) {
        int queue = op.queue;
        NioOp previous = null;
        for (NioOp at = heads[queue]; at != null; previous = at, at = at.next) {
            if (at != op) {
                continue;
            }
            if (previous == null) {
                heads[queue] = op.next;
            } else {
                previous.next = op.next;
            }
            if (tails[queue] == op) {
                tails[queue] = previous;
            }
            op.next = null;
            op.queue = -1;
            return;
        }
        throw new IllegalStateException("operation " + op.id + " is not in queue " + queue + " of socket " + handle);
    }

    @Override
    public String toString() {
        return "socket " + handle + (listener != null ? " listening" : connecting ? " connecting" : "")
                + (heads[ACCEPTS] != null ? " accept" : "") + (heads[SENDS] != null ? " send" : "")
                + (heads[RECVS] != null ? " recv" : "") + (multishot != null ? " multishot" : "")
                + (connect != null ? " connect" : "");
    }
}
