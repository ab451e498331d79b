package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

/** One call at a time, the driver's only when there is one, none once shut; a refused call changes nothing. */
class CallGateTest {

    @Test
    void aSecondCallIsRefusedUntilTheFirstEnds() {
        CallGate gate = new CallGate(null);
        try (CallGate.Admission _ = gate.enter()) {
            IllegalStateException e = assertThrows(IllegalStateException.class, gate::enter);
            assertEquals("another thread is running an operation of this communicator", e.getMessage());
        }
        try (CallGate.Admission _ = gate.enter()) {
            assertFalse(gate.isClosed(), "the refusal left the gate as it was");
        }
    }

    @Test
    void onceShutEveryCallIsRefused() {
        CallGate gate = new CallGate(null);
        try (CallGate.Admission _ = gate.enter()) {
            gate.shut();
        }
        assertTrue(gate.isClosed());
        for (int i = 0; i < 2; i++) {
            IllegalStateException e = assertThrows(IllegalStateException.class, gate::enter);
            assertEquals("the communicator is closed", e.getMessage(), "and the refusal does not hold the gate");
        }
    }

    @Test
    void aDriverIsTheOnlyThreadLetIn() {
        CallGate gate = new CallGate(Thread.currentThread());
        IllegalStateException e = CompletableFuture.supplyAsync(() -> assertThrows(IllegalStateException.class,
                gate::enter)).join();
        assertTrue(e.getMessage().startsWith("a busy-polling communicator is driven by the thread that joined it, "
                + Thread.currentThread().getName()), e.getMessage());
        try (CallGate.Admission _ = gate.enter()) {
            assertFalse(gate.isClosed());
        }
    }
}
