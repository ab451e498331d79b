package io.zcnet.examples;

import io.zcnet.qp.QpConfig;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class QueuePairSettingsTest {

    @Test
    void depthZeroAndNoKeyAreTheDefaults() {
        QpConfig config = QueuePairSettings.config(0, Map.of());
        assertEquals(QpConfig.defaults().sendQueueDepth(), config.sendQueueDepth());
        assertNull(config.preSharedKey());
    }

    @Test
    void aDepthSetsBothQueuesAndTheWindow() {
        QpConfig config = QueuePairSettings.config(1024, Map.of());
        assertEquals(1024, config.sendQueueDepth());
        assertEquals(1024, config.receiveQueueDepth());
        assertEquals(1024, config.messageWindow());
    }

    @Test
    void aDepthThatIsNoPowerOfTwoIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> QueuePairSettings.config(1000, Map.of()));
        assertTrue(e.getMessage().contains("--queue-depth"), e::getMessage);
    }

    @Test
    void theVariableGivesThePreSharedKey() {
        String key = "a key of twenty-four bytes";
        QpConfig config = QueuePairSettings.config(0, Map.of(QueuePairSettings.KEY_VARIABLE, key));
        assertArrayEquals(key.getBytes(StandardCharsets.UTF_8), config.preSharedKey());
    }

    @Test
    void aKeyTooShortOrTooLongIsRefusedWithItsLength() {
        for (String key : new String[] {"short", "x".repeat(65)}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> QueuePairSettings.config(0, Map.of(QueuePairSettings.KEY_VARIABLE, key)));
            assertTrue(e.getMessage().contains(QueuePairSettings.KEY_VARIABLE)
                    && e.getMessage().contains(Integer.toString(key.length())), e::getMessage);
        }
    }
}
