package io.zcnet.qp;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.AccessStatus;
import io.zcnet.buffer.MemoryRegistry;
import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.MessageAssembler;
import io.zcnet.framing.SgeList;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * What other threads post, as verbs' post_send and post_recv take it: receives from the receive ring to the
 * assembler (each one a credit for the peer), work requests from the send ring to the {@link SendLedger}, each
 * checked against the registry and the wire format's limits on the way in. A post on the loop thread itself with
 * nothing waiting in its ring skips the ring. Owner thread of the loop.
 */
final class WorkIntake {
    private final QpEngine engine;
    private final QueuePair qp;
    private final SendLedger ledger;
    private final MessageAssembler assembler;
    private final MemoryRegistry registry;
    private final FramingConfig framing;
    private final QpConfig config;
    private final WorkRequest taken = new WorkRequest();
    /** Each ledger entry's inline data, {@link QpConfig#maxInlineData()} bytes a slot; null when there is none. */
    private final MemorySegment inlineData;
    /** Posted receives by the index the assembler knows them by: the user's ids. */
    /**
     * Posted receives' ids by index modulo the table's size: 16 at first, doubled when as many are outstanding, up to
     * the receive queue's depth (receives complete in posting order, so the outstanding ones are one run of indices).
     */
    private long[] receiveIds;
    private long receivesPosted;
    /** Receives whose completion (consumed or flushed) has been moved out: the oldest outstanding index. */
    private long receivesCompleted;
    /** The shared receive queue that lends this queue pair its receives, or null: it posts its own. */
    private final SharedReceiveQueue srq;
    /** Whether receives are lent to it by its shared receive queue, from the first subflow until the close. */
    private boolean borrowing;
    /** Receives lent by the shared receive queue and not yet completed. */
    private int borrowed;
    /** Whether it waits in its shared receive queue's line for one more. */
    private boolean wantingMore;

    WorkIntake(QpEngine engine, Arena arena) {
        this.engine = engine;
        this.qp = engine.qp;
        this.ledger = engine.ledger;
        this.assembler = engine.assembler;
        this.registry = engine.registry;
        this.framing = engine.framing;
        this.config = engine.config;
        this.inlineData = config.maxInlineData() == 0 ? null
                : arena.allocate((long) ledger.maxCapacity() * config.maxInlineData(), 8);
        this.srq = qp.sharedQueues.receiveQueue();
        this.receiveIds = new long[Math.min(16, config.receiveQueueDepth())];
    }

    /** {@return the user's id of the receive the assembler knows as {@code index}} */
    long receiveId(long index) {
        return receiveIds[(int) index & (receiveIds.length - 1)];
    }

    /** Whether a work request or receive waits in its ring. */
    boolean hasPosted() {
        return qp.sendRing.peek() >= 0 || qp.receiveRing.peek() >= 0;
    }

    /** What other threads posted: receives first (they are credit), then work requests. */
    void takePosted() {
        takeReceives();
        takeWorkRequests();
    }

    void takeReceives() {
        SpscRing rq = qp.receiveRing;
        long at;
        while ((at = rq.peek()) >= 0) {
            // In ERROR too the assembler takes it: it flushes it at once, or behind the flush of a receive that
            // waits for its placement to end, so receives complete in posting order whatever the kernel holds.
            if (!takeReceive(rq, at)) {
                return;
            }
        }
        engine.scheduleEndOfTurn();
    }

    /**
     * Posts the receive at {@code at} of {@code ring} to the assembler and frees the entry; false, leaving it, when
     * it must wait (the assembler's queue is full, or a held flush is ahead of its completion in error). An entry the
     * registry refuses completes in error, freed before the queue pair fails: the failure flushes what is left.
     */
    private boolean takeReceive(SpscRing ring, long at) {
        MemorySegment m = ring.consumerMemory();
        long id = QueueEntries.receiveId(m, at);
        long index = receivesPosted;
        SgeList into = assembler.claimReceive();
        if (into == null) {
            return false;
        }
        try {
            QueueEntries.readReceive(m, at, into);
            if (!assembler.postClaimedReceive(index)) {
                return false;
            }
        } catch (IllegalArgumentException refused) {
            FailurePath failure = engine.failure;
            int status = failure.state() == QpState.ERROR ? WorkCompletion.FLUSH_ERROR
                    : WorkCompletion.LOCAL_PROTECTION_ERROR;
            if (assembler.owesFlush() || !engine.completer.completion(id, status, WorkCompletion.OP_RECV, 0, false, 0)) {
                return false; // behind a held flush it must wait its turn: taken again once that flush is out
            }
            ring.advance();
            failure.fail(WorkCompletion.LOCAL_PROTECTION_ERROR, refused.getMessage());
            return true;
        }
        receivePosted(index, id);
        ring.advance();
        return true;
    }

