package io.zcnet.collective;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * One rank's connection to the {@link RendezvousServer} (whose javadoc has the wire format): joins, then
 * takes part in rounds of all-gather. Control path: plain blocking sockets, every wait bounded by the
 * deadline. One thread.
 */
final class RendezvousClient implements AutoCloseable {
    /** How long to wait between attempts while the store is not up yet (rank 0 may start last). */
    private static final long RETRY_MILLIS = 50;
    /** How long past its deadline a rank waits for the store to explain a failed round. */
    private static final int REPORT_GRACE_MILLIS = 2000;
    /** How often a wait for the store's answer lets the caller's {@code whileWaiting} run. */
    static final int WAIT_SLICE_MILLIS = 2;

    private final Socket socket;
    private final InetSocketAddress store;
    private final DataInputStream in;
    private final DataOutputStream out;
    private final int size;

    private RendezvousClient(Socket socket, InetSocketAddress store, int size) throws IOException {
        this.socket = socket;
        this.store = store;
        this.in = new DataInputStream(socket.getInputStream());
        this.out = new DataOutputStream(socket.getOutputStream());
        this.size = size;
    }

    /**
     * Connects as {@code rank} of {@code size}, trying again until {@code deadline} while nobody listens, and
     * answers the store's nonce with the proof of {@code secret} (null: none).
     */
    static RendezvousClient join(InetSocketAddress store, int rank, int size, long deadline, byte[] secret)
            throws IOException {
        while (true) {
            Socket s = new Socket();
            try {
                s.setTcpNoDelay(true);
                s.connect(store, Math.max(1, millisLeft(deadline, store)));
            } catch (ConnectException | SocketTimeoutException notYet) {
                s.close();
                if (millisLeft(deadline, store) <= RETRY_MILLIS) {
                    throw new IOException("no rendezvous store answered at " + store + " within the connect timeout: "
                            + notYet.getMessage(), notYet);
                }
                sleep();
                continue;
            } catch (IOException e) {
                s.close();
                throw e;
            }
            try {
                RendezvousClient client = new RendezvousClient(s, store, size);
                client.introduce(rank, size, deadline, secret);
                return client;
            } catch (IOException e) {
                s.close();
                throw e;
            }
        }
    }

    private void introduce(int rank, int size, long deadline, byte[] secret) throws IOException {
        byte[] header = ByteBuffer.allocate(RendezvousServer.HEADER_BYTES).putInt(RendezvousServer.MAGIC)
                .putShort((short) RendezvousServer.VERSION).putInt(rank).putInt(size).array();
        out.write(header);
        out.flush();
        socket.setSoTimeout(Math.max(1, Math.min(RendezvousServer.HEADER_MILLIS, millisLeft(deadline, store))));
        byte[] nonce = new byte[MembershipProof.NONCE_BYTES];
        try {
            in.readFully(nonce);
        } catch (IOException e) {
            throw new IOException("the rendezvous store at " + store + " did not open the connection with its nonce: "
                    + e, e);
        }
        out.write(MembershipProof.of(secret, nonce, header));
        out.flush();
    }

    /** The local address of the connection: the interface that reaches the store. */
    InetAddress localAddress() {
        return socket.getLocalAddress();
    }

    /**
     * Sends {@code mine} and returns every rank's blob, in rank order. Waits a little past {@code deadline}:
     * the store, whose deadline passes about when this one does, then has the time to say which ranks are
     * missing, a better error than a timeout of this side. Until the store answers, {@code whileWaiting} (if not
     * null) runs every {@link #WAIT_SLICE_MILLIS} ms or so: a rank whose own thread drives its queue pairs keeps
     * them turning, so what its peers wait for from it before they reach this round still leaves.
     */
    byte[][] exchange(byte[] mine, long deadline, Runnable whileWaiting) throws IOException {
        int patience = Math.max(1, millisLeft(deadline, store)) + REPORT_GRACE_MILLIS;
        long giveUp = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(patience);
        socket.setSoTimeout(whileWaiting == null ? patience : WAIT_SLICE_MILLIS);
        try {
            try {
                out.writeInt(mine.length);
                out.write(mine);
                out.flush();
            } catch (IOException sendFailed) {
                throw verdictOr(sendFailed);
            }
            int verdict;
            while (true) {
                try {
                    verdict = in.readUnsignedByte(); // one byte: a timeout cannot cut it in half
                    break;
                } catch (SocketTimeoutException notYet) {
                    if (whileWaiting == null || System.nanoTime() - giveUp >= 0) {
                        throw notYet;
                    }
                    whileWaiting.run();
                }
            }
            // The store sends the round at once after its verdict.
            socket.setSoTimeout(Math.max(1, (int) TimeUnit.NANOSECONDS.toMillis(giveUp - System.nanoTime())));
            if (verdict != RendezvousServer.OK) {
                throw new IOException("the rendezvous at " + store + " failed: " + in.readUTF());
            }
            byte[][] all = new byte[size][];
            for (int r = 0; r < size; r++) {
                int length = in.readInt();
                if (length < 0 || length > RendezvousServer.MAX_BLOB) {
                    throw new IOException("the rendezvous store at " + store + " sent a blob of " + length + " bytes");
                }
                all[r] = in.readNBytes(length);
                if (all[r].length != length) {
                    throw new IOException("the rendezvous store at " + store + " closed the connection mid-round");
                }
            }
            return all;
        } catch (SocketTimeoutException e) {
            throw new IOException("the rendezvous at " + store + " did not finish within the connect timeout", e);
        }
    }

    /**
     * A store that failed the round (two ranks claiming one number, say) says why and closes, and the
     * close can break this rank's send before it reads that: the reason, still queued here, beats the
     * broken pipe.
     */
    private IOException verdictOr(IOException sendFailed) {
        try {
            if (in.readUnsignedByte() != RendezvousServer.OK) {
                return new IOException("the rendezvous at " + store + " failed: " + in.readUTF(), sendFailed);
            }
        } catch (IOException nothingQueued) {
            sendFailed.addSuppressed(nothingQueued);
        }
        return sendFailed;
    }

    private static int millisLeft(long deadline, InetSocketAddress store) throws IOException {
        long left = (deadline - System.nanoTime()) / 1_000_000;
        if (left <= 0) {
            throw new IOException("the rendezvous at " + store + " did not finish within the connect timeout");
        }
        return (int) Math.min(Integer.MAX_VALUE, left);
    }

    private static void sleep() throws IOException {
        try {
            Thread.sleep(RETRY_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for the rendezvous store", e);
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
