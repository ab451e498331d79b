package io.zcnet.tx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.Segmenter;
import io.zcnet.framing.SgeCursor;
import io.zcnet.framing.SgeList;
import io.zcnet.ring.CompletionHandler;
import io.zcnet.ring.CqeFlags;
import io.zcnet.ring.Errno;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.EventLoopThread;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The send path on a real loopback connection, identically on both engines: byte-exact order through
 * coalescing, gathering and short sends; release only after the zero-copy notification; the adaptive
 * switch; back-pressure; failure. The peer is a blocking {@code java.net} socket; every wait is bounded.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
abstract class FrameSenderContractTest {
    private static final long WAIT_SECONDS = 10;

    private EventLoopThread thread;
    private EventLoop loop;
    private ServerSocket listener;
    private Socket peer;
    private int socket = -1;
    /** Every peer connected, closed after the test. */
    private final List<Socket> peers = new ArrayList<>();
    private final Arena arena = Arena.ofShared();
    private final Events events = new Events();

    protected abstract EventLoopConfig.Choice engine();

    /** The listener's calls, handed to the test thread in order. */
    private static final class Events implements SendListener {
        final LinkedBlockingQueue<Long> sent = new LinkedBlockingQueue<>();
        final AtomicInteger writable = new AtomicInteger();
        final LinkedBlockingQueue<Integer> failures = new LinkedBlockingQueue<>();
        /** Runs on the loop thread inside onSent, before the token is published (the reuse proof). */
        volatile Runnable onSentHook;

        @Override
        public void onSent(long token) {
            Runnable hook = onSentHook;
            if (hook != null) {
                hook.run();
            }
            sent.add(token);
        }

        @Override
        public void onWritable() {
            writable.incrementAndGet();
        }

        @Override
        public void onFailed(int errno) {
            failures.add(errno);
        }

