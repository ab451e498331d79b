package io.zcnet.examples;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * {@link SockperfParser} against byte streams cut into buffers every possible way: the bytes it names
 * must be exactly what sockperf's server would send back, in order, taken from the received buffers in
 * place except for headers cut between buffers.
 */
class SockperfParserTest {
    private static final int CP = SockperfHeader.CLIENT | SockperfHeader.PONG_REQUEST;
    private static final int C = SockperfHeader.CLIENT;

    private final Arena arena = Arena.ofConfined();

    @AfterEach
    void closeArena() {
        arena.close();
    }

    /** A message as a client sends it; the payload depends on the sequence number and position. */
    static byte[] message(long sequence, int flags, int length) {
        ByteBuffer b = ByteBuffer.allocate(length); // big-endian, as on the wire
        b.putLong(sequence).putShort((short) flags).putInt(length);
        for (int i = SockperfHeader.SIZE; i < length; i++) {
            b.put((byte) (sequence * 31 + i));
        }
        return b.array();
    }

    static byte[] concat(List<byte[]> parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        parts.forEach(out::writeBytes);
        return out.toByteArray();
    }

    /** What sockperf's server sends back for {@code messages}: worked out here without the parser. */
    static byte[] expectedReplies(List<byte[]> messages) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] m : messages) {
            int flags = ((m[8] & 0xFF) << 8) | (m[9] & 0xFF);
            if ((flags & 1) != 0 && (flags & 2) != 0 && (flags & 4) == 0) {
                byte[] r = m.clone();
                r[9] &= (byte) ~1;
                out.writeBytes(r);
            }
        }
        return out.toByteArray();
    }

    /** What feeding a stream produced. */
    record Fed(byte[] replies, int sends, int carrySends, int status) {
    }

    /** Feeds {@code stream} cut before each offset in {@code cuts} (ascending, inside the stream). */
    private Fed feed(SockperfParser parser, byte[] stream, int... cuts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int sends = 0;
        int carrySends = 0;
        int from = 0;
        for (int i = 0; i <= cuts.length; i++) {
            int to = i < cuts.length ? cuts[i] : stream.length;
            MemorySegment buffer = arena.allocate(to - from);
            MemorySegment.copy(stream, from, buffer, ValueLayout.JAVA_BYTE, 0, to - from);
            from = to;
            for (int guard = 0; ; guard++) {
                if (guard > stream.length + 2) {
                    fail("parser did not finish a buffer");
                }
                int status = parser.advance(buffer, (int) buffer.byteSize());
                if (status == SockperfParser.BAD_LENGTH) {
                    return new Fed(out.toByteArray(), sends, carrySends, status);
                }
                if (status == SockperfParser.BUFFER_DONE) {
                    break;
                }
                assertEquals(SockperfParser.REPLY, status);
                sends++;
                MemorySegment s = parser.replySegment();
                if (s != buffer) {
                    carrySends++;
                    assertEquals(SockperfHeader.SIZE, parser.replyLength(), "only a cut header is sent from the carry");
                }
                assertTrue(parser.replyLength() > 0);
                out.writeBytes(s.asSlice(parser.replyOffset(), parser.replyLength()).toArray(ValueLayout.JAVA_BYTE));
            }
        }
        return new Fed(out.toByteArray(), sends, carrySends, SockperfParser.BUFFER_DONE);
    }

    private static List<byte[]> mixedMessages() {
        List<byte[]> m = new ArrayList<>();
        m.add(message(1, CP, 64));
        m.add(message(2, C, 20));                                  // throughput-style: no reply
        m.add(message(3, CP, 14));                                 // header only
        m.add(message(4, CP | SockperfHeader.WARMUP, 30));         // warm-up: no reply
        m.add(message(5, CP, 15));
        m.add(message(6, SockperfHeader.PONG_REQUEST, 18));        // not from a client: no reply
        m.add(message(7, CP, 40));
        m.add(message(8, CP, 17));
        return m;
    }

    @Test
    void everySingleCutGivesTheSameReplies() {
        List<byte[]> messages = mixedMessages();
        byte[] stream = concat(messages);
        byte[] expected = expectedReplies(messages);
        SockperfParser parser = new SockperfParser(arena);
        for (int cut = 0; cut <= stream.length; cut++) {
            parser.reset();
            Fed fed = cut == 0 || cut == stream.length ? feed(parser, stream) : feed(parser, stream, cut);
            assertEquals(SockperfParser.BUFFER_DONE, fed.status());
            assertArrayEquals(expected, fed.replies(), "cut at " + cut);
            assertEquals(messages.size(), parser.messages());
            assertEquals(5, parser.replies());
        }
    }

    @Test
    void everyPairOfCutsGivesTheSameReplies() {
        List<byte[]> messages = mixedMessages();
        byte[] stream = concat(messages);
        byte[] expected = expectedReplies(messages);
        SockperfParser parser = new SockperfParser(arena);
        for (int a = 1; a < stream.length; a++) {
            for (int b = a + 1; b < stream.length; b++) {
                parser.reset();
                assertArrayEquals(expected, feed(parser, stream, a, b).replies(), "cuts at " + a + ", " + b);
            }
        }
    }

    @Test
    void oneByteBuffersStillAnswerEveryMessage() {
        List<byte[]> messages = mixedMessages();
        byte[] stream = concat(messages);
        int[] cuts = new int[stream.length - 1];
        for (int i = 0; i < cuts.length; i++) {
            cuts[i] = i + 1;
        }
        SockperfParser parser = new SockperfParser(arena);
        Fed fed = feed(parser, stream, cuts);
        assertArrayEquals(expectedReplies(messages), fed.replies());
        assertEquals(5, fed.carrySends(), "every answered header was cut, so each is sent from the carry");
    }

    @Test
    void repliesInOneBufferLeaveAsOneRange() {
        List<byte[]> messages = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            messages.add(message(i, CP, 64));
        }
        SockperfParser parser = new SockperfParser(arena);
        Fed fed = feed(parser, concat(messages));
        assertEquals(1, fed.sends(), "ten pipelined pings, one send");
        assertEquals(0, fed.carrySends());
        assertArrayEquals(expectedReplies(messages), fed.replies());
    }

    @Test
    void droppedMessagesSplitTheRanges() {
        List<byte[]> messages = List.of(message(1, CP, 64), message(2, CP, 64), message(3, C, 64),
                message(4, CP, 64), message(5, C, 30), message(6, C, 30));
        SockperfParser parser = new SockperfParser(arena);
        Fed fed = feed(parser, concat(messages));
        assertEquals(2, fed.sends(), "ranges [1, 2] and [4]");
        assertArrayEquals(expectedReplies(messages), fed.replies());
        assertEquals(6, parser.messages());
        assertEquals(3, parser.replies());
    }

    @Test
    void throughputStreamsAreConsumedSilently() {
        List<byte[]> messages = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            messages.add(message(i, C, 64));
        }
        byte[] stream = concat(messages);
        SockperfParser parser = new SockperfParser(arena);
        Fed fed = feed(parser, stream, 1000, 1001, 3000, 4321);
        assertEquals(0, fed.sends());
        assertEquals(SockperfParser.BUFFER_DONE, fed.status());
        assertEquals(100, parser.messages());
    }

    @Test
    void messagesLargerThanABufferAreSentPiecewiseInPlace() {
        List<byte[]> messages = List.of(message(1, CP, SockperfParser.MAX_LENGTH), message(2, C, 40_000),
                message(3, CP, 20_000));
        byte[] stream = concat(messages);
        int[] cuts = new int[stream.length / 16384];
        for (int i = 0; i < cuts.length; i++) {
            cuts[i] = (i + 1) * 16384;
        }
        SockperfParser parser = new SockperfParser(arena);
        Fed fed = feed(parser, stream, cuts);
        assertArrayEquals(expectedReplies(messages), fed.replies());
        assertEquals(0, fed.carrySends());
    }

    @Test
    void randomStreamsAndCutsAgree() {
        Random random = new Random(20240611L);
        SockperfParser parser = new SockperfParser(arena);
        for (int round = 0; round < 200; round++) {
            List<byte[]> messages = new ArrayList<>();
            int count = 1 + random.nextInt(60);
            for (int i = 0; i < count; i++) {
                int length = random.nextInt(10) == 0 ? 14 + random.nextInt(30_000) : 14 + random.nextInt(200);
                messages.add(message(random.nextLong() >>> 1, random.nextInt(8), length));
            }
            byte[] stream = concat(messages);
            List<Integer> cutList = new ArrayList<>();
            for (int at = 1 + random.nextInt(2000); at < stream.length; at += 1 + random.nextInt(2000)) {
                cutList.add(at);
            }
            parser.reset();
            Fed fed = feed(parser, stream, cutList.stream().mapToInt(Integer::intValue).toArray());
            assertArrayEquals(expectedReplies(messages), fed.replies(), "round " + round);
            assertEquals(count, parser.messages());
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 13, SockperfParser.MAX_LENGTH + 1, Integer.MAX_VALUE, -1})
    void badLengthsStopTheStream(int length) {
        byte[] good = message(1, CP, 64);
        byte[] bad = ByteBuffer.allocate(40).putLong(2).putShort((short) CP).putInt(length).array();
        byte[] stream = concat(List.of(good, bad));
        SockperfParser parser = new SockperfParser(arena);
        for (int cut = 1; cut < stream.length; cut++) {
            parser.reset();
            Fed fed = feed(parser, stream, cut);
            assertEquals(SockperfParser.BAD_LENGTH, fed.status(), "cut at " + cut);
            assertEquals(Integer.toUnsignedLong(length), parser.badLength());
            assertTrue(fed.replies().length <= good.length, "nothing after the bad header is answered");
        }
        parser.reset();
        Fed whole = feed(parser, stream);
        assertEquals(SockperfParser.BAD_LENGTH, whole.status());
        assertArrayEquals(expectedReplies(List.of(good)), whole.replies(), "the good message before it is answered");
    }

    @Test
    void theLargestLengthIsAcceptedAndResetStartsAFreshStream() {
        SockperfParser parser = new SockperfParser(arena);
        byte[] bad = ByteBuffer.allocate(14).putLong(1).putShort((short) CP).putInt(5).array();
        assertEquals(SockperfParser.BAD_LENGTH, feed(parser, bad).status());
        parser.reset();
        List<byte[]> messages = List.of(message(2, CP, SockperfParser.MAX_LENGTH), message(3, CP, 14));
        Fed fed = feed(parser, concat(messages), 7);
        assertEquals(SockperfParser.BUFFER_DONE, fed.status());
        assertArrayEquals(expectedReplies(messages), fed.replies());
    }

    @Test
    void repliesComeFromTheReceivedBufferItself() {
        MemorySegment buffer = arena.allocate(64);
        MemorySegment.copy(message(9, CP, 64), 0, buffer, ValueLayout.JAVA_BYTE, 0, 64);
        SockperfParser parser = new SockperfParser(arena);
        assertEquals(SockperfParser.REPLY, parser.advance(buffer, 64));
        assertSame(buffer, parser.replySegment());
        assertEquals(0, parser.replyOffset());
        assertEquals(64, parser.replyLength());
        assertEquals(SockperfHeader.PONG_REQUEST, SockperfHeader.flags(buffer, 0), "CLIENT cleared in place");
        assertEquals(SockperfParser.BUFFER_DONE, parser.advance(buffer, 64));

        MemorySegment head = arena.allocate(5);
        MemorySegment.copy(message(10, CP, 20), 0, head, ValueLayout.JAVA_BYTE, 0, 5);
        assertEquals(SockperfParser.BUFFER_DONE, parser.advance(head, 5));
        MemorySegment tail = arena.allocate(15);
        MemorySegment.copy(message(10, CP, 20), 5, tail, ValueLayout.JAVA_BYTE, 0, 15);
        assertEquals(SockperfParser.REPLY, parser.advance(tail, 15));
        assertNotSame(tail, parser.replySegment(), "the cut header goes out of the carry");
        assertEquals(SockperfParser.REPLY, parser.advance(tail, 15));
        assertSame(tail, parser.replySegment(), "the body goes out of the buffer");
        assertEquals(9, parser.replyOffset());
        assertEquals(6, parser.replyLength());
        assertEquals(SockperfParser.BUFFER_DONE, parser.advance(tail, 15));
    }
}
