package io.zcnet.collective;

import io.zcnet.qp.QpContext;
import io.zcnet.qp.QpListener;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.WorkCompletion;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Connects a rank to every other rank, one queue pair each (a full mesh: all-to-all, halving-doubling and
 * the failure of any rank need every pair anyway). Rank r listens, publishes its card ({@link RankCard}) in
 * the first rendezvous round, connects to every rank below it and accepts every rank above it; the
 * connecting side's first message is a 0-byte SEND whose immediate names its rank, which is how the
 * accepting side tells its queue pairs apart. Each side then posts the receives of its inbox slots, and
 * the second rendezvous round says that every rank has done so. Control path; one thread.
 */
final class Mesh {
    /** Work request id of the receive that takes the hello. */
    private static final long HELLO = -2;

    private Mesh() {
    }

    /**
     * A rank's links to every rank (null at its own), every queue pair connected and identified, and whether the
     * ranks share CPU cores ({@link CoreSharing#shared}, decided alike on every rank from the same cards), and
     * which ranks run on this rank's kernel.
     */
    record Connected(Link[] links, boolean coresShared, boolean[] sameKernel) {
    }

    static Connected connect(int rank, int size, QpContext context, Staging staging, RendezvousClient store,
            CommunicatorConfig config, long deadline) throws IOException {
        InetAddress host = config.listenAddress() != null ? config.listenAddress() : store.localAddress();
        Link[] links = new Link[size];
        List<QueuePair> opened = new ArrayList<>();
        // A rank whose own thread drives its loop keeps it turning while the store round waits: its hello, its
        // acknowledgements and its peers' handshakes move only then.
        Runnable turn = context.isDrivenByCallingThread() ? () -> context.progress(0) : null;
        try (QpListener listener = context.listen(new InetSocketAddress(host, 0), config.queuePairs())) {
            RankCard mine = RankCard.ofThisProcess(listener.address(), staging.inbox.remoteKey(), staging.slots,
                    staging.slotBytes, config.coreSharing());
            byte[][] blobs = store.exchange(mine.encode(), deadline, turn);
            RankCard[] cards = new RankCard[size];
            for (int r = 0; r < size; r++) {
                cards[r] = RankCard.decode(blobs[r], r);
                if (cards[r].slots() != mine.slots() || cards[r].slotBytes() != mine.slotBytes()) {
                    throw new IOException("rank " + r + " has " + cards[r].slots() + " slots of " + cards[r].slotBytes()
                            + " bytes, rank " + rank + " has " + mine.slots() + " of " + mine.slotBytes()
                            + ": every rank must configure the same slots");
                }
            }
            for (int peer = 0; peer < rank; peer++) {
                QueuePair qp = connectTo(context, cards[peer].listen(), peer, config);
                opened.add(qp);
                links[peer] = new Link(peer, qp, staging, cards[peer].inboxKey(), staging.areaOf(rank, peer));
                links[peer].postReceives();
                links[peer].sendHello(rank);
            }
            for (QueuePair qp : accept(listener, size - 1 - rank, opened, staging, deadline)) {
                int peer = hello(qp, rank, size, links, deadline);
                links[peer] = new Link(peer, qp, staging, cards[peer].inboxKey(), staging.areaOf(rank, peer));
                links[peer].postReceives();
            }
            store.exchange(new byte[0], deadline, turn);
            boolean[] sameKernel = new boolean[size];
            for (int r = 0; r < size; r++) {
                sameKernel[r] = cards[r].kernel().equals(mine.kernel());
            }
            return new Connected(links, CoreSharing.shared(cards), sameKernel);
        } catch (IOException | RuntimeException e) {
            for (QueuePair qp : opened) {
                qp.close();
            }
            throw e;
        }
    }

    private static QueuePair connectTo(QpContext context, InetSocketAddress address, int peer, CommunicatorConfig config)
            throws IOException {
        try {
            return context.connect(address, config.queuePairs());
        } catch (IOException e) {
            throw new IOException("cannot connect a queue pair to rank " + peer + " at " + address + ": " + e.getMessage(),
                    e);
        }
    }

    /** The queue pairs of the {@code count} ranks above this one, each with the receive for its hello posted. */
    private static List<QueuePair> accept(QpListener listener, int count, List<QueuePair> opened, Staging staging,
            long deadline) throws IOException {
        List<QueuePair> accepted = new ArrayList<>();
        while (accepted.size() < count) {
            QueuePair qp;
            try {
                qp = listener.accept(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while accepting queue pairs", e);
            }
            if (qp == null) {
                throw new IOException("only " + accepted.size() + " of the " + count + " ranks above connected within the"
                        + " connect timeout" + (listener.lastRefusal() == null ? "" : "; last refusal: "
                        + listener.lastRefusal()));
            }
            opened.add(qp);
            accepted.add(qp);
            qp.postReceive(HELLO, staging.inbox.localKey(), 0, 0);
        }
        return accepted;
    }

    /** Waits for the hello on an accepted queue pair and returns the rank it names. */
    private static int hello(QueuePair qp, int rank, int size, Link[] links, long deadline) throws IOException {
        WorkCompletion wc = new WorkCompletion();
        if (!qp.await(wc, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) {
            throw new IOException("a rank connected but did not say which within the connect timeout");
        }
        if (!wc.isSuccess()) {
            throw new IOException("the queue pair of a connecting rank failed before it said which rank it is ("
                    + WorkCompletion.statusName(wc.status()) + "): " + qp.errorReason());
        }
        int peer = wc.hasImmediate() ? Immediate.helloRank(wc.immediate()) : -1;
        if (wc.workRequestId() != HELLO || peer <= rank || peer >= size || links[peer] != null) {
            throw new IOException("a connecting rank sent " + wc + " instead of a hello from a rank in " + (rank + 1) + ".."
                    + (size - 1) + " not yet connected");
        }
        return peer;
    }
}
