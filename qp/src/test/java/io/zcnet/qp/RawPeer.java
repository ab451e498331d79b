package io.zcnet.qp;

import io.zcnet.framing.FlowControl;
import io.zcnet.framing.FrameHeader;
import io.zcnet.framing.NegativeAcknowledge;
import io.zcnet.framing.Icrc;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.function.Consumer;

/**
 * A hand-driven peer on a blocking Java socket, for what a well-behaved queue pair never does: handshakes
 * that stop half way, joins without the secret or replayed, and frames a real sender would not write.
 * Speaks the handshake through the same codec as the library, so each test decides exactly which step to
 * break.
 */
final class RawPeer implements AutoCloseable {
    final SocketChannel channel;
    final Arena arena = Arena.ofConfined();
    final MemorySegment buffer = arena.allocate(4096, 8);
    final HandshakeMessage message = new HandshakeMessage();
    byte[] nonce = JoinSecret.randomBytes(HandshakeMessage.NONCE_LENGTH);
    /** The OPEN or JOIN this peer sent last, as the proofs cover it. */
    byte[] hello;
    long token;
    byte[] secret;
    int segmentSize;
    boolean icrc;

    RawPeer(InetSocketAddress address) throws IOException {
        this(SocketChannel.open(address));
    }

    /** Either end: a connection this peer opened, or one a test accepted to play the acceptor. */
    RawPeer(SocketChannel channel) throws IOException {
        this.channel = channel;
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
    }

    /** Writes {@code length} bytes of the buffer from {@code offset}. */
    void write(long offset, int length) throws IOException {
        ByteBuffer b = buffer.asSlice(offset, length).asByteBuffer();
        while (b.hasRemaining()) {
            channel.write(b);
        }
    }

    /** Reads exactly {@code length} bytes into the buffer at {@code offset}; false on EOF first. */
    boolean read(long offset, int length) throws IOException {
        ByteBuffer b = buffer.asSlice(offset, length).asByteBuffer();
        while (b.hasRemaining()) {
            if (channel.read(b) < 0) {
                return false;
            }
        }
        return true;
    }

    /** Sends OPEN with the given proposal. */
    void sendOpen(QpConfig config) throws IOException {
        sendOpen(config, m -> { });
    }

    /** Sends OPEN with the given proposal, which {@code tamper} may spoil before it leaves. */
    void sendOpen(QpConfig config, Consumer<HandshakeMessage> tamper) throws IOException {
        message.wrap(buffer, 0).clear(HandshakeMessage.OPEN)
                .flags(config.icrc() ? HandshakeMessage.FLAG_ICRC : 0)
                .segmentSize(config.segmentSize())
                .messageWindow(config.messageWindow())
                .maxSubflows(config.maxSubflows())
                .silenceMillis(config.silenceTimeout().toMillis())
                .nonce(nonce);
        tamper.accept(message);
        hello = message.transcript();
        write(0, HandshakeMessage.LENGTH);
    }

    /** Sends JOIN for {@code joinToken}. */
    void sendJoin(long joinToken) throws IOException {
        message.wrap(buffer, 0).clear(HandshakeMessage.JOIN).token(joinToken).nonce(nonce);
        hello = message.transcript();
        write(0, HandshakeMessage.LENGTH);
    }

    /** Reads the acceptor's answer; returns its type (or -1 on EOF). */
    int readAnswer() throws IOException {
        if (!read(0, HandshakeMessage.LENGTH)) {
            return -1;
        }
        return message.wrap(buffer, 0).type();
    }

    /** After a CHALLENGE to an OPEN without a key: learns token, secret and parameters. */
    void learnOpen() {
        token = message.token();
        secret = message.mac();
        segmentSize = message.segmentSize();
        icrc = (message.flags() & HandshakeMessage.FLAG_ICRC) != 0;
    }

    /** Sends PROOF with {@code mac} followed by an RTR frame granting {@code credits}. */
    void sendProof(byte[] mac, int credits) throws IOException {
        sendProof(mac, credits, h -> { });
    }

    /** Sends PROOF with {@code mac} and an RTR frame that {@code tamper} may spoil before it leaves. */
    void sendProof(byte[] mac, int credits, Consumer<FrameHeader> tamper) throws IOException {
        message.wrap(buffer, 0).clear(HandshakeMessage.PROOF).token(token).mac(mac);
        FrameHeader h = new FrameHeader().wrap(buffer, HandshakeMessage.LENGTH);
        FlowControl.writeAcknowledge(h, 0xFFFF, credits, true, false);
        tamper.accept(h);
        if (icrc) {
            h.icrc(new Icrc().compute(buffer, HandshakeMessage.LENGTH));
        }
        write(0, HandshakeMessage.LENGTH + FrameHeader.LENGTH);
    }

    /** The PROOF of an OPEN, from the CHALLENGE just read. */
    byte[] openProof() {
        return proof(secret, false);
    }

    /** The initiator's proof under {@code key} over the hello this peer sent and the CHALLENGE just read. */
    byte[] proof(byte[] key, boolean join) {
        return JoinSecret.initiatorProof(key, join, hello, message.transcript());
    }

    /** Runs a whole OPEN handshake; returns once RTR_ACK is read. */
    void open(QpConfig config, int credits) throws IOException {
        sendOpen(config);
        if (readAnswer() != HandshakeMessage.CHALLENGE) {
            throw new IOException("no CHALLENGE: type " + message.type() + " reason " + message.reason());
        }
        learnOpen();
        sendProof(openProof(), credits);
        if (!read(HandshakeMessage.LENGTH, FrameHeader.LENGTH)) {
            throw new IOException("EOF instead of RTR_ACK");
        }
    }

    /**
     * Reads the queue pair's frames until its NAK, which it returns (a flyweight over the buffer), or until
     * EOF (null). Frames before it (ACKNOWLEDGEs, heartbeats) are skipped.
     */
    FrameHeader readUntilNak() throws IOException {
        FrameHeader h = new FrameHeader();
        while (read(0, FrameHeader.LENGTH)) {
            h.wrap(buffer, 0);
            if (NegativeAcknowledge.isNegative(h)) {
                return h;
            }
            long rest = h.frameLength() - FrameHeader.LENGTH;
            while (rest > 0) {
                int chunk = (int) Math.min(rest, buffer.byteSize() - FrameHeader.LENGTH);
                if (!read(FrameHeader.LENGTH, chunk)) {
                    return null;
                }
                rest -= chunk;
            }
        }
        return null;
    }

    /** Whether the peer has closed the connection (reads until EOF or {@code millis} pass). */
    boolean closedWithin(long millis) throws IOException {
        channel.socket().setSoTimeout((int) millis);
        try (var in = channel.socket().getInputStream()) {
            byte[] sink = new byte[4096];
            long deadline = System.currentTimeMillis() + millis;
            while (System.currentTimeMillis() < deadline) {
                if (in.read(sink) < 0) {
                    return true;
                }
            }
            return false;
        } catch (java.net.SocketTimeoutException e) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    @Override
    public void close() throws IOException {
        try {
            channel.close();
        } finally {
            arena.close();
        }
    }
}
