package io.zcnet.rx;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.junit.jupiter.api.Test;

/**
 * The choice of receive path: zcrx only when asked, and a refusal (the only answer any device here gives:
 * loopback cannot do zcrx) falls back to the software path with the kernel's reason in one line. Engine
 * independent: zcrx has a ring of its own.
 */
class ReceiveStrategyTest {

    @Test
    void zcrxIsNotAttemptedUnlessAsked() {
        ReceiveStrategy strategy = ReceiveStrategy.choose(null, 0, null, 0);
        assertFalse(strategy.zeroCopy());
        assertTrue(strategy.reason().contains("not asked"), strategy.reason());
    }

    @Test
    void loopbackRefusesAndTheConnectionFallsBackWithTheReason() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment area = arena.allocate(1 << 20, 4096);
            ReceiveStrategy strategy = ReceiveStrategy.choose("lo", 0, area, 64);
            assertFalse(strategy.zeroCopy());
            assertTrue(strategy.reason().startsWith("zcrx refused, software receive instead: "), strategy.reason());
            // Root gets the device's answer; anyone else the missing capability (or io_uring being off).
            assertTrue(strategy.reason().contains("lo") && !strategy.reason().contains("\n")
                    && (strategy.reason().contains("EOPNOTSUPP") || strategy.reason().contains("EPERM")
                        || strategy.reason().contains("io_uring")), strategy.reason());
        }
    }

    @Test
    void aCallersMistakeIsAnErrorNotAFallback() {
        assertThrows(IllegalArgumentException.class, () -> ReceiveStrategy.choose(" ", 0, null, 64));
    }
}