    // ---------------------------------------------------------------- receives lent by a shared receive queue

    /** The first subflow is up: a queue pair of a shared receive queue is lent its first receives. */
    void startBorrowing() {
        if (srq != null && !borrowing) {
            borrowing = true;
            srq.join(engine);
        }
    }

    /** The queue pair was closed: it borrows no more. */
    void stopBorrowing() {
        if (srq != null && borrowing) {
            borrowing = false;
            srq.leave(engine);
        }
    }

    /** Whether it may be lent one more receive: it is running and holds fewer than {@code most}. */
    boolean mayBorrow(int most) {
        return borrowing && !engine.isClosed() && engine.failure.state() == QpState.RTS
                && borrowed < Math.min(most, config.receiveQueueDepth());
    }

    /** Takes the shared queue's receive at {@code at} of {@code ring}; false when it cannot now. */
    boolean borrow(SpscRing ring, long at) {
        long before = receivesPosted;
        if (!takeReceive(ring, at)) {
            return false;
        }
        if (receivesPosted != before) { // posted, not refused
            borrowed++;
            engine.scheduleEndOfTurn(); // the ACKNOWLEDGE that gives the peer its credit
        }
        return true;
    }

    int borrowed() {
        return borrowed;
    }

    boolean isWanting() {
        return wantingMore;
    }

    void wanting(boolean on) {
        wantingMore = on;
    }

    /** A receive completed (consumed, or flushed): a borrowed one is replaced from the shared queue. */
    void receiveConsumed() {
        receivesCompleted++;
        if (srq != null && borrowing) {
            borrowed--;
            srq.returned();
            srq.want(engine);
        }
    }

    /**
     * A one-piece receive posted on the loop thread with nothing ahead of it in the receive ring: posted to the
     * assembler at once, as {@link #takeReceives} would post it on its next turn, without the round through the
     * ring. False when it must take the ring after all (receives wait there, the queue is full, the queue pair
     * failed, or the registry refuses the piece), which then treats it as any other.
     */
    boolean postReceiveOnLoop(long id, int lkey, long offset, int length) {
        if (engine.isClosed() || engine.failure.state() == QpState.ERROR || qp.receiveRing.peek() >= 0) {
            return false;
        }
        SgeList into = assembler.claimReceive();
        if (into == null) {
            return false;
        }
        long index = receivesPosted;
        try {
            into.add(lkey, offset, length);
            if (!assembler.postClaimedReceive(index)) {
                return false;
            }
        } catch (IllegalArgumentException refused) {
            return false; // the ring's way reports it: a completion in error, and the queue pair fails
        }
        receivePosted(index, id);
        engine.scheduleEndOfTurn();
        return true;
    }

    /** Notes receive {@code index}, the user's {@code id}, as posted: one more credit for the peer. */
    private void receivePosted(long index, long id) {
        if (index - receivesCompleted >= receiveIds.length) {
            growReceiveIds();
        }
        receiveIds[(int) index & (receiveIds.length - 1)] = id;
        receivesPosted++;
        engine.acks.owe();
    }

    /** Doubles the id table, each outstanding receive's id moving to its index modulo the new size. */
    private void growReceiveIds() {
        long[] grown = new long[receiveIds.length * 2];
        for (long i = receivesCompleted; i < receivesPosted; i++) {
            grown[(int) i & (grown.length - 1)] = receiveIds[(int) i & (receiveIds.length - 1)];
        }
        receiveIds = grown;
    }

    /**
     * A work request posted on the loop thread with none waiting in the send ring: entered in the ledger at once,
     * as {@link #takeWorkRequests} would enter it on its next turn, and sent at the end of this turn, without the
     * round through the ring. False when it must take the ring after all (requests wait there, the send queue or
     * the ledger is full, or the queue pair is not sending), which then treats it as any other.
     */
    boolean postSendOnLoop(WorkRequest wr) {
        if (engine.isClosed() || engine.failure.state() != QpState.RTS || qp.sendRing.peek() >= 0
                || ledger.userEntries >= config.sendQueueDepth() || !ledger.hasRoom()) {
            return false;
        }
        SgeList local = ledger.nextLocal().clear();
        SgeList given = wr.sges;
        if (wr.inline) {
            long at = nextInlineSlot();
            int length = (int) given.length(0);
            MemorySegment.copy(given.segment(0), given.offset(0), inlineData, at, length);
            local.add(inlineData, at, length);
        } else {
            // By key, as the ring carries them: a piece has no other name on this path.
            for (int i = 0; i < given.count(); i++) {
                local.add(given.key(i), given.offset(i), given.length(i));
            }
        }
        admit(wr, local);
        engine.scheduleEndOfTurn();
        return true;
    }

