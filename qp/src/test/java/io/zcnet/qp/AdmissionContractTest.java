package io.zcnet.qp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.ring.EventLoopConfig;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A listener meeting strangers: its admission policy and bounds decide before anything is allocated, what is
 * cheapest to lose goes first, and a queue pair whose peer left before it was accepted is never handed out.
 * Subclassed once per engine.
 */
@Timeout(120)
abstract class AdmissionContractTest {

    protected abstract EventLoopConfig.Choice engine();

    private static QpConfig config() {
        return QpConfig.defaults().withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(2));
    }

    /** A raw peer whose connection comes from {@code source} (any address of 127/8 is this machine's loopback). */
    private static RawPeer from(String source, InetSocketAddress listener) throws IOException {
        SocketChannel channel = SocketChannel.open();
        channel.bind(new InetSocketAddress(source, 0));
        channel.connect(listener);
        return new RawPeer(channel);
    }

    @Test
    void theAdmissionPolicySeesThePeerAndRefusesBeforeAnythingIsAllocated() throws Exception {
        List<QpProposal> seen = new ArrayList<>();
        ListenerConfig settings = ListenerConfig.of(config()).withAdmission(p -> {
            seen.add(p);
            return p.peer().getAddress().getHostAddress().equals("127.0.0.2") ? "no clients from .2" : null;
        });
        Path jfr = Files.createTempFile("admission", ".jfr");
        try (QpPair p = new QpPair(engine(), config(), 1 << 20);
             Recording recording = new Recording()) {
            recording.enable("io.zcnet.HandshakeRefused");
            recording.start();
            QpListener guarded = p.serverContext.listen(new InetSocketAddress("127.0.0.1", 0), settings);
            int before = p.serverContext.statistics().ready();
            try (RawPeer stranger = from("127.0.0.2", guarded.address())) {
                stranger.sendOpen(config());
                assertEquals(HandshakeMessage.REFUSE, stranger.readAnswer());
                assertEquals(HandshakeMessage.REASON_NOT_ADMITTED, stranger.message.reason());
                assertTrue(stranger.closedWithin(5000), "the refused connection was kept open");
            }
            QpPair.await(() -> guarded.refused(Refusal.NOT_ADMITTED) == 1, "one refused NOT_ADMITTED");
            assertEquals(before, p.serverContext.statistics().ready(), "a queue pair was made for a refused OPEN");
            try (QueuePair admitted = p.clientContext.connect(guarded.address(), config())) {
                assertNotNull(guarded.accept(QpPair.WAIT));
                assertEquals(QpState.RTS, admitted.state());
            }
            assertEquals(2, seen.size(), "the policy saw every OPEN once: " + seen);
            assertEquals("127.0.0.2", seen.get(0).peer().getAddress().getHostAddress());
            assertEquals(config().segmentSize(), seen.get(0).segmentSize());
            recording.stop();
            recording.dump(jfr);
            List<RecordedEvent> events = RecordingFile.readAllEvents(jfr);
            assertTrue(events.stream().anyMatch(e -> e.getEventType().getName().equals("io.zcnet.HandshakeRefused")
                    && e.getString("cause").equals("NOT_ADMITTED")
                    && e.getString("reason").contains("no clients from .2")), () -> "no refusal event in " + events);
        } finally {
            Files.deleteIfExists(jfr);
        }
    }

    @Test
    void opensAreRefusedBusyWhileTheWaitingQueueIsFullAndGoOnOnceOneIsTaken() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), 1 << 20)) {
            QpListener small = p.serverContext.listen(new InetSocketAddress("127.0.0.1", 0),
                    ListenerConfig.of(config()).withLimits(16, 16, 2));
            List<QueuePair> opened = new ArrayList<>();
            try {
                opened.add(p.clientContext.connect(small.address(), config()));
                opened.add(p.clientContext.connect(small.address(), config()));
                QpPair.await(() -> small.waiting() == 2, "two waiting");
                IOException busy = assertThrows(IOException.class, () -> p.clientContext.connect(small.address(), config()));
                assertTrue(busy.getMessage().contains("waiting to be accepted"), busy::getMessage);
                // Counted when the listener's side of the handshake ends, which may be just after the peer read REFUSE.
                QpPair.await(() -> small.refused(Refusal.BUSY) == 1, "one refused BUSY");
                assertNotNull(small.accept(QpPair.WAIT));
                opened.add(p.clientContext.connect(small.address(), config()));
                assertEquals(QpState.RTS, opened.get(2).state());
            } finally {
                for (QueuePair qp : opened) {
                    qp.close();
                }
            }
        }
    }

    @Test
    void aQueuePairWhosePeerLeftBeforeItWasAcceptedIsClosedAndNeverHandedOut() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), 1 << 20)) {
            QpListener listener = p.serverContext.listen(new InetSocketAddress("127.0.0.1", 0), config());
            ContextStatistics before = p.serverContext.statistics();
            QueuePair gone = p.clientContext.connect(listener.address(), config());
            QpPair.await(() -> listener.waiting() == 1, "waiting");
            assertEquals(before.ready() + 1, p.serverContext.statistics().ready());
            gone.close();
            QpPair.await(() -> listener.waiting() == 0, "reaped");
            ContextStatistics after = p.serverContext.statistics();
            assertEquals(before.ready(), after.ready(), after::toString);
            assertEquals(before.failed(), after.failed(), "the reaped queue pair is still held: " + after);
            assertNull(listener.accept(Duration.ofMillis(200)), "a queue pair whose peer left was handed out");
        }
    }

    @Test
    void aListenerThatClosesClosesTheQueuePairsWaitingInIt() throws Exception {
        QpPair p = new QpPair(engine(), config(), 1 << 20);
        try {
            QpListener listener = p.serverContext.listen(new InetSocketAddress("127.0.0.1", 0), config());
            ContextStatistics before = p.serverContext.statistics();
            QueuePair untaken = p.clientContext.connect(listener.address(), config());
            QpPair.await(() -> listener.waiting() == 1, "waiting");
            listener.close();
            QpPair.await(() -> listener.waiting() == 0, "closed with its listener");
            ContextStatistics after = p.serverContext.statistics();
            assertEquals(before.ready(), after.ready(), "the untaken queue pair is still held: " + after);
            assertEquals(before.failed(), after.failed(), "the untaken queue pair is still held: " + after);
            QpPair.await(() -> untaken.state() == QpState.ERROR, "ended at the client's side too");
            assertNull(listener.accept(Duration.ofMillis(100)), "a closed listener handed a queue pair out");
            untaken.close();
        } finally {
            p.close(); // closing the server's context after its listener must not find that queue pair half-freed
        }
    }

    @Test
    void silentConnectionsAreDroppedFirstAndAClientPastItsFirstMessageIsKept() throws Exception {
        try (QpPair p = new QpPair(engine(), config(), 1 << 20)) {
            QpListener tight = p.serverContext.listen(new InetSocketAddress("127.0.0.1", 0),
                    ListenerConfig.of(config()).withLimits(8, 4, 64));
            List<SocketChannel> silent = new ArrayList<>();
            try (RawPeer slow = from("127.0.0.4", tight.address())) {
                // A client that sent its OPEN and then takes its time over the PROOF.
                slow.sendOpen(config());
                assertEquals(HandshakeMessage.CHALLENGE, slow.readAnswer());
                slow.learnOpen();
                for (String source : List.of("127.0.0.2", "127.0.0.3", "127.0.0.2", "127.0.0.3")) {
                    for (int i = 0; i < 5; i++) {
                        SocketChannel c = SocketChannel.open();
                        c.bind(new InetSocketAddress(source, 0));
                        c.connect(tight.address());
                        silent.add(c);
                    }
                }
                QpPair.await(() -> tight.refused(Refusal.HANDSHAKE_LIMIT) + tight.refused(Refusal.SOURCE_LIMIT) >= 20 - 7,
                        "the silent connections dropped: " + tight);
                slow.sendProof(slow.openProof(), 0);
                assertTrue(slow.read(HandshakeMessage.LENGTH, io.zcnet.framing.FrameHeader.LENGTH),
                        "the client past its first message was dropped for silent ones");
                assertNotNull(tight.accept(QpPair.WAIT));
                try (QueuePair fresh = p.clientContext.connect(tight.address(), config())) {
                    assertEquals(QpState.RTS, fresh.state());
                    assertNotNull(tight.accept(QpPair.WAIT));
                }
            } finally {
                for (SocketChannel c : silent) {
                    c.close();
                }
            }
        }
    }
}
