package io.zcnet.buffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class BufferPoolTest {

    /** 64 B x 8, 4 KiB x 4, 64 KiB x 2. */
    private static final PoolConfig SMALL =
            PoolConfig.of(new SizeClass(64, 8), new SizeClass(4096, 4), new SizeClass(65536, 2));

    private final List<BufferPool> pools = new ArrayList<>();

    private BufferPool pool(PoolConfig config) {
        BufferPool pool = BufferPool.create(config);
        pools.add(pool);
        return pool;
    }

    @AfterEach
    void closeAll() {
        pools.forEach(BufferPool::close);
    }

    @Test
    void describesItsClasses() {
        BufferPool pool = pool(SMALL);
        assertEquals(3, pool.sizeClassCount());
        assertEquals(64, pool.bufferSize(0));
        assertEquals(4096, pool.bufferSize(1));
        assertEquals(65536, pool.bufferSize(2));
        assertEquals(8, pool.bufferCount(0));
        assertEquals(14, pool.totalBuffers());
        assertSame(SMALL, pool.config());
        assertThrows(IllegalArgumentException.class, () -> pool.bufferSize(3));
        assertThrows(IllegalArgumentException.class, () -> pool.bufferSize(-1));
    }

    @Test
    void sizeClassForPicksTheSmallestThatFits() {
        BufferPool pool = pool(SMALL);
        assertEquals(0, pool.sizeClassFor(1));
        assertEquals(0, pool.sizeClassFor(64));
        assertEquals(1, pool.sizeClassFor(65));
        assertEquals(1, pool.sizeClassFor(4096));
        assertEquals(2, pool.sizeClassFor(4097));
        assertEquals(2, pool.sizeClassFor(65536));
        assertEquals(-1, pool.sizeClassFor(65537));
        assertEquals(-1, pool.sizeClassFor(Integer.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> pool.sizeClassFor(0));
        assertThrows(IllegalArgumentException.class, () -> pool.sizeClassFor(-5));
    }

    @Test
    void leaseAndReleaseRoundTripEveryClass() {
        BufferPool pool = pool(SMALL);
        for (int c = 0; c < pool.sizeClassCount(); c++) {
            Buffer first = pool.leaseFromClass(c);
            assertEquals(c, first.sizeClass());
            assertEquals(pool.bufferSize(c), first.capacity());
            assertEquals(pool.bufferSize(c), first.segment().byteSize());
            assertSame(pool, first.pool());
            assertTrue(first.isLeased());
            first.release();
            assertFalse(first.isLeased());
            for (int i = 0; i < 1000; i++) {
                Buffer again = pool.lease(pool.bufferSize(c));
                assertSame(first, again, "owner releases are reused first (LIFO, cache-warm)");
                pool.release(again);
            }
        }
        PoolStats stats = pool.stats();
        assertEquals(0, stats.totalLeased());
        assertEquals(14, stats.totalAvailable());
        assertEquals(0, stats.exhaustedLeases());
        assertEquals(0, stats.crossThreadReleases());
    }

    @Test
    void leaseAndReleaseAllocateNothing() {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        BufferPool pool = pool(SMALL);
        int[] sizes = {1, 64, 33, 17, 100, 4096, 5000, 65536}; // 4 from class 0, 2 from 1, 2 from 2
        Buffer[] held = new Buffer[sizes.length];
        for (int round = 0; round < 3; round++) { // warm-up rounds, then a measured one
            long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 20_000; i++) {
                for (int j = 0; j < held.length; j++) {
                    held[j] = pool.lease(sizes[j]);
                }
                for (Buffer b : held) {
                    b.release();
                }
            }
            long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            if (round == 2) {
                assertTrue(allocated < 1024, "320k leases and releases allocated " + allocated + " bytes");
            }
        }
    }

    @Test
    void buffersAreDistinctNonOverlappingAndInsideTheirSlab() {
        BufferPool pool = pool(SMALL);
        List<Buffer> all = new ArrayList<>();
        Set<Integer> ids = new HashSet<>();
        for (int c = 0; c < pool.sizeClassCount(); c++) {
            Buffer b;
            while ((b = pool.leaseFromClass(c)) != null) {
                all.add(b);
                assertTrue(ids.add(b.id()), "duplicate id " + b.id());
                assertSame(pool.slabRegion(c), b.region());
                assertEquals(b.region().segment().address() + b.regionOffset(), b.segment().address());
                assertTrue(b.regionOffset() >= 0 && b.regionOffset() + b.capacity() <= b.region().size());
                assertEquals(0, b.segment().address() % Math.min(b.capacity(), 2 << 20), "buffer aligned to its size");
                assertSame(b, pool.buffer(b.id()));
            }
        }
        assertEquals(pool.totalBuffers(), all.size());
        for (int id = 0; id < pool.totalBuffers(); id++) {
            assertTrue(ids.contains(id), "ids cover 0..n-1, missing " + id);
        }
        all.sort(Comparator.comparingLong(b -> b.segment().address()));
        for (int i = 1; i < all.size(); i++) {
            Buffer prev = all.get(i - 1);
            assertTrue(prev.segment().address() + prev.capacity() <= all.get(i).segment().address(),
                    "buffers " + prev.id() + " and " + all.get(i).id() + " overlap");
        }
        // Writing every buffer end to end proves the memory is really there and separate.
        for (Buffer b : all) {
            b.segment().fill((byte) b.id());
        }
        for (Buffer b : all) {
            assertEquals((byte) b.id(), b.segment().get(ValueLayout.JAVA_BYTE, 0));
            assertEquals((byte) b.id(), b.segment().get(ValueLayout.JAVA_BYTE, b.capacity() - 1));
        }
        assertThrows(IllegalArgumentException.class, () -> pool.buffer(-1));
        assertThrows(IllegalArgumentException.class, () -> pool.buffer(pool.totalBuffers()));
    }

    @Test
    void slabsArePageAlignedAndRegistered() {
        BufferPool pool = pool(PoolConfig.of(new SizeClass(64, 4), new SizeClass(4096, 512), new SizeClass(65536, 2),
                new SizeClass(1 << 20, 2)));
        for (int c = 0; c < pool.sizeClassCount(); c++) {
            MemoryRegion slab = pool.slabRegion(c);
            long bytes = (long) pool.bufferSize(c) * pool.bufferCount(c);
            assertEquals(bytes, slab.size());
            long alignment = bytes >= 2 << 20 ? 2 << 20 : Math.max(4096, pool.bufferSize(c));
            assertEquals(0, slab.segment().address() % alignment, "class " + c + " slab alignment");
            assertEquals(Access.LOCAL_WRITE, slab.access());
            assertTrue(slab.isValid());
            assertSame(slab, pool.registry().lookupLocal(slab.localKey()));
            assertSame(slab, pool.registry().lookupRemote(slab.remoteKey()));
            assertEquals(AccessStatus.NOT_PERMITTED,
                    pool.registry().checkRemote(slab.remoteKey(), 0, 1, Access.REMOTE_WRITE),
                    "slabs grant no remote rights");
        }
        assertEquals(4, pool.registry().size());
    }

    @Test
    void defaultPoolWorks() {
        BufferPool pool = pool(PoolConfig.defaults());
        assertEquals(3, pool.sizeClassCount());
        Buffer b = pool.lease(5000);
        assertEquals(65536, b.capacity());
        b.segment().set(ValueLayout.JAVA_LONG, 65528, 42L);
        assertEquals(42L, b.segment().get(ValueLayout.JAVA_LONG, 65528));
        b.release();
    }

    @Test
    void leaseFallsBackToLargerClasses() {
        BufferPool pool = pool(SMALL);
        List<Buffer> small = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            small.add(pool.lease(10));
            assertEquals(0, small.get(i).sizeClass());
        }
        Buffer fallback = pool.lease(10);
        assertEquals(1, fallback.sizeClass(), "class 0 is empty, the next larger serves");
        assertEquals(1, pool.stats().classes().get(0).misses());
        assertEquals(0, pool.stats().exhaustedLeases(), "a fallback is not an exhaustion");
        small.get(3).release();
        assertSame(small.get(3), pool.lease(64), "the fitting class is preferred again once it has a buffer");
    }

    @Test
    void exhaustionReturnsNullAndIsCounted() {
        BufferPool pool = pool(SMALL);
        List<Buffer> held = new ArrayList<>();
        Buffer b;
        while ((b = pool.lease(1)) != null) {
            held.add(b);
        }
        assertEquals(14, held.size(), "lease(1) falls back through every class");
        assertEquals(1, pool.stats().exhaustedLeases());
        assertNull(pool.lease(4096));
        assertNull(pool.lease(65536));
        assertNull(pool.leaseFromClass(0));
        assertNull(pool.leaseFromClass(2));
        PoolStats stats = pool.stats();
        assertEquals(5, stats.exhaustedLeases());
        assertEquals(14, stats.totalLeased());
        assertEquals(0, stats.totalAvailable());
        assertEquals(14, pool.totalBuffers(), "the pool never grows");
        for (PoolStats.ClassStats c : stats.classes()) {
            assertEquals(c.count(), c.leased());
        }
        held.getFirst().release();
        assertNotNull(pool.leaseFromClass(held.getFirst().sizeClass()));
    }

    @Test
    void leaseArgumentsAreValidated() {
        BufferPool pool = pool(SMALL);
        for (int bad : new int[] {0, -1, Integer.MIN_VALUE, 65537, Integer.MAX_VALUE}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> pool.lease(bad));
            assertTrue(e.getMessage().contains("minCapacity"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> pool.leaseFromClass(-1));
        assertThrows(IllegalArgumentException.class, () -> pool.leaseFromClass(3));
        assertThrows(IllegalArgumentException.class, () -> pool.slabRegion(3));
    }

    @Test
    void doubleReleaseIsRejected() throws Exception {
        BufferPool pool = pool(SMALL);
        Buffer b = pool.lease(64);
        b.release();
        IllegalStateException e = assertThrows(IllegalStateException.class, b::release);
        assertTrue(e.getMessage().contains("released twice"), e.getMessage());
        // Also from another thread, and for a buffer that was never leased.
        Buffer c = pool.lease(64);
        c.release();
        ExecutionException remote = assertThrows(ExecutionException.class,
                () -> CompletableFuture.runAsync(c::release).get(10, TimeUnit.SECONDS));
        assertTrue(remote.getCause() instanceof IllegalStateException, remote.getCause().toString());
        assertThrows(IllegalStateException.class, () -> pool.release(pool.buffer(13)));
        // The lists are intact: every buffer can still be leased exactly once.
        Set<Integer> ids = new HashSet<>();
        Buffer x;
        while ((x = pool.lease(1)) != null) {
            assertTrue(ids.add(x.id()));
        }
        assertEquals(14, ids.size());
    }

    @Test
    void foreignBuffersAreRejected() {
        BufferPool one = pool(SMALL);
        BufferPool other = pool(SMALL);
        Buffer b = one.lease(64);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> other.release(b));
        assertTrue(e.getMessage().contains("another pool"), e.getMessage());
        assertTrue(b.isLeased(), "a refused release leaves the buffer leased");
        assertThrows(NullPointerException.class, () -> one.release(null));
        b.release();
    }

    @Test
    void onlyTheOwnerLeases() throws Exception {
        BufferPool pool = pool(SMALL);
        Buffer b = pool.lease(64); // binds this thread
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> CompletableFuture.supplyAsync(() -> pool.lease(64)).get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof IllegalStateException, e.getCause().toString());
        assertTrue(e.getCause().getMessage().contains("owner"), e.getCause().getMessage());
        assertThrows(ExecutionException.class,
                () -> CompletableFuture.runAsync(pool::bindOwner).get(10, TimeUnit.SECONDS));
        pool.bindOwner(); // the owner itself: no-op
        CompletableFuture.runAsync(b::release).get(10, TimeUnit.SECONDS); // release is fine anywhere
        assertEquals(1, pool.stats().crossThreadReleases());
        assertFalse(b.isLeased());
        assertEquals(0, pool.stats().classes().getFirst().leased(), "b is back, as a pending return");
    }

    @Test
    void bindOwnerFixesTheOwnerBeforeTheFirstLease() throws Exception {
        BufferPool pool = pool(SMALL);
        CompletableFuture.runAsync(pool::bindOwner).get(10, TimeUnit.SECONDS);
        assertThrows(IllegalStateException.class, () -> pool.lease(64));
    }

    @Test
    void crossThreadReleasesAreCountedAndDrainedOnlyWhenDry() throws Exception {
        BufferPool pool = pool(SMALL);
        Buffer a = pool.leaseFromClass(1);
        Buffer b = pool.leaseFromClass(1);
        CompletableFuture.runAsync(() -> {
            a.release();
            b.release();
        }).get(10, TimeUnit.SECONDS);
        PoolStats stats = pool.stats();
        assertEquals(2, stats.crossThreadReleases());
        assertEquals(4, stats.classes().get(1).available(), "pending returns count as available");
        // Two buffers remain on the free list; the returned ones come after them.
        Set<Buffer> seen = new HashSet<>();
        for (int i = 0; i < 4; i++) {
            assertTrue(seen.add(pool.leaseFromClass(1)));
        }
        assertTrue(seen.contains(a) && seen.contains(b));
        assertNull(pool.leaseFromClass(1));
        assertEquals(2, pool.stats().crossThreadReleases());
    }

    @Test
    void closeFreesEverythingAndLaterUseFails() {
        BufferPool pool = BufferPool.create(SMALL);
        Buffer leased = pool.lease(64);
        MemoryRegion slab = pool.slabRegion(0);
        int rkey = slab.remoteKey();
        pool.close();
        assertTrue(pool.isClosed());
        assertFalse(slab.isValid());
        assertNull(pool.registry().lookupRemote(rkey));
        assertEquals(0, pool.registry().size());
        assertThrows(IllegalStateException.class, () -> pool.lease(64));
        assertThrows(IllegalStateException.class, () -> pool.leaseFromClass(0));
        assertThrows(IllegalStateException.class, leased::release);
        assertThrows(IllegalStateException.class, () -> pool.slabRegion(0));
        assertThrows(IllegalStateException.class, pool::bindOwner);
        assertThrows(IllegalStateException.class, () -> leased.segment().get(ValueLayout.JAVA_BYTE, 0),
                "the memory is freed");
        pool.close(); // idempotent
        assertEquals(1, pool.stats().totalLeased(), "stats stay readable");
    }

    @Test
    void poolsCanShareARegistry() {
        MemoryRegistry registry = new MemoryRegistry(8);
        BufferPool a = BufferPool.create(SMALL, registry);
        BufferPool b = pool(PoolConfig.of(new SizeClass(128, 2)));
        BufferPool c = BufferPool.create(PoolConfig.of(new SizeClass(128, 2)), registry);
        pools.add(c);
        assertSame(registry, a.registry());
        assertEquals(4, registry.size());
        assertFalse(registry == b.registry());
        a.close();
        assertEquals(1, registry.size(), "closing a pool deregisters only its own slabs");
        assertTrue(c.slabRegion(0).isValid());
        IllegalStateException full = assertThrows(IllegalStateException.class,
                () -> BufferPool.create(PoolConfig.of(new SizeClass(64, 1), new SizeClass(128, 1),
                        new SizeClass(256, 1), new SizeClass(512, 1), new SizeClass(1024, 1),
                        new SizeClass(2048, 1), new SizeClass(4096, 1), new SizeClass(8192, 1)), registry));
        assertTrue(full.getMessage().contains("full"), full.getMessage());
        assertEquals(1, registry.size(), "a failed create gives its slots back");
        assertThrows(NullPointerException.class, () -> BufferPool.create(null));
        assertThrows(NullPointerException.class, () -> BufferPool.create(SMALL, null));
    }

    // ---------------------------------------------------------------- stale releases and pins

    @Test
    void staleReleaseAfterReleaseIsDetectedByGeneration() {
        BufferPool pool = pool(PoolConfig.of(new SizeClass(4096, 1)));
        Buffer a = pool.lease(4096);
        int first = a.generation();
        a.release(first);
        Buffer b = pool.lease(4096);
        assertSame(a, b, "one buffer in the class: the same object comes back");
        int second = b.generation();
        assertTrue(second != first, "every lease has a new generation");
        // The first holder's stale release is refused and the new holder keeps the buffer.
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> a.release(first));
        assertTrue(e.getMessage().contains("leased under " + second), e.getMessage());
        assertTrue(b.isLeased());
        assertNull(pool.lease(4096), "the buffer was not handed back to the pool");
        b.release(second);
        assertThrows(IllegalStateException.class, () -> b.release(second), "released twice");
        assertThrows(IllegalStateException.class, b::release, "released twice");
    }

    @Test
    void plainReleaseDetectsAFreeBufferButNotAStaleReference() {
        // What the javadoc promises, and what it says it cannot promise.
        BufferPool pool = pool(PoolConfig.of(new SizeClass(4096, 1)));
        Buffer a = pool.lease(4096);
        a.release();
        assertThrows(IllegalStateException.class, a::release);
        Buffer b = pool.lease(4096);
        a.release(); // stale, through the old reference: not detectable without the generation
        assertFalse(b.isLeased());
    }

    @Test
    void closeRefusesWhileASlabIsPinned() {
        BufferPool pool = pool(SMALL);
        MemoryRegion slab = pool.slabRegion(1);
        assertTrue(slab.pin());
        IllegalStateException e = assertThrows(IllegalStateException.class, pool::close);
        assertTrue(e.getMessage().contains("pinned 1 time(s)"), e.getMessage());
        assertFalse(pool.isClosed());
        assertNotNull(pool.lease(64), "a refused close leaves the pool usable");
        MemoryRegion before = pool.slabRegion(0); // its pins were shut before slab 1 refused: open again
        assertTrue(before.pin(), "a refused close gives back what it shut");
        before.unpin();
        slab.unpin();
        pool.close();
        assertTrue(pool.isClosed());
        assertFalse(slab.isValid());
    }
}
