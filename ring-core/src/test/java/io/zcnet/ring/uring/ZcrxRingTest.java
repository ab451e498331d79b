package io.zcnet.ring.uring;

import io.zcnet.ring.EngineKind;
import io.zcnet.ring.Errno;
import io.zcnet.ring.ZcrxTestSupport;
import io.zcnet.ring.internal.Counters;
import io.zcnet.ring.sys.ErrnoException;
import io.zcnet.ring.sys.IoUring;
import io.zcnet.ring.sys.Linux;
import io.zcnet.ring.sys.Native;
import io.zcnet.ring.sys.Sqe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The kernel-facing parts of zcrx that this machine can run: the dedicated ring, RECV_ZC reaching the
 * kernel and completing (with an error) in a 32-byte CQE, and the registration call itself, whose answer
 * changes with the ring's flags and the interface exactly as the 6.18 contract says. Registrations are
 * made on {@code lo}, which no kernel accepts, so nothing is ever bound.
 */
class ZcrxRingTest {
    private static final long PAGE = Native.pageSize();

    private Arena arena;
    private Native sys;

    @BeforeEach
    void setUp() {
        assumeTrue(Uring.availability().usable(), Uring.availability().reason());
        arena = Arena.ofConfined();
        sys = new Native(arena);
    }

    @AfterEach
    void tearDown() {
        if (arena != null) {
            arena.close();
        }
    }

    private Ring zcrxRing() throws ErrnoException {
        return Ring.openExact(sys, arena, new Counters(EngineKind.URING), ZcrxQueue.SQ_ENTRIES, 256, ZcrxQueue.RING_FLAGS);
    }

    @Test
    void theDedicatedRingHasExactlyTheFlagsTheKernelDemands() throws Exception {
        try (Ring ring = zcrxRing()) {
            assertEquals(ZcrxQueue.RING_FLAGS, ring.setupFlags(), List.of(IoUring.setupFlagNames(ring.setupFlags())).toString());
            assertEquals(256, ring.cqEntries());
            assertEquals(32, ring.cqeOffset(1) - ring.cqeOffset(0));
            assertTrue(ring.supports(IoUring.OP_RECV_ZC));
        }
    }

    @Test
    void openExactRefusesInsteadOfDroppingAFlag() {
        // Ring.open would drop DEFER_TASKRUN here (the kernel refuses it with SQPOLL); openExact must not.
        ErrnoException e = assertThrows(ErrnoException.class, () -> Ring.openExact(sys, arena,
                new Counters(EngineKind.URING), 8, 8, ZcrxQueue.RING_FLAGS | IoUring.SETUP_SQPOLL));
        assertEquals(Errno.EINVAL, e.errno(), e.getMessage());
    }

    @Test
    void recvZcSetsTheFieldsOfTheKernelsContract() {
        MemorySegment entry = arena.allocate(Sqe.SIZE, 8);
        entry.fill((byte) 0x33);
        Sqe sqe = new Sqe().wrap(entry, 0);
        Prep.recvZc(sqe, 7, 3).userData(0xABCDL);
        assertEquals(58, entry.get(JAVA_BYTE, 0), "opcode IORING_OP_RECV_ZC");
        assertEquals(0, entry.get(JAVA_BYTE, 1), "IOSQE flags");
        assertEquals(IoUring.RECV_MULTISHOT, entry.get(JAVA_SHORT, 2), "ioprio");
        assertEquals(7, entry.get(JAVA_INT, 4), "fd");
        assertEquals(0, entry.get(JAVA_LONG, 8), "off/addr2");
        assertEquals(0, entry.get(JAVA_LONG, 16), "addr");
        assertEquals(0, entry.get(JAVA_INT, 24), "len: no byte limit");
        assertEquals(0, entry.get(JAVA_INT, 28), "msg_flags");
        assertEquals(0xABCDL, entry.get(JAVA_LONG, 32));
        assertEquals(3, entry.get(JAVA_INT, 44), "zcrx_ifq_idx");
        assertEquals(0, entry.get(JAVA_LONG, 48), "addr3");
    }

