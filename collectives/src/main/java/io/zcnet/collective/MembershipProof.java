package io.zcnet.collective;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.nio.charset.StandardCharsets;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * What a rank shows the rendezvous store to prove it belongs to the job: HMAC-SHA256 under the job secret
 * ({@link CommunicatorConfig#jobSecret()}) of a label, the store's fresh nonce and the rank's opening header,
 * as the queue pairs' handshake proves its pre-shared key (the qp module's {@code JoinSecret}). The secret
 * never crosses the wire; the nonce makes a proof good for one connection only, so a recorded one cannot
 * be replayed; the header under the proof keeps the rank and size from being changed on the way. Its label
 * differs from every label of the queue pairs', which share the key. Control path; stateless, thread-safe.
 */
final class MembershipProof {
    static final int NONCE_BYTES = 16;
    static final int LENGTH = 32;
    private static final byte[] LABEL = "zcnet-rendezvous-rank".getBytes(StandardCharsets.US_ASCII);
    private static final SecureRandom RANDOM = new SecureRandom();

    private MembershipProof() {
    }

    static byte[] nonce() {
        byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        return nonce;
    }

    /** The proof under {@code secret}; without one, {@value #LENGTH} zero bytes, which prove nothing. */
    static byte[] of(byte[] secret, byte[] nonce, byte[] header) {
        return of(secret, LABEL, nonce, header);
    }

    /**
     * The proof under {@code secret} with another label, for another use of the same secret (the NACA JOIN
     * to an aggregator, {@link NacaJoin}); without a secret, {@value #LENGTH} zero bytes.
     */
    static byte[] of(byte[] secret, String label, byte[] nonce, byte[] header) {
        return of(secret, label.getBytes(StandardCharsets.US_ASCII), nonce, header);
    }

    private static byte[] of(byte[] secret, byte[] label, byte[] nonce, byte[] header) {
        if (secret == null) {
            return new byte[LENGTH];
        }
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            mac.update(label);
            mac.update(nonce);
            mac.update(header);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }

    /** Constant-time, so a wrong proof's timing says nothing about the right one. */
    static boolean holds(byte[] secret, byte[] nonce, byte[] header, byte[] proof) {
        return MessageDigest.isEqual(of(secret, nonce, header), proof);
    }

    /** {@link #holds(byte[], byte[], byte[], byte[])} for a proof under {@code label}. */
    static boolean holds(byte[] secret, String label, byte[] nonce, byte[] header, byte[] proof) {
        return MessageDigest.isEqual(of(secret, label, nonce, header), proof);
    }
}
