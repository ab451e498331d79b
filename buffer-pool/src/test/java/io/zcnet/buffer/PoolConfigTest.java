package io.zcnet.buffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class PoolConfigTest {

    @Test
    void sizeClassAcceptsPowersOfTwoFrom64() {
        assertEquals(64, new SizeClass(64, 1).bufferSize());
        assertEquals(1 << 30, new SizeClass(1 << 30, 1).bufferSize());
        assertEquals((long) (1 << 30) * 3, new SizeClass(1 << 30, 3).slabBytes());
    }

    @Test
    void sizeClassRejectsBadSizes() {
        for (int size : new int[] {0, -64, 1, 32, 63, 100, 4095, 4097, Integer.MIN_VALUE, Integer.MAX_VALUE}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new SizeClass(size, 1));
            assertTrue(e.getMessage().contains("power of two"), e.getMessage());
            assertTrue(e.getMessage().contains(Integer.toString(size)), e.getMessage());
        }
    }

    @Test
    void sizeClassRejectsBadCounts() {
        assertThrows(IllegalArgumentException.class, () -> new SizeClass(64, 0));
        assertThrows(IllegalArgumentException.class, () -> new SizeClass(64, -1));
    }

    @Test
    void defaultsAreTheDocumentedClasses() {
        PoolConfig config = PoolConfig.defaults();
        assertEquals(List.of(new SizeClass(4096, 1024), new SizeClass(65536, 256), new SizeClass(1 << 20, 32)),
                config.classes());
        assertEquals(52L << 20, config.totalBytes());
        assertEquals(1024 + 256 + 32, config.totalBuffers());
    }

    @Test
    void rejectsEmptyAndNull() {
        assertThrows(IllegalArgumentException.class, PoolConfig::of);
        assertThrows(NullPointerException.class, () -> new PoolConfig(null));
        assertThrows(NullPointerException.class, () -> PoolConfig.of(new SizeClass(64, 1), null));
    }

    @Test
    void rejectsUnsortedAndDuplicateSizes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PoolConfig.of(new SizeClass(4096, 1), new SizeClass(64, 1)));
        assertTrue(e.getMessage().contains("ascending"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> PoolConfig.of(new SizeClass(64, 1), new SizeClass(64, 2)));
        assertThrows(IllegalArgumentException.class,
                () -> PoolConfig.of(new SizeClass(64, 1), new SizeClass(256, 1), new SizeClass(128, 1)));
    }

    @Test
    void rejectsTooManyBytes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PoolConfig.of(new SizeClass(1 << 30, 9)));
        assertTrue(e.getMessage().contains("8 GiB"), e.getMessage());
        // Exactly at the limit is fine, spread over classes too.
        assertEquals(PoolConfig.MAX_TOTAL_BYTES, PoolConfig.of(new SizeClass(1 << 30, 8)).totalBytes());
        assertThrows(IllegalArgumentException.class,
                () -> PoolConfig.of(new SizeClass(1 << 29, 1), new SizeClass(1 << 30, 8)));
    }

    @Test
    void rejectsTooManyBuffers() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PoolConfig.of(new SizeClass(64, PoolConfig.MAX_BUFFERS), new SizeClass(128, 1)));
        assertTrue(e.getMessage().contains("too many buffers"), e.getMessage());
    }

    @Test
    void copiesTheList() {
        List<SizeClass> list = new ArrayList<>(Arrays.asList(new SizeClass(64, 1)));
        PoolConfig config = new PoolConfig(list);
        list.add(new SizeClass(128, 1));
        assertEquals(1, config.classes().size());
        assertThrows(UnsupportedOperationException.class, () -> config.classes().add(new SizeClass(256, 1)));
    }
}