    /**
     * A RECV_ZC naming a queue this ring does not have: the kernel refuses it (no ifq with that id) and
     * posts the error as a 32-byte CQE, which {@link ZcrxCompletion} reads in place behind a NOP's.
     */
    @Test
    void recvZcWithoutAQueueCompletesWithAnErrorIn32ByteCqes() throws Exception {
        int socket = sys.socket(Linux.AF_INET, Linux.SOCK_STREAM | Linux.SOCK_CLOEXEC, 0);
        assertTrue(socket >= 0, Errno.name(socket));
        try (Ring ring = zcrxRing()) {
            Prep.nop(ring.nextSqe()).userData(11);
            Prep.recvZc(ring.nextSqe(), socket, 0).userData(22);
            ring.submit(true, 2, 1_000_000_000L);
            int head = ring.cqHead();
            assertEquals(2, ring.cqTail() - head);
            ZcrxCompletion completion = new ZcrxCompletion();
            completion.wrap(ring.cqRing(), ring.cqeOffset(head));
            assertEquals(11, completion.userData());
            assertEquals(0, completion.res());
            completion.wrap(ring.cqRing(), ring.cqeOffset(head + 1));
            assertEquals(22, completion.userData(), completion.toString());
            assertEquals(-Errno.EINVAL, completion.res(), completion.toString());
            assertFalse(completion.more());
            assertEquals(ZcrxCompletion.NO_DATA, completion.dataOffset(0, PAGE));
            assertEquals(ring.cqeUserData(head + 1), completion.userData());
            ring.releaseCqHead(head + 2);
        } finally {
            sys.close(socket);
        }
    }

    /** The registration of {@code lo}'s queue 0 into a fresh area, on {@code ring}: 0 or {@code -errno}. */
    private int registerLoopback(Ring ring, int ifIndex) {
        MemorySegment area = arena.allocate(16 * PAGE, PAGE);
        MemorySegment region = arena.allocate(ZcrxQueue.refillRegionSize(64, PAGE), PAGE);
        return new ZcrxRegistration(arena).queue(ifIndex, 0).area(area.address(), area.byteSize())
                .refillRing(region.address(), region.byteSize(), 64).register(sys, ring.fd());
    }

    private static int loopbackIndex() throws Exception {
        return Integer.parseInt(java.nio.file.Files.readString(java.nio.file.Path.of("/sys/class/net/lo/ifindex")).trim());
    }

    /**
     * Same arguments, three rings: the kernel looks at the device only on the ring with CQE32 and
     * DEFER_TASKRUN; on the others its answer is EINVAL, a refusal of ours. Without CAP_NET_ADMIN the
     * capability check comes first and all three are EPERM.
     */
    @Test
    void theKernelRefusesRingsWithoutTheFlagsBeforeItLooksAtTheDevice() throws Exception {
        boolean admin = ZcrxTestSupport.hasNetAdmin();
        int lo = loopbackIndex();
        try (Ring eventLoopRing = Ring.open(sys, arena, new Counters(EngineKind.URING), 8, 16)) {
            assertEquals(0, eventLoopRing.setupFlags() & IoUring.SETUP_CQE32);
            assertEquals(-(admin ? Errno.EINVAL : Errno.EPERM), registerLoopback(eventLoopRing, lo), "no CQE32");
        }
        try (Ring noDefer = Ring.openExact(sys, arena, new Counters(EngineKind.URING), 8, 16,
                IoUring.SETUP_CQE32 | IoUring.SETUP_SINGLE_ISSUER | IoUring.SETUP_CQSIZE)) {
            assertEquals(-(admin ? Errno.EINVAL : Errno.EPERM), registerLoopback(noDefer, lo), "no DEFER_TASKRUN");
        }
        try (Ring ring = zcrxRing()) {
            assertEquals(-(admin ? Errno.EOPNOTSUPP : Errno.EPERM), registerLoopback(ring, lo), "lo has no parent device");
        }
    }

    @Test
    void theKernelAnswersEnodevForAnIndexWithNoInterface() throws Exception {
        boolean admin = ZcrxTestSupport.hasNetAdmin();
        try (Ring ring = zcrxRing()) {
            assertEquals(-(admin ? Errno.ENODEV : Errno.EPERM), registerLoopback(ring, Integer.MAX_VALUE - 1));
        }
    }

    @Test
    void theRefillRegionIsAHeaderPageAndTheEntriesInWholePages() {
        assertEquals(2 * 4096, ZcrxQueue.refillRegionSize(1, 4096));
        assertEquals(2 * 4096, ZcrxQueue.refillRegionSize(256, 4096));
        assertEquals(3 * 4096, ZcrxQueue.refillRegionSize(512, 4096));
        assertEquals(129 * 4096, ZcrxQueue.refillRegionSize(32768, 4096));
        assertEquals(2 * 65536, ZcrxQueue.refillRegionSize(4096, 65536));
    }
}
