package io.zcnet.collective;

import io.zcnet.qp.QueuePair;
import io.zcnet.qp.WorkCompletion;
import io.zcnet.qp.WorkRequest;

import java.lang.foreign.MemorySegment;

/**
 * One peer of a communicator: the queue pair to it and the staging slots its messages pass through. Every
 * message is an RDMA WRITE with immediate of up to {@code slotBytes} from this rank's outbox slot
 * {@code n mod slots} into the peer's inbox slot {@code n mod slots}, {@code n} counting the messages of the
 * link since it was connected. Each rank's staging memory is two registered regions, inbox and outbox, cut
 * the same way: one area per peer, in rank order with the rank itself left out, of {@code slots} slots each
 * ({@link Staging#slotsFor}: the ring neighbours' areas are deeper).
 *
 * <pre>
 * inbox of rank r, N ranks, B bytes a slot, S_p slots from rank p (4 S from r - 1 and r + 1, else S):
 * +------------------------------+------------------------------+-----+----------------------------------+
 * | from rank 0: slot 0 .. S_0-1 | from rank 1: slot 0 .. S_1-1 | ... | from rank N-1: slot 0 .. S_N-1-1 |
 * +------------------------------+------------------------------+-----+----------------------------------+
 * area of peer p at the sum of S_q * B over the ranks q &lt; p but r; slot s at area + s * B
 * </pre>
 *
 * <h2>Flow control</h2>
 * A WRITE with immediate consumes one of the peer's posted receives, and the queue pair sends none of its
 * bytes before the peer has one posted ({@link QueuePair}'s credit rule). Each side keeps exactly
 * {@code slots} receives posted and posts one again only when it has finished with the slot of the oldest
 * message, so the peer's {@code n}-th message cannot start before this side is done with message
 * {@code n - slots}, the one that occupied the same slot: a receive credit stands for a free slot, and no
 * release message is needed. An outbox slot is free again when the WRITE from it completes (the peer has
 * the bytes). Small WRITEs are signaled only some of the time: one once half the slots are in flight and
 * none signaled is outstanding, whose completion frees every slot before it too. The others complete
 * silently, so the peer acknowledges them on its next message to this rank instead of with a frame each,
 * which in a latency-bound exchange is a wake-up of this rank saved per message. Large ones are all
 * signaled, so a stream of them gets every slot back as soon as the peer has it.
 *
 * <p>Owned by the thread running the communicator's operation; the loop thread only runs the wake-up.
 */
final class Link {
    /**
     * A WRITE of at least this many bytes is always signaled: in a stream of them, each slot is needed back
     * as soon as the peer has it, and an acknowledgement frame per WRITE costs nothing next to its bytes.
     */
    private static final int SIGNALED_BYTES = 16 * 1024;
    final int peer;
    final QueuePair qp;
    private final int slots;
    private final int slotBytes;
    final MemorySegment outbox;
    private final int outboxKey;
    private final long outboxArea;
    final MemorySegment inbox;
    private final int inboxKey;
    private final long inboxArea;
    private final int peerInboxKey;
    private final long peerInboxArea;
    private final WorkRequest request = new WorkRequest();
    /** Immediates and lengths of arrived messages not yet consumed, by slot. */
    private final int[] arrivedImmediate;
    private final int[] arrivedBytes;

    private long posted;
    private long completed;
    /** One past the last signaled WRITE posted, hurried or lazily: while above {@link #completed}, none more is lazy. */
    private long signaledUpTo;
    /** One past the last WRITE signaled with its acknowledgement asked for: up to it, completions will come. */
    private long hurriedUpTo;
    private long arrived;
    private long consumed;
    /** Messages of the running operation sent and consumed on this link: the immediates' index. */
    int operationSent;
    int operationConsumed;
    /** What failed first on this link (a completion's status, or a message no peer of ours sends), or null. */
    String failure;

    Link(int peer, QueuePair qp, Staging staging, int peerInboxKey, long peerInboxArea) {
        this.peer = peer;
        this.qp = qp;
        this.slots = staging.slotsFor(peer);
        this.slotBytes = staging.slotBytes;
        this.outbox = staging.outbox.segment();
        this.outboxKey = staging.outbox.localKey();
        this.outboxArea = staging.areaOf(peer);
        this.inbox = staging.inbox.segment();
        this.inboxKey = staging.inbox.localKey();
        this.inboxArea = staging.areaOf(peer);
        this.peerInboxKey = peerInboxKey;
        this.peerInboxArea = peerInboxArea;
        this.arrivedImmediate = new int[slots];
        this.arrivedBytes = new int[slots];
    }

    /** {@return how many messages this link may have in flight: its slots} */
    int slots() {
        return slots;
    }

    /** Posts the receives that stand for the inbox slots: one per slot, none of which holds data. */
    void postReceives() {
        for (int i = 0; i < slots; i++) {
            postReceive();
        }
    }

    private void postReceive() {
        // A WRITE with immediate places its bytes by key; the receive only carries the immediate.
        if (!qp.postReceive(0, inboxKey, inboxArea, 0)) {
            throw new IllegalStateException("receive queue of the link to rank " + peer + " is full");
        }
    }

