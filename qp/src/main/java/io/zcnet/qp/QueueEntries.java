package io.zcnet.qp;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The byte layouts of the entries in a queue pair's three rings (native byte order: the rings never leave
 * the process), and the code that writes and reads them.
 *
 * <pre>
 * send queue entry (64 bytes)             receive queue entry (32 bytes)   completion entry (32 bytes)
 *  0  wr_id          u64                   0  wr_id   u64                   0  wr_id      u64
 *  8  opcode u8 | signaled u8 | pad u16    8  lkey    u32                   8  status u8 | opcode u8 | with_imm u8 | pad u8
 * 12  imm_data       u32                  12  length  u32                  12  byte_len   u32
 * 16  lkey           u32                  16  offset  u64                  16  imm_data   u32
 * 20  length         u32                  24  (pad)                        20  (pad)
 * 24  local_offset   u64
 * 32  rkey           u32 | pad u32
 * 40  remote_offset  u64
 * 48  (pad)
 * </pre>
 */
final class QueueEntries {
    static final int SEND_ENTRY = 64;
    static final int RECEIVE_ENTRY = 32;
    static final int COMPLETION_ENTRY = 32;

    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;

    private QueueEntries() {
    }

    static void writeSend(MemorySegment m, long at, WorkRequest wr) {
        m.set(U64, at, wr.workRequestId);
        m.set(U8, at + 8, (byte) wr.opcode);
        m.set(U8, at + 9, (byte) (wr.signaled ? 1 : 0));
        m.set(U32, at + 12, wr.immediate);
        m.set(U32, at + 16, wr.lkey);
        m.set(U32, at + 20, wr.length);
        m.set(U64, at + 24, wr.localOffset);
        m.set(U32, at + 32, wr.rkey);
        m.set(U64, at + 40, wr.remoteOffset);
    }

    static void readSend(MemorySegment m, long at, WorkRequest into) {
        into.workRequestId = m.get(U64, at);
        into.opcode = m.get(U8, at + 8);
        into.signaled = m.get(U8, at + 9) != 0;
        into.immediate = m.get(U32, at + 12);
        into.lkey = m.get(U32, at + 16);
        into.length = m.get(U32, at + 20);
        into.localOffset = m.get(U64, at + 24);
        into.rkey = m.get(U32, at + 32);
        into.remoteOffset = m.get(U64, at + 40);
    }

    static void writeReceive(MemorySegment m, long at, long workRequestId, int lkey, long offset, int length) {
        m.set(U64, at, workRequestId);
        m.set(U32, at + 8, lkey);
        m.set(U32, at + 12, length);
        m.set(U64, at + 16, offset);
    }

    static long receiveId(MemorySegment m, long at) {
        return m.get(U64, at);
    }

    static int receiveKey(MemorySegment m, long at) {
        return m.get(U32, at + 8);
    }

    static int receiveLength(MemorySegment m, long at) {
        return m.get(U32, at + 12);
    }

    static long receiveOffset(MemorySegment m, long at) {
        return m.get(U64, at + 16);
    }

    static void writeCompletion(MemorySegment m, long at, long workRequestId, int status, int opcode, int byteCount,
            boolean withImmediate, int immediate) {
        m.set(U64, at, workRequestId);
        m.set(U8, at + 8, (byte) status);
        m.set(U8, at + 9, (byte) opcode);
        m.set(U8, at + 10, (byte) (withImmediate ? 1 : 0));
        m.set(U32, at + 12, byteCount);
        m.set(U32, at + 16, immediate);
    }

    static void readCompletion(MemorySegment m, long at, WorkCompletion into) {
        into.workRequestId = m.get(U64, at);
        into.status = m.get(U8, at + 8);
        into.opcode = m.get(U8, at + 9);
        into.hasImmediate = m.get(U8, at + 10) != 0;
        into.byteCount = m.get(U32, at + 12);
        into.immediate = m.get(U32, at + 16);
    }
}
