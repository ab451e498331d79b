package io.zcnet.ring.nio;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The NIO engine's ByteBuffer views: pinned ring buffers never cost an allocation, however many rotate. */
class ViewCacheTest {

    @Test
    void pinnedSegmentsBeyondTheTableSizeAreServedWithoutAllocating() throws Throwable {
        MethodHandle allocated = NioEventLoopTest.currentThreadAllocatedBytes();
        try (Arena arena = Arena.ofConfined()) {
            ViewCache cache = new ViewCache(64);
            MemorySegment[] buffers = new MemorySegment[256]; // four times the direct-mapped table
            ByteBuffer[] views = new ByteBuffer[buffers.length];
            for (int i = 0; i < buffers.length; i++) {
                buffers[i] = arena.allocate(1024);
                views[i] = buffers[i].asByteBuffer();
                cache.pin(buffers[i], views[i]);
            }
            for (int warm = 0; warm < 20_000; warm++) {
                cache.view(buffers[warm % buffers.length]);
            }
            long before = (long) allocated.invokeExact();
            int rounds = 100_000;
            for (int i = 0; i < rounds; i++) {
                int b = (i * 7) % buffers.length;
                assertSame(views[b], cache.view(buffers[b]));
            }
            long bytes = (long) allocated.invokeExact() - before;
            assertTrue(bytes < rounds / 100, "rotating over 256 pinned buffers allocated " + bytes + " bytes");

            cache.unpin(buffers[3]);
            assertNotSame(views[3], cache.view(buffers[3]), "an unpinned segment gets a view of its own again");
        }
    }
}
