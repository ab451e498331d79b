package io.zcnet.framing;

/**
 * Frame opcodes: the IBTA reliable-connection opcode values (InfiniBand Architecture Specification,
 * vol. 1, table "OpCode field", RC transport) that wire format v1 uses, and their properties.
 *
 * <p>Opcodes stay plain {@code int}s so decoding a hostile byte never allocates or throws: every query
 * accepts any {@code int} and answers {@code false} (or {@link #NO_EXTENSION}-like neutral values) for an
 * opcode outside the table. Stateless, thread-safe.
 */
public final class Opcode {

    /** First frame of a SEND of several frames. */
    public static final int SEND_FIRST = 0x00;
    /** A frame between the first and the last of a SEND. */
    public static final int SEND_MIDDLE = 0x01;
    /** Last frame of a SEND of several frames. */
    public static final int SEND_LAST = 0x02;
    /** Last frame of a SEND with immediate data, which it carries. */
    public static final int SEND_LAST_WITH_IMMEDIATE = 0x03;
    /** A SEND of one frame. */
    public static final int SEND_ONLY = 0x04;
    /** A SEND with immediate data, of one frame. */
    public static final int SEND_ONLY_WITH_IMMEDIATE = 0x05;
    /** First frame of an RDMA WRITE message of several frames. */
    public static final int RDMA_WRITE_FIRST = 0x06;
    /** A frame between the first and the last of an RDMA WRITE message. */
    public static final int RDMA_WRITE_MIDDLE = 0x07;
    /** Last frame of an RDMA WRITE message of several frames. */
    public static final int RDMA_WRITE_LAST = 0x08;
    /** Last frame of an RDMA WRITE with immediate data: it carries the immediate and consumes a receive. */
    public static final int RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x09;
    /** An RDMA WRITE message of one frame. */
    public static final int RDMA_WRITE_ONLY = 0x0A;
    /** An RDMA WRITE with immediate data, of one frame. */
    public static final int RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x0B;
    /** An RDMA READ request: one frame with a {@link ReadRequestExtension}, no payload. */
    public static final int RDMA_READ_REQUEST = 0x0C;
    /** First frame of a READ RESPONSE message of several frames. */
    public static final int RDMA_READ_RESPONSE_FIRST = 0x0D;
    /** A frame between the first and the last of a READ RESPONSE message. */
    public static final int RDMA_READ_RESPONSE_MIDDLE = 0x0E;
    /** Last frame of a READ RESPONSE message of several frames. */
    public static final int RDMA_READ_RESPONSE_LAST = 0x0F;
    /** A READ RESPONSE message of one frame. */
    public static final int RDMA_READ_RESPONSE_ONLY = 0x10;
    /** Cumulative acknowledgement and credit ({@code msn}, {@code imm_data}); with a syndrome, a NAK. */
    public static final int ACKNOWLEDGE = 0x11;

    /**
     * Several whole SENDs in one frame ({@link PackedSends}): zcnet's own opcode, from the range IBTA leaves to
     * manufacturers (0xC0 - 0xFF), since IBTA has no such frame.
     */
    public static final int SEND_PACKED = 0xC0;

    /** Number of IBTA opcode values in use, {@code 0 .. COUNT - 1}; {@link #SEND_PACKED} is valid beside them. */
    public static final int COUNT = 0x12;
    /** Where {@link #SEND_PACKED} sits in the tables below, after the IBTA values. */
    private static final int PACKED_ROW = COUNT;

    /** Extension length of opcodes without an extension. */
    public static final int NO_EXTENSION = 0;

    // Message kinds: every frame of one message has the same kind.
    /** SEND without immediate data: consumes a posted receive. */
    public static final int KIND_SEND = 1;
    /** SEND with immediate data on its last frame: consumes a posted receive. */
    public static final int KIND_SEND_WITH_IMMEDIATE = 2;
    /** Tagged RDMA WRITE: placed into a registered region, no receive consumed, no completion. */
    public static final int KIND_WRITE = 3;
    /** Tagged RDMA WRITE whose last frame carries immediate data: consumes a posted receive. */
    public static final int KIND_WRITE_WITH_IMMEDIATE = 4;
    /** RDMA READ request: one frame, answered by a READ RESPONSE message. */
    public static final int KIND_READ_REQUEST = 5;
    /** RDMA READ response: tagged, placed into the requester's sink region. */
    public static final int KIND_READ_RESPONSE = 6;
    /** ACKNOWLEDGE: flow-control frame, not part of any message. */
    public static final int KIND_ACKNOWLEDGE = 7;

    // Per-opcode property bits, one table lookup per query.
    private static final int FIRST = 1;        // starts a message
    private static final int LAST = 1 << 1;     // ends a message
    private static final int IMMEDIATE = 1 << 2;

