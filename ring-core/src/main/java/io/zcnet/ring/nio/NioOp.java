package io.zcnet.ring.nio;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * One operation of a {@link NioEventLoop}: the NIO engine's SQE and in-flight request in one object.
 * Objects are pooled by the loop and reused, so preparing an operation allocates nothing once the pool
 * has grown to the number of operations in flight. Owner-thread only.
 *
 * <p>An operation moves FREE → RECORDED (prepared, waiting for the next {@code poll}) → STARTED (tried
 * at once; if it would block, queued on its socket or on the timer heap) → FREE when its final
 * completion is posted.
 */
final class NioOp {
    static final int FREE = 0;
    static final int RECORDED = 1;
    static final int STARTED = 2;
    /** Chained behind an operation that has not completed yet ({@code IOSQE_IO_LINK}). */
    static final int HELD = 3;

    /** This object's index in the loop's pool: the id of its timer in the {@link TimerHeap}. */
    final int id;
    int state = FREE;
    /** {@link io.zcnet.ring.Op} kind. */
    int kind;
    long userData;
    int socket;

    /** SENDMSG: the pieces to gather, or null while this pooled op never carried one. */
    GatherPieces pieces;
    /** RECV_SELECT: the BUFFER flag and id of the buffer the last read filled. */
    int selectedFlags;
    /** {@code linkNext()} followed this operation: what comes after it waits for its completion. */
    boolean linkToNext;
    /** The rest of the chain, held until this operation completes: started if it succeeded, else cancelled. */
    NioOp chainNext;

    /** Send/receive: the view the bytes move through, and where the operation's range starts in it. */
    ByteBuffer view;
    int viewBase;
    int length;
    /** Bytes moved so far ({@code done_io} in the kernel's net.c); what a cancelled partial send reports. */
    int done;
    boolean waitAll;

    boolean multishot;
    NioBufferRing ring;
    /** Whether a multishot receive counts in {@link NioBufferRing}'s armed receives. */
    boolean armed;
    InetSocketAddress remote;
    /** TIMEOUT / LINK_TIMEOUT duration. */
    long nanos;
    /** CANCEL: the user_data to cancel. SHUTDOWN: how. */
    long argument;

    /** The LINK_TIMEOUT that bounds this operation, or null. */
    NioOp linkTimeout;
    /** LINK_TIMEOUT: the operation it bounds, null once that one completed. */
    NioOp linked;

    /** Next in the loop's recorded list or in one of its socket's FIFOs. */
    NioOp next;
    /** Which of its socket's FIFOs holds it ({@link NioSocket#ACCEPTS} ...), or -1. */
    int queue = -1;

    NioOp(int id) {
        this.id = id;
    }

    /** Drops every reference so a pooled object keeps no buffer, ring or peer alive. */
    void clear() {
        state = FREE;
        kind = 0;
        userData = 0;
        socket = -1;
        view = null;
        if (pieces != null) {
            pieces.release();
        }
        selectedFlags = 0;
        linkToNext = false;
        chainNext = null;
        viewBase = 0;
        length = 0;
        done = 0;
        waitAll = false;
        multishot = false;
        ring = null;
        armed = false;
        remote = null;
        nanos = 0;
        argument = 0;
        linkTimeout = null;
        linked = null;
        next = null;
        queue = -1;
    }
}
