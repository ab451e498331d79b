package io.zcnet.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.buffer.BufferPool;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.buffer.MemoryRegistry;
import io.zcnet.buffer.Access;
import io.zcnet.buffer.PoolConfig;
import io.zcnet.buffer.SizeClass;
import io.zcnet.ring.Recorder.Completion;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Who owns a loop, a handler id, a completion and the memory the kernel may touch, identically on both
 * engines: the faults a multipath review found in ring-core (a torn-down subflow's late completion
 * reaching the next handler, the kernel writing into freed memory, a nested {@code poll()} dispatching
 * completions twice, engines that disagree, two owners). Subclassed per engine.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
abstract class LifetimeContractTest extends LoopPerTest {
    private static final long MILLIS = 1_000_000L;

    // ------------------------------------------------------------------ handler ids and completions

    @Test
    void aLateCompletionOfAnUnregisteredHandlerNeverReachesTheHandlerRegisteredAfterIt() throws Exception {
        Recorder first = new Recorder();
        Recorder second = new Recorder();
        long droppedBefore = loop.counters().droppedCompletions();
        int[] ids = h.call(() -> {
            int a = loop.registerHandler(first);
            loop.timeout(a, 1, 100 * MILLIS); // a subflow's operation still in flight at teardown
            loop.unregisterHandler(a);
            int b = loop.registerHandler(second);
            return new int[] {a, b};
        });
        assertNotEquals(ids[0], ids[1], "a slot with an operation in flight must not be handed out again");
        LoopHarness.await(() -> loop.counters().droppedCompletions() == droppedBefore + 1,
                "the late completion to be dropped; counters: " + loop.counters());
        second.assertQuietFor(50);
        first.assertQuietFor(0);
        assertEquals(0, (int) h.call(() -> loop.inFlight(ids[0])), "nothing in flight for the old id");
    }

    @Test
    void aZeroCopyNotificationAfterTheHandlerLeftIsDroppedNotMisdelivered() throws Exception {
        // The subflow's handler gives up on the first completion of a SEND_ZC (MORE: a notification is
        // still to come) and a new handler registers at once: the NOTIF must not reach it.
        Recorder successor = new Recorder();
        AtomicReference<int[]> ids = new AtomicReference<>();
        CountDownLatch sent = new CountDownLatch(1);
        int[] pair = h.connectedPair();
        MemorySegment payload = Arena.ofAuto().allocate(4096);
        int handler = h.call(() -> {
            CompletionHandler[] self = new CompletionHandler[1];
            int[] mine = new int[1];
            self[0] = (op, tag, result, flags) -> {
                if (op == Op.SEND_ZC && CqeFlags.hasMore(flags)) {
                    loop.unregisterHandler(mine[0]);
                    ids.set(new int[] {mine[0], loop.registerHandler(successor)});
                    sent.countDown();
                }
            };
            mine[0] = loop.registerHandler(self[0]);
            return mine[0];
        });
        h.run(() -> loop.sendZeroCopy(handler, 3, pair[0], payload, 0, 4096, EventLoop.NO_FIXED_BUFFER, MsgFlags.NONE));
        assertTrue(sent.await(Recorder.WAIT_MILLIS, TimeUnit.MILLISECONDS), "first SEND_ZC completion");
        LoopHarness.await(() -> h.callQuietly(() -> loop.inFlight(handler)) == 0, "the notification to arrive");
        assertNotEquals(ids.get()[0], ids.get()[1], "the slot is quarantined until its notification is in");
        successor.assertQuietFor(50);
    }

    @Test
    void inFlightCountsEachOperationUntilItsFinalCompletion() throws Exception {
        Recorder r = new Recorder();
        Recorder canceller = new Recorder();
        int id = h.register(r);
        int other = h.register(canceller);
        long timer = h.call(() -> {
            loop.nop(id, 1);
            long t = loop.timeout(id, 2, TimeUnit.SECONDS.toNanos(30));
            assertEquals(2, loop.inFlight(id), "prepared operations count from preparation");
            return t;
        });
        assertEquals(Op.NOP, r.next().op());
        assertEquals(1, (int) h.call(() -> loop.inFlight(id)), "the nop finished, the timer has not");
        h.run(() -> loop.cancel(other, 9, timer));
        Completion cancelled = r.next();
        assertEquals(-Errno.ECANCELED, cancelled.result(), "timer: " + cancelled);
        assertEquals(0, (int) h.call(() -> loop.inFlight(id)));
        assertEquals(0, canceller.next().result(), "the cancel found its target");
        assertEquals(0, (int) h.call(() -> loop.inFlight(other)));
        assertEquals(0, (int) h.call(() -> loop.inFlight(123_456)), "an id never handed out");
        assertThrows(IllegalArgumentException.class, () -> h.call(() -> loop.inFlight(-1)));
    }

