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

import java.lang.foreign.MemorySegment;

/**
 * One TCP connection of a queue pair, after its handshake: zc-tx's {@link FrameSender} and zc-rx's
 * {@link FrameReceiver} on one socket, and what the scheduler needs to know about it: bytes handed to the
 * sender and not yet reported sent (its queue), the rate at which it drains, and when it last carried
 * anything each way (for the heartbeat and the silence detector). Owner thread of the loop.
 */
final class Subflow implements SendListener, ReceiveListener {
    /** Frames a subflow's sender holds; also the size of the token-to-bytes ring. */
    static final int SENDER_FRAMES = 1024;

    final int index;
    final int socket;
    final String path;
    private final QpEngine engine;
    private final EventLoop loop;
    final FrameSender sender;
    final FrameReceiver receiver;
    /** Cumulative bytes offered, by the token of the frame that brought the total there. */
    private final long[] offeredAfter = new long[SENDER_FRAMES];

    private long offered;
    private long released;
    private long lastReleaseNanos;
    /** Drain rate estimate in bytes per nanosecond (EWMA over releases), 0 until measured. */
    private double rate;
    long framesSent;
    long bytesSent;
    private long receivedAtLastTick;
    long silentSinceNanos;
    boolean sentSinceTick;
    boolean dead;

    Subflow(QpEngine engine, int index, int socket, String path, EventLoop loop, BufferRing ring,
            MessageAssembler assembler, DeferredFrames deferred, FramingConfig framing) {
        this.engine = engine;
        this.index = index;
        this.socket = socket;
        this.path = path;
        this.loop = loop;
        this.sender = new FrameSender(loop, socket,
                SenderConfig.defaults().withQueue(SENDER_FRAMES, 64L << 20), this);
        this.receiver = new FrameReceiver(loop, socket, ring, assembler, deferred, framing, ReceiverConfig.defaults(), this);
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

    /** Accounts the frame the sender took as {@code token}; false if it took none. */
    private boolean offered(long token, int headerLength, int payloadLength) {
        if (token < 0) {
            return false;
        }
        int bytes = headerLength + payloadLength;
        offered += bytes;
        offeredAfter[(int) token & (SENDER_FRAMES - 1)] = offered;
        framesSent++;
        bytesSent += payloadLength;
        sentSinceTick = true;
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
     * Expected time until a frame of {@code bytes} would have left, in arbitrary but comparable units: the
     * queue ahead of it divided by the drain rate (a subflow not yet measured is taken as fast as the
     * fastest, so every path is tried).
     */
    double cost(long bytes, double fallbackRate) {
        double r = rate > 0 ? rate : fallbackRate;
        return (queued() + bytes) / r;
    }

    double rate() {
        return rate;
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
        long total = offeredAfter[(int) token & (SENDER_FRAMES - 1)];
        long bytes = total - released;
        released = total;
        long now = System.nanoTime();
        long elapsed = now - lastReleaseNanos;
        lastReleaseNanos = now;
        if (bytes > 0 && elapsed > 0) {
            // Weighted by the time each sample covers, so bursts of tiny releases do not dominate.
            double sample = (double) bytes / elapsed;
            double weight = Math.min(1.0, elapsed / 10_000_000.0);
            rate = rate == 0 ? sample : rate + (sample - rate) * Math.max(weight, 0.05);
        }
        engine.onSubflowDrained(this);
    }

    @Override
    public void onWritable() {
        engine.onSubflowDrained(this);
    }

    @Override
    public void onFailed(int errno) {
        engine.onSubflowFailed(this, 0, errno, "send failed: errno " + errno);
    }

    @Override
    public void onReceived() {
        engine.onFramesReceived();
    }

    @Override
    public void onClosed() {
        engine.onSubflowFailed(this, 0, 0, "closed by the peer");
    }

    @Override
    public void onFailed(int frameError, int errno, String reason) {
        engine.onSubflowFailed(this, frameError, errno, reason);
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

    @Override
    public String toString() {
        return "Subflow[" + index + " " + path + (dead ? " dead" : "") + " queued=" + queued() + " rate="
                + String.format("%.1f MB/s", rate * 1000) + " frames=" + framesSent + "]";
    }
}
