package io.zcnet.collective;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

import static io.zcnet.collective.NacaHeader.U16;
import static io.zcnet.collective.NacaHeader.U32;
import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

/**
 * The 48-byte body of a NACA JOIN (docs/wire-format.md, section 20.3): what a rank asks of the aggregator
 * and the proof that it holds its job's secret. The proof is {@link MembershipProof} under the label
 * {@code zcnet-naca-join} over the aggregator's CHALLENGE nonce and the 48 bytes of header and body that
 * precede it, so a recorded JOIN is good for no other connection and no field under it can be changed.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |         slots wanted          |        reserved (zero)        |  0
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                      chunk bytes wanted                       |  4
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                  result region's remote key                   |  8
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                        reserved (zero)                        | 12
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                  proof (32 bytes, HMAC-SHA256)                | 16
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * Offsets are from the start of the body, {@link NacaHeader#LENGTH} bytes into the message. Stateless.
 */
final class NacaJoin {

    static final StructLayout LAYOUT = MemoryLayout.structLayout(
            U16.withName("slots"),
            U16.withName("reserved0"),
            U32.withName("chunk_bytes"),
            U32.withName("result_key"),
            U32.withName("reserved1"),
            MemoryLayout.sequenceLayout(MembershipProof.LENGTH, ValueLayout.JAVA_BYTE).withName("proof"));
    static final int LENGTH = (int) LAYOUT.byteSize();
    static final int NONCE_BYTES = MembershipProof.NONCE_BYTES;
    static final String LABEL = "zcnet-naca-join";
    static final long SLOTS = LAYOUT.byteOffset(groupElement("slots"));
    static final long RESERVED0 = LAYOUT.byteOffset(groupElement("reserved0"));
    static final long CHUNK_BYTES = LAYOUT.byteOffset(groupElement("chunk_bytes"));
    static final long RESULT_KEY = LAYOUT.byteOffset(groupElement("result_key"));
    static final long RESERVED1 = LAYOUT.byteOffset(groupElement("reserved1"));
    static final long PROOF = LAYOUT.byteOffset(groupElement("proof"));
    /** The bytes of the message the proof covers: the header and the body up to the proof. */
    static final int PROVEN_BYTES = NacaHeader.LENGTH + (int) PROOF;

    private NacaJoin() {
    }

    static int slots(MemorySegment m, long body) {
        return Short.toUnsignedInt(m.get(U16, body + SLOTS));
    }

    static long chunkBytes(MemorySegment m, long body) {
        return Integer.toUnsignedLong(m.get(U32, body + CHUNK_BYTES));
    }

    static int resultKey(MemorySegment m, long body) {
        return m.get(U32, body + RESULT_KEY);
    }

    /** Writes the body after a JOIN header at {@code message}, proof included. */
    static void write(MemorySegment m, long message, int slots, int chunkBytes, int resultKey, byte[] secret,
            byte[] nonce) {
        long body = message + NacaHeader.LENGTH;
        m.set(U16, body + SLOTS, (short) slots);
        m.set(U16, body + RESERVED0, (short) 0);
        m.set(U32, body + CHUNK_BYTES, chunkBytes);
        m.set(U32, body + RESULT_KEY, resultKey);
        m.set(U32, body + RESERVED1, 0);
        byte[] proof = MembershipProof.of(secret, LABEL, nonce, proven(m, message));
        MemorySegment.copy(proof, 0, m, ValueLayout.JAVA_BYTE, body + PROOF, proof.length);
    }

    /** Null when the body's rules hold and the proof is right under {@code secret}; else why not. */
    static String check(MemorySegment m, long message, byte[] secret, byte[] nonce) {
        long body = message + NacaHeader.LENGTH;
        if (m.get(U16, body + RESERVED0) != 0 || m.get(U32, body + RESERVED1) != 0) {
            return "a reserved field of the JOIN body is not zero";
        }
        if (slots(m, body) < 1) {
            return "the JOIN asks for no slot";
        }
        if (chunkBytes(m, body) < 64 || chunkBytes(m, body) > NacaHeader.MAX_CHUNK_BYTES) {
            return "the JOIN's chunk of " + chunkBytes(m, body) + " bytes is outside 64.." + NacaHeader.MAX_CHUNK_BYTES;
        }
        byte[] proof = m.asSlice(body + PROOF, MembershipProof.LENGTH).toArray(ValueLayout.JAVA_BYTE);
        if (!MembershipProof.holds(secret, LABEL, nonce, proven(m, message), proof)) {
            return secret == null ? "the JOIN carries a proof, but this job has no secret"
                    : "the JOIN's proof of the job secret is wrong";
        }
        return null;
    }

    private static byte[] proven(MemorySegment m, long message) {
        return m.asSlice(message, PROVEN_BYTES).toArray(ValueLayout.JAVA_BYTE);
    }
}
