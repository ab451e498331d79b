package io.zcnet.collective;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The rendezvous store: the one address every rank of a communicator knows. It waits for all {@code size}
 * ranks to connect, then serves rounds of all-gather: each rank sends one blob, and once every rank has,
 * each receives all of them in rank order. A communicator needs two rounds (every rank's card: where it
 * listens and the key of its staging memory; then "connected"), after which the ranks hang up and the
 * server ends. Rank 0 runs one inside {@link Communicator#rendezvous} unless told otherwise
 * ({@link CommunicatorConfig#hostStore()}); tests and launchers that pick the port first start one here.
 *
 * <p><b>Strangers.</b> Every connection introduces itself on a thread of its own within
 * {@value #HEADER_MILLIS} ms (or what is left of the timeout), so one that says nothing, says something else
 * or hangs up costs that connection alone: it is logged once ({@link System.Logger}, {@code io.zcnet.collective},
 * WARNING: where from and why), refused and closed, and the ranks that do their part join as if it had not
 * been there. With a job secret ({@link CommunicatorConfig#withJobSecret}) a connection joins only if it
 * proves it holds the secret ({@link MembershipProof}: the secret never crosses the wire), so nobody else
 * can take a rank's place; two connections that both prove it for one rank are two ranks started with the
 * same number, and fail the rendezvous with a message naming the rank. Without a secret anyone who reaches
 * the store can join as any rank not yet taken, as with any unauthenticated TCP service; a second claim of a
 * taken rank is then refused alone (the first claim holds it). Once every rank has joined the store stops
 * listening.
 *
 * <p>Wire format (big-endian; {@code DataInputStream} encodings). The store opens every connection with a
 * nonce of {@value MembershipProof#NONCE_BYTES} random bytes; a rank opens with the header
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                     magic 0x5A435256 "ZCRV"                   |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |          version (2)          |             rank ...          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |          ... rank             |             size ...          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |          ... size             |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 * followed, once it has the nonce, by a {@value MembershipProof#LENGTH}-byte proof: HMAC-SHA256 under the job
 * secret of {@code "zcnet-rendezvous-rank"}, the nonce and the header's 14 bytes (all zero without a secret).
 * Then it sends, per round, {@code u32 length} and that many bytes (at most {@value #MAX_BLOB} bytes). The
 * store answers each round with {@code u8 status}: 0 and then every rank's blob as {@code u32 length,
 * bytes} in rank order; or 1 and a reason ({@code writeUTF}), after which it closes the connection. A
 * round is answered with 1 when a rank left or sent something malformed, or when the deadline passed,
 * naming the ranks; a connection with the wrong magic, version, size or proof is refused alone.
 *
 * <p>Thread-safe; the store runs on a daemon thread of its own, and each introduction on a virtual thread.
 */
public final class RendezvousServer implements AutoCloseable {
    static final int MAGIC = 0x5A43_5256;
    static final int VERSION = 2;
    static final int HEADER_BYTES = 14;
    static final int OK = 0;
    static final int FAILED = 1;
    static final int MAX_BLOB = 1 << 16;
    /** How long a connection may take to introduce itself: a rank sends its header at once. */
    static final int HEADER_MILLIS = 2000;
    private static final System.Logger LOG = System.getLogger("io.zcnet.collective");

    private final ServerSocket socket;
    private final InetSocketAddress address;
    private final int size;
    private final long deadline;
    private final byte[] secret;
    private final Thread thread;
    /** Guarded by {@code this} until every rank has joined; the store's thread's alone from then on. */
    private final Socket[] ranks;
    /** Connections still introducing themselves; closed with the store. */
    private final Set<Socket> introducing = ConcurrentHashMap.newKeySet();
    private int joined;
    /** Why the join failed for all (a rank claimed twice by holders of the secret); guarded by {@code this}. */
    private String joinFailure;
    private volatile boolean closed;
    private volatile String failure;

    private RendezvousServer(ServerSocket socket, int size, Duration timeout, byte[] secret) {
        this.socket = socket;
        this.address = (InetSocketAddress) socket.getLocalSocketAddress();
        this.size = size;
        this.deadline = System.nanoTime() + timeout.toNanos();
        this.secret = secret;
        this.ranks = new Socket[size];
        this.thread = Thread.ofPlatform().daemon().name("zcnet-rendezvous").unstarted(this::serve);
    }

    /**
     * {@link #start(InetSocketAddress, int, Duration, byte[])} without a job secret: anyone who reaches the
     * store may join as a rank not yet taken.
     *
     * @param bind    the address to listen on; the ranks' store address
     * @param size    the number of ranks of the communicator (at least 1)
     * @param timeout how long, from now, the whole rendezvous may take
     * @return the running store
     * @throws IOException              if the address cannot be bound
     * @throws IllegalArgumentException as the other {@code start} throws it
     */
    public static RendezvousServer start(InetSocketAddress bind, int size, Duration timeout) throws IOException {
        return start(bind, size, timeout, null);
    }

    /**
     * Listens on {@code bind} (port 0: any free port) for a communicator of {@code size} ranks, all of which
     * must have joined, and every round finished, within {@code timeout} of now. Returns once the socket is
     * bound: ranks may connect from then on.
     *
     * @param bind      the address to listen on; the ranks' store address
     * @param size      the number of ranks of the communicator (at least 1)
     * @param timeout   how long, from now, the whole rendezvous may take; past it the rounds fail naming the
     *                  ranks that are missing
     * @param jobSecret the secret every rank proves it holds ({@link CommunicatorConfig#jobSecret()}), or null
     *                  to let anyone join
     * @return the running store; {@link #close()} it when the ranks are done, or let it end by itself
     * @throws IOException              if the address cannot be bound
     * @throws IllegalArgumentException if {@code bind} is null, {@code timeout} is not positive, {@code size}
     *                                  is below 1, or {@code jobSecret} is not 16 .. 64 bytes
     */
    public static RendezvousServer start(InetSocketAddress bind, int size, Duration timeout, byte[] jobSecret)
            throws IOException {
        if (bind == null || timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("a bind address and a positive timeout are required");
        }
        if (size < 1) {
            throw new IllegalArgumentException("size " + size + " must be at least 1");
        }
        CommunicatorConfig.checkJobSecret(jobSecret);
        ServerSocket s = new ServerSocket();
        try {
            s.setReuseAddress(true);
            s.bind(bind, Math.max(size, 128)); // room for strays beside the ranks while they introduce themselves
        } catch (IOException e) {
            s.close();
            throw new IOException("the rendezvous store cannot listen on " + bind + ": " + e.getMessage(), e);
        }
        RendezvousServer server = new RendezvousServer(s, size, timeout, jobSecret == null ? null : jobSecret.clone());
        server.thread.start();
        return server;
    }

    /** {@return where it listens}, with the port picked when {@code bind} had port 0 */
    public InetSocketAddress address() {
        return address;
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

    /** Hands every connection to an introduction of its own until every rank has joined (which stops the listening). */
    private void acceptAll() throws IOException {
        while (true) {
            synchronized (this) {
                if (joinFailure != null) {
                    throw new IOException(joinFailure);
                }
                if (joined == size) {
                    return;
                }
            }
            long left = (deadline - System.nanoTime()) / 1_000_000;
            if (left <= 0) {
                throw new IOException("ranks " + missing() + " did not join within the rendezvous timeout");
            }
            Socket s;
            try {
                socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, left));
                s = socket.accept();
            } catch (SocketTimeoutException e) {
                continue; // the deadline passed: said above
            } catch (IOException e) {
                if (closed) {
                    throw new IOException("the store was closed");
                }
                synchronized (this) {
                    if (joinFailure != null || joined == size) {
                        continue; // the last join, or a failed one, stopped the listening
                    }
                }
                throw e;
            }
            introducing.add(s);
            Thread.ofVirtual().name("zcnet-rendezvous-introduction").start(() -> introduce(s));
        }
    }

    /** Reads one connection's header and proof, within its own short deadline, and lets it join or drops it. */
    private void introduce(Socket s) {
        try {
            long left = (deadline - System.nanoTime()) / 1_000_000;
            s.setTcpNoDelay(true);
            s.setSoTimeout((int) Math.max(1, Math.min(HEADER_MILLIS, left)));
            byte[] nonce = MembershipProof.nonce();
            s.getOutputStream().write(nonce);
            DataInputStream in = new DataInputStream(s.getInputStream());
            byte[] header = new byte[HEADER_BYTES];
            in.readFully(header);
            ByteBuffer h = ByteBuffer.wrap(header);
            int magic = h.getInt();
            int version = Short.toUnsignedInt(h.getShort());
            int rank = h.getInt();
            int theirSize = h.getInt();
            String refusal = magic != MAGIC ? "not a zcnet rendezvous client"
                    : version != VERSION ? "version " + version + ", this store speaks " + VERSION
                    : theirSize != size ? "size " + theirSize + ", the communicator has " + size
                    : rank < 0 || rank >= size ? "rank " + rank + " outside 0.." + (size - 1) : null;
            if (refusal != null) {
                drop(s, refusal);
                return;
            }
            byte[] proof = new byte[MembershipProof.LENGTH];
            in.readFully(proof);
            boolean proven = secret != null && MembershipProof.holds(secret, nonce, header, proof);
            if (secret != null && !proven) {
                drop(s, "it claims rank " + rank + " but does not prove the job secret");
                return;
            }
            join(rank, s, proven);
        } catch (SocketTimeoutException e) {
            drop(s, "it did not introduce itself within " + HEADER_MILLIS + " ms");
        } catch (EOFException e) {
            drop(s, "it hung up before it had introduced itself");
        } catch (IOException e) {
            drop(s, "its connection failed: " + e.getMessage());
        }
    }

    private synchronized void join(int rank, Socket s, boolean proven) {
        if (joinFailure != null || joined == size || closed) {
            drop(s, "it came after the join had ended");
            return;
        }
        if (ranks[rank] != null) {
            if (proven) {
                // Both hold the secret: two ranks were started with the same number, not a stranger.
                joinFailure = "two processes joined as rank " + rank + ", both proving the job secret: rank numbers"
                        + " must be unique (ranks " + missing() + " have not joined)";
                drop(s, joinFailure);
                stopListening();
            } else {
                drop(s, "it claims rank " + rank + ", which another connection holds already");
            }
            return;
        }
        introducing.remove(s);
        ranks[rank] = s;
        if (++joined == size) {
            stopListening();
        }
    }

    private void drop(Socket s, String why) {
        if (closed) {
            return; // the store's own close broke the introduction: nothing to report about the stranger
        }
        LOG.log(System.Logger.Level.WARNING, "zcnet rendezvous store " + address + ": dropped the connection from "
                + s.getRemoteSocketAddress() + ": " + why);
        introducing.remove(s);
        refuse(s, why);
    }

    private void stopListening() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing a listening socket fails only if it is already closed
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

    /** {@return the ranks that have not joined yet}; any thread. */
    synchronized List<Integer> missing() {
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
        for (Socket s : joinedRanks()) {
            if (s != null && !s.isClosed()) {
                refuse(s, reason);
            }
        }
    }

    private synchronized List<Socket> joinedRanks() {
        return Arrays.asList(ranks.clone());
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
        stopListening();
        List<Socket> open = new ArrayList<>(introducing);
        open.addAll(joinedRanks());
        for (Socket s : open) {
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
        return "RendezvousServer[" + address + " size=" + size + (secret == null ? "" : " secret")
                + (failure == null ? "" : " failed: " + failure) + "]";
    }
}