    @Test
    void submittingUnderAnUnregisteredHandlerIsRefused() throws Exception {
        Recorder r = new Recorder();
        int id = h.register(r);
        h.run(() -> loop.unregisterHandler(id));
        Throwable t = h.thrownOnLoop(() -> loop.nop(id, 1));
        assertTrue(t instanceof IllegalArgumentException, "nop under a freed id: " + t);
        assertTrue(t.getMessage().contains("not registered"), t.getMessage());
        assertEquals(0, (int) h.call(loop::pending), "nothing was prepared");
        assertThrows(IllegalArgumentException.class, () -> h.call(() -> {
            loop.unregisterHandler(id);
            return null;
        }), "unregistering twice");
    }

    // ------------------------------------------------------------------ re-entry and ownership

    @Test
    void pollFromAHandlerIsRefusedAndNothingIsDispatchedTwice() throws Exception {
        AtomicInteger completions = new AtomicInteger();
        AtomicReference<Throwable> nested = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(3);
        int id = h.register((op, tag, result, flags) -> {
            completions.incrementAndGet();
            if (tag == 1) {
                try {
                    loop.poll(0);
                } catch (Throwable t) {
                    nested.set(t);
                }
            }
            done.countDown();
        });
        h.run(() -> {
            loop.nop(id, 1);
            loop.nop(id, 2);
            loop.nop(id, 3);
        });
        assertTrue(done.await(Recorder.WAIT_MILLIS, TimeUnit.MILLISECONDS), "three completions");
        h.run(() -> { }); // one more turn of the loop: a double dispatch would show now
        assertEquals(3, completions.get(), "each completion exactly once");
        assertTrue(nested.get() instanceof IllegalStateException, "nested poll: " + nested.get());
        assertTrue(nested.get().getMessage().contains("re-entered"), nested.get().getMessage());
    }

    @Test
    void pollFromATaskIsRefused() throws Exception {
        // h.call runs its task inside the loop thread's own poll: polling from there is re-entry.
        Throwable nested = h.thrownOnLoop(() -> loop.poll(0));
        assertTrue(nested instanceof IllegalStateException, "poll inside a task: " + nested);
        assertTrue(nested.getMessage().contains("re-entered"), nested.getMessage());
        assertTrue(h.call(() -> true), "the loop carries on");
    }

