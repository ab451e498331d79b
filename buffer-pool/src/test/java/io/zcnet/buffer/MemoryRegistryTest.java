package io.zcnet.buffer;

import static io.zcnet.buffer.AccessStatus.DEREGISTERED;
import static io.zcnet.buffer.AccessStatus.INVALID_KEY;
import static io.zcnet.buffer.AccessStatus.NOT_PERMITTED;
import static io.zcnet.buffer.AccessStatus.OK;
import static io.zcnet.buffer.AccessStatus.OUT_OF_BOUNDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class MemoryRegistryTest {

    private static final int RW = Access.REMOTE_WRITE;
    private static final int RR = Access.REMOTE_READ;

    private Arena arena;
    private MemorySegment memory;

    @BeforeEach
    void allocate() {
        arena = Arena.ofShared();
        memory = arena.allocate(4096, 4096);
    }

    @AfterEach
    void free() {
        arena.close();
    }

    @Test
    void registeredRegionResolvesByBothKeys() {
        MemoryRegistry registry = new MemoryRegistry();
        MemoryRegion region = registry.register(memory, Access.ALL);
        assertSame(memory, region.segment());
        assertEquals(4096, region.size());
        assertEquals(Access.ALL, region.access());
        assertTrue(region.isValid());
        assertSame(registry, region.registry());
        assertSame(region, registry.lookupRemote(region.remoteKey()));
        assertSame(region, registry.lookupLocal(region.localKey()));
        assertNotEquals(region.remoteKey(), region.localKey());
        assertNull(registry.lookupRemote(region.localKey()), "a local key is not a remote key");
        assertNull(registry.lookupLocal(region.remoteKey()), "a remote key is not a local key");
        assertEquals(1, registry.size());
    }

    @Test
    void keysCarryTheSlotInTheLowBitsAndAreNeverZero() {
        MemoryRegistry registry = new MemoryRegistry(16);
        for (int i = 0; i < 16; i++) {
            MemoryRegion region = registry.register(memory.asSlice(i * 256L, 256), Access.LOCAL_WRITE);
            assertEquals(region.remoteKey() & 15, region.localKey() & 15);
            assertNotEquals(0, region.remoteKey() & ~15, "tag bits must not be zero");
            assertNotEquals(0, region.localKey() & ~15, "tag bits must not be zero");
        }
        assertEquals(INVALID_KEY, registry.checkRemote(0, 0, 0, RR));
        assertNull(registry.lookupRemote(0));
        assertNull(registry.lookupLocal(0));
    }

    @Test
    void boundsAreCheckedWithoutOverflow() {
        MemoryRegistry registry = new MemoryRegistry();
        int rkey = registry.register(memory, Access.ALL).remoteKey();
        assertEquals(OK, registry.checkRemote(rkey, 0, 4096, RW));
        assertEquals(OK, registry.checkRemote(rkey, 4095, 1, RW));
        assertEquals(OK, registry.checkRemote(rkey, 4096, 0, RR));
        assertEquals(OK, registry.checkRemote(rkey, 0, 0, RR));
        assertEquals(OUT_OF_BOUNDS, registry.checkRemote(rkey, 0, 4097, RW));
        assertEquals(OUT_OF_BOUNDS, registry.checkRemote(rkey, 4096, 1, RW));
        assertEquals(OUT_OF_BOUNDS, registry.checkRemote(rkey, 4097, 0, RW));
        assertEquals(OUT_OF_BOUNDS, registry.checkRemote(rkey, -1, 1, RW));
        assertEquals(OUT_OF_BOUNDS, registry.checkRemote(rkey, 0, -1, RW));
        assertEquals(OUT_OF_BOUNDS, registry.checkRemote(rkey, -1, -1, RW));
        assertEquals(OUT_OF_BOUNDS, registry.checkRemote(rkey, Long.MAX_VALUE, 1, RW));
        assertEquals(OUT_OF_BOUNDS, registry.checkRemote(rkey, 1, Long.MAX_VALUE, RW), "offset + length overflows");
        assertEquals(OUT_OF_BOUNDS, registry.checkRemote(rkey, Long.MAX_VALUE, Long.MAX_VALUE, RW));
        assertEquals(OUT_OF_BOUNDS, registry.checkRemote(rkey, 0, Long.MAX_VALUE, RW));
        assertEquals(OUT_OF_BOUNDS, registry.checkRemote(rkey, Long.MIN_VALUE, 4096, RW));
        assertEquals(OUT_OF_BOUNDS, registry.checkRemote(rkey, 4096, Long.MIN_VALUE, RW));
        assertEquals(OUT_OF_BOUNDS, registry.checkRemote(rkey, 2048, Long.MAX_VALUE - 1000, RW));
    }

    @Test
    void rightsAreChecked() {
        MemoryRegistry registry = new MemoryRegistry();
        int readOnly = registry.register(memory.asSlice(0, 1024), Access.REMOTE_READ).remoteKey();
        int writeOnly = registry.register(memory.asSlice(1024, 1024), Access.LOCAL_WRITE | RW).remoteKey();
        int localOnly = registry.register(memory.asSlice(2048, 1024), Access.LOCAL_WRITE).remoteKey();
        assertEquals(OK, registry.checkRemote(readOnly, 0, 1, RR));
        assertEquals(NOT_PERMITTED, registry.checkRemote(readOnly, 0, 1, RW));
        assertEquals(NOT_PERMITTED, registry.checkRemote(readOnly, 0, 1, RW | RR));
        assertEquals(OK, registry.checkRemote(writeOnly, 0, 1, RW));
        assertEquals(NOT_PERMITTED, registry.checkRemote(writeOnly, 0, 1, RR));
        assertEquals(NOT_PERMITTED, registry.checkRemote(localOnly, 0, 1, RR));
        assertEquals(NOT_PERMITTED, registry.checkRemote(localOnly, 0, 1, RW));
        // Rights are checked before bounds, as the verbs order keys, rights, bounds.
        assertEquals(NOT_PERMITTED, registry.checkRemote(localOnly, -1, 1, RW));
    }

    @Test
    void localChecksUseLocalKeysAndRights() {
        MemoryRegistry registry = new MemoryRegistry();
        MemoryRegion sendOnly = registry.register(memory.asSlice(0, 1024), 0);
        MemoryRegion writable = registry.register(memory.asSlice(1024, 1024), Access.LOCAL_WRITE);
        assertEquals(OK, registry.checkLocal(sendOnly.localKey(), 0, 1024, 0));
        assertEquals(NOT_PERMITTED, registry.checkLocal(sendOnly.localKey(), 0, 1, Access.LOCAL_WRITE));
        assertEquals(OK, registry.checkLocal(writable.localKey(), 1000, 24, Access.LOCAL_WRITE));
        assertEquals(OUT_OF_BOUNDS, registry.checkLocal(writable.localKey(), 1000, 25, Access.LOCAL_WRITE));
        assertEquals(INVALID_KEY, registry.checkLocal(writable.remoteKey(), 0, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> registry.checkLocal(writable.localKey(), 0, 1, 8));
    }

    @Test
    void resolvingALocalKeyGivesTheRegionExactlyWhenTheCheckPasses() {
        MemoryRegistry registry = new MemoryRegistry(4);
        MemoryRegion sendOnly = registry.register(memory.asSlice(0, 1024), 0);
        MemoryRegion writable = registry.register(memory.asSlice(1024, 1024), Access.LOCAL_WRITE);
        MemoryRegion gone = registry.register(memory.asSlice(2048, 1024), Access.ALL);
        registry.deregister(gone);
        int[] keys = {sendOnly.localKey(), writable.localKey(), writable.remoteKey(), gone.localKey(), 0};
        long[][] ranges = {{0, 1024}, {1000, 24}, {1000, 25}, {-1, 1}, {0, -1}, {1024, 0}, {Long.MAX_VALUE, 2}};
        for (int key : keys) {
            for (long[] r : ranges) {
                for (int access : new int[] {0, Access.LOCAL_WRITE, Access.REMOTE_READ}) {
                    int status = registry.checkLocal(key, r[0], r[1], access);
                    MemoryRegion region = registry.resolveLocal(key, r[0], r[1], access);
                    String what = Integer.toHexString(key) + " " + r[0] + "+" + r[1] + " access " + access;
                    if (status == OK) {
                        assertSame(registry.lookupLocal(key), region, what);
                    } else {
                        assertNull(region, what + ": " + AccessStatus.name(status));
                    }
                }
            }
        }
        assertSame(writable, registry.resolveLocal(writable.localKey(), 1000, 24, Access.LOCAL_WRITE));
        assertNull(registry.resolveLocal(sendOnly.localKey(), 0, 1, Access.LOCAL_WRITE));
        assertThrows(IllegalArgumentException.class, () -> registry.resolveLocal(writable.localKey(), 0, 1, 8));
    }

    @Test
    void requiredAccessMustBeRemoteRights() {
        MemoryRegistry registry = new MemoryRegistry();
        int rkey = registry.register(memory, Access.ALL).remoteKey();
        for (int bad : new int[] {0, Access.LOCAL_WRITE, Access.LOCAL_WRITE | RR, 8, -1}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> registry.checkRemote(rkey, 0, 1, bad));
            assertTrue(e.getMessage().contains("requiredAccess"), e.getMessage());
        }
    }

    @Test
    void deregisteredKeysNeverResolveAgain() {
        MemoryRegistry registry = new MemoryRegistry(1); // one slot: every registration reuses it
        MemoryRegion first = registry.register(memory, Access.ALL);
        int oldRemote = first.remoteKey();
        int oldLocal = first.localKey();
        registry.deregister(first);
        assertFalse(first.isValid());
        assertNull(registry.lookupRemote(oldRemote));
        assertNull(registry.lookupLocal(oldLocal));
        assertEquals(DEREGISTERED, registry.checkRemote(oldRemote, 0, 1, RR));
        assertEquals(DEREGISTERED, registry.checkLocal(oldLocal, 0, 1, 0));
        assertEquals(0, registry.size());

        MemoryRegion second = registry.register(memory, Access.ALL);
        assertNotEquals(oldRemote, second.remoteKey());
        assertNotEquals(oldLocal, second.localKey());
        assertNotEquals(oldRemote, second.localKey());
        assertNotEquals(oldLocal, second.remoteKey());
        assertNull(registry.lookupRemote(oldRemote), "the old key must not reach the slot's new region");
        assertNull(registry.lookupLocal(oldLocal));
        assertEquals(DEREGISTERED, registry.checkRemote(oldRemote, 0, 1, RR));
        assertSame(second, registry.lookupRemote(second.remoteKey()));

        IllegalStateException e = assertThrows(IllegalStateException.class, () -> registry.deregister(first));
        assertTrue(e.getMessage().contains("already deregistered"), e.getMessage());
        assertTrue(second.isValid(), "a failed double deregistration must not touch the slot's new region");
    }

    @Test
    void keysAreRandomAndConsecutiveKeysOfASlotDiffer() {
        MemoryRegistry registry = new MemoryRegistry(1);
        Set<Integer> seen = new HashSet<>();
        int previousRemote = 0;
        int previousLocal = 0;
        int rounds = 2000;
        for (int i = 0; i < rounds; i++) {
            MemoryRegion region = registry.register(memory, Access.ALL);
            assertNotEquals(previousRemote, region.remoteKey());
            assertNotEquals(previousLocal, region.localKey());
            assertNotEquals(region.remoteKey(), region.localKey());
            seen.add(region.remoteKey());
            seen.add(region.localKey());
            previousRemote = region.remoteKey();
            previousLocal = region.localKey();
            registry.deregister(region);
        }
        // 4000 draws from 2^32: a collision has probability ~0.2%; 10 would mean the keys are not random.
        assertTrue(seen.size() > 2 * rounds - 10, "distinct keys: " + seen.size());
        // Every one of the 32 bits varies.
        int ones = 0;
        int zeros = 0;
        for (int key : seen) {
            ones |= key;
            zeros |= ~key;
        }
        assertEquals(-1, ones);
        assertEquals(-1, zeros);
    }

    @Test
    void twoRegistriesIssueDifferentKeys() {
        MemoryRegion a = new MemoryRegistry().register(memory, Access.ALL);
        MemoryRegion b = new MemoryRegistry().register(memory, Access.ALL);
        // Both use slot 0; equal 22-bit random tags would happen with probability 2^-22.
        assertNotEquals(a.remoteKey(), b.remoteKey());
    }

    @Test
    void hostileKeysWithTheRightSlotAreRejected() {
        MemoryRegistry registry = new MemoryRegistry(); // 1024 slots: 10 slot bits, 22 tag bits
        registry.register(memory.asSlice(0, 64), Access.ALL);
        MemoryRegion target = registry.register(memory.asSlice(64, 64), Access.ALL);
        int slotBits = Integer.numberOfTrailingZeros(registry.capacity());
        int slot = target.remoteKey() & (registry.capacity() - 1);
        int resolvedRemote = 0;
        int resolvedLocal = 0;
        for (int tag = 0; tag < 1 << (32 - slotBits); tag++) {
            int key = (tag << slotBits) | slot;
            MemoryRegion remote = registry.lookupRemote(key);
            if (remote != null) {
                assertEquals(target.remoteKey(), key);
                resolvedRemote++;
            }
            MemoryRegion local = registry.lookupLocal(key);
            if (local != null) {
                assertEquals(target.localKey(), key);
                resolvedLocal++;
            }
            int status = registry.checkRemote(key, 0, 1, RW);
            if (status != (key == target.remoteKey() ? OK : INVALID_KEY)) {
                fail("key 0x" + Integer.toHexString(key) + ": " + AccessStatus.name(status));
            }
        }
        assertEquals(1, resolvedRemote);
        assertEquals(1, resolvedLocal);
    }

    @Test
    void heapAndDeadSegmentsAreRejected() {
        MemoryRegistry registry = new MemoryRegistry();
        IllegalArgumentException heap = assertThrows(IllegalArgumentException.class,
                () -> registry.register(MemorySegment.ofArray(new byte[4096]), Access.ALL));
        assertTrue(heap.getMessage().contains("native"), heap.getMessage());
        assertThrows(IllegalArgumentException.class, () -> registry.register(memory.asSlice(0, 0), Access.ALL));
        assertThrows(IllegalArgumentException.class,
                () -> registry.register(memory.asReadOnly(), Access.LOCAL_WRITE));
        assertEquals(Access.REMOTE_READ, registry.register(memory.asReadOnly(), Access.REMOTE_READ).access());
        assertThrows(NullPointerException.class, () -> registry.register(null, Access.ALL));
        Arena closed = Arena.ofConfined();
        MemorySegment dead = closed.allocate(64);
        closed.close();
        assertThrows(IllegalArgumentException.class, () -> registry.register(dead, Access.ALL));
    }

    @Test
    void invalidAccessIsRejected() {
        MemoryRegistry registry = new MemoryRegistry();
        for (int bad : new int[] {Access.REMOTE_WRITE, Access.REMOTE_WRITE | Access.REMOTE_READ, 8, 0x100, -1}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> registry.register(memory, bad));
            assertTrue(e.getMessage().contains("access"), e.getMessage());
        }
        assertEquals(0, registry.size());
    }

    @Test
    void freedMemoryIsReportedDeregistered() {
        MemoryRegistry registry = new MemoryRegistry();
        Arena shortLived = Arena.ofShared();
        MemoryRegion region = registry.register(shortLived.allocate(256), Access.ALL);
        assertEquals(OK, registry.checkRemote(region.remoteKey(), 0, 256, RW));
        shortLived.close();
        assertEquals(DEREGISTERED, registry.checkRemote(region.remoteKey(), 0, 256, RW));
    }

    @Test
    void capacityIsBounded() {
        MemoryRegistry registry = new MemoryRegistry(2);
        MemoryRegion a = registry.register(memory.asSlice(0, 64), Access.ALL);
        registry.register(memory.asSlice(64, 64), Access.ALL);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> registry.register(memory.asSlice(128, 64), Access.ALL));
        assertTrue(e.getMessage().contains("full"), e.getMessage());
        registry.deregister(a);
        assertTrue(registry.register(memory.asSlice(128, 64), Access.ALL).isValid());
        for (int bad : new int[] {0, -1, 3, 1000, MemoryRegistry.MAX_CAPACITY * 2}) {
            assertThrows(IllegalArgumentException.class, () -> new MemoryRegistry(bad));
        }
        assertEquals(MemoryRegistry.MAX_CAPACITY, new MemoryRegistry(MemoryRegistry.MAX_CAPACITY).capacity());
    }

    @Test
    void foreignRegionIsRejected() {
        MemoryRegistry one = new MemoryRegistry();
        MemoryRegistry other = new MemoryRegistry();
        MemoryRegion region = one.register(memory, Access.ALL);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> other.deregister(region));
        assertTrue(e.getMessage().contains("another registry"), e.getMessage());
        assertTrue(region.isValid());
        assertThrows(NullPointerException.class, () -> one.deregister(null));
    }

    @Test
    void toStringDoesNotLeakTheRemoteKey() {
        MemoryRegion region = new MemoryRegistry().register(memory, Access.ALL);
        String text = region.toString();
        assertFalse(text.contains(Integer.toHexString(region.remoteKey())), text);
        assertTrue(text.contains(Integer.toHexString(region.localKey())), text);
    }

    /** A reader resolving keys while another thread registers and deregisters never sees a wrong region. */
    @Test
    void lookupsRacingWithRegistrationSeeOnlyMatchingRegions() throws Exception {
        MemoryRegistry registry = new MemoryRegistry(4);
        int[] keys = new int[4096];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread writer = new Thread(() -> {
            try {
                for (int i = 0; i < 20_000; i++) {
                    MemoryRegion region = registry.register(memory.asSlice((i & 3) * 1024L, 1024), Access.ALL);
                    keys[i & (keys.length - 1)] = region.remoteKey(); // racy on purpose: readers probe any int
                    registry.deregister(region);
                }
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        writer.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (writer.isAlive() && System.nanoTime() < deadline) {
            for (int key : keys) {
                MemoryRegion region = registry.lookupRemote(key);
                if (region != null) {
                    assertEquals(key, region.remoteKey());
                }
                int status = registry.checkRemote(key, 0, 1024, RW);
                assertTrue(status == OK || status == INVALID_KEY || status == DEREGISTERED,
                        AccessStatus.name(status));
            }
        }
        writer.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(writer.isAlive(), "writer did not finish");
        assertNull(failure.get());
        assertEquals(0, registry.size());
    }

    // ---------------------------------------------------------------- thread confinement and pins

    @Test
    void registerRefusesMemoryConfinedToOneThread() {
        MemoryRegistry registry = new MemoryRegistry();
        try (Arena confined = Arena.ofConfined()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> registry.register(confined.allocate(4096), Access.LOCAL_WRITE));
            assertTrue(e.getMessage().contains("Arena.ofShared()"), e.getMessage());
        }
        assertEquals(0, registry.size());
        // Memory every thread may touch is fine.
        registry.register(Arena.ofAuto().allocate(64), Access.LOCAL_WRITE);
        registry.register(memory, Access.LOCAL_WRITE);
        assertEquals(2, registry.size());
    }

    @Test
    void pinnedRegionCannotBeDeregisteredUntilUnpinned() {
        MemoryRegistry registry = new MemoryRegistry();
        MemoryRegion region = registry.register(memory, Access.LOCAL_WRITE);
        assertTrue(region.pin());
        assertTrue(region.pin());
        assertEquals(2, region.pinCount());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> registry.deregister(region));
        assertTrue(e.getMessage().contains("pinned 2 time(s)"), e.getMessage());
        assertTrue(region.isValid(), "a refused deregister leaves the region registered");
        assertSame(region, registry.lookupLocal(region.localKey()));
        region.unpin();
        assertThrows(IllegalStateException.class, () -> registry.deregister(region));
        region.unpin();
        assertEquals(0, region.pinCount());
        assertThrows(IllegalStateException.class, region::unpin, "unpin without a pin");
        registry.deregister(region);
        assertFalse(region.isValid());
        assertFalse(region.pin(), "a deregistered region cannot be pinned");
        assertEquals(0, region.pinCount());
    }

    @Test
    void pinRacingDeregisterEitherPinsFirstOrFails() throws Exception {
        for (int round = 0; round < 200; round++) {
            MemoryRegistry registry = new MemoryRegistry();
            MemoryRegion region = registry.register(memory, Access.LOCAL_WRITE);
            AtomicReference<Throwable> refused = new AtomicReference<>();
            Thread deregistering = new Thread(() -> {
                try {
                    registry.deregister(region);
                } catch (IllegalStateException e) {
                    refused.set(e);
                }
            });
            deregistering.start();
            boolean pinned = region.pin();
            deregistering.join(TimeUnit.SECONDS.toMillis(10));
            assertFalse(deregistering.isAlive());
            // Exactly one of the two wins: a pin held means the region is still registered.
            assertEquals(pinned, refused.get() != null, "pinned=" + pinned + " refused=" + refused.get());
            assertEquals(pinned, region.isValid());
        }
    }
}
