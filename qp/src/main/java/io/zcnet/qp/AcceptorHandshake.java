package io.zcnet.qp;

import io.zcnet.ring.DetachedSocket;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;

/**
 * The accepting end of a subflow (see {@link InitiatorHandshake} for the exchange): reads OPEN or JOIN,
 * answers CHALLENGE (agreed parameters and a new token and secret for an OPEN; for a JOIN the subflow index
 * and a proof of the queue pair's secret), verifies the initiator's PROOF and RTR frame, and answers
 * RTR_ACK. A JOIN naming no queue pair, over the subflow limit, or with a proof that does not verify under
 * the fresh nonce (a replay) is refused; nothing about the queue pair changes until the proof verifies.
 *
 * <p>The first message decides the loop the rest runs on ({@link Host#route}): an OPEN goes to the loop its queue pair
 * will live on, a JOIN to its queue pair's. A handshake that read it on another loop lets go of the socket there
 * ({@link #detachSocket}) and the chosen loop {@linkplain #resume resumes} it from that message, with what is left of
 * its timeout. Owner thread of its loop.
 */
final class AcceptorHandshake extends SubflowHandshake {
    /** The listener's side. */
    interface Host {
        QpConfig config();

        /**
         * The loop a handshake whose first message is of {@code type} (for a JOIN naming {@code token}) must run on; an
         * OPEN's place there is claimed ({@link QpLoop#claim}), for the handshake to keep or give back.
         */
        QpLoop route(int type, long token);

        /** The handshake read its first message here and let go of its socket, for {@code target} to resume it. */
        void handedOff(AcceptorHandshake handshake, QpLoop target, DetachedSocket socket, byte[] first);

        /** Null to go on with this well-formed OPEN, or why the listener's admission refuses it. */
        String admit(QpProposal proposal);

        /** Whether as many queue pairs wait to be accepted as the listener holds: an OPEN is refused BUSY. */
        boolean isFull();

        /** The queue pair a JOIN names, or null. */
        QpEngine findByToken(long token);

        /** Creates a queue pair on {@code home} for a verified OPEN, not yet connected to any subflow. */
        QueuePair create(QpLoop home, Agreement agreement, long token, byte[] secret);

        /** The subflow is ready; {@code created} is the new queue pair of an OPEN, null for a JOIN. */
        void established(AcceptorHandshake handshake, QueuePair created);

        void failed(AcceptorHandshake handshake, Refusal cause, String reason);
    }

    private static final int TAG_HELLO = 1;
    private static final int TAG_CHALLENGE_SENT = 2;
    private static final int TAG_PROOF = 3;
    private static final int TAG_RTR_ACK_SENT = 4;
    private static final int TAG_REFUSE_SENT = 5;
    private static final long RTR_AT = HandshakeMessage.LENGTH;
    private static final long RTR_ACK_AT = HandshakeMessage.LENGTH + RTR_FRAME;

    private final Host host;
    /** The loop this handshake runs on. */
    final QpLoop home;
    private final String peer;
    private final InetSocketAddress peerAddress;
    /** What a failure from here on is counted as; set before each step that may fail. */
    private Refusal cause = Refusal.DISCONNECTED;
    private boolean heardHello;
    /** Whether the first message has been routed: it decided this handshake's loop. */
    private boolean routed;
    /** Whether this handshake holds a place claimed for an OPEN's queue pair on {@link #home}. */
    private boolean claimed;
    private final byte[] nonce = JoinSecret.randomBytes(HandshakeMessage.NONCE_LENGTH);
    /** The OPEN or JOIN as received and the CHALLENGE as sent: what both proofs cover. */
    private byte[] hello;
    private byte[] challenge;
    private boolean open;
    private String refusal;
    // Decided by the CHALLENGE.
    Agreement agreement;
    long token;
    byte[] secret;
    QpEngine joined;
    private QueuePair created;
    int subflowIndex = -1;
    int peerAckMsn;
    int peerCredit;

    /** A handshake of {@code socket} on {@code home}, to {@link #start} or {@link #resume}, bounded by {@code timeoutNanos}. */
    AcceptorHandshake(QpLoop home, int socket, InetSocketAddress peerAddress, String peer, Host host, long timeoutNanos) {
        super(home, socket, timeoutNanos);
        this.home = home;
        this.host = host;
        this.peer = peer;
        this.peerAddress = peerAddress;
    }

    /** Reads the first message. */
    void start() {
        receive(0, HandshakeMessage.LENGTH, TAG_HELLO);
    }

    /**
     * Goes on from {@code first}, the first message as another loop read it and routed it here; {@code claimed} says
     * whether it holds an OPEN's place on this loop.
     */
    void resume(byte[] first, boolean claimed) {
        MemorySegment.copy(first, 0, buffer, ValueLayout.JAVA_BYTE, 0, first.length);
        routed = true;
        this.claimed = claimed;
        onHello();
    }