    /** {@return how many messages this link has sent} */
    long sent() {
        return posted;
    }

    /** Sends the 0-byte SEND that tells the accepting peer which rank this is. */
    void sendHello(int rank) {
        request.sendWithImmediate(-1, outboxKey, outboxArea, 0, Immediate.hello(rank));
        if (!qp.postSend(request)) {
            throw new IllegalStateException("send queue of the link to rank " + peer + " is full");
        }
    }

    // ---------------------------------------------------------------- sending

    /** Whether the next message's outbox slot is free. */
    boolean canSend() {
        return posted - completed < slots;
    }

    /** Byte offset in {@link #outbox} of the next message's slot. */
    long sendOffset() {
        return outboxArea + (posted % slots) * slotBytes;
    }

    /** WRITEs {@code bytes} of the next slot, filled by the caller, to the peer's slot of the same number. */
    void send(int bytes, int immediate) {
        long slot = posted % slots;
        request.writeWithImmediate(posted, outboxKey, outboxArea + slot * slotBytes, bytes, peerInboxKey,
                peerInboxArea + slot * slotBytes, immediate);
        long outstanding = posted + 1 - completed;
        // A small WRITE asks for an acknowledgement frame of its own only when the slots are about to run out with
        // none asked for yet (a one-way stream: a ring, a tree). Before that, one in half the slots is signaled
        // lazily: its completion rides on the peer's next message, which an exchange sends anyway.
        boolean hurry = bytes >= SIGNALED_BYTES || hurriedUpTo <= completed && outstanding >= Math.max(1, slots - 1);
        boolean lazy = !hurry && signaledUpTo <= completed && outstanding >= Math.max(1, slots / 2);
        post(hurry ? request : lazy ? request.signaledLazily() : request.unsignaled());
        posted++;
        if (hurry || lazy) {
            signaledUpTo = posted;
        }
        if (hurry) {
            hurriedUpTo = posted;
        }
        operationSent++;
    }

    private void post(WorkRequest wr) {
        if (!qp.postSend(wr)) {
            // The send queue is deeper than the slots, plus this flush (CommunicatorConfig checks it).
            throw new IllegalStateException("send queue of the link to rank " + peer + " is full");
        }
    }

    /**
     * Makes the WRITEs in flight complete: unless the last asked for its acknowledgement, an empty WRITE that does
     * (it consumes no receive of the peer) completes, and with it, every one before.
     */
    void flushSends() {
        if (hurriedUpTo < posted) {
            // Its work request id is the last WRITE's, so its completion counts up to `posted`.
            post(request.write(posted - 1, outboxKey, outboxArea, 0, peerInboxKey, peerInboxArea));
            signaledUpTo = posted;
            hurriedUpTo = posted;
        }
    }

    /** Sends posted whose WRITE has not completed yet. */
    long sendsInFlight() {
        return posted - completed;
    }

    // ---------------------------------------------------------------- receiving

    boolean hasArrival() {
        return arrived > consumed;
    }

    /** Byte offset in {@link #inbox} of the oldest unconsumed message. */
    long arrivalOffset() {
        return inboxArea + (consumed % slots) * slotBytes;
    }

    int arrivalImmediate() {
        return arrivedImmediate[(int) (consumed % slots)];
    }

    int arrivalBytes() {
        return arrivedBytes[(int) (consumed % slots)];
    }

    /** Done with the oldest message's slot: the receive posted again lets the peer reuse it. */
    void consume() {
        consumed++;
        operationConsumed++;
        postReceive();
    }

    // ---------------------------------------------------------------- completions

    /**
     * Takes every completion of the queue pair: WRITEs free outbox slots, receives record arrivals; the
     * first failure is kept in {@link #failure}. Returns how many were taken.
     */
    int drain(WorkCompletion wc) {
        int n = 0;
        while (failure == null && qp.poll(wc)) {
            n++;
            if (!wc.isSuccess()) {
                failure = WorkCompletion.opcodeName(wc.opcode()) + " completed with "
                        + WorkCompletion.statusName(wc.status());
            } else if (wc.opcode() == WorkCompletion.OP_RDMA_WRITE) {
                completed = wc.workRequestId() + 1; // a signaled WRITE completes the unsignaled before it
            } else if (wc.opcode() == WorkCompletion.OP_RECV_RDMA_WITH_IMM) {
                int slot = (int) (arrived % slots);
                arrivedImmediate[slot] = wc.immediate();
                arrivedBytes[slot] = wc.byteCount();
                arrived++;
            } else if (wc.opcode() == WorkCompletion.OP_RECV) {
                failure = "the peer sent a SEND after connecting, which no rank does";
            }
            // OP_SEND: the hello was delivered; nothing waits for it.
        }
        return n;
    }

    @Override
    public String toString() {
        return "Link[rank " + peer + " sent=" + posted + " completed=" + completed + " arrived=" + arrived
                + " consumed=" + consumed + (failure == null ? "" : " failed: " + failure) + "]";
    }
}
