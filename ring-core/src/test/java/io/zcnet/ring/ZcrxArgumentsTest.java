package io.zcnet.ring;

import io.zcnet.ring.sys.Native;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A caller's mistakes are {@link IllegalArgumentException}s thrown before anything reaches the kernel, not
 * refusals: every case here names {@code lo}, which exists, so a check that is missing shows up as a
 * returned outcome instead of the exception.
 */
class ZcrxArgumentsTest {
    private static final long PAGE = Native.pageSize();

    private Arena arena;
    private MemorySegment area;

    @BeforeEach
    void allocate() {
        arena = Arena.ofShared();
        area = arena.allocate(4 * PAGE, PAGE);
    }

    @AfterEach
    void free() {
        arena.close();
    }

    private static void refused(String expectedInMessage, Runnable attempt) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, attempt::run);
        assertTrue(e.getMessage().contains(expectedInMessage), e.getMessage());
    }

    @Test
    void interfaceNames() {
        refused("null", () -> ZeroCopyReceive.attempt(null, 0, area, 64));
        refused("blank", () -> ZeroCopyReceive.attempt("", 0, area, 64));
        refused("blank", () -> ZeroCopyReceive.attempt(" \t", 0, area, 64));
        refused("at most 15 bytes", () -> ZeroCopyReceive.attempt("sixteen-chars-xx", 0, area, 64));
        refused("cannot be an interface name", () -> ZeroCopyReceive.attempt("lo/0", 0, area, 64));
        refused("cannot be an interface name", () -> ZeroCopyReceive.attempt("lo:1", 0, area, 64));
        refused("cannot be an interface name", () -> ZeroCopyReceive.attempt("l o", 0, area, 64));
        refused("cannot be an interface name", () -> ZeroCopyReceive.attempt("..", 0, area, 64));
    }

    @Test
    void rxQueue() {
        refused("rx queue must be >= 0, got -1", () -> ZeroCopyReceive.attempt("lo", -1, area, 64));
    }

    @Test
    void refillEntries() {
        for (int bad : new int[] {0, -64, 3, 100, 65536}) {
            refused("refill entries must be a power of two in [1, 32768], got " + bad,
                    () -> ZeroCopyReceive.attempt("lo", 0, area, bad));
        }
    }

    @Test
    void areaMustBeLiveWritableNativeMemory() {
        refused("area is null", () -> ZeroCopyReceive.attempt("lo", 0, null, 64));
        refused("native", () -> ZeroCopyReceive.attempt("lo", 0, MemorySegment.ofArray(new byte[(int) PAGE]), 64));
        refused("writable", () -> ZeroCopyReceive.attempt("lo", 0, area.asReadOnly(), 64));
        MemorySegment freed;
        try (Arena gone = Arena.ofConfined()) {
            freed = gone.allocate(PAGE, PAGE);
        }
        MemorySegment dead = freed;
        refused("live", () -> ZeroCopyReceive.attempt("lo", 0, dead, 64));
        refused("1 to 2^48 bytes, got 0", () -> ZeroCopyReceive.attempt("lo", 0, area.asSlice(0, 0), 64));
    }

    @Test
    void areaMustBeWholeAlignedPages() {
        refused("page boundary", () -> ZeroCopyReceive.attempt("lo", 0, area.asSlice(64, PAGE), 64));
        refused("page boundary", () -> ZeroCopyReceive.attempt("lo", 0, area.asSlice(0, PAGE + 1), 64));
        refused("page boundary", () -> ZeroCopyReceive.attempt("lo", 0, area.asSlice(0, PAGE / 2), 64));
    }
}