    String peer() {
        return peer;
    }

    /** {@return where the connection comes from, or null if the socket could not say} */
    InetSocketAddress peerAddress() {
        return peerAddress;
    }

    /**
     * Whether the peer has sent its first message: a handshake that has not is the cheapest to lose (it cost the
     * peer nothing either, and a legitimate client sends its OPEN or JOIN at once).
     */
    boolean heardHello() {
        return heardHello;
    }

    @Override
    boolean expectsBytes(int tag) {
        return tag == TAG_HELLO || tag == TAG_PROOF;
    }

    @Override
    void step(int tag) {
        switch (tag) {
            case TAG_HELLO -> onHello();
            case TAG_CHALLENGE_SENT -> receive(0, HandshakeMessage.LENGTH + RTR_FRAME, TAG_PROOF);
            case TAG_PROOF -> onProof();
            case TAG_RTR_ACK_SENT -> onRtrAckSent();
            case TAG_REFUSE_SENT -> abort(refusal); // counted as the refusal's cause, set when it was sent
            default -> abort("unexpected completion " + tag);
        }
    }

    private void onHello() {
        heardHello = true;
        message.wrap(buffer, 0);
        String bad = message.malformed();
        if (bad != null) {
            cause = Refusal.MALFORMED;
            abort(bad); // not a zcnet peer: no answer
            return;
        }
        int type = message.type();
        if (!routed) {
            routed = true;
            QpLoop target = host.route(type, message.token());
            claimed = type == HandshakeMessage.OPEN;
            if (target != home) {
                handOff(target);
                return;
            }
        }
        byte[] peerNonce = message.nonce();
        hello = message.transcript();
        QpConfig config = host.config();
        if (type == HandshakeMessage.OPEN) {
            open = true;
            byte[] psk = config.preSharedKey();
            if (psk != null && (message.flags() & HandshakeMessage.FLAG_PSK) == 0) {
                refuse(Refusal.BAD_PROOF, HandshakeMessage.REASON_KEY_REQUIRED);
                return;
            }
            try {
                agreement = Agreement.of(config, message.segmentSize(), (message.flags() & HandshakeMessage.FLAG_ICRC) != 0,
                        message.messageWindow(), message.maxSubflows(), message.silenceMillis());
            } catch (IllegalArgumentException e) {
                refuse(Refusal.MALFORMED, HandshakeMessage.REASON_MALFORMED);
                return;
            }
            // Before a token, a secret or any part of a queue pair exists for it.
            if (host.isFull()) {
                refuse(Refusal.BUSY, HandshakeMessage.REASON_BUSY);
                return;
            }
            String refused = admission();
            if (refused != null) {
                refusal = "refused " + peer + " by the admission policy: " + refused;
                refuseWith(Refusal.NOT_ADMITTED, HandshakeMessage.REASON_NOT_ADMITTED);
                return;
            }
            token = JoinSecret.randomToken();
            subflowIndex = 0;
            message.clear(HandshakeMessage.CHALLENGE)
                    .flags(agreement.icrc() ? HandshakeMessage.FLAG_ICRC : 0)
                    .segmentSize(agreement.segmentSize())
                    .messageWindow(agreement.messageWindow())
                    .maxSubflows(agreement.maxSubflows())
                    .silenceMillis(agreement.silenceMillis())
                    .token(token)
                    .nonce(nonce);
            challenge = message.transcript();
            if (psk != null) {
                secret = JoinSecret.secret(psk, token, peerNonce, nonce);
                message.mac(JoinSecret.acceptorProof(psk, false, hello, challenge));
            } else {
                secret = JoinSecret.randomBytes(HandshakeMessage.MAC_LENGTH);
                message.mac(secret);
            }
        } else if (type == HandshakeMessage.JOIN) {
            token = message.token();
            joined = host.findByToken(token);
            if (joined == null || joined.state() == QpState.ERROR) {
                refuse(Refusal.BAD_JOIN, joined == null ? HandshakeMessage.REASON_UNKNOWN_TOKEN
                        : HandshakeMessage.REASON_QUEUE_PAIR_GONE);
                return;
            }
            subflowIndex = joined.reserveSubflow();
            if (subflowIndex < 0) {
                refuse(Refusal.BAD_JOIN, HandshakeMessage.REASON_SUBFLOW_LIMIT);
                return;
            }
            secret = joined.secret();
            message.clear(HandshakeMessage.CHALLENGE)
                    .token(token)
                    .subflow(subflowIndex)
                    .nonce(nonce);
            challenge = message.transcript();
            message.mac(JoinSecret.acceptorProof(secret, true, hello, challenge));
        } else {
            refuse(Refusal.MALFORMED, HandshakeMessage.REASON_MALFORMED);
            return;
        }
        send(0, HandshakeMessage.LENGTH, TAG_CHALLENGE_SENT);
    }

