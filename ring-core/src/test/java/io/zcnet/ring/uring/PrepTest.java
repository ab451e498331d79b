package io.zcnet.ring.uring;

import io.zcnet.ring.sys.Sqe;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.UnaryOperator;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;

/**
 * Each prep function writes the bytes liburing's {@code io_uring_prep_*} of the same name writes; the
 * expected entries are built with a ByteBuffer from the kernel's numbers, not from our constants.
 */
class PrepTest {
    private static final int MSG_NOSIGNAL = 0x4000;
    private static final int MSG_WAITALL = 0x100;
    private static final int SOCK_CLOEXEC = 0x80000;

    private static byte[] entry(int opcode, int flags, int ioprio, int fd, long off, long addr, int len, int opFlags,
            int bufIndex) {
        ByteBuffer b = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        b.put(0, (byte) opcode).put(1, (byte) flags).putShort(2, (short) ioprio).putInt(4, fd).putLong(8, off)
                .putLong(16, addr).putInt(24, len).putInt(28, opFlags).putShort(40, (short) bufIndex);
        return b.array();
    }

    private static byte[] prepared(UnaryOperator<Sqe> prep) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment sqes = arena.allocate(64, 64);
            sqes.fill((byte) 0x5A);
            prep.apply(new Sqe().wrap(sqes, 0));
            return sqes.toArray(JAVA_BYTE);
        }
    }

    @Test
    void plainRequests() {
        assertArrayEquals(entry(0, 0, 0, -1, 0, 0, 0, 0, 0), prepared(Prep::nop));
        assertArrayEquals(entry(22, 0, 0, 4, 0, 0x1000, 8, 0, 0), prepared(s -> Prep.read(s, 4, 0x1000, 8, 0)));
        assertArrayEquals(entry(34, 0, 0, 5, 0, 0, 2, 0, 0), prepared(s -> Prep.shutdown(s, 5, 2)));
        assertArrayEquals(entry(19, 0, 0, 5, 0, 0, 0, 0, 0), prepared(s -> Prep.close(s, 5)));
    }

    @Test
    void socketRequests() {
        assertArrayEquals(entry(13, 0, 0, 3, 0, 0, 0, SOCK_CLOEXEC, 0),
                prepared(s -> Prep.accept(s, 3, SOCK_CLOEXEC, false)));
        assertArrayEquals(entry(13, 0, 1, 3, 0, 0, 0, SOCK_CLOEXEC, 0),
                prepared(s -> Prep.accept(s, 3, SOCK_CLOEXEC, true)));
        assertArrayEquals(entry(16, 0, 0, 3, 16, 0x2000, 0, 0, 0), prepared(s -> Prep.connect(s, 3, 0x2000, 16)));
        assertArrayEquals(entry(26, 0, 0, 3, 0, 0x3000, 100, MSG_NOSIGNAL | MSG_WAITALL, 0),
                prepared(s -> Prep.send(s, 3, 0x3000, 100, MSG_NOSIGNAL | MSG_WAITALL)));
        assertArrayEquals(entry(47, 0, 8, 3, 0, 0x3000, 100, MSG_NOSIGNAL, 0),
                prepared(s -> Prep.sendZc(s, 3, 0x3000, 100, MSG_NOSIGNAL, 8)));
        assertArrayEquals(entry(47, 0, 8 | 4, 3, 0, 0x3000, 100, MSG_NOSIGNAL, 7),
                prepared(s -> Prep.sendZcFixed(s, 3, 0x3000, 100, MSG_NOSIGNAL, 8, 7)));
        assertArrayEquals(entry(27, 0, 0, 3, 0, 0x4000, 64, MSG_WAITALL, 0),
                prepared(s -> Prep.recv(s, 3, 0x4000, 64, MSG_WAITALL)));
        assertArrayEquals(entry(27, 32, 2, 3, 0, 0, 0, 0, 9),
                prepared(s -> Prep.selectBuffer(Prep.recvMultishot(s, 3, 0, 0, 0), 9)));
    }

    @Test
    void timeoutsAndCancels() {
        assertArrayEquals(entry(11, 0, 0, -1, 0, 0x5000, 1, 0, 0), prepared(s -> Prep.timeout(s, 0x5000, 0, 0)));
        assertArrayEquals(entry(11, 0, 0, -1, 3, 0x5000, 1, 0, 0), prepared(s -> Prep.timeout(s, 0x5000, 3, 0)));
        assertArrayEquals(entry(15, 0, 0, -1, 0, 0x5000, 1, 0, 0), prepared(s -> Prep.linkTimeout(s, 0x5000, 0)));
        assertArrayEquals(entry(14, 0, 0, -1, 0, 0xABCDL, 0, 0, 0), prepared(s -> Prep.cancel(s, 0xABCDL, 0)));
        assertArrayEquals(entry(14, 0, 0, -1, 0, 0, 0, 4 | 1, 0), prepared(s -> Prep.cancel(s, 0, 4 | 1)));
        assertArrayEquals(entry(14, 0, 0, 6, 0, 0, 0, 2 | 1, 0), prepared(s -> Prep.cancelFd(s, 6, 1)));
    }
}
