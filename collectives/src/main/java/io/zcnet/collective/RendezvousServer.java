package io.zcnet.collective;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The rendezvous store: the one address every rank of a communicator knows. It waits for all {@code size}
 * ranks to connect, then serves rounds of all-gather: each rank sends one blob, and once every rank has,
 * each receives all of them in rank order. A communicator needs two rounds (every rank's card: where it
 * listens and the key of its staging memory; then "connected"), after which the ranks hang up and the
 * server ends. Rank 0 runs one inside {@link Communicator#rendezvous} unless told otherwise
 * ({@link CommunicatorConfig#hostStore()}); tests and launchers that pick the port first start one here.
 *
 * <p>Wire format (big-endian; {@code DataInputStream} encodings). A rank opens with
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                     magic 0x5A435256 "ZCRV"                   |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |          version (1)          |             rank ...          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |          ... rank             |             size ...          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |          ... size             |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 * then sends, per round, {@code u32 length} and that many bytes (at most {@value #MAX_BLOB} bytes). The
 * store answers each round with {@code u8 status}: 0 and then every rank's blob as {@code u32 length,
 * bytes} in rank order; or 1 and a reason ({@code writeUTF}), after which it closes the connection. A
 * round is answered with 1 when a rank left or sent something malformed, or when the deadline passed,
 * naming the ranks; a connection with the wrong magic, version or size is refused alone.
 *
 * <p>Thread-safe; the store runs on a daemon thread of its own.
 */
public final class RendezvousServer implements AutoCloseable {
    static final int MAGIC = 0x5A43_5256;
    static final int VERSION = 1;
    static final int OK = 0;
    static final int FAILED = 1;
    static final int MAX_BLOB = 1 << 16;

    private final ServerSocket socket;
    private final int size;
    private final long deadline;
    private final Thread thread;
    private final Socket[] ranks;
    private volatile boolean closed;
    private volatile String failure;

    private RendezvousServer(ServerSocket socket, int size, Duration timeout) {
        this.socket = socket;
        this.size = size;
        this.deadline = System.nanoTime() + timeout.toNanos();
        this.ranks = new Socket[size];
        this.thread = Thread.ofPlatform().daemon().name("zcnet-rendezvous").unstarted(this::serve);
    }

    /**
     * Listens on {@code bind} (port 0: any free port) for a communicator of {@code size} ranks, all of which
     * must have joined, and every round finished, within {@code timeout} of now. Returns once the socket is
     * bound: ranks may connect from then on.
     *
     * @param bind    the address to listen on; the ranks' store address
     * @param size    the number of ranks of the communicator (at least 1)
     * @param timeout how long, from now, the whole rendezvous may take; past it the rounds fail naming the
     *                ranks that are missing
     * @return the running store; {@link #close()} it when the ranks are done, or let it end by itself
     * @throws IOException              if the address cannot be bound
     * @throws IllegalArgumentException if {@code bind} is null, {@code timeout} is not positive or {@code size}
     *                                  is below 1
     */
    public static RendezvousServer start(InetSocketAddress bind, int size, Duration timeout) throws IOException {
        if (bind == null || timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("a bind address and a positive timeout are required");
        }
        if (size < 1) {
            throw new IllegalArgumentException("size " + size + " must be at least 1");
        }
        ServerSocket s = new ServerSocket();
        try {
            s.setReuseAddress(true);
            s.bind(bind, size);
        } catch (IOException e) {
            s.close();
            throw new IOException("the rendezvous store cannot listen on " + bind + ": " + e.getMessage(), e);
        }
        RendezvousServer server = new RendezvousServer(s, size, timeout);
        server.thread.start();
        return server;
    }

    /** {@return where it listens}, with the port picked when {@code bind} had port 0 */
    public InetSocketAddress address() {
        return (InetSocketAddress) socket.getLocalSocketAddress();
    }

    /**
     * {@return why the rendezvous failed, or null while it has not}; any thread. Final once
     * {@link #await(Duration)} has returned true.
     */
    public String failure() {
        return failure;
    }

    /**
     * Waits up to {@code timeout} for the store to end: every rank hung up after its last round, the
     * rendezvous failed, or the store was closed. What the store did happens-before this returns true.
     *
     * @param timeout how long to wait at most
     * @return true once the store has ended, false if it still runs
     * @throws InterruptedException if the calling thread is interrupted while waiting
     */
    public boolean await(Duration timeout) throws InterruptedException {
        return thread.join(timeout);
    }

    private void serve() {
        try {
            acceptAll();
            while (round()) {
                // every rank sent its blob and got the table; the next round starts
            }
        } catch (IOException e) {
            fail(e.getMessage());
        } finally {
            close();
        }
    }

    private void acceptAll() throws IOException {
        int joined = 0;
        while (joined < size) {
            socket.setSoTimeout(remainingMillis());
            Socket s;
            try {
                s = socket.accept();
            } catch (SocketTimeoutException e) {
                throw new IOException("ranks " + missing() + " did not join within the rendezvous timeout");
            }
            s.setTcpNoDelay(true);
            s.setSoTimeout(remainingMillis());
            int rank = -1;
            try {
                DataInputStream in = new DataInputStream(s.getInputStream());
                int magic = in.readInt();
                int version = in.readUnsignedShort();
                rank = in.readInt();
                int theirSize = in.readInt();
                String refusal = magic != MAGIC ? "not a zcnet rendezvous client"
                        : version != VERSION ? "version " + version + ", this store speaks " + VERSION
                        : theirSize != size ? "size " + theirSize + ", the communicator has " + size
                        : rank < 0 || rank >= size ? "rank " + rank + " outside 0.." + (size - 1) : null;
                if (refusal != null) {
                    refuse(s, refusal);
                    continue;
                }
            } catch (IOException e) {
                s.close(); // a stray or broken connection: the ranks that do join are unaffected
                continue;
            }
            if (ranks[rank] != null) {
                refuse(s, "two processes joined as rank " + rank);
                throw new IOException("two processes joined as rank " + rank);
            }
            ranks[rank] = s;
            joined++;
        }
    }

    /** One all-gather; false when every rank hung up instead of sending, the normal end. */
    private boolean round() throws IOException {
        byte[][] blobs = new byte[size][];
        int hungUp = 0;
        for (int r = 0; r < size; r++) {
            ranks[r].setSoTimeout(remainingMillis());
            DataInputStream in = new DataInputStream(ranks[r].getInputStream());
            try {
                int length = in.readInt();
                if (length < 0 || length > MAX_BLOB) {
                    throw new IOException("rank " + r + " sent a blob of " + length + " bytes");
                }
                blobs[r] = in.readNBytes(length);
                if (blobs[r].length != length) {
                    throw new EOFException();
                }
            } catch (EOFException e) {
                hungUp++;
            } catch (SocketTimeoutException e) {
                throw new IOException("rank " + r + " did not take part in a round within the rendezvous timeout");
            } catch (IOException e) {
                throw new IOException("rank " + r + " broke its connection to the store: " + e.getMessage(), e);
            }
        }
        if (hungUp == size) {
            return false;
        }
        if (hungUp > 0) {
            throw new IOException("ranks " + hungUp(blobs) + " left the rendezvous before it finished");
        }
        for (int r = 0; r < size; r++) {
            try {
                DataOutputStream out = new DataOutputStream(ranks[r].getOutputStream());
                out.writeByte(OK);
                for (byte[] blob : blobs) {
                    out.writeInt(blob.length);
                    out.write(blob);
                }
                out.flush();
            } catch (IOException e) {
                throw new IOException("rank " + r + " broke its connection to the store: " + e.getMessage(), e);
            }
        }
        return true;
    }

    private List<Integer> hungUp(byte[][] blobs) {
        List<Integer> list = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            if (blobs[r] == null) {
                list.add(r);
            }
        }
        return list;
    }

    private List<Integer> missing() {
        List<Integer> list = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            if (ranks[r] == null) {
                list.add(r);
            }
        }
        return list;
    }

    private int remainingMillis() throws IOException {
        long left = (deadline - System.nanoTime()) / 1_000_000;
        if (left <= 0) {
            throw new IOException("the rendezvous timed out (ranks joined: " + (size - missing().size()) + " of "
                    + size + ")");
        }
        return (int) Math.min(Integer.MAX_VALUE, left);
    }

    /** Tells every rank still connected why the rendezvous failed. */
    private void fail(String reason) {
        if (closed) {
            return;
        }
        failure = reason;
        for (Socket s : ranks) {
            if (s != null && !s.isClosed()) {
                refuse(s, reason);
            }
        }
    }

    private static void refuse(Socket s, String reason) {
        try (s) {
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeByte(FAILED);
            out.writeUTF(reason.length() > 1000 ? reason.substring(0, 1000) : reason);
            out.flush();
        } catch (IOException ignored) {
            // the rank is gone already: it learns of the failure from its own broken connection
        }
    }

    /** Stops the store; ranks still in a round see their connection close. Idempotent. */
    @Override
    public void close() {
        closed = true;
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing a listening socket fails only if it is already closed
        }
        for (Socket s : ranks) {
            if (s != null) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // as above
                }
            }
        }
    }

    @Override
    public String toString() {
        return "RendezvousServer[" + address() + " size=" + size + (failure == null ? "" : " failed: " + failure) + "]";
    }
}
