package io.zcnet.framing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.buffer.MemoryRegistry;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The NAK on the wire, its validation, and what the assembler makes of one it sends or receives. */
class NegativeAcknowledgeTest {

    private static final int MSS = 256;
    private final FramingConfig config = new FramingConfig(MSS, true, 8);
    private final Arena arena = Arena.ofShared();
    private final MemoryRegistry registry = new MemoryRegistry();
    private final byte[] bytes = new byte[FrameHeader.LENGTH];
    private final MemorySegment frame = MemorySegment.ofArray(bytes);
    private final FrameHeader header = new FrameHeader().wrap(frame, 0);

    @AfterEach
    void close() {
        arena.close();
    }

    private int validate() {
        return FrameValidator.validateHeader(header, MSS);
    }

    @Test
    void aNakCarriesItsSyndromeAndFailedMsnBesideTheCumulativeAcknowledgement() {
        NegativeAcknowledge.write(header, 41, FrameError.REMOTE_ACCESS, 42);
        assertEquals(FrameError.OK, validate());
        assertTrue(NegativeAcknowledge.isNegative(header));
        assertEquals(41, header.msn());
        assertEquals(FrameError.REMOTE_ACCESS, NegativeAcknowledge.frameError(header));
        assertEquals(42, NegativeAcknowledge.failedMsn(header));
        assertEquals(-FrameError.REMOTE_ACCESS, bytes[7], "the syndrome is the segment byte, bits 7-0 of word 1");

        NegativeAcknowledge.write(header, 0xFFFF, FrameError.QUEUE_PAIR_IN_ERROR, NegativeAcknowledge.NO_MESSAGE);
        assertEquals(FrameError.OK, validate());
        assertEquals(NegativeAcknowledge.NO_MESSAGE, NegativeAcknowledge.failedMsn(header));

        FlowControl.writeAcknowledge(header, 3, 9, false, false);
        assertFalse(NegativeAcknowledge.isNegative(header), "a plain ACKNOWLEDGE has segment byte 0");
    }

    @Test
    void onlyViolationsAndTheOwnEndTravelAsSyndromes() {
        for (int code = 0; code > -FrameError.COUNT; code--) {
            boolean expected = code <= FrameError.BAD_VERSION && code != FrameError.TERMINATED_BY_PEER;
            assertEquals(expected, NegativeAcknowledge.isValidSyndrome(code), FrameError.name(code));
        }
        assertThrows(IllegalArgumentException.class, () -> NegativeAcknowledge.write(header, 0, FrameError.OK, 1));
        assertThrows(IllegalArgumentException.class,
                () -> NegativeAcknowledge.write(header, 0, FrameError.TERMINATED_BY_PEER, 1));
        assertThrows(IllegalArgumentException.class,
                () -> NegativeAcknowledge.write(header, 0, FrameError.REMOTE_ACCESS, 0x10000));
    }

    @Test
    void malformedNaksAreRefused() {
        NegativeAcknowledge.write(header, 1, FrameError.REMOTE_ACCESS, 2);
        header.messageOffsetAndSegment(0, FrameError.COUNT);
        assertEquals(FrameError.RESERVED_FIELD, validate(), "an unknown syndrome");
        header.messageOffsetAndSegment(0, -FrameError.TRUNCATED);
        assertEquals(FrameError.RESERVED_FIELD, validate(), "TRUNCATED is never a violation");
        header.messageOffsetAndSegment(0, 0xFF);
        assertEquals(FrameError.RESERVED_FIELD, validate());
        header.messageOffsetAndSegment(MSS, -FrameError.REMOTE_ACCESS);
        assertEquals(FrameError.RESERVED_FIELD, validate(), "a message offset");
        header.messageOffsetAndSegment(0, -FrameError.REMOTE_ACCESS).immData(0x10000);
        assertEquals(FrameError.RESERVED_FIELD, validate(), "neither an MSN nor NO_MESSAGE");
        header.immData(2).length(1);
        assertEquals(FrameError.RESERVED_FIELD, validate(), "a payload");
        header.length(0).rtr(true);
        assertEquals(FrameError.BAD_FLAGS, validate(), "a NAK opens no subflow");
    }

    @Test
    void aReceivedNakAcknowledgesWhatItSaysThenEndsTheQueuePairWithThePeersReason() {
        CompletionQueue cq = new CompletionQueue(8);
        FlowControl flow = new FlowControl(config);
        MessageAssembler assembler = new MessageAssembler(config, registry, 4, cq, flow);
        MemoryRegion region = registry.register(arena.allocate(64), Access.LOCAL_WRITE);
        assertTrue(assembler.postReceive(7, region.localKey(), 0, 64));
        assertEquals(0, flow.claim(3, false));
        NegativeAcknowledge.write(header, 0, FrameError.REMOTE_ACCESS, 1);
        header.icrc(new Icrc().compute(frame, 0));

        assertEquals(FrameError.TERMINATED_BY_PEER, assembler.onFrame(frame, 0, bytes.length));
        assertEquals(2, flow.unacknowledged(), "MSN 0 was acknowledged before the failure");
        assertEquals(FrameError.TERMINATED_BY_PEER, assembler.error());
        assertEquals(FrameError.REMOTE_ACCESS, assembler.peerError());
        assertEquals(1, assembler.peerFailedMsn());
        Completion c = new Completion();
        assertTrue(cq.poll(c));
        assertEquals(7, c.workRequestId());
        assertEquals(CompletionStatus.FLUSH_ERROR, c.status(), "the posted receive is flushed");
    }

    @Test
    void aRefusedFrameNamesItsMessageForTheNakToReport() {
        MessageAssembler assembler = new MessageAssembler(config, registry, 4, new CompletionQueue(8), new FlowControl(config));
        byte[] write = TestFrames.all(new Segmenter(config).beginWrite(5, MemorySegment.ofArray(new byte[10]), 0, 10,
                0x1234, 0)).get(0);
        assertEquals(FrameError.REMOTE_ACCESS, assembler.onFrame(MemorySegment.ofArray(write), 0, write.length));
        assertEquals(5, assembler.failedMsn());
        assertEquals(FrameError.OK, assembler.peerError());

        MessageAssembler other = new MessageAssembler(config, registry, 4, new CompletionQueue(8), new FlowControl(config));
        write[0] = 0; // version 0: refused before any message is known
        assertEquals(FrameError.BAD_VERSION, other.onFrame(MemorySegment.ofArray(write), 0, write.length));
        assertEquals(NegativeAcknowledge.NO_MESSAGE, other.failedMsn());
    }
}
