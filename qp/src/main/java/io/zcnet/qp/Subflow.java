package io.zcnet.qp;

import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.MessageAssembler;
import io.zcnet.framing.SgeList;
import io.zcnet.ring.BufferRing;
import io.zcnet.ring.EventLoop;
import io.zcnet.rx.DeferredFrames;
import io.zcnet.rx.FrameReceiver;
import io.zcnet.rx.ReceiveListener;
import io.zcnet.rx.ReceiverConfig;
import io.zcnet.tx.FrameSender;
import io.zcnet.tx.SendListener;
import io.zcnet.tx.SenderConfig;

import java.io.IOException;
import java.lang.foreign.MemorySegment;

/**
 * One TCP connection of a queue pair, after its handshake: zc-tx's {@link FrameSender} and zc-rx's
 * {@link FrameReceiver} on one socket, and what the scheduler needs to know about it: bytes handed to the
 * sender and not yet reported sent (its queue), the rate at which it drains, and when it last carried
 * anything each way (for the heartbeat and the silence detector). Owner thread of the loop.
 */
final class Subflow implements SendListener, ReceiveListener {
    /** Round-trip samples beyond this are a clock jump or a stale echo, not a path. */
    private static final int MAX_RTT_MICROS = 60_000_000;
    /** Frames a subflow's sender holds. */
    static final int SENDER_FRAMES = 1024;
    static final SenderConfig SENDER = SenderConfig.defaults().withQueue(SENDER_FRAMES, 64L << 20);
    /**
     * The space a subflow's sender starts in (about 40 KiB): enough for a request and its reply, or a window of small
     * messages; one that fills it moves into a space of {@link #SENDER}'s sizes (about 500 KiB) for bulk.
     */
    static final SenderConfig SMALL_SENDER = SENDER.withQueue(64, 64L << 20).withStagingBytes(16 * 1024);
    /** The largest frame the sender lets a caller write in place ({@link FrameSender#stagingRoom}). */
    static final int STAGED_FRAME_LIMIT = SENDER.copyThreshold();

    final int index;
    final int socket;
    final String path;
    private final QpEngine engine;
    private final EventLoop loop;
    final FrameSender sender;
    final FrameReceiver receiver;
    private long offered;
    private long released;
    private long lastReleaseNanos;
    /** Drain rate estimate in bytes per nanosecond (EWMA over releases), 0 until measured. */
    private double rate;
    /** Smoothed round trip in microseconds (EWMA of timestamp echoes, gain 1/8 as TCP's SRTT), 0 until measured. */
    private double srttMicros;
    private int lastEcho;
    private long timestampsUsed;
    /** The peer's last timestamp on this subflow, and when (local microseconds) it was taken in. */
    private int peerTimestamp;
    private int peerTimestampAt;
    private boolean peerTimestampKnown;
    long framesSent;
    long bytesSent;
    private long receivedAtLastTick;
    private long messageFramesAtLastTick;
    long silentSinceNanos;
    boolean sentSinceTick;
    /** The last frame offered was a quiet ACKNOWLEDGE: the peer knows this side sends no heartbeats until it has work. */
    boolean quietSent;
    boolean dead;
    /** Set while the subflow ends gracefully: its last frame is leaving. */
    private SubflowEnding ending;

    Subflow(QpEngine engine, int index, int socket, String path, EventLoop loop, BufferRing ring,
            MessageAssembler assembler, DeferredFrames deferred, FramingConfig framing) {
        this.engine = engine;
        this.index = index;
        this.socket = socket;
        this.path = path;
        this.loop = loop;
        // The sender's working memory comes from the context's pool while it has something to send: an idle
        // subflow holds none of it.
        this.sender = new FrameSender(loop, socket, SENDER, this, engine.qp.home().senderSpaces());
        this.receiver = new FrameReceiver(loop, socket, ring, assembler, deferred, framing, ReceiverConfig.defaults(), this,
                engine.qp.home().receiveBuffers());
        this.lastReleaseNanos = System.nanoTime();
        this.silentSinceNanos = lastReleaseNanos;
    }