    private static final String[] NAMES = {
        "SEND_FIRST", "SEND_MIDDLE", "SEND_LAST", "SEND_LAST_WITH_IMMEDIATE", "SEND_ONLY",
        "SEND_ONLY_WITH_IMMEDIATE", "RDMA_WRITE_FIRST", "RDMA_WRITE_MIDDLE", "RDMA_WRITE_LAST",
        "RDMA_WRITE_LAST_WITH_IMMEDIATE", "RDMA_WRITE_ONLY", "RDMA_WRITE_ONLY_WITH_IMMEDIATE",
        "RDMA_READ_REQUEST", "RDMA_READ_RESPONSE_FIRST", "RDMA_READ_RESPONSE_MIDDLE",
        "RDMA_READ_RESPONSE_LAST", "RDMA_READ_RESPONSE_ONLY", "ACKNOWLEDGE", "SEND_PACKED"
    };

    private static final byte[] PROPERTIES = {
        FIRST, 0, LAST, LAST | IMMEDIATE, FIRST | LAST, FIRST | LAST | IMMEDIATE,
        FIRST, 0, LAST, LAST | IMMEDIATE, FIRST | LAST, FIRST | LAST | IMMEDIATE,
        FIRST | LAST,
        FIRST, 0, LAST, FIRST | LAST,
        FIRST | LAST,
        FIRST | LAST
    };

    private static final byte[] KINDS = {
        KIND_SEND, KIND_SEND, KIND_SEND, KIND_SEND_WITH_IMMEDIATE, KIND_SEND, KIND_SEND_WITH_IMMEDIATE,
        KIND_WRITE, KIND_WRITE, KIND_WRITE, KIND_WRITE_WITH_IMMEDIATE, KIND_WRITE, KIND_WRITE_WITH_IMMEDIATE,
        KIND_READ_REQUEST,
        KIND_READ_RESPONSE, KIND_READ_RESPONSE, KIND_READ_RESPONSE, KIND_READ_RESPONSE,
        KIND_ACKNOWLEDGE,
        KIND_SEND
    };

    // Frames that consume a posted receive name it: every SEND frame, and the last frame of a WRITE with
    // immediate (the only one that says the WRITE consumes one).
    private static final int[] EXTENSION_LENGTHS = {
        UntaggedExtension.LENGTH, UntaggedExtension.LENGTH, UntaggedExtension.LENGTH, UntaggedExtension.LENGTH,
        UntaggedExtension.LENGTH, UntaggedExtension.LENGTH,
        TaggedExtension.LENGTH, TaggedExtension.LENGTH, TaggedExtension.LENGTH, TaggedExtension.LENGTH_WITH_RSN,
        TaggedExtension.LENGTH, TaggedExtension.LENGTH_WITH_RSN,
        ReadRequestExtension.LENGTH,
        TaggedExtension.LENGTH, TaggedExtension.LENGTH, TaggedExtension.LENGTH, TaggedExtension.LENGTH,
        NO_EXTENSION,
        UntaggedExtension.LENGTH
    };

    private Opcode() {
    }

    /**
     * {@return whether {@code opcode} is one of the values above}
     *
     * @param opcode any int
     */
    public static boolean isValid(int opcode) {
        return row(opcode) >= 0;
    }

    /** {@return the opcode's row in the tables, or -1 for a value that is none of the above} */
    private static int row(int opcode) {
        if (opcode >= 0 && opcode < COUNT) {
            return opcode;
        }
        return opcode == SEND_PACKED ? PACKED_ROW : -1;
    }

    /**
     * {@return whether the frame is a {@link #SEND_PACKED}: several messages, which no per-message query below
     * describes on its own}
     *
     * @param opcode any int
     */
    public static boolean isPacked(int opcode) {
        return opcode == SEND_PACKED;
    }

    /**
     * {@return the constant's name, or {@code UNKNOWN(0x..)}; allocates, meant for diagnostics}
     *
     * @param opcode any int
     */
    public static String name(int opcode) {
        return isValid(opcode) ? NAMES[row(opcode)] : "UNKNOWN(0x" + Integer.toHexString(opcode) + ")";
    }

    /**
     * {@return the opcode whose {@link #name} is {@code name}, or -1}
     *
     * @param name a name as {@link #name} gives it
     */
    public static int valueOf(String name) {
        for (int i = 0; i < NAMES.length; i++) {
            if (NAMES[i].equals(name)) {
                return i == PACKED_ROW ? SEND_PACKED : i;
            }
        }
        return -1;
    }

    /**
     * {@return the extension bytes the opcode requires, or -1 for an invalid opcode: 0 (ACKNOWLEDGE), 4 (SEND_*: the
     * RSN), 12 (the other WRITE and all READ RESPONSE frames: rkey and region offset), 16 (the last frame of
     * a WRITE with immediate: rkey, region offset and the RSN) or 28 (READ REQUEST)}
     *
     * @param opcode any int
     */
    public static int extensionLength(int opcode) {
        return isValid(opcode) ? EXTENSION_LENGTHS[row(opcode)] : -1;
    }

