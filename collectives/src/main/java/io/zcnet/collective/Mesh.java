package io.zcnet.collective;

import io.zcnet.qp.QpContext;
import io.zcnet.qp.QpListener;
import io.zcnet.qp.QpState;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.WorkCompletion;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Connects a rank to every other rank, one queue pair each (a full mesh: all-to-all, halving-doubling and
 * the failure of any rank need every pair anyway). Rank r listens, publishes its card ({@link RankCard}) in
 * the first rendezvous round, connects to every rank below it and accepts every rank above it; the
 * connecting side's first message is a 0-byte SEND whose immediate names its rank, which is how the
 * accepting side tells its queue pairs apart. Each side then posts the receives of its inbox slots, and
 * the second rendezvous round says that every rank has done so.
 *
 * <p>A rank's listener meets strangers too. An accepted queue pair holds no rank's place until its hello names
 * a rank above this one not yet connected, so one that says nothing, something else, or a rank already
 * connected is logged once and closed while the ranks above go on connecting. With a job secret (the queue
 * pairs' pre-shared key, {@link CommunicatorConfig#withJobSecret}) strangers do not get a queue pair at all,
 * and a hello from a holder of the secret that names a rank already connected is two ranks started with one
 * number: that fails. Control path; one thread.
 */
final class Mesh {
    /** Work request id of the receive that takes the hello. */
    private static final long HELLO = -2;
    private static final System.Logger LOG = System.getLogger("io.zcnet.collective");

    private Mesh() {
    }

    /**
     * A rank's links to every rank (null at its own), every queue pair connected and identified, and whether the
     * ranks share CPU cores ({@link CoreSharing#shared}, decided alike on every rank from the same cards), and
     * which ranks run on this rank's kernel, and where every rank listens (the only topology a rank knows).
     */
    record Connected(Link[] links, boolean coresShared, boolean[] sameKernel, InetSocketAddress[] listens) {
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
            acceptAbove(listener, rank, size, links, opened, staging, cards, config.jobSecret() != null, deadline);
            store.exchange(new byte[0], deadline, turn);
            boolean[] sameKernel = new boolean[size];
            for (int r = 0; r < size; r++) {
                sameKernel[r] = cards[r].kernel().equals(mine.kernel());
            }
            InetSocketAddress[] listens = new InetSocketAddress[size];
            for (int r = 0; r < size; r++) {
                listens[r] = cards[r].listen();
            }
            return new Connected(links, CoreSharing.shared(cards), sameKernel, listens);
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

    /**
     * Fills {@code links} above {@code rank} with the queue pairs whose hello names their rank, dropping those
     * that name none or a taken one; {@code proven}: every queue pair proved the job secret.
     */
    private static void acceptAbove(QpListener listener, int rank, int size, Link[] links, List<QueuePair> opened,
            Staging staging, RankCard[] cards, boolean proven, long deadline) throws IOException {
        List<QueuePair> unnamed = new ArrayList<>();
        WorkCompletion wc = new WorkCompletion();
        int missing = size - 1 - rank;
        try {
            while (missing > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IOException("ranks " + notConnected(links, rank) + " did not connect a queue pair to rank "
                            + rank + " within the connect timeout" + (listener.lastRefusal() == null ? ""
                            : "; last refusal: " + listener.lastRefusal()));
                }
                // While some queue pair has not said which rank it is, look at it again every millisecond.
                QueuePair qp = listener.accept(Duration.ofNanos(unnamed.isEmpty() ? left : Math.min(left, 1_000_000)));
                if (qp != null) {
                    opened.add(qp);
                    unnamed.add(qp);
                    qp.postReceive(HELLO, staging.inbox.localKey(), 0, 0);
                }
                for (Iterator<QueuePair> it = unnamed.iterator(); it.hasNext(); ) {
                    QueuePair u = it.next();
                    String stray;
                    if (u.poll(wc)) {
                        int peer = wc.isSuccess() && wc.hasImmediate() && wc.workRequestId() == HELLO
                                ? Immediate.helloRank(wc.immediate()) : -1;
                        if (!wc.isSuccess()) {
                            stray = "its queue pair failed (" + WorkCompletion.statusName(wc.status()) + ") before it"
                                    + " said which rank it is: " + u.errorReason();
                        } else if (peer <= rank || peer >= size) {
                            stray = "it sent " + wc + ", not a hello from a rank in " + (rank + 1) + ".." + (size - 1);
                        } else if (links[peer] != null) {
                            if (proven) {
                                throw new IOException("two queue pairs that both prove the job secret say they are rank "
                                        + peer + ": rank numbers must be unique");
                            }
                            stray = "it says it is rank " + peer + ", which is connected already";
                        } else {
                            it.remove();
                            links[peer] = new Link(peer, u, staging, cards[peer].inboxKey(), staging.areaOf(rank, peer));
                            links[peer].postReceives();
                            missing--;
                            continue;
                        }
                    } else if (u.state() == QpState.ERROR) {
                        stray = "its queue pair failed before it said which rank it is: " + u.errorReason();
                    } else {
                        continue;
                    }
                    it.remove();
                    drop(u, rank, stray, opened);
                }
            }
            for (QueuePair u : unnamed) {
                drop(u, rank, "it never said which rank it is", opened);
            }
            // A queue pair left waiting in the listener would stay open in the context, never handed out.
            for (QueuePair late; (late = listener.accept(Duration.ZERO)) != null; ) {
                drop(late, rank, "it came after every rank above had connected", opened);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while accepting queue pairs", e);
        }
    }

    private static void drop(QueuePair qp, int rank, String why, List<QueuePair> opened) {
        LOG.log(System.Logger.Level.WARNING, "zcnet rank " + rank + ": dropped an accepted queue pair, " + qp + ": "
                + why);
        opened.remove(qp);
        qp.close();
    }

    private static List<Integer> notConnected(Link[] links, int rank) {
        List<Integer> list = new ArrayList<>();
        for (int r = rank + 1; r < links.length; r++) {
            if (links[r] == null) {
                list.add(r);
            }
        }
        return list;
    }
}
