package io.zcnet.qp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.zcnet.framing.FramingConfig;

import java.time.Duration;

import org.junit.jupiter.api.Test;

/** What two proposals agree on, and that every agreement is one the framing layer accepts. */
class AgreementTest {

    @Test
    void theSmallerOfEachAndTheIcrcIfEitherWantsIt() {
        QpConfig local = QpConfig.defaults().withSegmentSize(16 * 1024).withIcrc(false).withMessageWindow(128).withMaxSubflows(4)
                .withTimeouts(Duration.ofSeconds(5), Duration.ofMillis(300));
        Agreement a = Agreement.of(local, 64 * 1024, true, 64, 8, 2000);
        assertEquals(new Agreement(16 * 1024, true, 64, 4, 300), a);
        assertEquals(a, Agreement.of(a.applyTo(local), a.segmentSize(), a.icrc(), a.messageWindow(), a.maxSubflows(),
                a.silenceMillis()), "the initiator, checking the answer, comes to the same agreement");
        assertEquals(300, Agreement.of(QpConfig.defaults(), 64 * 1024, true, 64, 8, 300).silenceMillis(),
                "the smaller silence timeout whichever side has it");
    }

    @Test
    void theAgreedSilenceTimeoutIsTheQueuePairsAndItsHandshakeTimeoutStaysLocal() {
        QpConfig local = QpConfig.defaults().withTimeouts(Duration.ofMillis(750), Duration.ofSeconds(2));
        QpConfig agreed = Agreement.of(local, 64 * 1024, true, 64, 8, 300).applyTo(local);
        assertEquals(Duration.ofMillis(300), agreed.silenceTimeout());
        assertEquals(Duration.ofMillis(750), agreed.handshakeTimeout());
    }

    @Test
    void aWindowTooLargeForTheAgreedSegmentSizeIsClampedNotAFailureLater() {
        // Review finding: each side's window fit its own segment size, but not the smaller one, and the
        // acceptor threw while creating the queue pair after the handshake had succeeded.
        QpConfig local = QpConfig.defaults().withMessageWindow(FramingConfig.MAX_MESSAGE_WINDOW);
        Agreement a = Agreement.of(local, FramingConfig.MIN_SEGMENT_SIZE, false, FramingConfig.MAX_MESSAGE_WINDOW, 1, 2000);
        assertEquals(FramingConfig.MIN_SEGMENT_SIZE, a.segmentSize());
        assertEquals(FramingConfig.largestWindow(FramingConfig.MIN_SEGMENT_SIZE), a.messageWindow());
        FramingConfig framing = a.framing();
        assertEquals(a.messageWindow(), framing.messageWindow());
        assertThrows(IllegalArgumentException.class,
                () -> new FramingConfig(FramingConfig.MIN_SEGMENT_SIZE, false, 2 * a.messageWindow()),
                "the clamp is the largest window that fits, not an arbitrary smaller one");
    }

    @Test
    void proposalsOutOfRangeAreRefused() {
        QpConfig local = QpConfig.defaults();
        assertThrows(IllegalArgumentException.class, () -> Agreement.of(local, 63, false, 64, 1, 2000));
        assertThrows(IllegalArgumentException.class, () -> Agreement.of(local, 65536, false, 3, 1, 2000));
        assertThrows(IllegalArgumentException.class, () -> Agreement.of(local, 65536, false, 64, 0, 2000));
        assertThrows(IllegalArgumentException.class, () -> Agreement.of(local, 65536, false, 1 << 16, 1, 2000));
        assertThrows(IllegalArgumentException.class, () -> Agreement.of(local, 65536, false, 64, 1, 0));
        assertThrows(IllegalArgumentException.class,
                () -> Agreement.of(local, 65536, false, 64, 1, QpConfig.MIN_SILENCE_MILLIS - 1));
        assertEquals(QpConfig.MIN_SILENCE_MILLIS,
                Agreement.of(local, 65536, false, 64, 1, QpConfig.MIN_SILENCE_MILLIS).silenceMillis());
        assertEquals(local.silenceTimeout().toMillis(),
                Agreement.of(local, 65536, false, 64, 1, QpConfig.MAX_SILENCE_MILLIS).silenceMillis(),
                "the largest silence_ms the wire carries is a valid proposal");
    }
}