    /**
     * Offers one frame (header copied now, payload referenced) and accounts its bytes.
     *
     * @return true if the sender took it
     */
    boolean offer(MemorySegment header, int headerLength, MemorySegment payload, long payloadOffset, int payloadLength) {
        return offered(sender.offer(header, 0, headerLength, payload, payloadOffset, payloadLength), headerLength,
                payloadLength);
    }

    /** Offers one frame whose payload is bytes {@code position} on of {@code payload}'s elements, gathered. */
    boolean offer(MemorySegment header, int headerLength, SgeList payload, long position, int payloadLength) {
        return offered(sender.offer(header, 0, headerLength, payload, position, payloadLength), headerLength,
                payloadLength);
    }

    /** Queues a whole frame written in place at {@code at} of the sender's staging buffer ({@link FrameSender#stagingRoom}). */
    void queueStaged(long at, int headerLength, int payloadLength) {
        offered(sender.queueStaged(at, headerLength, payloadLength), headerLength, payloadLength);
    }

    /** Accounts the frame the sender took as {@code token}; false if it took none. */
    private boolean offered(long token, int headerLength, int payloadLength) {
        if (token < 0) {
            return false;
        }
        if (offered == released) {
            // The subflow was idle: the gap since its last release is the application's time, not the path's.
            lastReleaseNanos = System.nanoTime();
        }
        int bytes = headerLength + payloadLength;
        offered += bytes;
        framesSent++;
        bytesSent += payloadLength;
        sentSinceTick = true;
        quietSent = false;
        return true;
    }

    /** Bytes handed to the sender and not yet reported sent. */
    long queued() {
        return offered - released;
    }

    /** Whether the sender can take a frame of {@code bytes} without answering back-pressure. */
    boolean hasRoom(long bytes, long limit) {
        return !dead && sender.held() < SENDER_FRAMES && queued() + bytes <= limit;
    }

    /**
     * Expected time until a frame of {@code bytes} would have arrived, in nanoseconds: the queue ahead of it
     * divided by the drain rate (a subflow not yet measured is taken as fast as the fastest, so every path is
     * tried), plus half the smoothed round trip as the path's one-way delay. Choosing the earliest arrival
     * keeps a long path from carrying frames the short ones would deliver sooner, so reordering stays small.
     */
    double cost(long bytes, double fallbackRate) {
        double r = rate > 0 ? rate : fallbackRate;
        return (queued() + bytes) / r + srttMicros * 500.0;
    }

    double rate() {
        return rate;
    }

    /** Called by the heartbeat: true if a frame of a message (not an ACKNOWLEDGE) arrived since the last tick. */
    boolean heardMessagesSinceTick() {
        long now = receiver.messageFrames();
        boolean any = now != messageFramesAtLastTick;
        messageFramesAtLastTick = now;
        return any;
    }

    /** Called by the heartbeat: true if something arrived since the last tick. */
    boolean receivedSinceTick() {
        long now = receiver.counters().bytesReceived();
        boolean any = now != receivedAtLastTick;
        receivedAtLastTick = now;
        return any;
    }

    @Override
    public void onSent(long token) {
        // What the sender still holds was offered last: everything before it has left, by the bytes it counts
        // as the offers here do (header and payload), so no record per frame is needed to know how much.
        long total = offered - sender.heldBytes();
        long bytes = total - released;
        released = total;
        long now = System.nanoTime();
        long elapsed = now - lastReleaseNanos;
        lastReleaseNanos = now;
        // Only a subflow kept busy through the interval shows what its path can carry: a sample taken while
        // it ran dry may raise the estimate, never lower it (else a path left idle looks slow and stays idle).
        boolean backlogged = queued() > 0;
        if (bytes > 0 && elapsed > 0 && (backlogged || rate == 0 || (double) bytes / elapsed > rate)) {
            // Weighted by the time each sample covers, so bursts of tiny releases do not dominate.
            double sample = (double) bytes / elapsed;
            double weight = Math.min(1.0, elapsed / 10_000_000.0);
            rate = rate == 0 ? sample : rate + (sample - rate) * Math.max(weight, 0.05);
        }
        if (ending != null) {
            halfCloseWhenSent();
            return;
        }
        engine.onSubflowDrained(this);
    }

