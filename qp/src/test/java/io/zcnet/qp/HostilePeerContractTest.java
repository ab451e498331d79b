package io.zcnet.qp;

import static io.zcnet.qp.QpPair.assertFilled;
import static io.zcnet.qp.QpPair.assertSuccess;
import static io.zcnet.qp.QpPair.fill;
import static io.zcnet.qp.QpPair.next;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.framing.FrameError;
import io.zcnet.framing.FrameHeader;
import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.NegativeAcknowledge;
import io.zcnet.framing.PackedSends;
import io.zcnet.framing.Segmenter;
import io.zcnet.ring.EventLoopConfig;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A hostile peer on a raw socket against a listening context: broken, silent, forged and replayed
 * handshakes and frames a real sender never writes. Each must fail only the connection or queue pair it
 * belongs to, with the right reason, while a well-behaved queue pair on the same context carries on.
 * Subclassed once per engine.
 */
@Timeout(120)
abstract class HostilePeerContractTest {

    protected abstract EventLoopConfig.Choice engine();

    QpConfig config() {
        return QpConfig.defaults().withTimeouts(Duration.ofMillis(500), Duration.ofMillis(400));
    }

    /** A healthy queue pair still moves data both ways on the same contexts. */
    static void assertHealthy(QpPair p) {
        WorkRequest wr = new WorkRequest();
        fill(p.clientRegion, 0, 10_000, 99);
        assertTrue(p.client.postSend(wr.write(77, p.clientRegion.localKey(), 0, 10_000, p.serverRegion.remoteKey(), 0)));
        assertSuccess(next(p.client), 77, WorkCompletion.OP_RDMA_WRITE, 10_000);
        assertFilled(p.serverRegion, 0, 10_000, 99);
        assertEquals(QpState.RTS, p.server.state());
    }

