package io.zcnet.buffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The return stack under contention: several threads release while the owner leases and drains. */
class CrossThreadReleaseTest {

    private static final int THREADS = 4;
    private static final int PER_THREAD = 100_000;
    private static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(20);

    /**
     * The owner leases continuously and hands each buffer to one of four releasers, which check and stamp it
     * and release it. 400k buffers pass through 256: any lost release starves the owner (timeout), any
     * duplicate shows up as a buffer leased while still out.
     */
    @Test
    void streamingReleasesLoseAndDuplicateNothing() throws Exception {
        int buffers = 256;
        try (BufferPool pool = BufferPool.create(PoolConfig.of(new SizeClass(64, buffers)))) {
            AtomicIntegerArray out = new AtomicIntegerArray(buffers); // 1 while leased, by id
            List<ArrayBlockingQueue<Buffer>> queues = new ArrayList<>();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicLong releaserAllocated = new AtomicLong();
            List<Thread> releasers = new ArrayList<>();
            long deadline = System.nanoTime() + TIMEOUT_NANOS;
            for (int t = 0; t < THREADS; t++) {
                ArrayBlockingQueue<Buffer> queue = new ArrayBlockingQueue<>(64);
                queues.add(queue);
                Thread releaser = new Thread(() -> release(queue, out, failure, releaserAllocated, deadline),
                        "releaser-" + t);
                releasers.add(releaser);
                releaser.start();
            }
            long exhausted = 0;
            for (int i = 0; i < THREADS * PER_THREAD && failure.get() == null; i++) {
                Buffer b;
                while ((b = pool.lease(64)) == null) {
                    exhausted++;
                    if (System.nanoTime() > deadline) {
                        fail("pool starved after " + i + " leases: releases were lost; " + pool.stats());
                    }
                    Thread.onSpinWait();
                }
                if (out.getAndSet(b.id(), 1) != 0) {
                    fail("buffer " + b.id() + " leased twice at lease " + i);
                }
                long stamp = b.segment().get(ValueLayout.JAVA_LONG, 0);
                if (stamp != 0 && stamp != released(b.id())) {
                    fail("releaser's write not visible after lease: buffer " + b.id() + " holds " + stamp);
                }
                b.segment().set(ValueLayout.JAVA_LONG, 0, leased(b.id()));
                ArrayBlockingQueue<Buffer> queue = queues.get(i % THREADS);
                while (!queue.offer(b)) {
                    if (System.nanoTime() > deadline || failure.get() != null) {
                        fail("releaser stuck; " + failure.get());
                    }
                    Thread.onSpinWait();
                }
            }
            for (Thread releaser : releasers) {
                releaser.join(TimeUnit.NANOSECONDS.toMillis(Math.max(1, deadline - System.nanoTime())) + 1);
                assertTrue(!releaser.isAlive(), releaser.getName() + " did not finish");
            }
            assertNull(failure.get());

            PoolStats stats = pool.stats();
            assertEquals((long) THREADS * PER_THREAD, stats.crossThreadReleases());
            assertEquals(exhausted, stats.exhaustedLeases());
            assertEquals(buffers, stats.classes().getFirst().available());
            assertEquals(0, stats.totalLeased());
            assertTrue(releaserAllocated.get() < 4096 * THREADS,
                    "releasers allocated " + releaserAllocated.get() + " bytes");
            // Every buffer comes back exactly once.
            for (int i = 0; i < buffers; i++) {
                Buffer b = pool.leaseFromClass(0);
                assertNotNull(b, "buffer missing after " + i);
                assertEquals(1, out.getAndSet(b.id(), 2) + 1, "buffer " + b.id() + " duplicated");
            }
            assertNull(pool.leaseFromClass(0));
        }
    }

    private static void release(ArrayBlockingQueue<Buffer> queue, AtomicIntegerArray out,
            AtomicReference<Throwable> failure, AtomicLong allocatedTotal, long deadline) {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try {
            long allocated = 0;
            for (int n = 0; n < PER_THREAD; n++) {
                Buffer b = queue.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (b == null) {
                    throw new AssertionError(Thread.currentThread().getName() + " starved after " + n);
                }
                if (b.segment().get(ValueLayout.JAVA_LONG, 0) != leased(b.id())) {
                    throw new AssertionError("buffer " + b.id() + " changed while leased");
                }
                b.segment().set(ValueLayout.JAVA_LONG, 0, released(b.id()));
                if (out.getAndSet(b.id(), 0) != 1) {
                    throw new AssertionError("buffer " + b.id() + " handed out twice");
                }
                long before = n >= PER_THREAD / 2 ? threads.getCurrentThreadAllocatedBytes() : 0;
                b.release();
                if (n >= PER_THREAD / 2) { // second half only: warmed up
                    allocated += threads.getCurrentThreadAllocatedBytes() - before;
                }
            }
            allocatedTotal.addAndGet(allocated);
        } catch (Throwable t) {
            failure.compareAndSet(null, t);
        }
    }

    /**
     * Maximal contention on one stack: four threads release disjoint quarters of the pool at the same instant,
     * then the owner takes everything back. Repeated; each round must return every buffer exactly once.
     */
    @Test
    void simultaneousReleasesOfTheWholePool() throws Exception {
        int buffers = 1024;
        int rounds = 200;
        try (BufferPool pool = BufferPool.create(PoolConfig.of(new SizeClass(64, buffers), new SizeClass(128, 1)))) {
            Buffer[] held = new Buffer[buffers];
            CyclicBarrier start = new CyclicBarrier(THREADS + 1);
            CyclicBarrier done = new CyclicBarrier(THREADS + 1);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> releasers = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int first = t * (buffers / THREADS);
                Thread releaser = new Thread(() -> {
                    try {
                        for (int r = 0; r < rounds; r++) {
                            start.await(20, TimeUnit.SECONDS);
                            for (int i = first; i < first + buffers / THREADS; i++) {
                                held[i].release(); // held[] is published by the barrier
                            }
                            done.await(20, TimeUnit.SECONDS);
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "releaser-" + t);
                releasers.add(releaser);
                releaser.start();
            }
            int[] seenInRound = new int[buffers];
            for (int r = 0; r < rounds; r++) {
                for (int i = 0; i < buffers; i++) {
                    held[i] = pool.leaseFromClass(0);
                    assertNotNull(held[i], "round " + r + ": only " + i + " buffers came back");
                    int id = held[i].id();
                    assertEquals(r, seenInRound[id], "buffer " + id + " leased twice in round " + r);
                    seenInRound[id] = r + 1;
                }
                assertNull(pool.leaseFromClass(0), "round " + r + ": more buffers than exist");
                start.await(20, TimeUnit.SECONDS);
                done.await(20, TimeUnit.SECONDS);
                assertEquals(buffers, pool.stats().classes().getFirst().available());
            }
            for (Thread releaser : releasers) {
                releaser.join(TimeUnit.SECONDS.toMillis(20));
            }
            assertNull(failure.get());
            assertEquals((long) rounds * buffers, pool.stats().crossThreadReleases());
        }
    }

    private static long leased(int id) {
        return 0x4C45_4153_0000_0000L | id;
    }

    private static long released(int id) {
        return 0x5245_4C53_0000_0000L | id;
    }
}
