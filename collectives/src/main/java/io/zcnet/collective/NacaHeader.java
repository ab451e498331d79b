package io.zcnet.collective;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Flyweight over the 32-byte header of a network-assisted collective (NACA) message between a rank and an
 * {@link Aggregator} (docs/wire-format.md, section 20): what an aggregation node needs to act on a chunk
 * without any state of the sender's. It is the first 32 bytes of the message's payload: of a SEND from a rank
 * (JOIN, CHUNK) or from the aggregator (CHALLENGE, ACCEPT, REFUSE), and of the WRITE with immediate that puts
 * a RESULT into the rank's result slot. The body, {@code length} bytes, follows it. All integers big-endian.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |  magic 0x4e   |   version 1   |     type      |     flags     |  0
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |              job              |  collective   | dtype | redop |  4
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |             ranks             |             rank              |  8
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |             slot              |        reserved (zero)        | 12
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                           sequence                            | 16
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                      length (body bytes)                      | 20
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                           operation                           | 24
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                        reserved (zero)                        | 28
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *   flags: bit 0 RESEND, bit 1 FALLBACK, bits 2-7 reserved
 * </pre>
 *
 * <p>{@link #validate} checks every field against the rules of its type before anything acts on it; the
 * aggregator and the ranks call it on every message they receive, so a hostile or confused peer is refused
 * with a reason instead of reducing garbage. Not thread-safe: one instance per thread, re-pointed with
 * {@link #wrap}. Nothing allocates but the reason of a refusal.
 */
public final class NacaHeader {

    static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;
    static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /** The header as a struct, from which every offset below is derived. */
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            U8.withName("magic"),
            U8.withName("version"),
            U8.withName("type"),
            U8.withName("flags"),
            U16.withName("job"),
            U8.withName("collective"),
            U8.withName("dtype_redop"),
            U16.withName("ranks"),
            U16.withName("rank"),
            U16.withName("slot"),
            U16.withName("reserved0"),
            U32.withName("sequence"),
            U32.withName("length"),
            U32.withName("operation"),
            U32.withName("reserved1"));

    /** Size of the header in bytes. */
    public static final int LENGTH = (int) LAYOUT.byteSize();
    /** The first byte of every NACA header, {@code 'N'}. */
    public static final int MAGIC = 0x4e;
    /** The version this code speaks. */
    public static final int VERSION = 1;

    /** Aggregator to a rank that has just connected: a fresh 16-byte nonce to prove the job secret over. */
    public static final int CHALLENGE = 1;
    /** Rank to aggregator: this rank joins its job (body: slots, chunk size, result key, proof). */
    public static final int JOIN = 2;
    /** Aggregator to every rank once the whole job has joined: what it was granted (body: slots, chunk size, what it reduces). */
    public static final int ACCEPT = 3;
    /** Aggregator to a rank: no (more) aggregation for this job; the body says why in UTF-8. */
    public static final int REFUSE = 4;
    /** Rank to aggregator: the rank's contribution to one chunk, into the slot it names. */
    public static final int CHUNK = 5;
    /** Aggregator to a rank, by WRITE with immediate into its result slot: the reduced chunk. */
    public static final int RESULT = 6;

    /** {@code flags} bit 0, on CHUNK: sent before, to an aggregator that may have counted it; never counted twice. */
    public static final int FLAG_RESEND = 1;
    /** {@code flags} bit 1, on REFUSE: the job cannot be aggregated here (quota, type); reduce on the hosts. */
    public static final int FLAG_FALLBACK = 1 << 1;
    private static final int FLAGS_KNOWN = FLAG_RESEND | FLAG_FALLBACK;

    /** {@code collective} of a CHUNK or RESULT: an allreduce (the only one aggregated so far). */
    public static final int COLLECTIVE_ALLREDUCE = 1;
    /** Most ranks of one job: a slot's contributors are one bit each of a 64-bit word. */
    public static final int MAX_RANKS = 64;
    /** Longest body of a REFUSE. */
    public static final int MAX_REASON_BYTES = 200;
    /** Largest CHUNK or RESULT body, 8 MiB (the largest communicator slot). */
    public static final int MAX_CHUNK_BYTES = CommunicatorConfig.MAX_SLOT_BYTES;

    /** Offset of {@code magic} (u8). */
    public static final long MAGIC_OFFSET = offset("magic");
    /** Offset of {@code version} (u8). */
    public static final long VERSION_OFFSET = offset("version");
    /** Offset of {@code type} (u8). */
    public static final long TYPE_OFFSET = offset("type");
    /** Offset of {@code flags} (u8). */
    public static final long FLAGS_OFFSET = offset("flags");
    /** Offset of {@code job} (u16). */
    public static final long JOB_OFFSET = offset("job");
    /** Offset of {@code collective} (u8). */
    public static final long COLLECTIVE_OFFSET = offset("collective");
    /** Offset of the byte holding {@code dtype} (bits 7-4) and {@code redop} (bits 3-0). */
    public static final long DTYPE_REDOP_OFFSET = offset("dtype_redop");
    /** Offset of {@code ranks} (u16). */
    public static final long RANKS_OFFSET = offset("ranks");
    /** Offset of {@code rank} (u16). */
    public static final long RANK_OFFSET = offset("rank");
    /** Offset of {@code slot} (u16). */
    public static final long SLOT_OFFSET = offset("slot");
    /** Offset of the first reserved field (u16). */
    public static final long RESERVED0_OFFSET = offset("reserved0");
    /** Offset of {@code sequence} (u32). */
    public static final long SEQUENCE_OFFSET = offset("sequence");
    /** Offset of {@code length} (u32). */
    public static final long LENGTH_OFFSET = offset("length");
    /** Offset of {@code operation} (u32). */
    public static final long OPERATION_OFFSET = offset("operation");
    /** Offset of the second reserved field (u32). */
    public static final long RESERVED1_OFFSET = offset("reserved1");

    /** The codes' types and reductions, by code less one: {@code values()} would copy its array on every call. */
    private static final DataType[] DATA_TYPES = DataType.values();
    private static final ReduceOp[] REDUCTIONS = ReduceOp.values();

    private MemorySegment segment;
    private long base;

    /** A flyweight pointing nowhere yet: {@link #wrap} it before use. */
    public NacaHeader() {
    }

    private static long offset(String field) {
        return LAYOUT.byteOffset(groupElement(field));
    }

    /**
     * Points this flyweight at {@code segment} from {@code offset}.
     *
     * @param segment the memory holding the header
     * @param offset  where the header starts
     * @return this flyweight
     * @throws IllegalArgumentException if fewer than {@link #LENGTH} bytes remain there
     */
    public NacaHeader wrap(MemorySegment segment, long offset) {
        if (offset < 0 || segment.byteSize() - offset < LENGTH) {
            throw new IllegalArgumentException("a NACA header needs " + LENGTH + " bytes at offset " + offset
                    + " of a " + segment.byteSize() + "-byte segment");
        }
        this.segment = segment;
        this.base = offset;
        return this;
    }

    // ---------------------------------------------------------------- reading

    /** {@return the magic byte} */
    public int magic() {
        return u8(MAGIC_OFFSET);
    }

    /** {@return the version} */
    public int version() {
        return u8(VERSION_OFFSET);
    }

    /** {@return the message type, {@link #CHALLENGE} .. {@link #RESULT} when valid} */
    public int type() {
        return u8(TYPE_OFFSET);
    }

    /** {@return the flags byte} */
    public int flags() {
        return u8(FLAGS_OFFSET);
    }

    /** {@return the job number} */
    public int job() {
        return u16(JOB_OFFSET);
    }

    /** {@return the collective operation, {@link #COLLECTIVE_ALLREDUCE} on chunks and results, else 0} */
    public int collective() {
        return u8(COLLECTIVE_OFFSET);
    }

    /** {@return the data type code ({@link #dataTypeCode}), 0 on control messages} */
    public int dataType() {
        return u8(DTYPE_REDOP_OFFSET) >>> 4;
    }

    /** {@return the reduction code ({@link #reductionCode}), 0 on control messages} */
    public int reduction() {
        return u8(DTYPE_REDOP_OFFSET) & 0xF;
    }

    /** {@return the number of ranks of the job} */
    public int ranks() {
        return u16(RANKS_OFFSET);
    }

    /** {@return the sender's rank, or on a message of the aggregator's, the rank it is for} */
    public int rank() {
        return u16(RANK_OFFSET);
    }

    /** {@return the slot the chunk occupies at the aggregator} */
    public int slot() {
        return u16(SLOT_OFFSET);
    }

    /** {@return the chunk's sequence number in the job, unsigned 32 bits} */
    public long sequence() {
        return Integer.toUnsignedLong(segment.get(U32, base + SEQUENCE_OFFSET));
    }

    /** {@return the body bytes that follow the header, unsigned 32 bits} */
    public long length() {
        return Integer.toUnsignedLong(segment.get(U32, base + LENGTH_OFFSET));
    }

    /** {@return the number of the job's operation the chunk belongs to, unsigned 32 bits} */
    public long operation() {
        return Integer.toUnsignedLong(segment.get(U32, base + OPERATION_OFFSET));
    }

    private int u8(long field) {
        return Byte.toUnsignedInt(segment.get(U8, base + field));
    }

    private int u16(long field) {
        return Short.toUnsignedInt(segment.get(U16, base + field));
    }

    // ---------------------------------------------------------------- writing

    /**
     * Writes a whole header: magic, version, reserved fields zero, and the fields given.
     *
     * @param type       the message type
     * @param flags      the flags
     * @param job        the job number, 0 .. 65535
     * @param collective the collective, or 0
     * @param dataType   the data type code, or 0
     * @param reduction  the reduction code, or 0
     * @param ranks      the job's ranks, 0 .. 65535
     * @param rank       the rank, 0 .. 65535
     * @param slot       the slot, 0 .. 65535
     * @param sequence   the chunk sequence, unsigned 32 bits
     * @param length     the body bytes
     * @param operation  the operation number, unsigned 32 bits
     * @return this flyweight
     * @throws IllegalArgumentException if a value does not fit its field
     */
    public NacaHeader write(int type, int flags, int job, int collective, int dataType, int reduction, int ranks,
            int rank, int slot, long sequence, long length, long operation) {
        fits(type, 0xFF, "type");
        fits(flags, 0xFF, "flags");
        fits(job, 0xFFFF, "job");
        fits(collective, 0xFF, "collective");
        fits(dataType, 0xF, "dtype");
        fits(reduction, 0xF, "redop");
        fits(ranks, 0xFFFF, "ranks");
        fits(rank, 0xFFFF, "rank");
        fits(slot, 0xFFFF, "slot");
        fits(sequence, 0xFFFF_FFFFL, "sequence");
        fits(length, 0xFFFF_FFFFL, "length");
        fits(operation, 0xFFFF_FFFFL, "operation");
        segment.set(U8, base + MAGIC_OFFSET, (byte) MAGIC);
        segment.set(U8, base + VERSION_OFFSET, (byte) VERSION);
        segment.set(U8, base + TYPE_OFFSET, (byte) type);
        segment.set(U8, base + FLAGS_OFFSET, (byte) flags);
        segment.set(U16, base + JOB_OFFSET, (short) job);
        segment.set(U8, base + COLLECTIVE_OFFSET, (byte) collective);
        segment.set(U8, base + DTYPE_REDOP_OFFSET, (byte) (dataType << 4 | reduction));
        segment.set(U16, base + RANKS_OFFSET, (short) ranks);
        segment.set(U16, base + RANK_OFFSET, (short) rank);
        segment.set(U16, base + SLOT_OFFSET, (short) slot);
        segment.set(U16, base + RESERVED0_OFFSET, (short) 0);
        segment.set(U32, base + SEQUENCE_OFFSET, (int) sequence);
        segment.set(U32, base + LENGTH_OFFSET, (int) length);
        segment.set(U32, base + OPERATION_OFFSET, (int) operation);
        segment.set(U32, base + RESERVED1_OFFSET, 0);
        return this;
    }

    private static void fits(long value, long max, String field) {
        if (value < 0 || value > max) {
            throw new IllegalArgumentException(field + " " + value + " outside 0.." + max);
        }
    }

    // ---------------------------------------------------------------- validation

    /**
     * Checks the header against the rules of docs/wire-format.md, section 20.2, for a message of
     * {@code messageBytes} (header and body) as it arrived.
     *
     * @param messageBytes the bytes the message's completion counted
     * @return null when every rule holds, else which one broke
     */
    public String validate(long messageBytes) {
        if (magic() != MAGIC) {
            return "magic 0x" + Integer.toHexString(magic()) + " is not 0x4e";
        }
        if (version() != VERSION) {
            return "version " + version() + " is not " + VERSION;
        }
        int type = type();
        if (type < CHALLENGE || type > RESULT) {
            return "type " + type + " is unknown";
        }
        if ((flags() & ~FLAGS_KNOWN) != 0 || (flags() & FLAG_RESEND) != 0 && type != CHUNK
                || (flags() & FLAG_FALLBACK) != 0 && type != REFUSE) {
            return "flags 0x" + Integer.toHexString(flags()) + " are not allowed on " + typeName(type);
        }
        if (segment.get(U16, base + RESERVED0_OFFSET) != 0 || segment.get(U32, base + RESERVED1_OFFSET) != 0) {
            return "a reserved field is not zero";
        }
        if (messageBytes != LENGTH + length()) {
            return "length " + length() + " does not match the " + messageBytes + "-byte message";
        }
        boolean data = type == CHUNK || type == RESULT;
        if (data) {
            if (collective() != COLLECTIVE_ALLREDUCE) {
                return "collective " + collective() + " is not ALLREDUCE (1)";
            }
            if (dataType() < 1 || dataType() > DATA_TYPES.length) {
                return "dtype " + dataType() + " is unknown";
            }
            if (reduction() < 1 || reduction() > REDUCTIONS.length) {
                return "redop " + reduction() + " is unknown";
            }
            int element = dataType(dataType()).byteSize();
            if (length() == 0 || length() > MAX_CHUNK_BYTES || length() % element != 0) {
                return "length " + length() + " is not 1.." + MAX_CHUNK_BYTES + " bytes of whole "
                        + dataType(dataType()) + " elements";
            }
        } else if (collective() != 0 || u8(DTYPE_REDOP_OFFSET) != 0 || slot() != 0 || sequence() != 0
                || operation() != 0) {
            return typeName(type) + " carries a collective, dtype, redop, slot, sequence or operation";
        }
        if (type == CHALLENGE) {
            if (job() != 0 || ranks() != 0 || rank() != 0) {
                return "CHALLENGE names a job, ranks or rank";
            }
        } else if (ranks() < 1 || ranks() > MAX_RANKS || rank() >= ranks()) {
            return "rank " + rank() + " of " + ranks() + " ranks is outside 1.." + MAX_RANKS + " ranks";
        }
        return switch (type) {
            case CHALLENGE -> length() == NacaJoin.NONCE_BYTES ? null : "CHALLENGE body is not 16 bytes";
            case JOIN -> length() == NacaJoin.LENGTH ? null : "JOIN body is not " + NacaJoin.LENGTH + " bytes";
            case ACCEPT -> length() == NacaGrant.LENGTH ? null : "ACCEPT body is not " + NacaGrant.LENGTH + " bytes";
            case REFUSE -> length() >= 1 && length() <= MAX_REASON_BYTES ? null
                    : "REFUSE reason is not 1.." + MAX_REASON_BYTES + " bytes";
            default -> null;
        };
    }

    // ---------------------------------------------------------------- codes

    /**
     * {@return the name of message type {@code type}, or {@code TYPE_n} for an unknown one}
     *
     * @param type the {@code type} field
     */
    public static String typeName(int type) {
        return switch (type) {
            case CHALLENGE -> "CHALLENGE";
            case JOIN -> "JOIN";
            case ACCEPT -> "ACCEPT";
            case REFUSE -> "REFUSE";
            case CHUNK -> "CHUNK";
            case RESULT -> "RESULT";
            default -> "TYPE_" + type;
        };
    }

    /**
     * {@return the wire code of {@code type}: its position in {@link DataType} plus one (FLOAT 1 .. FLOAT16 6)}
     *
     * @param type the data type
     */
    public static int dataTypeCode(DataType type) {
        return type.ordinal() + 1;
    }

    /**
     * {@return the data type of wire code {@code code}}
     *
     * @param code 1 .. 6
     * @throws IllegalArgumentException for any other code
     */
    public static DataType dataType(int code) {
        if (code < 1 || code > DATA_TYPES.length) {
            throw new IllegalArgumentException("dtype " + code + " is unknown");
        }
        return DATA_TYPES[code - 1];
    }

    /**
     * {@return the wire code of {@code op}: its position in {@link ReduceOp} plus one (SUM 1 .. MAX 4)}
     *
     * @param op the reduction
     */
    public static int reductionCode(ReduceOp op) {
        return op.ordinal() + 1;
    }

    /**
     * {@return the reduction of wire code {@code code}}
     *
     * @param code 1 .. 4
     * @throws IllegalArgumentException for any other code
     */
    public static ReduceOp reduction(int code) {
        if (code < 1 || code > REDUCTIONS.length) {
            throw new IllegalArgumentException("redop " + code + " is unknown");
        }
        return REDUCTIONS[code - 1];
    }

    @Override
    public String toString() {
        if (segment == null) {
            return "NacaHeader[unwrapped]";
        }
        return "NACA " + typeName(type()) + " flags=0x" + Integer.toHexString(flags()) + " job=" + job() + " rank="
                + rank() + "/" + ranks() + " slot=" + slot() + " seq=" + sequence() + " op=" + operation() + " len="
                + length();
    }
}
