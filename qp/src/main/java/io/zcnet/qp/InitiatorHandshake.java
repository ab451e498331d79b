package io.zcnet.qp;

import java.net.InetSocketAddress;

/**
 * The connecting end of a subflow: connect, send OPEN (a new queue pair) or JOIN (another subflow of the
 * queue pair with {@code token}), check the acceptor's CHALLENGE (with a pre-shared key or for a join, its
 * proof of the key or secret), answer with PROOF and the RTR frame, and wait for RTR_ACK.
 *
 * <pre>
 *   initiator                        acceptor
 *   OPEN | JOIN(token)  nonce_i  ->
 *                                <-  CHALLENGE  nonce_a, params, token, subflow, mac_a
 *   PROOF mac_i + RTR frame      ->
 *                                <-  RTR_ACK frame
 * </pre>
 * Owner thread of the loop.
 */
final class InitiatorHandshake extends SubflowHandshake {
    /** What the connector learns. */
    interface Outcome {
        void established(InitiatorHandshake handshake);

        void failed(InitiatorHandshake handshake, String reason);
    }

    private static final int TAG_CONNECTED = 1;
    private static final int TAG_HELLO_SENT = 2;
    private static final int TAG_CHALLENGE = 3;
    private static final int TAG_PROOF_SENT = 4;
    private static final int TAG_RTR_ACK = 5;
    private static final long RTR_AT = HandshakeMessage.LENGTH;
    private static final long RTR_ACK_AT = HandshakeMessage.LENGTH + RTR_FRAME;

    final QpConfig config;
    final String path;
    private final QpEngine joining;
    private final Outcome outcome;
    private final byte[] nonce = JoinSecret.randomBytes(HandshakeMessage.NONCE_LENGTH);
    /** The OPEN or JOIN as sent, which both proofs cover. */
    private byte[] hello;
    // Learnt from the CHALLENGE.
    Agreement agreement;
    long token;
    byte[] secret;
    int subflowIndex;
    int peerAckMsn;
    int peerCredit;

    /**
     * @param joining null to open a new queue pair, or the engine of the queue pair to join (its token and
     *                secret are given)
     */
    InitiatorHandshake(QpLoop home, int socket, InetSocketAddress remote, String path, QpConfig config,
            QpEngine joining, long token, byte[] secret, Outcome outcome) {
        super(home, socket, config.handshakeTimeout().toNanos());
        this.config = config;
        this.path = path;
        this.joining = joining;
        this.token = token;
        this.secret = secret;
        this.outcome = outcome;
        loop.connect(handlerId, TAG_CONNECTED, socket, remote);
    }

    @Override
    boolean expectsBytes(int tag) {
        return tag == TAG_CHALLENGE || tag == TAG_RTR_ACK;
    }

    @Override
    void step(int tag) {
        switch (tag) {
            case TAG_CONNECTED -> sendHello();
            case TAG_HELLO_SENT -> receive(0, HandshakeMessage.LENGTH, TAG_CHALLENGE);
            case TAG_CHALLENGE -> onChallenge();
            case TAG_PROOF_SENT -> receive(RTR_ACK_AT, RTR_FRAME, TAG_RTR_ACK);
            case TAG_RTR_ACK -> onRtrAck();
            default -> abort("unexpected completion " + tag);
        }
    }

    private void sendHello() {
        message.wrap(buffer, 0).clear(joining == null ? HandshakeMessage.OPEN : HandshakeMessage.JOIN)
                .flags((config.icrc() ? HandshakeMessage.FLAG_ICRC : 0)
                        | (config.preSharedKey() != null ? HandshakeMessage.FLAG_PSK : 0))
                .segmentSize(config.segmentSize())
                .messageWindow(config.messageWindow())
                .maxSubflows(config.maxSubflows())
                .silenceMillis(joining == null ? config.silenceTimeout().toMillis() : 0)
                .token(joining == null ? 0 : token)
                .nonce(nonce);
        hello = message.transcript();
        send(0, HandshakeMessage.LENGTH, TAG_HELLO_SENT);
    }

    private void onChallenge() {
        message.wrap(buffer, 0);
        String bad = message.malformed();
        if (bad != null) {
            abort("acceptor answered garbage: " + bad);
            return;
        }
        if (message.type() == HandshakeMessage.REFUSE) {
            abort("refused by the acceptor: " + HandshakeMessage.reasonName(message.reason()));
            return;
        }
        if (message.type() != HandshakeMessage.CHALLENGE) {
            abort("expected CHALLENGE, got type " + message.type());
            return;
        }
        byte[] peerNonce = message.nonce();
        byte[] mac = message.mac();
        byte[] challenge = message.transcript();
        byte[] proofKey;
        if (joining == null) {
            try {
                agreement = Agreement.of(config, message.segmentSize(), (message.flags() & HandshakeMessage.FLAG_ICRC) != 0,
                        message.messageWindow(), message.maxSubflows(), message.silenceMillis());
            } catch (IllegalArgumentException e) {
                abort("acceptor's parameters are invalid: " + e.getMessage());
                return;
            }
            if (agreement.segmentSize() != message.segmentSize() || agreement.messageWindow() != message.messageWindow()
                    || agreement.icrc() != ((message.flags() & HandshakeMessage.FLAG_ICRC) != 0)
                    || agreement.maxSubflows() != message.maxSubflows()
                    || agreement.silenceMillis() != message.silenceMillis()) {
                abort("acceptor agreed to more than was proposed: " + agreement);
                return;
            }
            token = message.token();
            byte[] psk = config.preSharedKey();
            if (psk != null) {
                byte[] expected = JoinSecret.acceptorProof(psk, false, hello, challenge);
                if (!JoinSecret.matches(expected, mac)) {
                    abort("the acceptor could not prove the pre-shared key");
                    return;
                }
                secret = JoinSecret.secret(psk, token, nonce, peerNonce);
            } else {
                secret = mac;
            }
            proofKey = psk != null ? psk : secret;
            subflowIndex = 0;
        } else {
            if (message.token() != token) {
                abort("acceptor answered for another queue pair");
                return;
            }
            byte[] expected = JoinSecret.acceptorProof(secret, true, hello, challenge);
            if (!JoinSecret.matches(expected, mac)) {
                abort("the acceptor could not prove the queue pair's secret");
                return;
            }
            proofKey = secret;
            subflowIndex = message.subflow();
        }
        message.clear(HandshakeMessage.PROOF).token(token)
                .mac(JoinSecret.initiatorProof(proofKey, joining != null, hello, challenge));
        boolean icrc = joining == null ? agreement.icrc() : joining.icrcEnabled();
        int msn = joining == null ? 0xFFFF : joining.acknowledgedMsn();
        int credit = joining == null ? 0 : joining.creditLimit();
        writeRtr(RTR_AT, false, msn, credit, icrc);
        send(0, HandshakeMessage.LENGTH + RTR_FRAME, TAG_PROOF_SENT);
    }

    private void onRtrAck() {
        boolean icrc = joining == null ? agreement.icrc() : joining.icrcEnabled();
        String bad = checkRtr(RTR_ACK_AT, true, icrc);
        if (bad != null) {
            abort(bad);
            return;
        }
        peerAckMsn = rtrMsn(RTR_ACK_AT);
        peerCredit = rtrCredit(RTR_ACK_AT);
        finish();
        outcome.established(this);
    }

    @Override
    void failed(String reason) {
        outcome.failed(this, reason);
    }
}
