package io.zcnet.collective;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

/**
 * A relay in front of a rendezvous store, for tests that must time strangers against the ranks' steps: it
 * holds one rank's introduction until {@link #releaseHeld()}, says when the others have introduced themselves
 * ({@link #othersIntroduced()}), and holds every rank's answer to the first round until {@link #releaseRound()},
 * handing out the ranks' cards (where each listens) meanwhile. Real sockets; it changes no byte, it only reads
 * the framing of {@link RendezvousServer}'s wire format as it passes.
 */
final class StoreTap implements AutoCloseable {
    private final ServerSocket socket;
    private final InetSocketAddress store;
    private final int size;
    private final int heldRank;
    private final CountDownLatch held = new CountDownLatch(1);
    private final CountDownLatch round = new CountDownLatch(1);
    private final CountDownLatch others;
    private final CompletableFuture<RankCard[]> cards = new CompletableFuture<>();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    StoreTap(InetSocketAddress store, int size, int heldRank) throws IOException {
        this.socket = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
        this.store = store;
        this.size = size;
        this.heldRank = heldRank;
        this.others = new CountDownLatch(size - 1);
        Thread.ofVirtual().start(this::acceptAll);
    }

    InetSocketAddress address() {
        return (InetSocketAddress) socket.getLocalSocketAddress();
    }

    /** Counts down as each rank but the held one has sent the store its header and proof. */
    CountDownLatch othersIntroduced() {
        return others;
    }

    void releaseHeld() {
        held.countDown();
    }

    /** The cards of the first round, in rank order, once the store has answered it. */
    CompletableFuture<RankCard[]> cards() {
        return cards;
    }

    void releaseRound() {
        round.countDown();
    }

    private void acceptAll() {
        try {
            while (true) {
                Socket rank = socket.accept();
                Socket upstream = new Socket(store.getAddress(), store.getPort());
                sockets.add(rank);
                sockets.add(upstream);
                Thread.ofVirtual().start(() -> relayRank(rank, upstream));
                Thread.ofVirtual().start(() -> relayStore(upstream, rank));
            }
        } catch (IOException closed) {
            // the tap was closed
        }
    }

    /** Rank to store: the header (held for the held rank), the proof, then everything else as it comes. */
    private void relayRank(Socket from, Socket to) {
        try (from; to) {
            DataInputStream in = new DataInputStream(from.getInputStream());
            OutputStream out = to.getOutputStream();
            byte[] header = in.readNBytes(RendezvousServer.HEADER_BYTES);
            int rank = java.nio.ByteBuffer.wrap(header).getInt(6);
            if (rank == heldRank) {
                held.await();
            }
            out.write(header);
            out.write(in.readNBytes(MembershipProof.LENGTH));
            out.flush();
            if (rank != heldRank) {
                others.countDown();
            }
            in.transferTo(out);
        } catch (IOException | InterruptedException | RuntimeException e) {
            // a rank or the store hung up: so does the relay
        }
    }

    /** Store to rank: the nonce, the first round's answer (held, its cards published), then the rest. */
    private void relayStore(Socket from, Socket to) {
        try (from; to) {
            DataInputStream in = new DataInputStream(from.getInputStream());
            DataOutputStream out = new DataOutputStream(to.getOutputStream());
            out.write(in.readNBytes(MembershipProof.NONCE_BYTES));
            out.flush();
            int status = in.read();
            if (status == RendezvousServer.OK) {
                byte[][] blobs = new byte[size][];
                RankCard[] decoded = new RankCard[size];
                for (int r = 0; r < size; r++) {
                    blobs[r] = in.readNBytes(in.readInt());
                    decoded[r] = RankCard.decode(blobs[r], r);
                }
                cards.complete(decoded);
                round.await();
                out.write(status);
                for (byte[] blob : blobs) {
                    out.writeInt(blob.length);
                    out.write(blob);
                }
            } else if (status >= 0) {
                out.write(status);
            }
            out.flush();
            in.transferTo(out);
        } catch (IOException | InterruptedException | RuntimeException e) {
            // as above
        }
    }

    @Override
    public void close() throws IOException {
        held.countDown();
        round.countDown();
        socket.close();
        for (Socket s : sockets) {
            s.close();
        }
    }
}
