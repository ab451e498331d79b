package io.zcnet.ring.nio;

import io.zcnet.buffer.BufferPool;
import io.zcnet.buffer.PoolConfig;
import io.zcnet.buffer.SizeClass;
import io.zcnet.ring.EventLoopConfig;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NioBufferRingTest {
    private BufferPool pool;
    private NioEventLoop loop;

    @BeforeEach
    void open() throws IOException {
        pool = BufferPool.create(PoolConfig.of(new SizeClass(1024, 16), new SizeClass(4096, 4)));
        loop = NioEventLoop.open(EventLoopConfig.defaults().withEngine(EventLoopConfig.Choice.NIO));
    }

    @AfterEach
    void close() {
        loop.close();
        pool.close();
    }

    @Test
    void handsOutBuffersInFifoOrderIncludingRecycledOnes() throws IOException {
        NioBufferRing ring = (NioBufferRing) loop.createBufferRing(3, pool, 4, 1000);
        assertEquals(3, ring.groupId());
        assertEquals(4, ring.bufferCount());
        assertEquals(1000, ring.bufferSize());
        assertEquals(1000, ring.buffer(0).byteSize());
        assertEquals(4, ring.available());
        for (int expected = 0; expected < 4; expected++) {
            assertEquals(expected, ring.peek());
            ring.commit();
        }
        assertEquals(-1, ring.peek(), "an empty ring means ENOBUFS");
        ring.recycle(2);
        ring.recycle(0);
        assertEquals(2, ring.available());
        assertEquals(2, ring.peek(), "recycled buffers come back in recycling order");
        ring.commit();
        assertEquals(0, ring.peek());
        assertEquals(1000, ring.view(0).remaining(), "the cached view covers the whole buffer");
        assertNotSame(ring.buffer(0), ring.buffer(1));
    }

    @Test
    void rejectsDoubleRecycleAndForeignIds() throws IOException {
        NioBufferRing ring = (NioBufferRing) loop.createBufferRing(1, pool, 2, 1024);
        IllegalStateException twice = assertThrows(IllegalStateException.class, () -> ring.recycle(0));
        assertTrue(twice.getMessage().contains("recycled twice"), twice.getMessage());
        ring.commit();
        ring.recycle(0);
        assertThrows(IllegalStateException.class, () -> ring.recycle(0));
        assertThrows(IllegalArgumentException.class, () -> ring.recycle(2));
        assertThrows(IllegalArgumentException.class, () -> ring.recycle(-1));
        assertThrows(IllegalArgumentException.class, () -> ring.buffer(5));
    }

    @Test
    void validatesCreationArguments() throws IOException {
        assertThrows(IllegalArgumentException.class, () -> loop.createBufferRing(0, pool, 3, 1024));
        assertThrows(IllegalArgumentException.class, () -> loop.createBufferRing(0, pool, 0, 1024));
        assertThrows(IllegalArgumentException.class, () -> loop.createBufferRing(-1, pool, 2, 1024));
        assertThrows(IllegalArgumentException.class, () -> loop.createBufferRing(65536, pool, 2, 1024));
        assertThrows(IllegalArgumentException.class, () -> loop.createBufferRing(0, pool, 2, 0));
        assertThrows(IllegalArgumentException.class, () -> loop.createBufferRing(0, pool, 2, 8192));
        assertThrows(IllegalArgumentException.class, () -> loop.createBufferRing(0, null, 2, 1024));
        loop.createBufferRing(9, pool, 2, 1024);
        assertThrows(IOException.class, () -> loop.createBufferRing(9, pool, 2, 1024), "group ids are unique");
    }

    @Test
    void returnsEveryBufferToThePoolOnCloseAndOnExhaustion() throws IOException {
        int before = pool.stats().totalAvailable();
        BufferRingCloser ring = new BufferRingCloser(loop.createBufferRing(0, pool, 8, 1024));
        assertEquals(before - 8, pool.stats().totalAvailable());
        ring.close();
        ring.close();
        assertEquals(before, pool.stats().totalAvailable(), "closing twice releases once");
        IOException exhausted = assertThrows(IOException.class, () -> loop.createBufferRing(1, pool, 32, 4096));
        assertTrue(exhausted.getMessage().contains("exhausted"), exhausted.getMessage());
        assertEquals(before, pool.stats().totalAvailable(), "a failed creation gives back what it leased");
        loop.createBufferRing(0, pool, 4, 1024).close(); // the group id is free again
    }

    private record BufferRingCloser(io.zcnet.ring.BufferRing ring) {
        void close() {
            ring.close();
        }
    }
}
