package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** {@link Teardown}: every step runs whatever the ones before it threw; the first failure carries the rest. */
class TeardownTest {

    @Test
    void everyStepRunsAndTheFirstFailureCarriesTheLaterOnes() {
        List<String> ran = new ArrayList<>();
        IllegalStateException first = new IllegalStateException("links");
        IllegalArgumentException second = new IllegalArgumentException("context");
        Teardown t = new Teardown();
        t.run(() -> {
            ran.add("links");
            throw first;
        });
        t.run(() -> {
            ran.add("context");
            throw second;
        });
        t.run(() -> ran.add("staging"));
        assertEquals(List.of("links", "context", "staging"), ran);
        assertSame(first, t.failure());
        assertArrayEquals(new Throwable[] {second}, t.failure().getSuppressed());
    }

    @Test
    void noFailureWhenEveryStepSucceeds() {
        Teardown t = new Teardown();
        t.run(() -> { });
        assertNull(t.failure());
    }
}
