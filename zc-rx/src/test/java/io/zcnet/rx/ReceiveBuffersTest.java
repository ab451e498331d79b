package io.zcnet.rx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The pool on its own: LIFO reuse per size, a bound on what is kept idle, counts that add up, and returns that
 * cannot be doubled. Engine independent: no receive is involved.
 */
class ReceiveBuffersTest {

    @Test
    void aReturnedBufferIsTheNextOneLentOfItsSizeAndNoOtherSize() {
        try (ReceiveBuffers buffers = new ReceiveBuffers(4)) {
            ReceiveBuffers.Block a = buffers.lease(256);
            ReceiveBuffers.Block b = buffers.lease(256);
            ReceiveBuffers.Block large = buffers.lease(4096);
            assertEquals(256, a.memory.byteSize());
            assertEquals(0, a.memory.address() % 64, "64-byte aligned");
            buffers.giveBack(a);
            buffers.giveBack(b);
            assertSame(b, buffers.lease(256), "the last returned first");
            assertSame(a, buffers.lease(256));
            assertEquals(3, buffers.made(), "reuse makes nothing");
            assertEquals(5, buffers.leases());
            buffers.giveBack(large);
            assertEquals(2, buffers.lent());
            assertEquals(512, buffers.lentBytes());
            assertEquals(1, buffers.idle());
            assertEquals(4096, buffers.idleBytes());
        }
    }

    @Test
    void returnsPastTheBoundAreFreed() {
        try (ReceiveBuffers buffers = new ReceiveBuffers(1)) {
            ReceiveBuffers.Block a = buffers.lease(128);
            ReceiveBuffers.Block b = buffers.lease(128);
            buffers.giveBack(a);
            buffers.giveBack(b);
            assertEquals(1, buffers.idle(), "one kept");
            assertTrue(a.memory.scope().isAlive());
            assertFalse(b.memory.scope().isAlive(), "the one past the bound freed at once");
            assertSame(a, buffers.lease(128));
        }
    }

    @Test
    void aBufferGivenBackTwiceIsRefused() {
        try (ReceiveBuffers buffers = new ReceiveBuffers(2)) {
            ReceiveBuffers.Block a = buffers.lease(64);
            buffers.giveBack(a);
            assertThrows(IllegalStateException.class, () -> buffers.giveBack(a));
            assertEquals(1, buffers.idle(), "the list untouched by the refused return");
        }
    }

    @Test
    void closeFreesWhatIsIdleAndWhatIsLentWhenItComesBack() {
        ReceiveBuffers buffers = new ReceiveBuffers(2);
        ReceiveBuffers.Block idle = buffers.lease(64);
        ReceiveBuffers.Block lent = buffers.lease(64);
        buffers.giveBack(idle);
        buffers.close();
        assertFalse(idle.memory.scope().isAlive());
        assertTrue(lent.memory.scope().isAlive(), "its holder may still be receiving into it");
        buffers.giveBack(lent);
        assertFalse(lent.memory.scope().isAlive());
        assertThrows(IllegalStateException.class, () -> buffers.lease(64));
    }
}
