package io.zcnet.qp;

import io.zcnet.framing.SgeList;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The byte layouts of the entries in a queue pair's three rings (native byte order: the rings never leave
 * the process; a completion's {@code byte_len}, which shares a word with the three bytes before it,
 * little-endian), and the code that writes and reads them. A send or receive entry ends in its scatter/gather
 * list, room for as many elements as the queue pair allows ({@link QpConfig#maxSendSge()},
 * {@link QpConfig#maxReceiveSge()}), each laid out as verbs' {@code struct ibv_sge}; with the defaults (2
 * and 1) the entries are 64 and 32 bytes. A send entry with inline data ({@code signaled} bit 7) holds its
 * bytes where the list would be, {@code num_sge} saying how many, so the list's room grows to
 * {@link QpConfig#maxInlineData()} where that is larger.
 *
 * <pre>
 * send queue entry (32 + 16 * max_send_sge)     receive queue entry (16 + 16 * max_recv_sge)
 *  0  wr_id          u64                          0  wr_id             u64
 *  8  opcode u8 | signaled u8 | num_sge u16       8  num_sge u16 | pad u16 | pad u32
 * 12  imm_data       u32                         16  sg_list[max_recv_sge]
 * 16  rkey           u32 | pad u32
 * 24  remote_offset  u64                        completion entry (32 bytes)
 * 32  sg_list[max_send_sge]                       0  wr_id      u64
 *                                                 8  status u8 | opcode u8 | with_imm u8 | pad u8
 * sg_list element (16 bytes, struct ibv_sge)     12  byte_len   u32
 *  0  offset u64 (ibv_sge.addr: in the region)   16  imm_data   u32
 *  8  length u32                                 20  qp_slot    u32 (the queue pair, in its ring's members)
 * 12  lkey   u32                                 24  (pad)
 * </pre>
 * {@code signaled}: 0 unsignaled, 1 signaled, 2 signaled lazily ({@link WorkRequest#signaledLazily()}), plus
 * {@code 0x80} when the entry carries inline data.
 */
final class QueueEntries {
    static final int COMPLETION_ENTRY = 32;
    private static final int SEND_HEADER = 32;
    private static final int RECEIVE_HEADER = 16;
    private static final int SGE = 16;
    private static final int UNSIGNALED = 0;
    private static final int SIGNALED = 1;
    private static final int SIGNALED_LAZILY = 2;
    private static final int INLINE = 0x80;

    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED;
    /** A completion's bytes 8-15, status to byte_len, as one word: little-endian, so byte 8 is its lowest. */
    private static final ValueLayout.OfLong U64_LE = U64.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED;
    private static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;

    private QueueEntries() {
    }

    /** Bytes of a send queue entry with room for {@code maxSge} elements or {@code maxInline} bytes of inline data. */
    static int sendEntry(int maxSge, int maxInline) {
        return SEND_HEADER + Math.max(SGE * maxSge, (maxInline + SGE - 1) / SGE * SGE);
    }

    /** Bytes of a receive queue entry with room for {@code maxSge} elements. */
    static int receiveEntry(int maxSge) {
        return RECEIVE_HEADER + SGE * maxSge;
    }

    /** Writes a send entry; inline data is copied into it, its length checked by the caller against the room. */
    static void writeSend(MemorySegment m, long at, WorkRequest wr) {
        int signal = !wr.signaled ? UNSIGNALED : wr.lazy ? SIGNALED_LAZILY : SIGNALED;
        m.set(U64, at, wr.workRequestId);
        m.set(U8, at + 8, (byte) wr.opcode);
        m.set(U8, at + 9, (byte) (wr.inline ? signal | INLINE : signal));
        m.set(U32, at + 12, wr.immediate);
        m.set(U32, at + 16, wr.rkey);
        m.set(U64, at + 24, wr.remoteOffset);
        if (wr.inline) {
            int length = (int) wr.length(); // inline: at most maxInlineData, which postSend checked
            m.set(U16, at + 10, (short) length);
            MemorySegment.copy(wr.sges.segment(0), wr.sges.offset(0), m, at + SEND_HEADER, length);
        } else {
            writeSges(m, at + 10, at + SEND_HEADER, wr.sges);
        }
    }

    /**
     * Reads a send entry: its fields into {@code into}, its elements into {@code sges} (read once, straight
     * to where they stay while the work request is outstanding). Inline data is copied to {@code inlineAt} of
     * {@code inlineData}, where the work request keeps it, and {@code sges} names it as memory.
     */
    static void readSend(MemorySegment m, long at, WorkRequest into, SgeList sges, MemorySegment inlineData,
            long inlineAt) {
        into.workRequestId = m.get(U64, at);
        into.opcode = m.get(U8, at + 8);
        int signal = m.get(U8, at + 9) & 0xFF;
        into.inline = (signal & INLINE) != 0;
        signal &= ~INLINE;
        into.signaled = signal != UNSIGNALED;
        into.lazy = signal == SIGNALED_LAZILY;
        into.immediate = m.get(U32, at + 12);
        into.rkey = m.get(U32, at + 16);
        into.remoteOffset = m.get(U64, at + 24);
        if (into.inline) {
            int length = Short.toUnsignedInt(m.get(U16, at + 10));
            MemorySegment.copy(m, at + SEND_HEADER, inlineData, inlineAt, length);
            sges.clear().add(inlineData, inlineAt, length);
        } else {
            readSges(m, at + 10, at + SEND_HEADER, sges);
        }
    }

    /** A receive of one element: the common case, written without a holder. */
    static void writeReceive(MemorySegment m, long at, long workRequestId, int lkey, long offset, int length) {
        m.set(U64, at, workRequestId);
        m.set(U16, at + 8, (short) 1);
        writeSge(m, at + RECEIVE_HEADER, lkey, offset, length);
    }

    static void writeReceive(MemorySegment m, long at, ReceiveRequest rr) {
        m.set(U64, at, rr.workRequestId);
        writeSges(m, at + 8, at + RECEIVE_HEADER, rr.sges);
    }

    static long receiveId(MemorySegment m, long at) {
        return m.get(U64, at);
    }

    /** Fills {@code into} with the receive's elements, by key. */
    static void readReceive(MemorySegment m, long at, SgeList into) {
        readSges(m, at + 8, at + RECEIVE_HEADER, into);
    }

    private static void writeSges(MemorySegment m, long countAt, long listAt, SgeList sges) {
        int n = sges.count();
        m.set(U16, countAt, (short) n);
        for (int i = 0; i < n; i++) {
            writeSge(m, listAt + (long) SGE * i, sges.key(i), sges.offset(i), (int) sges.length(i));
        }
    }

    private static void writeSge(MemorySegment m, long at, int lkey, long offset, int length) {
        m.set(U64, at, offset);
        m.set(U32, at + 8, length);
        m.set(U32, at + 12, lkey);
    }

    private static void readSges(MemorySegment m, long countAt, long listAt, SgeList into) {
        into.clear();
        int n = Short.toUnsignedInt(m.get(U16, countAt));
        for (int i = 0; i < n; i++) {
            long sge = listAt + (long) SGE * i;
            into.add(m.get(U32, sge + 12), m.get(U64, sge), Integer.toUnsignedLong(m.get(U32, sge + 8)));
        }
    }

    /** Writes a completion entry: bytes 8-15 as one little-endian word, so four stores instead of seven. */
    static void writeCompletion(MemorySegment m, long at, int slot, long workRequestId, int status, int opcode,
            int byteCount, boolean withImmediate, int immediate) {
        m.set(U64, at, workRequestId);
        m.set(U64_LE, at + 8, status & 0xFF | (opcode & 0xFF) << 8 | (withImmediate ? 1 : 0) << 16
                | (long) byteCount << 32);
        m.set(U32, at + 16, immediate);
        m.set(U32, at + 20, slot);
    }

    /** {@return the slot of the queue pair a completion entry names, in its ring's member table} */
    static int completionSlot(MemorySegment m, long at) {
        return m.get(U32, at + 20);
    }

    /** Reads a completion entry, three loads for six fields: it is read once per completion polled. */
    static void readCompletion(MemorySegment m, long at, WorkCompletion into) {
        into.workRequestId = m.get(U64, at);
        long word = m.get(U64_LE, at + 8);
        into.status = (byte) word;
        into.opcode = (byte) (word >>> 8);
        into.hasImmediate = (byte) (word >>> 16) != 0;
        into.byteCount = (int) (word >>> 32);
        into.immediate = m.get(U32, at + 16);
    }
}
