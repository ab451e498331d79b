package io.zcnet.framing;

import java.lang.foreign.MemorySegment;

/**
 * Records each placed frame in its message and completes messages strictly in MSN order: a message
 * completes once all its segments are placed and no placement into it is in flight, and is retired (its
 * completion emitted, its READ request queued, its slot freed) only when every older one has been. A
 * receive-consuming message was placed into the receive its RSN names; when it retires that must be the
 * oldest posted receive, so receives complete in posting order and each with its own work request id.
 *
 * <p>When the completion queue or the queue of READ requests is full, a complete message is <em>held
 * back</em> rather than failed: it stays unretired, so the acknowledged MSN stops and the peer's MSN window
 * stops it, until {@link #retire} is called again after the application made room. Not thread-safe: owned by
 * one {@link MessageAssembler}.
 */
final class MessageCompletion {

    // completeOldest: the completion or read-request queue is full; the message waits, complete.
    private static final int HELD_BACK = 1;

    private final int segmentSize;
    private final MessageSlots slots;
    private final ReceiveQueue receives;
    private final ExpectedReads expectedReads;
    private final ReadRequestQueue readRequests;
    private final CompletionQueue completions;
    private final QueuePairError error;
    private final TaggedExtension tagged = new TaggedExtension();
    private final ReadRequestExtension readExtension = new ReadRequestExtension();

    private boolean heldBack;

    MessageCompletion(int segmentSize, MessageSlots slots, ReceiveQueue receives, ExpectedReads expectedReads,
                      ReadRequestQueue readRequests, CompletionQueue completions, QueuePairError error) {
        this.segmentSize = segmentSize;
        this.slots = slots;
        this.receives = receives;
        this.expectedReads = expectedReads;
        this.readRequests = readRequests;
        this.completions = completions;
        this.error = error;
    }

    /** Whether a complete message waits for room in the completion or READ request queue. */
    boolean isHeldBack() {
        return heldBack;
    }

    /**
     * Records a frame of a message (not an ACKNOWLEDGE) that the judge accepted for {@code slot}, with
     * {@code receive} the receive it found, and whose payload is in place; completes what is now complete.
     *
     * @return {@link MessageAssembler#ACCEPTED}, or the {@link FrameError} that completing raised (the queue
     *         pair is then in ERROR)
     */
    int placed(FrameHeader header, MemorySegment headers, long extOffset, int length, int slot, long receive) {
        int opcode = header.opcode();
        slots.kind(slot, MessageSlots.family(opcode));
        if (Opcode.rsnOffset(opcode) >= 0) {
            slots.holdReceive(slot, receive);
        }
        int messageOffset = header.messageOffset();
        switch (slots.kind(slot)) {
            case Opcode.KIND_READ_RESPONSE -> {
                tagged.wrap(headers, extOffset);
                slots.readSink(slot, tagged.rkey(), tagged.regionOffset() - messageOffset);
            }
            case Opcode.KIND_READ_REQUEST -> {
                readExtension.wrap(headers, extOffset);
                slots.readRequest(slot, readExtension.rkey(), readExtension.regionOffset(),
                        (int) readExtension.readLength(), readExtension.sinkRkey(), readExtension.sinkOffset());
            }
            default -> { }
        }
        int segment = messageOffset / segmentSize;
        slots.place(slot, segment);
        if (Opcode.isLast(opcode)) {
            slots.last(slot, segment + 1, messageOffset + length, opcode,
                    Opcode.hasImmediate(opcode) ? header.immData() : 0);
        }
        return completeIfDone(slot);
    }

    /**
     * Completes the oldest message, whose one frame {@link FrameJudge#isWholeOldestSend} judged and whose payload is
     * in place, as {@link #placed} would, minus the bookkeeping of a slot it never needed: it takes the oldest
     * receive, and the completion queue has room (the caller checked).
     */
    int completeWholeOldestSend(FrameHeader header, int length) {
        return completeWholeOldestSend(header.opcode(), header.immData(), length);
    }

    /** {@link #completeWholeOldestSend(FrameHeader, int)} for a SEND given by its ONLY opcode and immediate data. */
    int completeWholeOldestSend(int opcode, int imm, int length) {
        long id = receives.workRequestId(receives.consume());
        completions.offer(id, CompletionStatus.SUCCESS, opcode, length,
                Opcode.hasImmediate(opcode) ? imm : 0, slots.oldestMsn());
        slots.passOldest();
        // Messages that completed out of order behind it retire now, as retire() would have gone on to them.
        return slots.isComplete(slots.oldestSlot()) ? retire() : MessageAssembler.ACCEPTED;
    }

    /**
     * Marks the slot's message complete once every segment is placed and no placement into it is in flight
     * (the kernel may still be writing into its buffer), and completes it if it is the oldest.
     */
    int completeIfDone(int slot) {
        if (!slots.isComplete(slot) && slots.reservations(slot) == 0
                && slots.segmentsPlaced(slot) == slots.segmentsExpected(slot)) {
            slots.markComplete(slot);
            if (slot == slots.oldestSlot()) {
                return retire();
            }
        }
        return MessageAssembler.ACCEPTED;
    }

    /** Completes every complete message from the oldest on, in MSN order. */
    int retire() {
        heldBack = false;
        while (slots.isComplete(slots.oldestSlot())) {
            int r = completeOldest();
            if (r == HELD_BACK) {
                // Not acknowledged, so the peer's MSN window stops it until the application makes room.
                heldBack = true;
                return MessageAssembler.ACCEPTED;
            }
            if (r != FrameError.OK) {
                return r;
            }
            slots.retireOldest();
        }
        return MessageAssembler.ACCEPTED;
    }

    private int completeOldest() {
        int slot = slots.oldestSlot();
        int msn = slots.oldestMsn();
        switch (slots.kind(slot)) {
            case Opcode.KIND_SEND, Opcode.KIND_WRITE -> {
                long receive = slots.receive(slot);
                if (receive < 0) {
                    return FrameError.OK; // a WRITE without immediate data consumes no receive
                }
                if (receive != receives.consumed()) {
                    // The RSNs skipped a receive: the one left out would complete out of posting order.
                    return error.fail(FrameError.BAD_RECEIVE_SEQUENCE, slot, receive);
                }
                if (completions.remaining() == 0) {
                    return HELD_BACK; // only if the queue is shared: the reservation kept a slot otherwise
                }
                long id = receives.workRequestId(receive);
                receives.consume();
                completions.offer(id, CompletionStatus.SUCCESS, slots.finalOpcode(slot), slots.totalLength(slot),
                        slots.immediate(slot), msn);
            }
            case Opcode.KIND_READ_RESPONSE -> {
                if (!expectedReads.oldestIs(slots.readRkey(slot), slots.readSinkOffset(slot), slots.totalLength(slot))) {
                    return error.fail(FrameError.UNEXPECTED_READ_RESPONSE, slot, slots.receive(slot));
                }
                if (completions.remaining() == 0) {
                    return HELD_BACK;
                }
                completions.offer(expectedReads.takeOldest(), CompletionStatus.SUCCESS, slots.finalOpcode(slot),
                        slots.totalLength(slot), 0, msn);
            }
            case Opcode.KIND_READ_REQUEST -> {
                if (readRequests.isFull()) {
                    return HELD_BACK;
                }
                readRequests.add(msn, slots, slot);
            }
            default -> throw new IllegalStateException("complete slot " + slot + " has kind " + slots.kind(slot));
        }
        return FrameError.OK;
    }
}