    @Test
    void garbageInsteadOfAHandshakeIsDropped() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), 1 << 20);
             RawPeer raw = new RawPeer(p.listener.address())) {
            raw.buffer.asSlice(0, HandshakeMessage.LENGTH).fill((byte) 0x41);
            raw.write(0, HandshakeMessage.LENGTH);
            assertTrue(raw.closedWithin(3000), "garbage was not dropped");
            assertHealthy(p);
        }
    }

    @Test
    void aSilentHandshakeIsDroppedAfterTheTimeout() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), 1 << 20);
             RawPeer raw = new RawPeer(p.listener.address())) {
            long start = System.nanoTime();
            assertTrue(raw.closedWithin(5000), "a silent connection was kept");
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertTrue(millis >= 300, () -> "dropped after " + millis + " ms, before the 500 ms timeout");
            assertTrue(p.listener.lastRefusal().contains("timeout"), p.listener::lastRefusal);
        }
    }

    /**
     * The loop's handshakes share one timer: one started later with a shorter timeout must not wait for the earlier,
     * longer one's deadline, and that one must still end at its own.
     */
    @Test
    void aShorterHandshakeTimeoutStartedLaterEndsOnTimeAgainstASilentAcceptor() throws Exception {
        try (QpContext context = QpContext.open(EventLoopConfig.defaults().withEngine(engine()));
             ServerSocketChannel silent = ServerSocketChannel.open()) {
            silent.bind(new InetSocketAddress("127.0.0.1", 0), 16); // the kernel completes connects; nobody answers
            InetSocketAddress address = (InetSocketAddress) silent.getLocalAddress();
            QpConfig patient = QpConfig.defaults().withTimeouts(Duration.ofSeconds(3), Duration.ofSeconds(2));
            QpConfig impatient = QpConfig.defaults().withTimeouts(Duration.ofMillis(300), Duration.ofSeconds(2));
            long start = System.nanoTime();
            CompletableFuture<Long> patientEnded = CompletableFuture.supplyAsync(() -> {
                assertThrows(IOException.class, () -> context.connect(address, patient));
                return (System.nanoTime() - start) / 1_000_000;
            });
            Thread.sleep(100);
            long shortStart = System.nanoTime();
            IOException e = assertThrows(IOException.class, () -> context.connect(address, impatient));
            long shortMillis = (System.nanoTime() - shortStart) / 1_000_000;
            assertTrue(e.getMessage().contains("timeout"), e::getMessage);
            assertTrue(shortMillis >= 250 && shortMillis < 1500, () -> "the 300 ms handshake ended after " + shortMillis
                    + " ms");
            assertTrue(!patientEnded.isDone(), "the 3 s handshake ended with the 300 ms one");
            long patientMillis = patientEnded.get();
            assertTrue(patientMillis >= 2900 && patientMillis < 5000, () -> "the 3 s handshake ended after "
                    + patientMillis + " ms");
        }
    }

    @Test
    void thousandsOfHalfOpenHandshakesDoNotStopARealOne() throws Exception {
        QpConfig config = config().withTimeouts(Duration.ofSeconds(20), Duration.ofSeconds(2));
        try (QpPair p = new QpPair(engine(), config, 1 << 20)) {
            List<SocketChannel> halfOpen = new ArrayList<>();
            try {
                for (int i = 0; i < 2000; i++) {
                    halfOpen.add(SocketChannel.open(p.listener.address()));
                }
                try (QueuePair another = p.clientContext.connect(p.listener.address(), config)) {
                    assertEquals(QpState.RTS, another.state());
                    assertNotNull(p.listener.accept(QpPair.WAIT));
                }
                assertTrue(p.listener.refused() >= 2000 - ListenerConfig.DEFAULT_MAX_HANDSHAKES_PER_SOURCE,
                        () -> "only " + p.listener.refused() + " half-open handshakes were dropped");
                assertHealthy(p);
            } finally {
                for (SocketChannel c : halfOpen) {
                    c.close();
                }
            }
        }
    }

    @Test
    void aJoinNamingNoQueuePairIsRefused() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), 1 << 20);
             RawPeer raw = new RawPeer(p.listener.address())) {
            raw.sendJoin(p.server.engine().token() ^ 1);
            assertEquals(HandshakeMessage.REFUSE, raw.readAnswer());
            assertEquals(HandshakeMessage.REASON_UNKNOWN_TOKEN, raw.message.reason());
            assertHealthy(p);
        }
    }

    @Test
    void aJoinWithoutTheSecretIsRefused() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), 1 << 20);
             RawPeer raw = new RawPeer(p.listener.address())) {
            raw.token = p.server.engine().token();
            raw.sendJoin(raw.token);
            assertEquals(HandshakeMessage.CHALLENGE, raw.readAnswer());
            byte[] guess = JoinSecret.randomBytes(32);
            raw.sendProof(raw.proof(guess, true), 0);
            assertTrue(raw.closedWithin(3000), "a join without the secret was kept");
            assertTrue(p.listener.lastRefusal().contains("proof"), p.listener::lastRefusal);
            assertEquals(1, p.server.liveSubflows());
            assertHealthy(p);
        }
    }

    @Test
    void anRtrFrameBreakingAFrameRuleOpensNoQueuePair() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), 1 << 20)) {
            List<Consumer<FrameHeader>> spoilers = List.of(
                    h -> h.flags(h.flags() | 1),                                  // a reserved bit
                    h -> h.messageOffsetAndSegment(0, -FrameError.REMOTE_ACCESS), // a NAK, not an RTR
                    h -> h.timestamp(5));                                         // a timestamp without its flag
            for (Consumer<FrameHeader> spoil : spoilers) {
                try (RawPeer raw = new RawPeer(p.listener.address())) {
                    raw.sendOpen(config());
                    assertEquals(HandshakeMessage.CHALLENGE, raw.readAnswer());
                    raw.learnOpen();
                    raw.sendProof(raw.openProof(), 4, spoil);
                    assertTrue(raw.closedWithin(3000), "a spoilt RTR frame was taken");
                    assertTrue(p.listener.lastRefusal().contains("rtr"), p.listener::lastRefusal);
                }
            }
            assertEquals(null, p.listener.accept(Duration.ofMillis(200)), "no queue pair came of them");
            assertHealthy(p);
        }
    }

    @Test
    void aReplayedJoinIsRefused() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), 1 << 20)) {
            long token = p.server.engine().token();
            byte[] secret = p.server.engine().secret();
            byte[] join;
            byte[] proof;
            try (RawPeer first = new RawPeer(p.listener.address())) {
                first.token = token;
                first.sendJoin(token);
                join = first.buffer.asSlice(0, HandshakeMessage.LENGTH).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
                assertEquals(HandshakeMessage.CHALLENGE, first.readAnswer());
                first.icrc = p.server.config().icrc();
                first.sendProof(first.proof(secret, true), 0);
                proof = first.buffer.asSlice(0, HandshakeMessage.LENGTH + FrameHeader.LENGTH)
                        .toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
                assertTrue(first.read(HandshakeMessage.LENGTH, FrameHeader.LENGTH), "the genuine join got no RTR_ACK");
            }
            try (RawPeer replay = new RawPeer(p.listener.address())) {
                MemorySegment.copy(MemorySegment.ofArray(join), 0, replay.buffer, 0, join.length);
                replay.write(0, join.length);
                assertEquals(HandshakeMessage.CHALLENGE, replay.readAnswer());
                MemorySegment.copy(MemorySegment.ofArray(proof), 0, replay.buffer, 0, proof.length);
                replay.write(0, proof.length);
                assertTrue(replay.closedWithin(3000), "a replayed join was accepted");
                assertTrue(p.listener.lastRefusal().contains("proof"), p.listener::lastRefusal);
            }
            assertHealthy(p);
        }
    }

    @Test
    void anOpenProposingASilenceTimeoutBelowTheMinimumIsRefusedAsMalformed() throws Exception {
        // 0 is what a peer that leaves the field out sends; a peer declared dead within a few ms is no peer.
        try (QpPair p = new QpPair(engine(), config(), 1 << 20)) {
            for (long silence : new long[] {0, QpConfig.MIN_SILENCE_MILLIS - 1}) {
                try (RawPeer raw = new RawPeer(p.listener.address())) {
                    raw.sendOpen(config(), m -> m.silenceMillis(silence));
                    assertEquals(HandshakeMessage.REFUSE, raw.readAnswer(), "silence_ms " + silence);
                    assertEquals(HandshakeMessage.REASON_MALFORMED, raw.message.reason(), "silence_ms " + silence);
                    assertTrue(raw.closedWithin(3000), "the refused connection was kept");
                }
            }
            assertEquals(null, p.listener.accept(Duration.ofMillis(200)), "no queue pair came of them");
            assertHealthy(p);
        }
    }

    @Test
    void anAcceptorAnsweringALongerOrTooShortSilenceTimeoutIsRefused() throws Exception {
        long proposed = config().silenceTimeout().toMillis();
        try (QpContext client = QpContext.open(engine());
             ServerSocketChannel acceptor = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            InetSocketAddress address = (InetSocketAddress) acceptor.getLocalAddress();
            for (long answer : new long[] {proposed + 1, QpConfig.MIN_SILENCE_MILLIS - 1}) {
                CompletableFuture<Void> challenged = CompletableFuture.runAsync(() -> {
                    try (RawPeer raw = new RawPeer(acceptor.accept())) {
                        assertTrue(raw.read(0, HandshakeMessage.LENGTH), "no OPEN");
                        assertEquals(HandshakeMessage.OPEN, raw.message.wrap(raw.buffer, 0).type());
                        assertEquals(proposed, raw.message.silenceMillis(), "the OPEN carries the proposal");
                        raw.message.clear(HandshakeMessage.CHALLENGE).flags(HandshakeMessage.FLAG_ICRC)
                                .segmentSize(config().segmentSize()).messageWindow(config().messageWindow())
                                .maxSubflows(config().maxSubflows()).silenceMillis(answer).token(1)
                                .nonce(raw.nonce).mac(JoinSecret.randomBytes(HandshakeMessage.MAC_LENGTH));
                        raw.write(0, HandshakeMessage.LENGTH);
                        assertTrue(raw.closedWithin(3000), "the initiator went on after the CHALLENGE");
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
                IOException refused = assertThrows(IOException.class, () -> client.connect(address, config()));
                challenged.get();
                String why = answer > proposed ? "agreed to more than was proposed" : "parameters are invalid";
                assertTrue(refused.getMessage().contains(why), () -> "silence_ms " + answer + ": " + refused.getMessage());
            }
        }
    }

    @Test
    void aListenerWithAKeyRefusesPeersWithoutIt() throws Exception {
        byte[] key = new byte[32];
        Arrays.fill(key, (byte) 7);
        QpConfig keyed = config().withPreSharedKey(key);
        try (QpContext server = QpContext.open(engine()); QpContext client = QpContext.open(engine())) {
            QpListener listener = server.listen(new InetSocketAddress("127.0.0.1", 0), keyed);
            IOException none = assertThrows(IOException.class, () -> client.connect(listener.address(), config()));
            assertTrue(none.getMessage().contains("pre-shared key"), none::getMessage);
            byte[] wrong = key.clone();
            wrong[0] ^= 1;
            IOException bad = assertThrows(IOException.class,
                    () -> client.connect(listener.address(), config().withPreSharedKey(wrong)));
            assertTrue(bad.getMessage().contains("pre-shared key"), bad::getMessage);
            try (QueuePair good = client.connect(listener.address(), keyed)) {
                assertEquals(QpState.RTS, good.state());
                assertNotNull(listener.accept(QpPair.WAIT));
            }
        }
    }

    @Test
    void aParameterChangedOnTheWayFailsTheProofsOfAKeyedHandshake() throws Exception {
        // A smaller window is one the initiator would accept as an agreement: only the proofs can tell.
        byte[] key = new byte[32];
        Arrays.fill(key, (byte) 9);
        QpConfig keyed = config().withPreSharedKey(key);
        for (boolean inChallenge : new boolean[] {false, true}) {
            try (QpContext server = QpContext.open(engine()); QpContext client = QpContext.open(engine());
                 ServerSocketChannel middle = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
                QpListener listener = server.listen(new InetSocketAddress("127.0.0.1", 0), keyed);
                CompletableFuture<Void> relayed = CompletableFuture.runAsync(
                        () -> relayHalvingTheWindow(middle, listener.address(), inChallenge));
                IOException refused = assertThrows(IOException.class,
                        () -> client.connect((InetSocketAddress) middle.getLocalAddress(), keyed));
                relayed.get();
                assertTrue(refused.getMessage().contains("could not prove the pre-shared key"),
                        () -> (inChallenge ? "CHALLENGE" : "OPEN") + " changed: " + refused.getMessage());
                assertEquals(null, listener.accept(Duration.ofMillis(200)), "no queue pair came of it");
            }
        }
    }

    /**
     * A man in the middle of one handshake: relays the OPEN and the CHALLENGE, halving {@code message_window} in
     * one of them, and waits for the initiator to hang up.
     */
    private static void relayHalvingTheWindow(ServerSocketChannel middle, InetSocketAddress acceptor, boolean inChallenge) {
        try (RawPeer initiator = new RawPeer(middle.accept()); RawPeer toAcceptor = new RawPeer(acceptor)) {
            assertTrue(initiator.read(0, HandshakeMessage.LENGTH), "no OPEN");
            if (!inChallenge) {
                halveWindow(initiator.message.wrap(initiator.buffer, 0));
            }
            MemorySegment.copy(initiator.buffer, 0, toAcceptor.buffer, 0, HandshakeMessage.LENGTH);
            toAcceptor.write(0, HandshakeMessage.LENGTH);
            assertEquals(HandshakeMessage.CHALLENGE, toAcceptor.readAnswer());
            if (inChallenge) {
                halveWindow(toAcceptor.message);
            }
            MemorySegment.copy(toAcceptor.buffer, 0, initiator.buffer, 0, HandshakeMessage.LENGTH);
            initiator.write(0, HandshakeMessage.LENGTH);
            assertTrue(initiator.closedWithin(3000), "the initiator went on after a changed handshake");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void halveWindow(HandshakeMessage m) {
        m.messageWindow(m.messageWindow() / 2);
    }

    /** Opens a queue pair from a raw peer and returns the server's end of it. */
    private static QueuePair rawQueuePair(QpPair p, RawPeer raw, QpConfig config, int credits) throws Exception {
        raw.open(config, credits);
        QueuePair accepted = p.listener.accept(QpPair.WAIT);
        assertNotNull(accepted);
        return accepted;
    }

    /** A segmenter for the frames the raw peer sends, with the segment size and ICRC its handshake agreed. */
    private static Segmenter segmenterFor(RawPeer raw) {
        return new Segmenter(new FramingConfig(raw.segmentSize, raw.icrc, 64));
    }

    /** Writes every frame of the segmenter's current request to the raw peer's socket. */
    private static void writeFrames(RawPeer raw, Segmenter s) throws IOException {
        for (long i = 0; i < s.frameCount(); i++) {
            int header = s.writeFrame(i, raw.buffer, 0);
            int length = s.payloadLength();
            if (length > 0) {
                MemorySegment.copy(s.source(), s.payloadOffset(), raw.buffer, header, length);
            }
            raw.write(0, header + length);
        }
    }

    private static void assertFailsWith(QueuePair victim, String reason) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (victim.state() != QpState.ERROR && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        QpStatistics stats = victim.statistics();
        assertEquals(QpState.ERROR, stats.state(), stats::toString);
        assertTrue(stats.errorReason().contains(reason), () -> "failed for another reason: " + stats.errorReason());
    }

    @Test
    void aWriteWithABadKeyFailsOnlyItsQueuePair() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), 1 << 20);
             RawPeer raw = new RawPeer(p.listener.address());
             Arena arena = Arena.ofConfined()) {
            QueuePair victim = rawQueuePair(p, raw, config(), 0);
            Segmenter s = segmenterFor(raw);
            MemorySegment data = arena.allocate(1000);
            writeFrames(raw, s.beginWrite(0, data, 0, 1000, p.serverRegion.remoteKey() + 1, 0));
            assertFailsWith(victim, "REMOTE_ACCESS");
            FrameHeader nak = raw.readUntilNak();
            assertNotNull(nak, "the victim closed without telling the peer why");
            assertEquals(FrameError.name(FrameError.REMOTE_ACCESS), FrameError.name(NegativeAcknowledge.frameError(nak)));
            assertEquals(0, NegativeAcknowledge.failedMsn(nak), "the NAK names the refused WRITE");
            assertEquals(0xFFFF, nak.msn(), "nothing was completed");
            assertTrue(raw.closedWithin(10_000), "the NAK is the last frame: EOF follows");
            assertHealthy(p);
        }
    }

    @Test
    void aWritePastTheRegionFailsOnlyItsQueuePair() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), 1 << 20);
             RawPeer raw = new RawPeer(p.listener.address());
             Arena arena = Arena.ofConfined()) {
            QueuePair victim = rawQueuePair(p, raw, config(), 0);
            MemoryRegion guard = p.serverContext.register(p.arena.allocate(4096, 4096), Access.ALL);
            guard.segment().fill((byte) 0x33);
            Segmenter s = segmenterFor(raw);
            MemorySegment data = arena.allocate(1000);
            writeFrames(raw, s.beginWrite(0, data, 0, 1000, p.serverRegion.remoteKey(), (1 << 20) - 10));
            assertFailsWith(victim, "REMOTE_ACCESS");
            for (long i = 0; i < 4096; i++) {
                assertEquals(0x33, guard.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, i));
            }
            assertHealthy(p);
        }
    }

    @Test
    void aSendWithoutACreditFailsOnlyItsQueuePair() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), 1 << 20);
             RawPeer raw = new RawPeer(p.listener.address());
             Arena arena = Arena.ofConfined()) {
            QueuePair victim = rawQueuePair(p, raw, config(), 0);
            Segmenter s = segmenterFor(raw);
            writeFrames(raw, s.beginSend(0, 0, arena.allocate(100), 0, 100));
            assertFailsWith(victim, "RECEIVER_NOT_READY");
            assertHealthy(p);
        }
    }

    @Test
    void aPackedSendWhoseRecordRunsPastItsFrameFailsOnlyItsQueuePairAndPlacesNothing() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), 1 << 20);
             RawPeer raw = new RawPeer(p.listener.address());
             Arena arena = Arena.ofConfined()) {
            QueuePair victim = rawQueuePair(p, raw, config(), 0);
            MemoryRegion receives = p.serverContext.register(p.arena.allocate(256), Access.LOCAL_WRITE);
            receives.segment().fill((byte) 0x33);
            assertTrue(victim.postReceive(1, receives.localKey(), 0, 128));
            assertTrue(victim.postReceive(2, receives.localKey(), 128, 128));
            Segmenter s = segmenterFor(raw);
            MemorySegment message = arena.allocate(16);
            long second = PackedSends.writeRecord(raw.buffer, Segmenter.PACKED_HEADER_BYTES, message, 0, 16, false, 0);
            long end = PackedSends.writeRecord(raw.buffer, second, message, 0, 16, false, 0);
            // The second record says 17 bytes where 16 follow: the first, sound, must not be placed either.
            raw.buffer.set(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), second, 17);
            int payload = (int) (end - Segmenter.PACKED_HEADER_BYTES);
            s.writePackedHeader(0, 0, payload, false, raw.buffer, 0);
            raw.write(0, Segmenter.PACKED_HEADER_BYTES + payload);
            assertFailsWith(victim, "INCONSISTENT_MESSAGE");
            for (long i = 0; i < 256; i++) {
                assertEquals(0x33, receives.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, i), "byte " + i);
            }
            assertHealthy(p);
        }
    }

    @Test
    void anMsnFarAheadOfTheWindowFailsOnlyItsQueuePair() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), 1 << 20);
             RawPeer raw = new RawPeer(p.listener.address());
             Arena arena = Arena.ofConfined()) {
            QueuePair victim = rawQueuePair(p, raw, config(), 0);
            Segmenter s = segmenterFor(raw);
            writeFrames(raw, s.beginWrite(30_000, arena.allocate(100), 0, 100, p.serverRegion.remoteKey(), 0));
            assertFailsWith(victim, "MSN_OUT_OF_WINDOW");
            assertHealthy(p);
        }
    }

    @Test
    void aPeerThatGoesSilentLosesItsSubflowWithinTheBound() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), 1 << 20);
             RawPeer raw = new RawPeer(p.listener.address())) {
            QueuePair victim = rawQueuePair(p, raw, config(), 0);
            long start = System.nanoTime();
            assertFailsWith(victim, "silent");
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertTrue(millis >= 300 && millis < 2000, () -> "silence detected after " + millis + " ms (bound 400 ms)");
            assertHealthy(p);
        }
    }
}
