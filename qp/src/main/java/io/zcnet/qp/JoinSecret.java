package io.zcnet.qp;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The proofs a subflow's handshake exchanges, MPTCP-style (RFC 8684 section 3.2): HMAC-SHA256 under the
 * queue pair's secret (or, for the first subflow with a pre-shared key, under that key) over a label and the
 * two messages that open the handshake, fresh nonces included, so a proof cannot be replayed into another
 * handshake, a token alone (which a join names in the clear) admits nobody, and a parameter changed on the
 * way is caught (as TLS's Finished covers its transcript). Each label says which side proves what, so one side's
 * proof is never valid as the other's. Control path only.
 */
final class JoinSecret {
    private static final SecureRandom RANDOM = new SecureRandom();
    /**
     * One HMAC engine per thread (in practice the loop's, which runs every handshake of its context), keyed anew for
     * each proof: looking the algorithm up among the providers costs more than the HMAC itself.
     */
    private static final ThreadLocal<Mac> MAC = ThreadLocal.withInitial(() -> {
        try {
            return Mac.getInstance("HmacSHA256");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    });

    private JoinSecret() {
    }

    static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }

    /** A random token that is not 0 (0 means "none" in an OPEN). */
    static long randomToken() {
        long t;
        do {
            t = RANDOM.nextLong();
        } while (t == 0);
        return t;
    }

    /**
     * The queue pair's secret when the first subflow opened with a pre-shared key: derived from it and both
     * nonces, never sent. (Without a key the acceptor draws it at random and sends it as its CHALLENGE's mac.)
     */
    static byte[] secret(byte[] preSharedKey, long token, byte[] initiatorNonce, byte[] acceptorNonce) {
        return hmac(preSharedKey, "zcnet-secret", token, initiatorNonce, acceptorNonce);
    }

    /**
     * The acceptor's proof in its CHALLENGE: under the pre-shared key answering an OPEN, under the queue
     * pair's secret answering a JOIN; over the handshake's transcript: the initiator's message, then the
     * CHALLENGE itself, each as {@link HandshakeMessage#transcript()} gives it. So every field either side sent
     * (parameters, token, subflow index, nonces) is covered: one changed on the way fails the proof.
     */
    static byte[] acceptorProof(byte[] key, boolean join, byte[] hello, byte[] challenge) {
        return hmac(key, join ? "zcnet-join-a" : "zcnet-open-a", hello, challenge);
    }

    /**
     * The initiator's proof in its PROOF: under the pre-shared key (or, without one, the secret) for an OPEN,
     * under the secret for a JOIN; over the same transcript as {@link #acceptorProof}, under its own label.
     */
    static byte[] initiatorProof(byte[] key, boolean join, byte[] hello, byte[] challenge) {
        return hmac(key, join ? "zcnet-join-i" : "zcnet-open-i", hello, challenge);
    }

    /** HMAC-SHA256 under {@code key} of the ASCII label, the token (8 bytes, big-endian) and both nonces. */
    private static byte[] hmac(byte[] key, String label, long token, byte[] first, byte[] second) {
        return hmac(key, label, ByteBuffer.allocate(8).putLong(token).array(), first, second);
    }

    /** HMAC-SHA256 under {@code key} of the ASCII label followed by {@code parts}. */
    private static byte[] hmac(byte[] key, String label, byte[]... parts) {
        Mac mac = MAC.get();
        try {
            mac.init(new SecretKeySpec(key, "HmacSHA256")); // resets it, whatever an earlier call left
            mac.update(label.getBytes(StandardCharsets.US_ASCII));
            for (byte[] part : parts) {
                mac.update(part);
            }
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 takes a key of any length", e);
        }
    }

    /** Constant-time comparison, so a wrong proof's timing says nothing about the right one. */
    static boolean matches(byte[] expected, byte[] actual) {
        return MessageDigest.isEqual(expected, actual);
    }
}
