package io.zcnet.ring.sys;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * A flyweight over one {@code struct io_uring_sqe} (64 bytes, {@code include/uapi/linux/io_uring.h})
 * in the mapped SQE array: {@link #wrap} it at an entry, which zeroes the entry (as liburing's
 * {@code io_uring_initialize_sqe} does, so no field of a previous request leaks into the next), then
 * set the fields the opcode uses.
 *
 * <pre>
 *  0       1       2               4                               8
 * +-------+-------+---------------+-------------------------------+
 * |opcode | flags |    ioprio     |              fd               |  0
 * +-------+-------+---------------+-------------------------------+
 * |            off / addr2 / {cmd_op, __pad1}                     |  8
 * +---------------------------------------------------------------+
 * |            addr / splice_off_in / {level, optname}            | 16
 * +-------------------------------+-------------------------------+
 * |              len              | op flags (msg_flags, ...)     | 24
 * +-------------------------------+-------------------------------+
 * |                          user_data                            | 32
 * +---------------+---------------+-------------------------------+
 * |buf_index/group|  personality  | file_index / {addr_len, pad3} | 40
 * +---------------+---------------+-------------------------------+
 * |                 addr3 / attr_ptr / optval                     | 48
 * +---------------------------------------------------------------+
 * |                 __pad2[0] / attr_type_mask                    | 56
 * +---------------------------------------------------------------+
 * </pre>
 *
 * Setters take {@code int}s and store the field's width; flags are never narrowed before they reach
 * the store. Not thread-safe: one flyweight per ring, used by its owner thread.
 */