    @Override
    public void onWritable() {
        engine.onSubflowDrained(this);
    }

    @Override
    public void onFailed(int errno) {
        if (ending != null) {
            sender.close();
            ending.abandon();
            return;
        }
        engine.onSubflowFailed(this, 0, errno, "send failed: errno " + errno);
    }

    @Override
    public void onReceived() {
        takeTimestamps();
        engine.onFramesReceived();
    }

    /** Once per receive turn: the peer's newest timestamp to echo, and a round-trip sample from its echo. */
    private void takeTimestamps() {
        long seen = receiver.timestampsSeen();
        if (seen == timestampsUsed) {
            return;
        }
        timestampsUsed = seen;
        int now = QpClock.micros();
        peerTimestamp = receiver.peerTimestamp();
        peerTimestampAt = now;
        peerTimestampKnown = true;
        int echo = receiver.timestampEcho();
        if (echo != 0 && echo != lastEcho) {
            lastEcho = echo;
            int sample = now - echo;
            if (sample >= 0 && sample < MAX_RTT_MICROS) {
                srttMicros = srttMicros == 0 ? sample : srttMicros + (sample - srttMicros) / 8;
            }
        }
    }

    /**
     * The {@code timestamp_echo} for a frame leaving now: the peer's last timestamp advanced by how long this
     * side held it, so the peer's sample is the path's round trip without this side's delay (QUIC's
     * ack delay, folded into the echo); 0 while the peer has sent none.
     */
    int echo(int nowMicros) {
        if (!peerTimestampKnown) {
            return 0;
        }
        int echo = peerTimestamp + (nowMicros - peerTimestampAt);
        return echo == 0 ? 1 : echo;
    }

    /** Smoothed round trip in microseconds, 0 until measured. */
    double srttMicros() {
        return srttMicros;
    }

    @Override
    public void onClosed() {
        engine.onSubflowFailed(this, 0, 0, "closed by the peer");
    }

    @Override
    public void onFailed(int frameError, int errno, String reason) {
        engine.onSubflowFailed(this, frameError, errno, reason);
    }

    /**
     * Ends the subflow with {@code frame} as its last (an ACKNOWLEDGE header, copied now): stops receiving,
     * and once everything queued has left, hands the socket to a {@link SubflowEnding}, which half-closes,
     * drains and closes it within {@code lingerNanos}; {@code ended} runs then. Idempotent: a subflow already
     * ending or closed is left as it is.
     */
    void end(MemorySegment frame, int length, long lingerNanos, Runnable ended) {
        if (dead) {
            return;
        }
        dead = true;
        receiver.close();
        ending = new SubflowEnding(loop, socket, lingerNanos, ended);
        // A sender too full for one more header ends without it: the peer then sees only the FIN.
        offer(frame, length, frame, 0, 0);
        sender.flush();
        halfCloseWhenSent();
    }

    /** Once everything queued has left, the ending takes the socket over. */
    private void halfCloseWhenSent() {
        if (queued() == 0) {
            sender.close();
            ending.lastFrameSent();
        }
    }

    /** Stops both directions and closes the socket (the peer sees EOF); idempotent. */
    void close(int handler, int tag) {
        if (dead) {
            return;
        }
        dead = true;
        receiver.close();
        sender.close();
        loop.close(handler, tag, socket);
    }

    /**
     * {@link #close}, abortively: the kernel drops what it still holds to send and resets the connection, so
     * nothing of a subflow given up reaches the peer later (the frames are resent elsewhere) and a dead path
     * costs no retransmissions. Idempotent.
     */
    void abort(int handler, int tag) {
        if (dead) {
            return;
        }
        try {
            loop.setResetOnClose(socket);
        } catch (IOException e) {
            // The connection is gone already (often why the subflow failed): a plain close is all there is.
        }
        close(handler, tag);
    }

    @Override
    public String toString() {
        return "Subflow[" + index + " " + path + (dead ? " dead" : "") + " queued=" + queued() + " rate="
                + String.format("%.1f MB/s", rate * 1000) + " srtt=" + String.format("%.0f us", srttMicros)
                + " frames=" + framesSent + "]";
    }
}