    private void takeWorkRequests() {
        SpscRing sq = qp.sendRing;
        long at;
        while (ledger.userEntries < config.sendQueueDepth() && ledger.hasRoom() && (at = sq.peek()) >= 0) {
            QueueEntries.readSend(sq.consumerMemory(), at, taken, ledger.nextLocal(), inlineData, nextInlineSlot());
            sq.advance();
            admit(taken, ledger.nextLocal());
        }
    }

    /** Where the inline data of the ledger entry appended next is kept, while it is outstanding. */
    private long nextInlineSlot() {
        // By sequence modulo the most entries, not by the ledger's slot: a slot moves when the ledger grows, and the
        // inline bytes of the entries outstanding must not.
        return (ledger.tail & (ledger.maxCapacity() - 1)) * config.maxInlineData();
    }

    /**
     * Checks a work request's local side, the elements it was read with ({@link SendLedger#nextLocal()}), and
     * enters it in the ledger: every element against the registry (LOCAL_WRITE for a READ's sinks, which
     * then go by their remote keys), the total against one message (a SEND) or the message window.
     */
    private void admit(WorkRequest wr, SgeList local) {
        int op = wr.opcode;
        int access = op == WorkRequest.RDMA_READ ? Access.LOCAL_WRITE : 0;
        int status = local.resolve(registry, access);
        int early = -1;
        String why = null;
        if (status != AccessStatus.OK) {
            int refused = local.refused();
            early = WorkCompletion.LOCAL_PROTECTION_ERROR;
            why = WorkRequest.opcodeName(op) + " " + wr.workRequestId + ": element " + refused + " (lkey 0x"
                    + Integer.toHexString(local.key(refused)) + " range " + local.offset(refused) + "+"
                    + local.length(refused) + ") refused: " + AccessStatus.name(status);
        } else if (op < WorkRequest.SEND || op > WorkRequest.RDMA_READ) {
            early = WorkCompletion.LOCAL_PROTECTION_ERROR;
            why = "work request " + wr.workRequestId + " has no valid opcode (" + op + ")";
        } else if (consumesReceive(op) && local.byteSize() > FramingConfig.MAX_MESSAGE_SIZE
                || messagesOf(op, local) > framing.messageWindow()) {
            early = WorkCompletion.LOCAL_LENGTH_ERROR;
            why = WorkRequest.opcodeName(op) + " " + wr.workRequestId + " of " + local.byteSize() + " bytes is longer than "
                    + (consumesReceive(op) ? "one message (" + FramingConfig.MAX_MESSAGE_SIZE + " bytes)"
                    : "the message window allows");
        } else if (op == WorkRequest.RDMA_READ) {
            local.nameByRemoteKeys();
        }
        long seq = ledger.append(op, wr.workRequestId, wr.signaled, wr.lazy, wr.immediate, wr.rkey, wr.remoteOffset, 0, 0);
        if (early >= 0 || engine.failure.state() == QpState.ERROR) {
            ledger.completeEarly(ledger.slot(seq), early >= 0 ? early : WorkCompletion.FLUSH_ERROR);
            if (early >= 0) {
                engine.failure.fail(early, why);
            }
        }
    }

    /** Messages (MSNs) a work request takes: a long WRITE one per message-sized piece, a READ per piece of each sink. */
    private long messagesOf(int op, SgeList local) {
        if (op == WorkRequest.RDMA_READ) {
            return engine.requester.readMessages(local);
        }
        if (op == WorkRequest.RDMA_WRITE && local.byteSize() > FramingConfig.MAX_MESSAGE_SIZE) {
            return (local.byteSize() + framing.messageChunk() - 1) / framing.messageChunk();
        }
        return 1;
    }

    /**
     * A SEND, or a WRITE with immediate: one message, since the receive it consumes completes with the
     * message's length, and only a single message carries the whole length to the receiver.
     */
    private static boolean consumesReceive(int op) {
        return op != WorkRequest.RDMA_WRITE && op != WorkRequest.RDMA_READ;
    }
}