    /**
     * {@return where the frame's extension holds the RSN of the posted receive its message consumes, or -1 if the
     * frame carries none: {@link UntaggedExtension#RSN_OFFSET} on every SEND frame,
     * {@link TaggedExtension#RSN_OFFSET} on RDMA_WRITE_LAST_WITH_IMMEDIATE and RDMA_WRITE_ONLY_WITH_IMMEDIATE}
     * A frame names a receive exactly when its own {@link #kind} consumes one: the first frames of a WRITE
     * with immediate are plain WRITE frames.
     *
     * @param opcode any int
     */
    public static int rsnOffset(int opcode) {
        return switch (kind(opcode)) {
            case KIND_SEND, KIND_SEND_WITH_IMMEDIATE -> (int) UntaggedExtension.RSN_OFFSET;
            case KIND_WRITE_WITH_IMMEDIATE -> (int) TaggedExtension.RSN_OFFSET;
            default -> -1;
        };
    }

    /**
     * {@return the message kind ({@code KIND_*}), or 0 for an invalid opcode}
     *
     * @param opcode any int
     */
    public static int kind(int opcode) {
        return isValid(opcode) ? KINDS[row(opcode)] : 0;
    }

    /**
     * {@return whether a frame with this opcode starts a message (FIRST or ONLY, the read request, ACKNOWLEDGE)}
     *
     * @param opcode any int
     */
    public static boolean isFirst(int opcode) {
        return isValid(opcode) && (PROPERTIES[row(opcode)] & FIRST) != 0;
    }

    /**
     * {@return whether a frame with this opcode ends a message (LAST or ONLY, the read request, ACKNOWLEDGE)}
     *
     * @param opcode any int
     */
    public static boolean isLast(int opcode) {
        return isValid(opcode) && (PROPERTIES[row(opcode)] & LAST) != 0;
    }

    /**
     * {@return whether the frame carries immediate data in {@code imm_data}}
     *
     * @param opcode any int
     */
    public static boolean hasImmediate(int opcode) {
        return isValid(opcode) && (PROPERTIES[row(opcode)] & IMMEDIATE) != 0;
    }

    /**
     * {@return whether the frame carries a {@link TaggedExtension} (RDMA WRITE and READ RESPONSE frames)}
     *
     * @param opcode any int
     */
    public static boolean isTagged(int opcode) {
        int kind = kind(opcode);
        return kind == KIND_WRITE || kind == KIND_WRITE_WITH_IMMEDIATE || kind == KIND_READ_RESPONSE;
    }

    /**
     * {@return whether messages of this kind consume a posted receive (SEND, SEND and WRITE with immediate)}
     *
     * @param kind a {@code KIND_*} value
     */
    public static boolean consumesReceive(int kind) {
        return kind == KIND_SEND || kind == KIND_SEND_WITH_IMMEDIATE || kind == KIND_WRITE_WITH_IMMEDIATE;
    }

    /**
     * The opcode of a frame of a message of {@code kind}, given where it sits in the message; used by the
     * segmenter. Kinds without segments ({@link #KIND_READ_REQUEST}, {@link #KIND_ACKNOWLEDGE}) map to
     * their single opcode.
     */
    static int forSegment(int kind, boolean first, boolean last) {
        int base;
        switch (kind) {
            case KIND_SEND, KIND_SEND_WITH_IMMEDIATE -> base = SEND_FIRST;
            case KIND_WRITE, KIND_WRITE_WITH_IMMEDIATE -> base = RDMA_WRITE_FIRST;
            case KIND_READ_RESPONSE -> {
                return first ? (last ? RDMA_READ_RESPONSE_ONLY : RDMA_READ_RESPONSE_FIRST)
                        : (last ? RDMA_READ_RESPONSE_LAST : RDMA_READ_RESPONSE_MIDDLE);
            }
            case KIND_READ_REQUEST -> {
                return RDMA_READ_REQUEST;
            }
            case KIND_ACKNOWLEDGE -> {
                return ACKNOWLEDGE;
            }
            default -> throw new IllegalArgumentException("unknown message kind " + kind);
        }
        boolean immediate = kind == KIND_SEND_WITH_IMMEDIATE || kind == KIND_WRITE_WITH_IMMEDIATE;
        // FIRST, MIDDLE, LAST, LAST_WITH_IMMEDIATE, ONLY, ONLY_WITH_IMMEDIATE follow each other in IBTA order.
        if (first && last) {
            return base + (immediate ? 5 : 4);
        }
        if (first) {
            return base;
        }
        return last ? base + (immediate ? 3 : 2) : base + 1;
    }
}
