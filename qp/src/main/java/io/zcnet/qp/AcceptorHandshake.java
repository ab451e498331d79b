package io.zcnet.qp;

import io.zcnet.ring.EventLoop;

/**
 * The accepting end of a subflow (see {@link InitiatorHandshake} for the exchange): reads OPEN or JOIN,
 * answers CHALLENGE (agreed parameters and a new token and secret for an OPEN; for a JOIN the subflow index
 * and a proof of the queue pair's secret), verifies the initiator's PROOF and RTR frame, and answers
 * RTR_ACK. A JOIN naming no queue pair, over the subflow limit, or with a proof that does not verify under
 * the fresh nonce (a replay) is refused; nothing about the queue pair changes until the proof verifies.
 * Owner thread of the loop.
 */
final class AcceptorHandshake extends SubflowHandshake {
    /** The listener's side. */
    interface Host {
        QpConfig config();

        /** The queue pair a JOIN names, or null. */
        QpEngine findByToken(long token);

        /** Creates a queue pair for a verified OPEN, not yet connected to any subflow. */
        QueuePair create(Agreement agreement, long token, byte[] secret);

        /** The subflow is ready; {@code created} is the new queue pair of an OPEN, null for a JOIN. */
        void established(AcceptorHandshake handshake, QueuePair created);

        void failed(AcceptorHandshake handshake, String reason);
    }

    private static final int TAG_HELLO = 1;
    private static final int TAG_CHALLENGE_SENT = 2;
    private static final int TAG_PROOF = 3;
    private static final int TAG_RTR_ACK_SENT = 4;
    private static final int TAG_REFUSE_SENT = 5;
    private static final long RTR_AT = HandshakeMessage.LENGTH;
    private static final long RTR_ACK_AT = HandshakeMessage.LENGTH + RTR_FRAME;

    private final Host host;
    private final String peer;
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

    AcceptorHandshake(EventLoop loop, int socket, String peer, Host host) {
        super(loop, socket, host.config().handshakeTimeout().toNanos());
        this.host = host;
        this.peer = peer;
        receive(0, HandshakeMessage.LENGTH, TAG_HELLO);
    }

    String peer() {
        return peer;
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
            case TAG_REFUSE_SENT -> abort(refusal);
            default -> abort("unexpected completion " + tag);
        }
    }

    private void onHello() {
        message.wrap(buffer, 0);
        String bad = message.malformed();
        if (bad != null) {
            abort(bad); // not a zcnet peer: no answer
            return;
        }
        int type = message.type();
        byte[] peerNonce = message.nonce();
        hello = message.transcript();
        QpConfig config = host.config();
        if (type == HandshakeMessage.OPEN) {
            open = true;
            byte[] psk = config.preSharedKey();
            if (psk != null && (message.flags() & HandshakeMessage.FLAG_PSK) == 0) {
                refuse(HandshakeMessage.REASON_KEY_REQUIRED);
                return;
            }
            try {
                agreement = Agreement.of(config, message.segmentSize(), (message.flags() & HandshakeMessage.FLAG_ICRC) != 0,
                        message.messageWindow(), message.maxSubflows(), message.silenceMillis());
            } catch (IllegalArgumentException e) {
                refuse(HandshakeMessage.REASON_MALFORMED);
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
                refuse(joined == null ? HandshakeMessage.REASON_UNKNOWN_TOKEN : HandshakeMessage.REASON_QUEUE_PAIR_GONE);
                return;
            }
            subflowIndex = joined.reserveSubflow();
            if (subflowIndex < 0) {
                refuse(HandshakeMessage.REASON_SUBFLOW_LIMIT);
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
            refuse(HandshakeMessage.REASON_MALFORMED);
            return;
        }
        send(0, HandshakeMessage.LENGTH, TAG_CHALLENGE_SENT);
    }

    private void refuse(int reason) {
        refusal = "refused " + peer + ": " + HandshakeMessage.reasonName(reason);
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
            abort(bad);
            return;
        }
        byte[] psk = host.config().preSharedKey();
        byte[] key = open ? (psk != null ? psk : secret) : secret;
        byte[] expected = JoinSecret.initiatorProof(key, !open, hello, challenge);
        if (!JoinSecret.matches(expected, message.mac())) {
            abort("refused " + peer + ": " + HandshakeMessage.reasonName(HandshakeMessage.REASON_BAD_PROOF));
            return;
        }
        boolean icrc = open ? agreement.icrc() : joined.icrcEnabled();
        bad = checkRtr(RTR_AT, false, icrc);
        if (bad != null) {
            abort(bad);
            return;
        }
        peerAckMsn = rtrMsn(RTR_AT);
        peerCredit = rtrCredit(RTR_AT);
        QueuePair created = null;
        if (open) {
            created = host.create(agreement, token, secret);
            joined = created.engine();
        } else if (joined.state() == QpState.ERROR) {
            abort("refused " + peer + ": " + HandshakeMessage.reasonName(HandshakeMessage.REASON_QUEUE_PAIR_GONE));
            return;
        }
        this.created = created;
        writeRtr(RTR_ACK_AT, true, joined.acknowledgedMsn(), joined.creditLimit(), icrc);
        send(RTR_ACK_AT, RTR_FRAME, TAG_RTR_ACK_SENT);
    }

    private void onRtrAckSent() {
        finish();
        host.established(this, created);
    }

    @Override
    void failed(String reason) {
        if (created != null) {
            created.engine().fail(WorkCompletion.TRANSPORT_ERROR, "first subflow failed: " + reason);
        } else if (joined != null && subflowIndex >= 0 && !open) {
            joined.releaseSubflow(subflowIndex);
        }
        host.failed(this, reason);
    }
}