    /** Lets go of the socket here, for {@code target} to go on from the first message. */
    private void handOff(QpLoop target) {
        byte[] first = new byte[HandshakeMessage.LENGTH]; // once per handshake that moves: the control path
        MemorySegment.copy(buffer, ValueLayout.JAVA_BYTE, 0, first, 0, first.length);
        DetachedSocket moved;
        try {
            moved = detachSocket();
        } catch (IOException | RuntimeException e) {
            if (claimed) {
                target.unclaim();
                claimed = false;
            }
            failed("cannot move the connection to loop " + target.index() + ": " + e.getMessage());
            return;
        }
        host.handedOff(this, target, moved, first);
    }

    /** Whether this handshake claimed a place for an OPEN's queue pair (on its own loop, or the one it moved to). */
    boolean claimed() {
        return claimed;
    }

    /** The admission's answer for this OPEN; what it throws refuses the OPEN as its answer would. */
    private String admission() {
        QpProposal proposal = new QpProposal(peerAddress, message.segmentSize(),
                (message.flags() & HandshakeMessage.FLAG_ICRC) != 0, message.messageWindow(), message.maxSubflows(),
                message.silenceMillis(), (message.flags() & HandshakeMessage.FLAG_PSK) != 0);
        try {
            return host.admit(proposal);
        } catch (RuntimeException e) {
            return "the admission policy threw " + e;
        }
    }

    private void refuse(Refusal counted, int reason) {
        refusal = "refused " + peer + ": " + HandshakeMessage.reasonName(reason);
        refuseWith(counted, reason);
    }

    /** Sends REFUSE {@code reason} and closes; the failure is counted as {@code counted}. */
    private void refuseWith(Refusal counted, int reason) {
        cause = counted;
        message.clear(HandshakeMessage.REFUSE).reason(reason);
        send(0, HandshakeMessage.LENGTH, TAG_REFUSE_SENT);
    }

    private void onProof() {
        message.wrap(buffer, 0);
        String bad = message.malformed();
        if (bad == null && (message.type() != HandshakeMessage.PROOF || message.token() != token)) {
            bad = "expected PROOF for this token, got type " + message.type();
        }
        if (bad != null) {
            cause = Refusal.MALFORMED;
            abort(bad);
            return;
        }
        byte[] psk = host.config().preSharedKey();
        byte[] key = open ? (psk != null ? psk : secret) : secret;
        byte[] expected = JoinSecret.initiatorProof(key, !open, hello, challenge);
        if (!JoinSecret.matches(expected, message.mac())) {
            cause = Refusal.BAD_PROOF;
            abort("refused " + peer + ": " + HandshakeMessage.reasonName(HandshakeMessage.REASON_BAD_PROOF));
            return;
        }
        boolean icrc = open ? agreement.icrc() : joined.icrcEnabled();
        bad = checkRtr(RTR_AT, false, icrc);
        if (bad != null) {
            cause = Refusal.MALFORMED;
            abort(bad);
            return;
        }
        peerAckMsn = rtrMsn(RTR_AT);
        peerCredit = rtrCredit(RTR_AT);
        QueuePair created = null;
        if (open) {
            created = host.create(home, agreement, token, secret);
            joined = created.engine();
        } else if (joined.state() == QpState.ERROR) {
            cause = Refusal.BAD_JOIN;
            abort("refused " + peer + ": " + HandshakeMessage.reasonName(HandshakeMessage.REASON_QUEUE_PAIR_GONE));
            return;
        }
        this.created = created;
        cause = Refusal.DISCONNECTED;
        writeRtr(RTR_ACK_AT, true, joined.acknowledgedMsn(), joined.creditLimit(), icrc);
        send(RTR_ACK_AT, RTR_FRAME, TAG_RTR_ACK_SENT);
    }

    private void onRtrAckSent() {
        finish();
        host.established(this, created);
    }

    /** The listener gives this handshake up ({@link Refusal#HANDSHAKE_LIMIT}, {@link Refusal#CLOSED}). */
    void drop(Refusal counted, String reason) {
        cause = counted;
        abort(reason);
    }

    @Override
    void failed(String reason) {
        if (claimed && created == null) {
            home.unclaim(); // the OPEN's queue pair will not come
        }
        if (created != null) {
            created.engine().fail(WorkCompletion.TRANSPORT_ERROR, "first subflow failed: " + reason);
        } else if (joined != null && subflowIndex >= 0 && !open) {
            joined.releaseSubflow(subflowIndex);
        }
        host.failed(this, timedOut() ? Refusal.TIMED_OUT : cause, reason);
    }
}
