package io.zcnet.ring.sys;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

class SqeTest {

    /** The bytes liburing's prep helpers would produce, built independently with a little-endian ByteBuffer. */
    private static byte[] expected(int opcode, int flags, int ioprio, int fd, long off, long addr, int len,
            int opFlags, long userData, int bufIndex) {
        ByteBuffer b = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        b.put(0, (byte) opcode).put(1, (byte) flags).putShort(2, (short) ioprio).putInt(4, fd).putLong(8, off)
                .putLong(16, addr).putInt(24, len).putInt(28, opFlags).putLong(32, userData)
                .putShort(40, (short) bufIndex);
        return b.array();
    }

    @Test
    void wrapZeroesTheWholeEntryAndSettersWriteTheirFields() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment sqes = arena.allocate(128, 64);
            sqes.fill((byte) 0x5A);
            Sqe sqe = new Sqe();
            sqe.wrap(sqes, 64)
                    .prepare(IoUring.OP_SEND_ZC, 7, 0x1122_3344_5566L, 4096, 0)
                    .opFlags(Linux.MSG_NOSIGNAL)
                    .ioprio(IoUring.SEND_ZC_REPORT_USAGE | IoUring.RECVSEND_FIXED_BUF)
                    .bufIndex(3)
                    .userData(0xDEAD_BEEF_0000_0001L);
            byte[] entry = sqes.asSlice(64, 64).toArray(JAVA_BYTE);
            assertArrayEquals(expected(47, 0, 12, 7, 0, 0x1122_3344_5566L, 4096, 0x4000, 0xDEAD_BEEF_0000_0001L, 3),
                    entry);
            // the neighbouring entry is untouched
            for (byte b : sqes.asSlice(0, 64).toArray(JAVA_BYTE)) {
                assertEquals((byte) 0x5A, b);
            }
        }
    }

    @Test
    void multishotRecvAndLinkFlags() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment sqes = arena.allocate(64, 64);
            Sqe sqe = new Sqe();
            sqe.wrap(sqes, 0).prepare(IoUring.OP_RECV, 9, 0, 0, 0).ioprio(IoUring.RECV_MULTISHOT)
                    .flags(IoUring.IOSQE_BUFFER_SELECT).bufIndex(0xFFFF).userData(42);
            sqe.reopen(sqes, 0).addFlags(IoUring.IOSQE_IO_LINK);
            assertArrayEquals(expected(27, 32 | 4, 2, 9, 0, 0, 0, 0, 42, 0xFFFF), sqes.toArray(JAVA_BYTE));
            assertEquals(IoUring.IOSQE_BUFFER_SELECT | IoUring.IOSQE_IO_LINK, sqe.flags());
            assertEquals(IoUring.OP_RECV, sqe.opcode());
            assertEquals(42, sqe.userData());
        }
    }

    @Test
    void socketCommandFields() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment sqes = arena.allocate(64, 64);
            new Sqe().wrap(sqes, 0).opcode(IoUring.OP_URING_CMD).fd(5).cmdOp(3)
                    .sockopt(Linux.SOL_SOCKET, Linux.SO_RCVBUF, 0x7000, 4);
            ByteBuffer b = ByteBuffer.wrap(sqes.toArray(JAVA_BYTE)).order(ByteOrder.LITTLE_ENDIAN);
            assertEquals(46, b.get(0));
            assertEquals(5, b.getInt(4));
            assertEquals(3, b.getInt(8));
            assertEquals(Linux.SOL_SOCKET, b.getInt(16));
            assertEquals(Linux.SO_RCVBUF, b.getInt(20));
            assertEquals(4, b.getInt(44));
            assertEquals(0x7000, b.getLong(48));
        }
    }

    @Test
    void timespecSplitsNanoseconds() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ts = arena.allocate(Timespec.LAYOUT);
            Timespec.set(ts, 0, 3_250_000_001L);
            ByteBuffer b = ByteBuffer.wrap(ts.toArray(JAVA_BYTE)).order(ByteOrder.LITTLE_ENDIAN);
            assertEquals(3, b.getLong(0));
            assertEquals(250_000_001, b.getLong(8));
        }
    }
}
