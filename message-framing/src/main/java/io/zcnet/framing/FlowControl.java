package io.zcnet.framing;

/**
 * Send-side flow control of one queue pair direction: which MSN to use next, which messages the peer
 * has acknowledged, how many receive-consuming messages its posted receives allow, and which of those
 * receives the next receive-consuming message consumes (its RSN, {@link #nextReceiveSequence()}).
 *
 * <p>Credits are cumulative: an ACKNOWLEDGE carries in {@code imm_data} the count, mod 2^32, of receives
 * the peer has ever posted (its <em>credit limit</em>), and the sender may send receive-consuming message
 * number {@code k} (counted from 0 since the queue pair started) only while {@code k < limit}. Cumulative
 * values make ACKNOWLEDGE frames idempotent: a duplicate, or one overtaken on another subflow, can never
 * grant a credit twice. Likewise {@code msn} is the last MSN the peer completed in order, so acknowledgement
 * only moves forward. The window keeps at most {@link FramingConfig#messageWindow()} messages unacknowledged,
 * which is what the receiver's MSN window accepts.
 *
 * <p>Not thread-safe: owned by the queue pair's thread.
 */
public final class FlowControl {

    private final int window;
    private int nextMsn;
    private int oldestUnacknowledged;
    private int creditLimit;
    private int consumersSent;

    /**
     * Flow control for one queue pair's send direction, with the window {@code config} negotiated.
     *
     * @param config the negotiated framing parameters
     */
    public FlowControl(FramingConfig config) {
        if (config == null) {
            throw new IllegalArgumentException("config is null");
        }
        this.window = config.messageWindow();
    }

    /** {@return the MSN the next message will carry} */
    public int nextMsn() {
        return nextMsn;
    }

    /** The cumulative credit limit the peer last granted. */
    int creditLimit() {
        return creditLimit;
    }

    /** {@return how many messages were sent and not yet acknowledged} */
    public int unacknowledged() {
        return Msn.distance(oldestUnacknowledged, nextMsn);
    }

    /**
     * {@return the receive sequence number (RSN) the next receive-consuming message carries: how many
     * receive-consuming messages were claimed before it, mod 2^32, which is the index of the peer's posted
     * receive it consumes (receive-consuming message {@code k} takes the {@code k}-th receive posted, as the
     * credits count them)} Read it just before {@link #claim claiming} that message and pass it to the
     * {@link Segmenter}; a claim of {@code n} receive-consuming messages gives them this RSN and the
     * {@code n - 1} after it, in MSN order.
     */
    public int nextReceiveSequence() {
        return consumersSent;
    }

    /** {@return how many receive-consuming messages the peer's credits still allow} */
    public long credits() {
        return Math.max(0, creditLimit - consumersSent);
    }

    /**
     * {@return whether {@code messages} more messages fit the window and, if they consume receives, the credits}
     *
     * @param messages how many messages
     * @param consumeReceive whether each of them consumes one of the peer's posted receives
     */
    public boolean canSend(int messages, boolean consumeReceive) {
        if (messages < 1) {
            throw new IllegalArgumentException("messages " + messages + " must be positive");
        }
        if (unacknowledged() + (long) messages > window) {
            return false;
        }
        return !consumeReceive || creditLimit - consumersSent >= messages;
    }

    /**
     * Takes MSNs for {@code messages} messages (all consuming a receive if {@code consumeReceive}, which
     * for a multi-message WRITE with immediate means only the last: claim it separately) and returns the
     * first, or -1 if {@link #canSend} says no. Receive-consuming messages also take the RSNs from
     * {@link #nextReceiveSequence()} on.
     *
     * @param messages how many messages
     * @param consumeReceive whether each of them consumes one of the peer's posted receives
     * @return the first MSN claimed, or -1
     */
    public int claim(int messages, boolean consumeReceive) {
        if (!canSend(messages, consumeReceive)) {
            return -1;
        }
        int first = nextMsn;
        nextMsn = Msn.add(nextMsn, messages);
        if (consumeReceive) {
            consumersSent += messages;
        }
        return first;
    }

    /**
     * Applies an ACKNOWLEDGE: {@code ackMsn} is the last message the peer completed in order and
     * {@code peerCreditLimit} its cumulative posted-receive count.
     *
     * @return {@link FrameError#OK}, or {@link FrameError#BAD_ACKNOWLEDGE} if it acknowledges an MSN never sent
     * @param ackMsn the ACKNOWLEDGE's {@code msn}
     * @param peerCreditLimit the ACKNOWLEDGE's {@code imm_data}
     */
    public int onAcknowledge(int ackMsn, int peerCreditLimit) {
        if (ackMsn < 0 || ackMsn > Msn.MASK) {
            throw new IllegalArgumentException("ackMsn " + ackMsn + " outside 0..65535");
        }
        int advance = Msn.distance(oldestUnacknowledged, Msn.add(ackMsn, 1));
        int outstanding = unacknowledged();
        if (advance <= outstanding) {
            oldestUnacknowledged = Msn.add(oldestUnacknowledged, advance);
        } else if (advance < Msn.MODULUS / 2) {
            // Ahead of everything sent: the peer acknowledges what was never sent.
            return FrameError.BAD_ACKNOWLEDGE;
        }
        // Otherwise behind what is already acknowledged: a stale ACKNOWLEDGE. On several subflows one can be
        // overtaken by any number of newer ones (it queued behind bulk data on a slower path), so how far
        // behind it is says nothing wrong; its credit limit, cumulative too, still counts if it is higher.
        if (peerCreditLimit - creditLimit > 0) {
            creditLimit = peerCreditLimit;
        }
        return FrameError.OK;
    }

    /**
     * Writes an ACKNOWLEDGE header (no extension, no payload) at the flyweight's position: {@code msn} =
     * {@code ackMsn}, {@code imm_data} = {@code creditLimit}, {@code rtr}/{@code rtrAck} as given (RTR
     * exchange of a new subflow). The ICRC, timestamps and subflow are the caller's.
     *
     * @param header a flyweight wrapped where the frame goes
     * @param ackMsn the last MSN this side completed in order
     * @param creditLimit receives this side ever posted, mod 2^32
     * @param rtr whether to set the RTR flag
     * @param rtrAck whether to set the RTR_ACK flag
     */
    public static void writeAcknowledge(FrameHeader header, int ackMsn, int creditLimit, boolean rtr, boolean rtrAck) {
        if (header == null || header.segment() == null) {
            throw new IllegalArgumentException("header is not wrapped");
        }
        if (rtr && rtrAck) {
            throw new IllegalArgumentException("rtr and rtr_ack are exclusive");
        }
        header.clear()
                .version(FrameHeader.VERSION)
                .opcode(Opcode.ACKNOWLEDGE)
                .msn(ackMsn)
                .immData(creditLimit)
                .rtr(rtr)
                .rtrAck(rtrAck);
    }

    @Override
    public String toString() {
        return "FlowControl[next=" + nextMsn + " unacked=" + unacknowledged() + " credits=" + credits() + "]";
    }
}