    @Test
    void exactlyOneOfTwoRacingThreadsBecomesTheOwner() throws Exception {
        for (int trial = 0; trial < 200; trial++) {
            EventLoop fresh = EventLoops.open(EventLoopConfig.defaults().withEngine(engine()));
            AtomicInteger owners = new AtomicInteger();
            AtomicInteger refused = new AtomicInteger();
            CountDownLatch ready = new CountDownLatch(2);
            CountDownLatch go = new CountDownLatch(1);
            CountDownLatch bothTried = new CountDownLatch(2);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                threads.add(Thread.ofPlatform().start(() -> {
                    boolean owner = false;
                    ready.countDown();
                    try {
                        go.await();
                        fresh.poll(0);
                        owner = true;
                        owners.incrementAndGet();
                    } catch (IllegalStateException e) {
                        refused.incrementAndGet();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        bothTried.countDown();
                    }
                    if (owner) { // only an owner may close; a second owner's close would be refused or race
                        try {
                            bothTried.await();
                            fresh.close();
                        } catch (InterruptedException | RuntimeException e) {
                            refused.addAndGet(100);
                        }
                    }
                }));
            }
            ready.await();
            go.countDown();
            for (Thread t : threads) {
                t.join();
            }
            assertEquals(1, owners.get(), "trial " + trial + ": threads that became the owner");
            assertEquals(1, refused.get(), "trial " + trial + ": threads refused");
        }
    }

    // ------------------------------------------------------------------ engines agree

    @Test
    void executeAfterCloseIsRejectedOnEveryEngine() throws Exception {
        h.thread().close();
        assertThrows(RejectedExecutionException.class, () -> loop.execute(() -> { }));
    }

    @Test
    void registeringFixedBuffersAgainAddsToTheTableAndKeepsEarlierIndices() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            MemoryRegistry registry = new MemoryRegistry(16);
            MemoryRegion a = registry.register(arena.allocate(8192, 4096), Access.LOCAL_WRITE);
            MemoryRegion b = registry.register(arena.allocate(8192, 4096), Access.LOCAL_WRITE);
            int[] first = h.call(() -> loop.registerFixedBuffers(a));
            int[] second = h.call(() -> loop.registerFixedBuffers(b, a));
            assertEquals(1, first.length);
            assertEquals(first[0], second[1], "a region registered again keeps its index");
            assertNotEquals(second[0], second[1], "a new region gets a new index");
            assertEquals(second[0], (int) h.call(() -> loop.fixedBufferIndex(b)));
            assertEquals(EventLoop.NO_FIXED_BUFFER,
                    (int) h.call(() -> loop.fixedBufferIndex(registry.register(arena.allocate(64), Access.LOCAL_WRITE))));
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> registry.deregister(a),
                    "a region the kernel may read as a fixed buffer cannot be deregistered");
            assertTrue(refused.getMessage().contains("pinned"), refused.getMessage());
            h.close();
            registry.deregister(a); // the loop closed: the pins are gone
            registry.deregister(b);
        }
    }

    @Test
    void fixedBufferIndicesBelongToTheLoopThatRegisteredThem() throws Exception {
        LoopHarness other = LoopHarness.start(engine());
        try (Arena arena = Arena.ofShared()) {
            MemoryRegistry registry = new MemoryRegistry(16);
            MemoryRegion a = registry.register(arena.allocate(4096, 4096), Access.LOCAL_WRITE);
            MemoryRegion b = registry.register(arena.allocate(4096, 4096), Access.LOCAL_WRITE);
            h.call(() -> loop.registerFixedBuffers(a, b));
            other.call(() -> other.loop().registerFixedBuffers(b));
            assertEquals(1, (int) h.call(() -> loop.fixedBufferIndex(b)));
            assertEquals(0, (int) other.call(() -> other.loop().fixedBufferIndex(b)));
            assertEquals(EventLoop.NO_FIXED_BUFFER, (int) other.call(() -> other.loop().fixedBufferIndex(a)));
        } finally {
            other.close();
            h.close();
        }
    }

    // ------------------------------------------------------------------ memory the kernel may touch

    @Test
    void aSegmentWhoseArenaIsClosedIsRefusedBeforeSubmission() throws Exception {
        int[] pair = h.connectedPair();
        Arena arena = Arena.ofShared();
        MemorySegment dead = arena.allocate(4096);
        arena.close();
        Recorder r = new Recorder();
        int id = h.register(r);
        for (LoopHarness.LoopAction action : List.<LoopHarness.LoopAction>of(
                () -> loop.send(id, 1, pair[0], dead, 0, 16, MsgFlags.NONE),
                () -> loop.recv(id, 2, pair[1], dead, 0, 16, MsgFlags.NONE),
                () -> loop.sendZeroCopy(id, 3, pair[0], dead, 0, 16, EventLoop.NO_FIXED_BUFFER, MsgFlags.NONE))) {
            Throwable t = h.thrownOnLoop(action);
            assertTrue(t instanceof IllegalArgumentException, "dead segment: " + t);
            assertTrue(t.getMessage().contains("not alive"), t.getMessage());
        }
        assertEquals(0, (int) h.call(loop::pending), "nothing was submitted");
        r.assertQuietFor(20);
    }

    @Test
    void aPoolCannotCloseWhileABufferRingLendsItsBuffersToTheKernel() throws Exception {
        BufferPool pool = BufferPool.create(PoolConfig.of(new SizeClass(4096, 8)));
        BufferRing ring = h.call(() -> loop.createBufferRing(40, pool, 4, 4096));
        IllegalStateException refused = assertThrows(IllegalStateException.class, pool::close);
        assertTrue(refused.getMessage().contains("pinned"), refused.getMessage());
        assertFalse(pool.isClosed(), "a refused close changes nothing");
        assertTrue(ring.buffer(0).scope().isAlive(), "the ring's memory is still there");
        h.run(ring::close);
        pool.close();
        assertTrue(pool.isClosed());
    }

    @Test
    void aPoolCannotCloseWhileASlabIsAFixedBuffer() throws Exception {
        BufferPool pool = BufferPool.create(PoolConfig.of(new SizeClass(4096, 8)));
        h.call(() -> loop.registerFixedBuffers(pool.slabRegion(0)));
        assertThrows(IllegalStateException.class, pool::close);
        assertFalse(pool.isClosed());
        h.close();
        pool.close();
    }
}