        /** Waits until every token up to {@code token} is reported. */
        void awaitSent(long token) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            long last = -1;
            while (last < token) {
                Long t = sent.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (t == null) {
                    fail("token " + token + " not reported sent; last " + last);
                }
                assertTrue(t > last, "tokens are reported in order, each once: " + t + " after " + last);
                last = t;
            }
        }
    }

    @BeforeEach
    void connect() throws Exception {
        thread = EventLoopThread.start("zc-tx-" + engine().name().toLowerCase(),
                EventLoopConfig.defaults().withEngine(engine()));
        loop = thread.loop();
        listener = new ServerSocket(0, 4, InetAddress.getLoopbackAddress());
        Link first = connectLink();
        socket = first.socket();
        peer = first.peer();
    }

    /** A connected socket of the loop and the blocking peer at its other end. */
    private record Link(int socket, Socket peer) {
    }

    /** Connects a socket of the loop to a peer of its own. */
    private Link connectLink() throws Exception {
        InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), listener.getLocalPort());
        CompletableFuture<Integer> connected = new CompletableFuture<>();
        int socket = thread.call(() -> {
            int s = loop.socket(address);
            CompletionHandler[] once = new CompletionHandler[1];
            int[] id = new int[1];
            once[0] = (op, tag, result, flags) -> {
                loop.unregisterHandler(id[0]);
                connected.complete(result);
            };
            id[0] = loop.registerHandler(once[0]);
            loop.connect(id[0], 0, s, address);
            return s;
        });
        Socket peer = listener.accept();
        peers.add(peer);
        peer.setSoTimeout((int) TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
        assertEquals(0, (int) connected.get(WAIT_SECONDS, TimeUnit.SECONDS), "connect");
        return new Link(socket, peer);
    }

    @AfterEach
    void disconnect() throws Exception {
        try {
            for (Socket p : peers) {
                p.close(); // closing one a test closed already is harmless
            }
            listener.close();
            if (thread != null) {
                thread.close(); // closes the loop's sockets and cancels what is in flight
            }
        } finally {
            arena.close();
        }
    }

    private FrameSender sender(SenderConfig config) throws Exception {
        return thread.call(() -> new FrameSender(loop, socket, config, events));
    }

    /** A sender on {@code socket} that works in a space of {@code spaces} only while it has frames. */
    private FrameSender sender(SenderConfig config, SenderSpaces spaces, int socket, Events events) throws Exception {
        return thread.call(() -> new FrameSender(loop, socket, config, events, spaces));
    }

    /** A frame as the test keeps it: what it offers, and the bytes the peer must see. */
    private interface Offered {
        long offerTo(FrameSender sender);

        long bytes();

        void addTo(CRC32C crc);
    }

    /** Header bytes and a payload range of a native segment. */
    private record Frame(MemorySegment header, MemorySegment payload) implements Offered {
        @Override
        public long offerTo(FrameSender sender) {
            return sender.offer(header, 0, (int) header.byteSize(), payload, 0, (int) payload.byteSize());
        }

        @Override
        public long bytes() {
            return header.byteSize() + payload.byteSize();
        }

        @Override
        public void addTo(CRC32C crc) {
            crc.update(header.asByteBuffer());
            crc.update(payload.asByteBuffer());
        }
    }

    /** Header bytes and a payload of bytes {@code [position, position + length)} of a scatter/gather list. */
    private record Gathered(MemorySegment header, SgeList list, long position, int length) implements Offered {
        @Override
        public long offerTo(FrameSender sender) {
            return sender.offer(header, 0, (int) header.byteSize(), list, position, length);
        }

        @Override
        public long bytes() {
            return header.byteSize() + length;
        }

        @Override
        public void addTo(CRC32C crc) {
            crc.update(header.asByteBuffer());
            SgeCursor spans = new SgeCursor().over(list, position, length);
            while (spans.next()) {
                crc.update(spans.segment().asSlice(spans.offset(), spans.length()).asByteBuffer());
            }
        }
    }

    /**
     * A frame written in place in the staging buffer where the sender has room for it ({@link FrameSender#stagingRoom}),
     * offered as a {@link Frame} where it has not.
     */
    private record Staged(Frame frame, AtomicInteger inPlace) implements Offered {
        @Override
        public long offerTo(FrameSender sender) {
            int headerBytes = (int) frame.header().byteSize();
            int payloadBytes = (int) frame.payload().byteSize();
            long at = sender.stagingRoom(headerBytes + payloadBytes);
            if (at < 0) {
                return frame.offerTo(sender);
            }
            inPlace.incrementAndGet();
            MemorySegment.copy(frame.header(), 0, sender.stagingBuffer(), at, headerBytes);
            MemorySegment.copy(frame.payload(), 0, sender.stagingBuffer(), at + headerBytes, payloadBytes);
            return sender.queueStaged(at, headerBytes, payloadBytes);
        }

        @Override
        public long bytes() {
            return frame.bytes();
        }

        @Override
        public void addTo(CRC32C crc) {
            frame.addTo(crc);
        }
    }

    private Frame frame(SplittableRandom random, int payloadLength) {
        MemorySegment header = arena.allocate(32 + random.nextInt(29));
        MemorySegment payload = arena.allocate(Math.max(1, payloadLength)).asSlice(0, payloadLength);
        fillRandom(header, random);
        fillRandom(payload, random);
        return new Frame(header, payload);
    }

    /**
     * A frame whose payload is a range of a list of 1 to {@code maxPieces} pieces of up to {@code maxPiece}
     * bytes, a quarter of them empty, each in memory of its own at an odd offset.
     */
    private Gathered gathered(SplittableRandom random, int maxPieces, int maxPiece) {
        MemorySegment header = arena.allocate(32 + random.nextInt(29));
        fillRandom(header, random);
        SgeList list = new SgeList(maxPieces);
        for (int i = 0, n = 1 + random.nextInt(maxPieces); i < n; i++) {
            int length = random.nextInt(4) == 0 ? 0 : 1 + random.nextInt(maxPiece);
            MemorySegment memory = arena.allocate(length + 16);
            fillRandom(memory, random);
            list.add(memory, random.nextInt(17), length);
        }
        long total = list.byteSize();
        long position = random.nextLong(total / 4 + 1);
        int length = (int) (total - position - random.nextLong((total - position) / 4 + 1));
        return new Gathered(header, list, position, length);
    }

    /** A frame whose payload is {@code length} bytes of {@code block}: frames may share it, none changes it. */
    private Frame frameIn(MemorySegment block, SplittableRandom random, int length) {
        MemorySegment header = arena.allocate(32 + random.nextInt(29));
        fillRandom(header, random);
        return new Frame(header, block.asSlice(random.nextLong(block.byteSize() - length + 1), length));
    }

    private static void fillRandom(MemorySegment segment, SplittableRandom random) {
        for (long i = 0; i < segment.byteSize(); i++) {
            segment.set(ValueLayout.JAVA_BYTE, i, (byte) random.nextInt());
        }
    }

    private static long crcOf(List<? extends Offered> frames) {
        CRC32C crc = new CRC32C();
        for (Offered f : frames) {
            f.addTo(crc);
        }
        return crc.getValue();
    }

    private static long totalBytes(List<? extends Offered> frames) {
        long total = 0;
        for (Offered f : frames) {
            total += f.bytes();
        }
        return total;
    }

    /** Reads exactly {@code bytes} from the peer on a thread of its own and returns their CRC32C. */
    private CompletableFuture<Long> readCrc(long bytes) {
        return readCrc(bytes, 0);
    }

    /**
     * {@link #readCrc(long)}, the peer starting to read only after {@code lateMillis}: on loopback a sent
     * segment leaves the sender's socket buffer at once, so only a full receive window makes sure sends are cut
     * short, whatever the peer's pace.
     */
    private CompletableFuture<Long> readCrc(long bytes, long lateMillis) {
        return readCrc(peer, bytes, lateMillis);
    }

    /** {@link #readCrc(long, long)} from {@code peer}. */
    private static CompletableFuture<Long> readCrc(Socket peer, long bytes, long lateMillis) {
        CompletableFuture<Long> done = new CompletableFuture<>();
        Thread.ofPlatform().daemon().start(() -> {
            try {
                Thread.sleep(lateMillis);
                InputStream in = peer.getInputStream();
                byte[] chunk = new byte[64 * 1024];
                CRC32C crc = new CRC32C();
                long left = bytes;
                while (left > 0) {
                    int n = in.read(chunk, 0, (int) Math.min(chunk.length, left));
                    if (n < 0) {
                        throw new IOException("EOF with " + left + " bytes missing");
                    }
                    crc.update(chunk, 0, n);
                    left -= n;
                }
                done.complete(crc.getValue());
            } catch (Throwable t) {
                done.completeExceptionally(t);
            }
        });
        return done;
    }

    /**
     * Offers every frame on the loop, flushing after each burst and waiting out back-pressure; returns how
     * many of the flushes followed at least one frame.
     */
    private int sendAll(FrameSender sender, List<? extends Offered> frames, int burst) throws Exception {
        return sendAll(sender, events, frames, burst);
    }

    /** {@link #sendAll(FrameSender, List, int)} for a sender that tells {@code events}. */
    private int sendAll(FrameSender sender, Events events, List<? extends Offered> frames, int burst) throws Exception {
        int flushes = 0;
        int next = 0;
        while (next < frames.size()) {
            int from = next;
            int accepted = thread.call(() -> {
                int i = from;
                while (i < frames.size() && i - from < burst) {
                    long token = frames.get(i).offerTo(sender);
                    if (token == FrameSender.BACK_PRESSURED) {
                        break;
                    }
                    assertEquals(i, token, "tokens count the frames offered");
                    i++;
                }
                sender.flush();
                return i;
            });
            if (accepted == next) {
                int before = events.writable.get();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
                while (events.writable.get() == before && thread.call(sender::held) > 0) {
                    assertTrue(System.nanoTime() < deadline, "no onWritable after back-pressure");
                    Thread.sleep(1);
                }
            } else {
                flushes++;
            }
            next = accepted;
        }
        return flushes;
    }

    /** Offers one frame as a batch of its own and waits until it is reported sent. */
    private void sendAndAwait(FrameSender sender, Offered f) throws Exception {
        events.awaitSent(offerAndFlush(sender, List.of(f)));
    }

    /** Offers {@code frames} in one loop job and flushes: one batch unless a send is in flight; the last token. */
    private long offerAndFlush(FrameSender sender, List<? extends Offered> frames) throws Exception {
        return thread.call(() -> {
            long token = -1;
            for (Offered f : frames) {
                token = f.offerTo(sender);
            }
            sender.flush();
            return token;
        });
    }

    /**
     * Two of the owner's ticks: the first ends the period in which the sender was busy, the second finds it quiet, so
     * an idle sender gives its space back by then.
     */
    private void quietTicks(FrameSender sender) throws Exception {
        thread.call(() -> {
            sender.onTick();
            sender.onTick();
            return null;
        });
    }

    /** Whether {@code sender} holds a space, and the counts of {@code spaces}: read on the loop. */
    private static String spaceState(FrameSender sender, SenderSpaces spaces) {
        return sender.holdsSpace() + " " + SenderSpacesTest.counts(spaces);
    }

    // ------------------------------------------------------------------ order and completeness

    @Test
    void framesOfEverySizeArriveByteExactAndInOrder() throws Exception {
        SplittableRandom random = new SplittableRandom(7);
        List<Frame> frames = new ArrayList<>();
        int[] sizes = {0, 1, 7, 64, 500, 2000, 4096, 20_000, 65_536, 300_000, 1 << 20};
        for (int i = 0; i < 400; i++) {
            int size = sizes[random.nextInt(sizes.length)];
            frames.add(frame(random, size == 0 ? 0 : 1 + random.nextInt(size)));
        }
        FrameSender sender = sender(SenderConfig.defaults().withQueue(64, 8L << 20));
        CompletableFuture<Long> received = readCrc(totalBytes(frames));
        // At least two frames a burst: a single frame a flush is coalesced only if a send is still in flight.
        int flushes = sendAll(sender, frames, 2 + random.nextInt(39));
        assertEquals(crcOf(frames), received.get(WAIT_SECONDS * 3, TimeUnit.SECONDS), "CRC32C of the stream");
        events.awaitSent(frames.size() - 1);
        SenderCounters c = thread.call(sender::counters);
        assertTrue(c.framesCopied() > 0 && c.framesGathered() > 0, "both ways of sending were used: " + c);
        // A batch takes every frame queued, or, when its gather list fills, more than a burst has: so each one
        // finishes at least one burst, whatever the sends in flight. The first burst, into an empty sender,
        // has two frames or more, so this also says fewer batches than frames.
        assertTrue(c.batches() <= flushes, "frames were coalesced into at most " + flushes + " batches: " + c);
    }

    @Test
    void framesWrittenInPlaceInTheStagingBufferArriveByteExactAndInOrderAmongOfferedOnes() throws Exception {
        SplittableRandom random = new SplittableRandom(11);
        List<Offered> frames = new ArrayList<>();
        AtomicInteger inPlace = new AtomicInteger();
        int[] sizes = {0, 1, 64, 500, 4096, 70_000};
        for (int i = 0; i < 600; i++) {
            int size = sizes[random.nextInt(sizes.length)];
            Frame f = frame(random, size == 0 ? 0 : 1 + random.nextInt(size));
            frames.add(random.nextInt(3) == 0 ? f : new Staged(f, inPlace));
        }
        FrameSender sender = sender(SenderConfig.defaults().withQueue(64, 8L << 20));
        CompletableFuture<Long> received = readCrc(totalBytes(frames));
        sendAll(sender, frames, 2 + random.nextInt(39));
        assertEquals(crcOf(frames), received.get(WAIT_SECONDS * 3, TimeUnit.SECONDS), "CRC32C of the stream");
        events.awaitSent(frames.size() - 1);
        assertEquals(0, (int) thread.call(sender::held), "every frame was reported sent");
        assertTrue(inPlace.get() > 0, "some frames were written in place");
    }

    @Test
    void theStagingBufferMakesRoomOnlyForWhatItCanTakeAndQueuesOnlyWhereItMadeRoom() throws Exception {
        SenderConfig config = SenderConfig.defaults();
        FrameSender sender = sender(config);
        assertEquals(-1L, (long) thread.call(() -> sender.stagingRoom(config.copyThreshold() + 1)), "above the copy threshold");
        assertEquals(-1L, (long) thread.call(() -> sender.stagingRoom(0)), "an empty frame");
        long at = thread.call(() -> sender.stagingRoom(100));
        assertEquals(0, at, "an idle sender stages from the start of its buffer");
        assertEachRefused(List.of(
                () -> sender.queueStaged(at + 8, 32, 68),
                () -> sender.queueStaged(at, 0, 100),
                () -> sender.queueStaged(at, FrameSender.MAX_HEADER + 1, 0),
                () -> sender.queueStaged(at, 32, -1)));
        assertEquals(0, (int) thread.call(sender::held), "nothing was queued");
        long token = thread.call(() -> sender.queueStaged(at, 32, 68));
        assertEquals(0, token);
        assertEquals(100L, (long) thread.call(() -> sender.stagingRoom(10)), "the next frame goes right after it");
        thread.call(() -> {
            sender.close();
            return null;
        });
        assertEquals(-1L, (long) thread.call(() -> sender.stagingRoom(10)), "a closed sender stages nothing");
        assertThrows(IllegalStateException.class, () -> thread.call(sender::stagingBuffer),
                "a closed sender has given its space back: no staging buffer");
    }

    @Test
    void shortSendsIntoATinySocketBufferAreFinishedBeforeAnythingBehindThem() throws Exception {
        thread.call(() -> {
            loop.setBufferSizes(socket, 4096, 0);
            return null;
        });
        SplittableRandom random = new SplittableRandom(8);
        List<Frame> frames = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            frames.add(frame(random, random.nextInt(3) == 0 ? 10 : 100_000 + random.nextInt(200_000)));
        }
        FrameSender sender = sender(SenderConfig.defaults());
        CompletableFuture<Long> received = readCrc(totalBytes(frames), 300);
        sendAll(sender, frames, frames.size());
        assertEquals(crcOf(frames), received.get(WAIT_SECONDS * 3, TimeUnit.SECONDS), "CRC32C of the stream");
        events.awaitSent(frames.size() - 1);
        SenderCounters c = thread.call(sender::counters);
        assertTrue(c.shortSends() > 0, "a full receive window cuts multi-MiB batches short: " + c);
    }

    // ------------------------------------------------------------------ payloads of several pieces

    @Test
    void framesGatheredFromSeveralPiecesArriveByteExactAndInOrder() throws Exception {
        SplittableRandom random = new SplittableRandom(14);
        List<Offered> frames = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            int maxPiece = new int[] {3, 100, 700, 30_000, 200_000}[random.nextInt(5)];
            frames.add(random.nextInt(5) == 0 ? frame(random, random.nextInt(maxPiece)) : gathered(random, 6, maxPiece));
        }
        FrameSender sender = sender(SenderConfig.defaults().withQueue(64, 8L << 20).withZeroCopyThreshold(64 * 1024));
        CompletableFuture<Long> received = readCrc(totalBytes(frames));
        sendAll(sender, frames, 1 + random.nextInt(40));
        assertEquals(crcOf(frames), received.get(WAIT_SECONDS * 3, TimeUnit.SECONDS), "CRC32C of the stream");
        events.awaitSent(frames.size() - 1);
        SenderCounters c = thread.call(sender::counters);
        assertTrue(c.framesCopied() > 0 && c.framesGathered() > 0, "small ones copied, large ones gathered: " + c);
        assertTrue(c.zeroCopySends() > 0, "large gathered payloads still go out zero-copy: " + c);
    }

    @Test
    void shortSendsOfGatheredFramesResumeInsideTheRightPiece() throws Exception {
        thread.call(() -> {
            loop.setBufferSizes(socket, 4096, 0);
            return null;
        });
        SplittableRandom random = new SplittableRandom(15);
        List<Offered> frames = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            frames.add(gathered(random, 8, 50_000));
        }
        FrameSender sender = sender(SenderConfig.defaults());
        CompletableFuture<Long> received = readCrc(totalBytes(frames), 300);
        sendAll(sender, frames, frames.size());
        assertEquals(crcOf(frames), received.get(WAIT_SECONDS * 3, TimeUnit.SECONDS), "CRC32C of the stream");
        events.awaitSent(frames.size() - 1);
        assertTrue(thread.call(sender::counters).shortSends() > 0, "a full receive window cuts the batches short");
    }

    @Test
    void aFrameAcrossPiecesOfASegmentersSourceIsGatheredByOfferFrame() throws Exception {
        FramingConfig framing = new FramingConfig(4096, true, 8);
        SplittableRandom random = new SplittableRandom(16);
        SgeList source = new SgeList(3);
        for (int length : new int[] {3000, 0, 9000}) {
            MemorySegment memory = arena.allocate(length + 1);
            fillRandom(memory, random);
            source.add(memory, 1, length);
        }
        Segmenter segmenter = new Segmenter(framing).beginWrite(0, source, 7, 0);
        FrameSender sender = sender(SenderConfig.defaults().withQueue(4, 1 << 20));
        MemorySegment scratch = arena.allocate(FrameSender.MAX_HEADER);
        List<Offered> frames = new ArrayList<>();
        for (long i = 0; i < segmenter.frameCount(); i++) {
            int headerBytes = segmenter.writeFrame(i, scratch, 0);
            MemorySegment header = arena.allocate(headerBytes);
            MemorySegment.copy(scratch, 0, header, 0, headerBytes);
            frames.add(new Gathered(header, source, segmenter.payloadPosition(), segmenter.payloadLength()));
        }
        CompletableFuture<Long> received = readCrc(totalBytes(frames));
        long last = thread.call(() -> {
            long token = -1;
            for (long i = 0; i < segmenter.frameCount(); i++) {
                token = sender.offerFrame(segmenter, i);
            }
            sender.flush();
            return token;
        });
        assertEquals(2, last, "three frames: [0, 4096) spans two pieces, the others one");
        assertEquals(crcOf(frames), received.get(WAIT_SECONDS, TimeUnit.SECONDS), "headers, ICRCs and payloads");
        events.awaitSent(last);
    }

    @Test
    void theFifoOfPiecesBackPressuresAndTooManyPiecesAreRefused() throws Exception {
        FrameSender sender = sender(SenderConfig.defaults().withQueue(4, 1 << 20));
        assertEquals(7, (int) thread.call(sender::maxPayloadPieces), "a gather list of 9: two for a staging run and a header");
        SplittableRandom random = new SplittableRandom(17);
        MemorySegment header = arena.allocate(32);
        MemorySegment memory = arena.allocate(8 * 5000);
        fillRandom(memory, random);
        List<Offered> frames = new ArrayList<>();
        for (int f = 0; f < 3; f++) {
            SgeList list = new SgeList(3);
            for (int p = 0; p < 3; p++) {
                list.add(memory, (f * 3 + p) * 4000L, 3000); // above the copy threshold: gathered
            }
            frames.add(new Gathered(header, list, 0, 9000));
        }
        CompletableFuture<Long> received = readCrc(totalBytes(frames));
        long third = thread.call(() -> {
            assertEquals(0, frames.get(0).offerTo(sender));
            assertEquals(1, frames.get(1).offerTo(sender));
            return frames.get(2).offerTo(sender);
        });
        assertEquals(FrameSender.BACK_PRESSURED, third, "6 of 8 pieces held, 3 more do not fit");
        thread.call(() -> {
            sender.flush();
            return null;
        });
        events.awaitSent(1);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (events.writable.get() == 0) {
            assertTrue(System.nanoTime() < deadline, "onWritable after the pieces were released");
            Thread.sleep(1);
        }
        sendAndAwait(sender, frames.get(2));
        assertEquals(crcOf(frames), received.get(WAIT_SECONDS, TimeUnit.SECONDS));

        SgeList eight = new SgeList(8);
        for (int p = 0; p < 8; p++) {
            eight.add(memory, p * 10L, 1);
        }
        Arena closed = Arena.ofShared();
        SgeList dead = new SgeList(2).add(memory, 0, 1).add(closed.allocate(8), 0, 8);
        closed.close();
        assertEachRefused(List.of(
                () -> sender.offer(header, 0, 32, eight, 0, 8),
                () -> sender.offer(header, 0, 32, eight, 4, 5),
                () -> sender.offer(header, 0, 32, dead, 0, 9),
                () -> sender.offer(header, 0, 32, (SgeList) null, 0, 0)));
    }

    // ------------------------------------------------------------------ zero copy

    @Test
    void aZeroCopyFrameIsReportedSentOnlyOnceItsMemoryIsFreeAndMayThenBeOverwritten() throws Exception {
        SplittableRandom random = new SplittableRandom(9);
        Frame big = frame(random, 1 << 20);
        byte[] original = big.payload().toArray(ValueLayout.JAVA_BYTE);
        FrameSender sender = sender(SenderConfig.defaults().withZeroCopyThreshold(64 * 1024));
        // The moment the frame is reported sent its memory is the application's: scribble over it at once,
        // and note whether the kernel's notification had come in by then (it must have).
        AtomicInteger notificationsAtRelease = new AtomicInteger(-1);
        events.onSentHook = () -> {
            SenderCounters c = sender.counters();
            notificationsAtRelease.set((int) (c.zeroCopyCopied() + c.zeroCopyNotCopied()));
            big.payload().fill((byte) 0x5A);
        };
        CompletableFuture<byte[]> received = new CompletableFuture<>();
        long total = big.header().byteSize() + big.payload().byteSize();
        Thread.ofPlatform().daemon().start(() -> {
            try {
                byte[] all = new byte[(int) total];
                new DataInputStream(peer.getInputStream()).readFully(all);
                received.complete(all);
            } catch (Throwable t) {
                received.completeExceptionally(t);
            }
        });
        thread.call(() -> {
            sender.offer(big.header(), 0, (int) big.header().byteSize(), big.payload(), 0, (int) big.payload().byteSize());
            sender.flush();
            return null;
        });
        events.awaitSent(0);
        byte[] got = received.get(WAIT_SECONDS, TimeUnit.SECONDS);
        for (int i = 0; i < original.length; i++) {
            if (got[(int) big.header().byteSize() + i] != original[i]) {
                fail("payload byte " + i + " reached the peer changed: released before the kernel was done");
            }
        }
        assertEquals(1, notificationsAtRelease.get(), "reported sent before the kernel's notification");
        SenderCounters c = thread.call(sender::counters);
        assertEquals(1, c.zeroCopySends(), "a 1 MiB payload goes out zero-copy: " + c);
        assertEquals(1, c.zeroCopyCopied() + c.zeroCopyNotCopied(), "its notification was counted: " + c);
    }

    @Test
    void loopbackCopiesSoLargeBatchesSwitchToCopyAndAreProbedAgainLater() throws Exception {
        FrameSender sender = sender(SenderConfig.defaults().withZeroCopyThreshold(64 * 1024).withAdaptation(2, 3));
        SplittableRandom random = new SplittableRandom(10);
        List<Frame> frames = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            frames.add(frame(random, 128 * 1024));
        }
        CompletableFuture<Long> received = readCrc(totalBytes(frames));
        for (Frame f : frames) { // one large batch at a time
            sendAndAwait(sender, f);
        }
        assertEquals(crcOf(frames), received.get(WAIT_SECONDS, TimeUnit.SECONDS));
        SenderCounters c = thread.call(sender::counters);
        // Loopback always copies (the kernel says so): 2 zero-copy sends, the switch, then a probe every 3rd.
        assertEquals(1, c.switchesToCopy(), "one switch to copy: " + c);
        assertEquals(0, c.zeroCopyNotCopied(), "loopback never sends without copying: " + c);
        assertEquals(3, c.probes(), "10 large batches by copy, a probe every 3rd: " + c);
        assertEquals(2 + c.probes(), c.zeroCopySends(), c.toString());
        assertFalse(thread.call(sender::zeroCopyActive), "copying is the rule now");
    }

    @Test
    void aProbeThatFindsZeroCopyWorkingSwitchesBack() throws Exception {
        FrameSender sender = sender(SenderConfig.defaults().withZeroCopyThreshold(64 * 1024).withAdaptation(1, 2));
        SplittableRandom random = new SplittableRandom(11);
        List<Frame> frames = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            frames.add(frame(random, 100 * 1024));
        }
        CompletableFuture<Long> received = readCrc(totalBytes(frames));
        for (int i = 0; i < frames.size(); i++) {
            Frame f = frames.get(i);
            if (i == 1) { // the route changes: from now on notifications report real zero copy
                thread.call(() -> {
                    sender.notificationFilter(result -> result & ~CqeFlags.ZC_COPIED);
                    return null;
                });
            }
            sendAndAwait(sender, f);
        }
        assertEquals(crcOf(frames), received.get(WAIT_SECONDS, TimeUnit.SECONDS));
        SenderCounters c = thread.call(sender::counters);
        // #0 zero-copy (copied: switch), #1 by copy, #2 the probe (not copied: switch back), #3 zero-copy.
        assertEquals(1, c.switchesToCopy(), c.toString());
        assertEquals(1, c.probes(), c.toString());
        assertEquals(1, c.switchesToZeroCopy(), c.toString());
        assertEquals(3, c.zeroCopySends(), c.toString());
        assertTrue(thread.call(sender::zeroCopyActive));
    }

    // ------------------------------------------------------------------ spaces: lent while there is something to send

    @Test
    void anIdleSenderHoldsNoSpaceOnceItsFramesAreSentAndABusyOneHoldsOne() throws Exception {
        SenderConfig config = SenderConfig.defaults();
        SenderSpaces spaces = thread.call(() -> new SenderSpaces(config));
        FrameSender sender = sender(config, spaces, socket, events);
        assertEquals("false made=0 lent=0 idle=0", thread.call(() -> spaceState(sender, spaces)), "a new sender holds none");
        SplittableRandom random = new SplittableRandom(20);
        List<Frame> frames = List.of(frame(random, 100), frame(random, 300_000), frame(random, 10));
        CompletableFuture<Long> received = readCrc(totalBytes(frames));
        String busy = thread.call(() -> { // no completion can come within this job
            offerAndFlush(sender, frames);
            return spaceState(sender, spaces);
        });
        assertEquals("true made=1 lent=1 idle=0", busy, "a sender with a send in flight holds a space");
        assertEquals(crcOf(frames), received.get(WAIT_SECONDS, TimeUnit.SECONDS));
        events.awaitSent(frames.size() - 1);
        assertEquals("false made=1 lent=0 idle=1", thread.call(() -> spaceState(sender, spaces)),
                "every frame sent: the space is back");

        assertEquals("0 true", thread.call(() -> sender.stagingRoom(100) + " " + sender.holdsSpace()),
                "an idle sender takes a space to make room");
        assertEquals("false made=1 lent=0 idle=1", thread.call(() -> {
            sender.flush();
            return spaceState(sender, spaces);
        }), "no frame was queued in that room: the flush gives the space back");
        long token = thread.call(() -> sender.queueStaged(sender.stagingRoom(10), 4, 6));
        assertEquals(frames.size(), token, "tokens go on across spaces");
        assertEquals("true made=1 lent=1 idle=0", thread.call(() -> {
            sender.flush();
            sender.close();
            return spaceState(sender, spaces);
        }), "closed with a send in flight: the kernel reads the space until its completion");
        events.awaitSent(token);
        assertEquals("false made=1 lent=0 idle=1", thread.call(() -> spaceState(sender, spaces)),
                "a closed sender gives its space back");
    }

    @Test
    void aBusySenderKeepsItsSpaceBetweenBurstsUntilATickFindsItQuietAndAHeaderAloneNeedsNone() throws Exception {
        SenderConfig config = SenderConfig.defaults().withQueue(64, 8L << 20);
        SenderSpaces spaces = thread.call(() -> new SenderSpaces(config));
        FrameSender sender = sender(config, spaces, socket, events);
        SplittableRandom random = new SplittableRandom(23);
        List<Frame> frames = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            frames.add(frame(random, i % 3 == 2 ? 0 : 200 + random.nextInt(2000)));
        }
        List<Frame> sent = List.of(frames.get(2), frames.get(5), frames.get(0), frames.get(1), frames.get(3),
                frames.get(1), frames.get(4));
        CompletableFuture<Long> received = readCrc(totalBytes(sent));
        // A header alone on an idle sender: sent from the sender's own slot, no space taken.
        long first = thread.call(() -> {
            long t = frames.get(2).offerTo(sender);
            sender.flush();
            return t;
        });
        events.awaitSent(first);
        assertEquals("false made=0 lent=0 idle=0", thread.call(() -> spaceState(sender, spaces)), "no space for a header");
        // A header, then a frame with a payload in the same turn: both in one space and one batch, in order.
        long second = offerAndFlush(sender, List.of(frames.get(5), frames.get(0)));
        events.awaitSent(second);
        // Bursts in a row, as request and reply: the space stays between them, made once.
        for (int burst = 0; burst < 3; burst++) {
            events.awaitSent(offerAndFlush(sender, List.of(frames.get(burst % 2 == 0 ? 1 : 3))));
            assertEquals("true made=1 lent=1 idle=0", thread.call(() -> spaceState(sender, spaces)),
                    "a busy sender keeps its space while idle, burst " + burst);
        }
        thread.call(() -> {
            sender.onTick(); // the end of the busy period
            return null;
        });
        assertTrue(thread.call(sender::holdsSpace), "busy since the last tick: kept");
        events.awaitSent(offerAndFlush(sender, List.of(frames.get(4))));
        thread.call(() -> {
            sender.onTick(); // one batch since the last: quiet
            return null;
        });
        assertEquals("false made=1 lent=0 idle=1", thread.call(() -> spaceState(sender, spaces)),
                "quiet for a tick: given back");
        assertEquals(crcOf(sent), received.get(WAIT_SECONDS, TimeUnit.SECONDS), "every frame, in order");
    }

    @Test
    void aListenerThatOffersAndFlushesWhenAHeaderAloneWasSentStartsTheOnlyBatchInFlight() throws Exception {
        SenderConfig config = SenderConfig.defaults().withQueue(64, 8L << 20);
        SenderSpaces spaces = thread.call(() -> new SenderSpaces(config.withQueue(8, 8L << 20).withStagingBytes(4096),
                config, 4));
        FrameSender sender = sender(config, spaces, socket, events);
        SplittableRandom random = new SplittableRandom(31);
        Frame header = frame(random, 0);
        List<Frame> after = new ArrayList<>();
        for (int i = 0; i < 7; i++) { // what the small space holds beside nothing else
            after.add(frame(random, 100 + random.nextInt(3000)));
        }
        List<Frame> all = new ArrayList<>(List.of(header));
        all.addAll(after);
        CompletableFuture<Long> received = readCrc(totalBytes(all));
        // As a queue pair's requester does: the report that the header left makes it offer more and flush, inside
        // the sender's completion; the sender must then not start a second send beside that batch.
        events.onSentHook = () -> {
            events.onSentHook = null;
            for (int i = 0; i < after.size(); i++) {
                after.get(i).offerTo(sender);
                if (i == 3) {
                    sender.flush(); // a batch in flight, and three frames queued behind it
                }
            }
        };
        thread.call(() -> {
            header.offerTo(sender);
            sender.flush();
            return null;
        });
        assertEquals(crcOf(all), received.get(WAIT_SECONDS, TimeUnit.SECONDS), "every byte once, in order");
        events.awaitSent(all.size() - 1);
    }

    @Test
    void aSenderThatFillsItsSmallSpaceMovesIntoALargeOneMidStreamWithEveryFrameIntactAndInOrder() throws Exception {
        SenderConfig large = SenderConfig.defaults().withQueue(256, 8L << 20);
        SenderConfig small = large.withQueue(8, 8L << 20).withStagingBytes(4096);
        SenderSpaces spaces = thread.call(() -> new SenderSpaces(small, large, 4));
        FrameSender sender = sender(large, spaces, socket, events);
        SplittableRandom random = new SplittableRandom(29);
        AtomicInteger inPlace = new AtomicInteger();
        List<Offered> frames = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            Frame f = frame(random, random.nextInt(10) == 0 ? 5000 + random.nextInt(60_000) : random.nextInt(1500));
            frames.add(random.nextInt(3) == 0 ? new Staged(f, inPlace) : f);
        }
        CompletableFuture<Long> received = readCrc(totalBytes(frames));
        // Bursts of 100 fill the small space's 8 frames: the sender grows into a large one between two batches.
        sendAll(sender, frames, 100);
        assertEquals(crcOf(frames), received.get(WAIT_SECONDS * 3, TimeUnit.SECONDS), "CRC32C of the stream");
        events.awaitSent(frames.size() - 1);
        SenderCounters c = thread.call(sender::counters);
        assertTrue(c.spacesGrown() >= 1, "the sender moved into a large space: " + c);
        assertTrue(inPlace.get() > 0, "frames written in place took part");
        quietTicks(sender);
        assertEquals("false made=2 lent=0 idle=2", thread.call(() -> spaceState(sender, spaces)),
                "one small and one large, both back in the pool");
        assertThrows(IllegalArgumentException.class, () -> new SenderSpaces(large, small, 1), "small larger than large");
    }

    @Test
    void twoSendersOnOnePoolTakeTurnsWithOneSpaceAndEachHoldsItsOwnWhenBothAreBusy() throws Exception {
        SenderConfig config = SenderConfig.defaults().withQueue(64, 8L << 20);
        SenderSpaces spaces = thread.call(() -> new SenderSpaces(config));
        Link second = connectLink();
        Events secondEvents = new Events();
        FrameSender first = sender(config, spaces, socket, events);
        FrameSender other = sender(config, spaces, second.socket(), secondEvents);
        SplittableRandom random = new SplittableRandom(21);
        AtomicInteger inPlace = new AtomicInteger();
        List<Offered> firstFrames = new ArrayList<>();
        List<Offered> otherFrames = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            Frame f = frame(random, random.nextInt(3) == 0 ? 5000 + random.nextInt(100_000) : random.nextInt(1500));
            (i % 20 < 10 ? firstFrames : otherFrames).add(random.nextBoolean() ? f : new Staged(f, inPlace));
        }
        CompletableFuture<Long> firstReceived = readCrc(totalBytes(firstFrames));
        CompletableFuture<Long> otherReceived = readCrc(second.peer(), totalBytes(otherFrames), 0);
        // One after the other: each burst finds the space the other gave back.
        for (int turn = 0; turn < 4; turn++) {
            FrameSender sender = turn % 2 == 0 ? first : other;
            Events told = turn % 2 == 0 ? events : secondEvents;
            List<Offered> frames = (turn % 2 == 0 ? firstFrames : otherFrames).subList(turn / 2 * 10, turn / 2 * 10 + 10);
            told.awaitSent(offerAndFlush(sender, frames));
            quietTicks(sender);
            assertEquals("false made=1 lent=0 idle=1", thread.call(() -> spaceState(sender, spaces)), "turn " + turn);
        }
        // Both busy at once: each needs a space of its own, and neither sees the other's bytes.
        String both = thread.call(() -> {
            offerAndFlush(first, firstFrames.subList(20, 30));
            offerAndFlush(other, otherFrames.subList(20, 30));
            return spaceState(first, spaces) + " " + other.holdsSpace();
        });
        assertEquals("true made=2 lent=2 idle=0 true", both, "a busy sender keeps its space");
        assertEquals(crcOf(firstFrames), firstReceived.get(WAIT_SECONDS, TimeUnit.SECONDS), "first stream");
        assertEquals(crcOf(otherFrames), otherReceived.get(WAIT_SECONDS, TimeUnit.SECONDS), "other stream");
        events.awaitSent(29);
        secondEvents.awaitSent(29);
        assertEquals("false made=2 lent=0 idle=2", thread.call(() -> spaceState(first, spaces)));
        assertTrue(inPlace.get() > 0, "some frames were written in place");
    }

    @Test
    void tenThousandFramesInBurstsWithIdleGapsArriveIntactAndInOrderAsTwoSendersShareOneSpace() throws Exception {
        SenderConfig config = SenderConfig.defaults().withQueue(64, 8L << 20).withZeroCopyThreshold(64 * 1024);
        SenderSpaces spaces = thread.call(() -> new SenderSpaces(config, 1));
        Link second = connectLink();
        Events secondEvents = new Events();
        FrameSender[] senders = {sender(config, spaces, socket, events),
                sender(config, spaces, second.socket(), secondEvents)};
        Events[] told = {events, secondEvents};
        SplittableRandom random = new SplittableRandom(22);
        MemorySegment block = arena.allocate(1 << 20);
        fillRandom(block, random);
        AtomicInteger inPlace = new AtomicInteger();
        List<List<Offered>> frames = List.of(new ArrayList<>(), new ArrayList<>());
        for (int i = 0; i < 10_000; i++) {
            int kind = random.nextInt(100);
            Offered f = kind < 2 ? frameIn(block, random, 70_000)
                    : kind < 12 ? gathered(random, 4, 3000)
                    : kind < 30 ? frameIn(block, random, 2100 + random.nextInt(20_000))
                    : kind < 65 ? new Staged(frameIn(block, random, random.nextInt(1500)), inPlace)
                    : frameIn(block, random, random.nextInt(1500));
            frames.get(random.nextInt(2)).add(f);
        }
        List<CompletableFuture<Long>> received = List.of(readCrc(peer, totalBytes(frames.get(0)), 0),
                readCrc(second.peer(), totalBytes(frames.get(1)), 0));
        int[] next = new int[2];
        for (int k = 0; next[0] < frames.get(0).size() || next[1] < frames.get(1).size(); k ^= 1) {
            FrameSender sender = senders[k];
            List<Offered> mine = frames.get(k);
            int from = next[k];
            int to = Math.min(mine.size(), from + 1 + random.nextInt(40));
            if (from == to) {
                continue;
            }
            thread.call(() -> {
                for (int i = from; i < to; i++) {
                    assertEquals(i, mine.get(i).offerTo(sender), "tokens go on across spaces");
                }
                sender.flush();
                return null;
            });
            next[k] = to;
            told[k].awaitSent(to - 1);
            // A burst of one batch gives the space back in the completion that reported its last frame; a longer one
            // at the tick that finds it quiet: either way the other sender gets it.
            quietTicks(sender);
            assertFalse(thread.call(sender::holdsSpace), "idle after frame " + (to - 1));
        }
        for (int k = 0; k < 2; k++) {
            assertEquals(crcOf(frames.get(k)), received.get(k).get(WAIT_SECONDS, TimeUnit.SECONDS), "stream " + k);
        }
        assertEquals(1, (long) thread.call(spaces::made), "the senders took turns with one space");
        assertTrue(inPlace.get() > 0, "some frames were written in place");
        SenderCounters c = thread.call(senders[0]::counters);
        assertTrue(c.framesCopied() > 0 && c.framesGathered() > 0, c.toString());
    }

    @Test
    void aZeroCopyBatchKeepsItsSpaceUntilItsNotificationsAreIn() throws Exception {
        SenderConfig config = SenderConfig.defaults().withZeroCopyThreshold(64 * 1024);
        SenderSpaces spaces = thread.call(() -> new SenderSpaces(config));
        Link stalled = connectLink(); // its peer reads only at the end: the kernel keeps the pages it sends from
        Events stalledEvents = new Events();
        FrameSender zeroCopy = sender(config, spaces, stalled.socket(), stalledEvents);
        FrameSender other = sender(config, spaces, socket, events);
        SplittableRandom random = new SplittableRandom(23);
        // The small frames are copied into staging as the batch is made, behind the large one: the end of the
        // stream, which waits in the socket while the peer's buffer is full, is the staging buffer.
        List<Frame> zeroCopyFrames = new ArrayList<>();
        zeroCopyFrames.add(frame(random, 1 << 20));
        for (int i = 0; i < 8; i++) {
            zeroCopyFrames.add(frame(random, 1000));
        }
        long last = offerAndFlush(zeroCopy, zeroCopyFrames);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (thread.call(zeroCopy::hasUnsent)) {
            assertTrue(System.nanoTime() < deadline, "the kernel never took the batch");
            Thread.sleep(1);
        }
        assumeTrue(thread.call(zeroCopy::held) > 0,
                "the engine reported the batch's notification with its send: nothing waits for it here");
        assertTrue(thread.call(zeroCopy::holdsSpace), "notifications due: the kernel may still read the space");
        // Were the space back, the other sender would take it and stage its frames over the ones in flight.
        List<Frame> otherFrames = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            otherFrames.add(frame(random, 1000));
        }
        CompletableFuture<Long> otherReceived = readCrc(totalBytes(otherFrames));
        events.awaitSent(offerAndFlush(other, otherFrames));
        assertEquals(crcOf(otherFrames), otherReceived.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertEquals("true made=2 lent=1 idle=1", thread.call(() -> spaceState(zeroCopy, spaces)),
                "the other sender needed a space of its own");
        CompletableFuture<Long> received = readCrc(stalled.peer(), totalBytes(zeroCopyFrames), 0);
        assertEquals(crcOf(zeroCopyFrames), received.get(WAIT_SECONDS, TimeUnit.SECONDS), "what the kernel sent late");
        stalledEvents.awaitSent(last);
        assertEquals("false made=2 lent=0 idle=2", thread.call(() -> spaceState(zeroCopy, spaces)));
        assertTrue(thread.call(zeroCopy::counters).zeroCopySends() > 0);
    }

    // ------------------------------------------------------------------ back-pressure, failure, bad input

    @Test
    void aFullSenderAnswersBackPressureAndSaysWhenThereIsRoomAgain() throws Exception {
        SenderConfig config = SenderConfig.defaults().withQueue(4, 1 << 20);
        SenderSpaces spaces = thread.call(() -> new SenderSpaces(config));
        FrameSender sender = sender(config, spaces, socket, events);
        SplittableRandom random = new SplittableRandom(12);
        List<Frame> frames = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            frames.add(frame(random, 1000));
        }
        CompletableFuture<Long> received = readCrc(totalBytes(frames));
        long fifth = thread.call(() -> {
            for (int i = 0; i < 4; i++) {
                Frame f = frames.get(i);
                assertEquals(i, sender.offer(f.header(), 0, (int) f.header().byteSize(), f.payload(), 0, 1000));
            }
            Frame f = frames.get(4);
            return sender.offer(f.header(), 0, (int) f.header().byteSize(), f.payload(), 0, 1000);
        });
        assertEquals(FrameSender.BACK_PRESSURED, fifth, "a sender holds 4 frames");
        assertEquals(0, events.writable.get());
        assertTrue(thread.call(sender::holdsSpace), "a full sender holds its space");
        thread.call(() -> {
            sender.flush();
            return null;
        });
        events.awaitSent(3);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (events.writable.get() == 0) {
            assertTrue(System.nanoTime() < deadline, "onWritable after the frames left");
            Thread.sleep(1);
        }
        long again = thread.call(() -> {
            Frame f = frames.get(4);
            long t = sender.offer(f.header(), 0, (int) f.header().byteSize(), f.payload(), 0, 1000);
            sender.flush();
            return t;
        });
        assertEquals(4, again);
        assertEquals(crcOf(frames), received.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertEquals(1, thread.call(sender::counters).backPressure());
        events.awaitSent(4);
        quietTicks(sender);
        assertEquals("false made=1 lent=0 idle=1", thread.call(() -> spaceState(sender, spaces)),
                "the space came back once the frame behind the back-pressure left");
    }

    @Test
    void aResetConnectionFailsTheSenderOnceAndRefusesMoreFrames() throws Exception {
        FrameSender sender = sender(SenderConfig.defaults());
        peer.setSoLinger(true, 0);
        peer.close(); // RST
        peer = null;
        Frame f = frame(new SplittableRandom(13), 256 * 1024);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        Integer errno = null;
        while (errno == null) { // the first sends may still land in the socket buffer before the RST is seen
            assertTrue(System.nanoTime() < deadline, "the reset was never reported");
            thread.call(() -> {
                sender.offer(f.header(), 0, (int) f.header().byteSize(), f.payload(), 0, (int) f.payload().byteSize());
                sender.flush();
                return null;
            });
            errno = events.failures.poll(20, TimeUnit.MILLISECONDS);
        }
        assertTrue(errno == Errno.ECONNRESET || errno == Errno.EPIPE, "errno " + Errno.name(-errno));
        assertEquals(FrameSender.CLOSED, (long) thread.call(() -> sender.offer(f.header(), 0, 32, f.payload(), 0, 1)));
        Thread.sleep(50);
        assertEquals(null, events.failures.poll(), "reported once");
        assertEquals(1, thread.call(sender::counters).failures());
    }

    @Test
    void badFramesAreRefusedWithAClearError() throws Exception {
        FrameSender sender = sender(SenderConfig.defaults());
        MemorySegment header = arena.allocate(128);
        Arena closed = Arena.ofShared();
        MemorySegment dead = closed.allocate(64);
        closed.close();
        MemorySegment heap = MemorySegment.ofArray(new byte[64]);
        assertEachRefused(List.of(
                () -> sender.offer(header, 0, 0, header, 0, 0),
                () -> sender.offer(header, 0, FrameSender.MAX_HEADER + 1, header, 0, 0),
                () -> sender.offer(header, 120, 32, header, 0, 0),
                () -> sender.offer(header, 0, 32, dead, 0, 16),
                () -> sender.offer(header, 0, 32, heap, 0, 16),
                () -> sender.offer(header, 0, 32, header, 100, 64),
                () -> sender.offerFrame(null, 0)));
        assertEquals(0, (int) thread.call(sender::held), "nothing was queued");
        assertThrows(IllegalArgumentException.class, () -> new SenderConfig(3, 1, 0, 1, 0, 1, 1));
        SenderSpaces otherSizes = new SenderSpaces(SenderConfig.defaults().withQueue(64, 1 << 20));
        assertEachRefused(List.of(
                () -> new FrameSender(loop, socket, SenderConfig.defaults(), events, otherSizes),
                () -> new FrameSender(loop, socket, SenderConfig.defaults(), events, null)));
        assertNotNull(thread.call(sender::toString));
    }

    /** Runs each on the loop: each must throw an IllegalArgumentException with a message. */
    private void assertEachRefused(List<Runnable> offers) throws Exception {
        List<String> wrong = new ArrayList<>();
        for (Runnable bad : offers) {
            Throwable t = thread.call(() -> {
                try {
                    bad.run();
                    return null;
                } catch (Throwable e) {
                    return e;
                }
            });
            if (!(t instanceof IllegalArgumentException) || t.getMessage() == null) {
                wrong.add(String.valueOf(t));
            }
        }
        assertEquals(List.of(), wrong, "each should be an IllegalArgumentException with a message");
    }
}