public final class Sqe {

    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            JAVA_BYTE.withName("opcode"),
            JAVA_BYTE.withName("flags"),
            JAVA_SHORT.withName("ioprio"),
            JAVA_INT.withName("fd"),
            MemoryLayout.unionLayout(
                    JAVA_LONG.withName("off"),
                    JAVA_LONG.withName("addr2"),
                    MemoryLayout.structLayout(JAVA_INT.withName("cmd_op"), JAVA_INT.withName("__pad1"))
                            .withName("cmd")).withName("u1"),
            MemoryLayout.unionLayout(
                    JAVA_LONG.withName("addr"),
                    JAVA_LONG.withName("splice_off_in"),
                    MemoryLayout.structLayout(JAVA_INT.withName("level"), JAVA_INT.withName("optname"))
                            .withName("sockopt")).withName("u2"),
            JAVA_INT.withName("len"),
            MemoryLayout.unionLayout(
                    JAVA_INT.withName("rw_flags"),
                    JAVA_INT.withName("msg_flags"),
                    JAVA_INT.withName("accept_flags"),
                    JAVA_INT.withName("timeout_flags"),
                    JAVA_INT.withName("cancel_flags"),
                    JAVA_INT.withName("uring_cmd_flags"),
                    JAVA_INT.withName("nop_flags")).withName("op_flags"),
            JAVA_LONG.withName("user_data"),
            MemoryLayout.unionLayout(
                    JAVA_SHORT.withName("buf_index"),
                    JAVA_SHORT.withName("buf_group")).withName("u4"),
            JAVA_SHORT.withName("personality"),
            MemoryLayout.unionLayout(
                    JAVA_INT.withName("splice_fd_in"),
                    JAVA_INT.withName("file_index"),
                    JAVA_INT.withName("zcrx_ifq_idx"),
                    JAVA_INT.withName("optlen"),
                    MemoryLayout.structLayout(JAVA_SHORT.withName("addr_len"), JAVA_SHORT.withName("__pad3"))
                            .withName("addr")).withName("u5"),
            MemoryLayout.unionLayout(
                    JAVA_LONG.withName("addr3"),
                    JAVA_LONG.withName("attr_ptr"),
                    JAVA_LONG.withName("optval")).withName("u6"),
            MemoryLayout.unionLayout(
                    JAVA_LONG.withName("__pad2"),
                    JAVA_LONG.withName("attr_type_mask")).withName("u7"));

    public static final long SIZE = LAYOUT.byteSize();

    public static final long OPCODE = LAYOUT.byteOffset(groupElement("opcode"));
    public static final long FLAGS = LAYOUT.byteOffset(groupElement("flags"));
    public static final long IOPRIO = LAYOUT.byteOffset(groupElement("ioprio"));
    public static final long FD = LAYOUT.byteOffset(groupElement("fd"));
    public static final long OFF = LAYOUT.byteOffset(groupElement("u1"), groupElement("off"));
    public static final long ADDR2 = LAYOUT.byteOffset(groupElement("u1"), groupElement("addr2"));
    public static final long CMD_OP = LAYOUT.byteOffset(groupElement("u1"), groupElement("cmd"),
            groupElement("cmd_op"));
    public static final long ADDR = LAYOUT.byteOffset(groupElement("u2"), groupElement("addr"));
    public static final long LEVEL = LAYOUT.byteOffset(groupElement("u2"), groupElement("sockopt"),
            groupElement("level"));
    public static final long OPTNAME = LAYOUT.byteOffset(groupElement("u2"), groupElement("sockopt"),
            groupElement("optname"));
    public static final long LEN = LAYOUT.byteOffset(groupElement("len"));
    public static final long OP_FLAGS = LAYOUT.byteOffset(groupElement("op_flags"));
    public static final long MSG_FLAGS = LAYOUT.byteOffset(groupElement("op_flags"), groupElement("msg_flags"));
    public static final long USER_DATA = LAYOUT.byteOffset(groupElement("user_data"));
    public static final long BUF_INDEX = LAYOUT.byteOffset(groupElement("u4"), groupElement("buf_index"));
    public static final long BUF_GROUP = LAYOUT.byteOffset(groupElement("u4"), groupElement("buf_group"));
    public static final long PERSONALITY = LAYOUT.byteOffset(groupElement("personality"));
    public static final long FILE_INDEX = LAYOUT.byteOffset(groupElement("u5"), groupElement("file_index"));
    public static final long ZCRX_IFQ_IDX = LAYOUT.byteOffset(groupElement("u5"), groupElement("zcrx_ifq_idx"));
    public static final long OPTLEN = LAYOUT.byteOffset(groupElement("u5"), groupElement("optlen"));
    public static final long ADDR_LEN = LAYOUT.byteOffset(groupElement("u5"), groupElement("addr"),
            groupElement("addr_len"));
    public static final long ADDR3 = LAYOUT.byteOffset(groupElement("u6"), groupElement("addr3"));
    public static final long OPTVAL = LAYOUT.byteOffset(groupElement("u6"), groupElement("optval"));
    public static final long PAD2 = LAYOUT.byteOffset(groupElement("u7"), groupElement("__pad2"));

    private MemorySegment segment;
    private long base;

    /** Points this flyweight at the entry at {@code offset} in {@code sqes} and zeroes all 64 bytes. */
    public Sqe wrap(MemorySegment sqes, long offset) {
        this.segment = sqes;
        this.base = offset;
        for (long i = 0; i < SIZE; i += 8) {
            sqes.set(JAVA_LONG, offset + i, 0L);
        }
        return this;
    }

    /**
     * Points this flyweight at an entry without clearing it, to amend a field of an entry prepared
     * earlier (e.g. to add {@code IOSQE_IO_LINK}).
     */
    public Sqe reopen(MemorySegment sqes, long offset) {
        this.segment = sqes;
        this.base = offset;
        return this;
    }

    /**
     * The common shape of most requests (liburing's {@code io_uring_prep_rw}): opcode, fd, address,
     * length and offset.
     */
    public Sqe prepare(int opcode, int fd, long addr, int len, long off) {
        segment.set(JAVA_BYTE, base + OPCODE, (byte) opcode);
        segment.set(JAVA_INT, base + FD, fd);
        segment.set(JAVA_LONG, base + ADDR, addr);
        segment.set(JAVA_INT, base + LEN, len);
        segment.set(JAVA_LONG, base + OFF, off);
        return this;
    }

    /** The opcode currently set. */
    public int opcode() {
        return segment.get(JAVA_BYTE, base + OPCODE) & 0xFF;
    }

    public Sqe opcode(int opcode) {
        segment.set(JAVA_BYTE, base + OPCODE, (byte) opcode);
        return this;
    }

    /** Sets the IOSQE_* flags, replacing what was there. */
    public Sqe flags(int iosqeFlags) {
        segment.set(JAVA_BYTE, base + FLAGS, (byte) iosqeFlags);
        return this;
    }

    /** Adds IOSQE_* flags to those already set. */
    public Sqe addFlags(int iosqeFlags) {
        segment.set(JAVA_BYTE, base + FLAGS, (byte) (flags() | iosqeFlags));
        return this;
    }

    /** The IOSQE_* flags currently set. */
    public int flags() {
        return segment.get(JAVA_BYTE, base + FLAGS) & 0xFF;
    }

    /** The {@code ioprio} field: send/recv/accept modifier flags. */
    public Sqe ioprio(int ioprio) {
        segment.set(JAVA_SHORT, base + IOPRIO, (short) ioprio);
        return this;
    }

    public Sqe fd(int fd) {
        segment.set(JAVA_INT, base + FD, fd);
        return this;
    }

    /** {@code off}, also {@code addr2}. */
    public Sqe off(long off) {
        segment.set(JAVA_LONG, base + OFF, off);
        return this;
    }

    public Sqe addr(long addr) {
        segment.set(JAVA_LONG, base + ADDR, addr);
        return this;
    }

    public Sqe len(int len) {
        segment.set(JAVA_INT, base + LEN, len);
        return this;
    }

    /** The per-opcode flags word: {@code msg_flags}, {@code accept_flags}, {@code timeout_flags}, ... */
    public Sqe opFlags(int flags) {
        segment.set(JAVA_INT, base + OP_FLAGS, flags);
        return this;
    }

    public Sqe userData(long userData) {
        segment.set(JAVA_LONG, base + USER_DATA, userData);
        return this;
    }

    /** The {@code user_data} currently set. */
    public long userData() {
        return segment.get(JAVA_LONG, base + USER_DATA);
    }

    /** {@code buf_index} (fixed buffer) or {@code buf_group} (provided buffers): a u16. */
    public Sqe bufIndex(int index) {
        segment.set(JAVA_SHORT, base + BUF_INDEX, (short) index);
        return this;
    }

    /** {@code file_index}: a direct-descriptor slot plus one, or {@link IoUring#FILE_INDEX_ALLOC}. */
    public Sqe fileIndex(int fileIndex) {
        segment.set(JAVA_INT, base + FILE_INDEX, fileIndex);
        return this;
    }

    /** {@code zcrx_ifq_idx}: the zcrx queue ({@code zcrx_id} from its registration) a RECV_ZC receives into. */
    public Sqe zcrxIfqIdx(int zcrxId) {
        segment.set(JAVA_INT, base + ZCRX_IFQ_IDX, zcrxId);
        return this;
    }

    public Sqe addr3(long addr3) {
        segment.set(JAVA_LONG, base + ADDR3, addr3);
        return this;
    }

    /** {@code cmd_op} of an {@code URING_CMD} (e.g. {@code SOCKET_URING_OP_SETSOCKOPT}). */
    public Sqe cmdOp(int cmdOp) {
        segment.set(JAVA_INT, base + CMD_OP, cmdOp);
        return this;
    }

    /** {@code level}/{@code optname}/{@code optval}/{@code optlen} of a socket {@code URING_CMD}. */
    public Sqe sockopt(int level, int optname, long optval, int optlen) {
        segment.set(JAVA_INT, base + LEVEL, level);
        segment.set(JAVA_INT, base + OPTNAME, optname);
        segment.set(JAVA_LONG, base + OPTVAL, optval);
        segment.set(JAVA_INT, base + OPTLEN, optlen);
        return this;
    }
}
