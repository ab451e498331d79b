package io.zcnet.ring.sys;

import io.zcnet.ring.Errno;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NativeTest {

    @Test
    void linksAndReportsErrnoAsNegativeResults() {
        assertNull(Native.linkError());
        try (Arena arena = Arena.ofConfined()) {
            Native sys = new Native(arena);
            assertEquals(-Errno.EBADF, sys.close(-1));
            assertEquals(-Errno.EBADF, sys.ioUringEnter(-1, 0, 0, 0, MemorySegment.NULL, 0));
            // entries = 0 is invalid for io_uring_setup
            assertEquals(-Errno.EINVAL, sys.ioUringSetup(0, arena.allocate(Params.LAYOUT)));
        }
    }

    @Test
    void eventfdCountsSignalsFromAnyThread() throws Exception {
        try (Arena arena = Arena.ofConfined()) {
            Native sys = new Native(arena);
            int fd = sys.eventfd(0, Linux.EFD_CLOEXEC | Linux.EFD_NONBLOCK);
            assertTrue(fd >= 0, "eventfd: " + Errno.name(fd));
            try {
                Thread t = Thread.ofPlatform().start(() -> Native.signalEventFd(fd));
                t.join(5_000);
                assertTrue(Native.signalEventFd(fd));
                MemorySegment value = arena.allocate(JAVA_LONG);
                assertEquals(8, sys.read(fd, value, 8));
                assertEquals(2, value.get(JAVA_LONG, 0));
                assertEquals(-Errno.EAGAIN, sys.read(fd, value, 8));
            } finally {
                assertEquals(0, sys.close(fd));
            }
        }
    }

    @Test
    void memlockLimitIsReadable() {
        try (Arena arena = Arena.ofConfined()) {
            long limit = new Native(arena).softLimit(Linux.RLIMIT_MEMLOCK, arena);
            assertTrue(limit > 0, "RLIMIT_MEMLOCK " + limit);
        }
    }

    @Test
    void flagNamesKeepBitsAboveSeven() {
        assertEquals("NO_SQARRAY", IoUring.setupFlagNames(IoUring.SETUP_NO_SQARRAY)[0]);
        assertEquals(2, IoUring.setupFlagNames(IoUring.SETUP_SINGLE_ISSUER | IoUring.SETUP_DEFER_TASKRUN).length);
        assertEquals("SEND_ZC", IoUring.opName(IoUring.OP_SEND_ZC));
        assertEquals("RECV", IoUring.opName(IoUring.OP_RECV));
        assertEquals("PIPE", IoUring.opName(IoUring.OP_PIPE));
        assertEquals("NO_IOWAIT", IoUring.featureNames(IoUring.FEAT_NO_IOWAIT)[0]);
    }
}
