package io.zcnet.ring.uring;

import io.zcnet.ring.EngineKind;
import io.zcnet.ring.internal.Counters;
import io.zcnet.ring.sys.IoUring;
import io.zcnet.ring.sys.Native;
import io.zcnet.ring.sys.Timespec;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class RingTest {

    @BeforeEach
    void requireUring() {
        assumeTrue(Uring.availability().usable(), Uring.availability().reason());
    }

    @Test
    void negotiatesEveryWantedFlagOnThisKernelAndNeverSqpoll() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            Native sys = new Native(arena);
            try (Ring ring = Ring.open(sys, arena, new Counters(EngineKind.URING), 64, 256)) {
                // Linux 6.18 has every flag asked for; a drop here means negotiation broke.
                assertEquals(Ring.WANTED, ring.setupFlags(), List.of(IoUring.setupFlagNames(ring.setupFlags())).toString());
                assertEquals(0, ring.setupFlags() & IoUring.SETUP_SQPOLL);
                assertTrue(ring.notes().isEmpty(), ring.notes().toString());
                assertEquals(64, ring.sqEntries());
                assertEquals(256, ring.cqEntries());
                assertTrue((ring.features() & IoUring.FEAT_NODROP) != 0);
                for (int op : new int[] {IoUring.OP_SEND_ZC, IoUring.OP_RECV, IoUring.OP_ACCEPT, IoUring.OP_CONNECT,
                        IoUring.OP_LINK_TIMEOUT, IoUring.OP_ASYNC_CANCEL, IoUring.OP_SHUTDOWN, IoUring.OP_CLOSE}) {
                    assertTrue(ring.supports(op), IoUring.opName(op));
                }
                assertFalse(ring.supports(200));
                assertTrue(ring.supportedOpNames().containsAll(List.of("SEND_ZC", "RECV", "PIPE")));
                assertFalse(ring.registeredRing());
                ring.enableOnOwner();
                assertTrue(ring.registeredRing(), ring.notes().toString());
            }
        }
    }

    @Test
    void refusedFlagsAreDroppedOneAtATimeInTheDocumentedOrder() throws Exception {
        // SQPOLL (never used in production) makes the kernel refuse DEFER_TASKRUN, TASKRUN_FLAG and COOP_TASKRUN
        // with EINVAL, so the negotiation has to walk its drop order until COOP_TASKRUN is gone.
        try (Arena arena = Arena.ofShared()) {
            try (Ring ring = Ring.open(new Native(arena), arena, new Counters(EngineKind.URING), 8, 8,
                    Ring.WANTED | IoUring.SETUP_SQPOLL)) {
                List<String> notes = ring.notes();
                assertEquals(5, notes.size(), notes.toString());
                String[] expected = {"NO_SQARRAY", "DEFER_TASKRUN", "SINGLE_ISSUER", "TASKRUN_FLAG", "COOP_TASKRUN"};
                for (int i = 0; i < expected.length; i++) {
                    assertTrue(notes.get(i).startsWith("setup flag " + expected[i] + " refused"), notes.toString());
                }
                int dropped = IoUring.SETUP_NO_SQARRAY | IoUring.SETUP_DEFER_TASKRUN | IoUring.SETUP_SINGLE_ISSUER
                        | IoUring.SETUP_TASKRUN_FLAG | IoUring.SETUP_COOP_TASKRUN;
                assertEquals((Ring.WANTED | IoUring.SETUP_SQPOLL) & ~dropped, ring.setupFlags(),
                        List.of(IoUring.setupFlagNames(ring.setupFlags())).toString());
            }
        }
    }

    @Test
    void sqAccountingAndOneEnterPerBatch() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            Counters counters = new Counters(EngineKind.URING);
            try (Ring ring = Ring.open(new Native(arena), arena, counters, 16, 64)) {
                ring.enableOnOwner();
                assertEquals(16, ring.sqSpace());
                assertNull(ring.lastUnsubmittedSqe());
                for (int i = 0; i < 16; i++) {
                    ring.nextSqe().opcode(IoUring.OP_NOP).userData(100 + i);
                }
                assertEquals(0, ring.sqSpace());
                assertEquals(115, ring.lastUnsubmittedSqe().userData());
                assertEquals(16, ring.submit(true, 0, 0));
                assertNull(ring.lastUnsubmittedSqe());
                assertEquals(16, ring.sqSpace());
                assertEquals(1, counters.syscalls());
                assertEquals(16, counters.submittedOps());
                int head = ring.cqHead();
                assertEquals(16, ring.cqTail() - head);
                for (int i = 0; i < 16; i++) {
                    assertEquals(100 + i, ring.cqeUserData(head + i));
                    assertEquals(0, ring.cqeRes(head + i));
                }
                ring.releaseCqHead(head + 16);
                assertFalse(ring.cqReady());
            }
        }
    }

    @Test
    void theTaskRunFlagSaysWhenACompletionWaitsForAnEnter() throws Exception {
        // A timer's expiry is task work: on a DEFER_TASKRUN ring its completion is posted only inside an enter.
        try (Arena arena = Arena.ofShared()) {
            try (Ring ring = Ring.open(new Native(arena), arena, new Counters(EngineKind.URING), 8, 8)) {
                ring.enableOnOwner();
                assertFalse(ring.mayHaveTaskWork(), "nothing queued yet");
                MemorySegment timespec = arena.allocate(Timespec.LAYOUT);
                Timespec.set(timespec, 0, 1_000_000);
                Prep.timeout(ring.nextSqe(), timespec.address(), 0, 0).userData(7);
                ring.submit(true, 0, 0);
                long deadline = System.nanoTime() + 2_000_000_000L;
                while (!ring.mayHaveTaskWork() && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
                assertTrue(ring.mayHaveTaskWork(), "the expired timer's task work is flagged");
                assertFalse(ring.cqReady(), "and its completion waits for an enter");
                ring.submit(true, 0, 0);
                assertTrue(ring.cqReady(), "the enter posted it");
                assertEquals(7, ring.cqeUserData(ring.cqHead()));
                assertFalse(ring.mayHaveTaskWork(), "and cleared the flag");
            }
        }
    }

    @Test
    void cqOverflowIsDetectedAndNothingIsLost() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            Counters counters = new Counters(EngineKind.URING);
            try (Ring ring = Ring.open(new Native(arena), arena, counters, 8, 8)) {
                ring.enableOnOwner();
                for (int batch = 0; batch < 2; batch++) {
                    for (int i = 0; i < 8; i++) {
                        ring.nextSqe().opcode(IoUring.OP_NOP).userData(batch * 8 + i);
                    }
                    ring.submit(true, 0, 0);
                }
                assertTrue(ring.overflowPending(), "16 completions in an 8-entry CQ must overflow");
                int seen = 0;
                for (int round = 0; round < 4 && seen < 16; round++) {
                    int head = ring.cqHead();
                    int tail = ring.cqTail();
                    while (head != tail) {
                        assertEquals(seen++, ring.cqeUserData(head++));
                    }
                    ring.releaseCqHead(head);
                    ring.submit(true, 0, 0); // flushes the kernel's overflow list into the CQ
                }
                assertEquals(16, seen);
                assertFalse(ring.overflowPending());
                assertEquals(0, ring.droppedCompletions(), "NODROP parks overflowed completions, drops none");
            }
        }
    }

    @Test
    void toStringShowsState() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            try (Ring ring = Ring.open(new Native(arena), arena, new Counters(EngineKind.URING), 8, 8)) {
                ring.nextSqe().opcode(IoUring.OP_NOP);
                String s = ring.toString();
                assertTrue(s.contains("unsubmitted=1") && s.contains("SINGLE_ISSUER"), s);
                assertNotNull(ring.notes());
            }
        }
    }
}
