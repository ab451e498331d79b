package io.zcnet.qp;

import io.zcnet.framing.FrameHeader;

/**
 * The subflows of one queue pair by index: which of them carry frames, which indices joins in progress hold, and
 * which one a frame leaves on. Each frame goes to the subflow where it would leave soonest: the fewest bytes
 * queued ahead of it for that subflow's measured drain rate, so fast paths carry more and a slow path never
 * holds much. The scheduler of a multipath transport; verbs has no such role (one QP, one path). Owner thread
 * of the loop.
 */
final class SubflowSet {
    /** Bytes a subflow may have queued in its sender: enough to keep a sendmsg batch full, little to wait behind. */
    private static final long QUEUE_LIMIT = 4L << 20;

    private final QpEngine engine;
    private final Subflow[] all;
    private int live;
    /** Subflow indices promised to joins in progress, one bit each. */
    private long reserved;

    SubflowSet(QpEngine engine, int maxSubflows) {
        this.engine = engine;
        this.all = new Subflow[maxSubflows];
    }

    /**
     * Reserves a free subflow index for a join in progress, or returns -1 when the queue pair has as many
     * subflows (live or joining) as it may.
     */
    int reserve() {
        for (int i = 0; i < all.length; i++) {
            if ((all[i] == null || all[i].dead) && (reserved & (1L << i)) == 0) {
                reserved |= 1L << i;
                return i;
            }
        }
        return -1;
    }

    /** A join that reserved {@code index} failed. */
    void release(int index) {
        reserved &= ~(1L << index);
    }

    /** Adds {@code s}, whose join reserved its index, as a live subflow. */
    void attach(Subflow s) {
        reserved &= ~(1L << s.index);
        all[s.index] = s;
        live++;
    }

    /** {@return how many subflows carry frames} */
    int live() {
        return live;
    }

    /** {@return how many subflow indices there are} */
    int slots() {
        return all.length;
    }

    /** {@return the subflow at {@code index}, live or dead, or null} */
    Subflow get(int index) {
        return all[index];
    }

    /** Resets live subflow {@code s}, which failed: it carries nothing more. */
    void abort(Subflow s) {
        s.abort(engine.handlerId, QpEngine.TAG_CLOSE);
        live--;
    }

    /**
     * Ends every live subflow: gracefully with {@code nak}, stamped with each subflow's index, as its last frame,
     * lingering up to {@code lingerNanos}; or, when {@code nak} is null, by closing it.
     */
    void endAll(ControlFrame nak, long lingerNanos) {
        QpLoop home = engine.qp.home();
        for (Subflow s : all) {
            if (s != null && !s.dead) {
                if (nak != null) {
                    nak.header().subflow(s.index);
                    home.lingerStarted();
                    s.end(nak.memory(), FrameHeader.LENGTH, lingerNanos, home::lingerEnded);
                } else {
                    s.close(engine.handlerId, QpEngine.TAG_CLOSE);
                }
                live--;
            }
        }
    }

    /** The live subflow with room where {@code bytes} would leave soonest, or null. */
    Subflow pick(long bytes) {
        if (live == 1) {
            // One path: there is nothing to weigh, only room to check.
            for (Subflow s : all) {
                if (s != null && !s.dead) {
                    return s.hasRoom(bytes, QUEUE_LIMIT) ? s : null;
                }
            }
        }
        int wanted = engine.requester.proofWanted();
        Subflow proving = wanted >= 0 ? all[wanted] : null;
        if (proving != null && proving.hasRoom(bytes, QUEUE_LIMIT)) {
            return proving; // a frame on it after its resends is what lets the fence lift
        }
        double fastest = 0;
        for (Subflow s : all) {
            if (s != null && !s.dead && s.rate() > fastest) {
                fastest = s.rate();
            }
        }
        double fallback = fastest > 0 ? fastest : 1.0;
        Subflow best = null;
        double bestCost = Double.MAX_VALUE;
        for (Subflow s : all) {
            if (s != null && s.hasRoom(bytes, QUEUE_LIMIT)) {
                double cost = s.cost(bytes, fallback);
                if (cost < bestCost) {
                    bestCost = cost;
                    best = s;
                }
            }
        }
        return best;
    }

    /** Has every live subflow's sender send what it was handed. */
    void flush() {
        for (Subflow s : all) {
            if (s != null && !s.dead) {
                s.sender.flush();
            }
        }
    }

    /** Whether a live subflow's sender still has bytes to send. */
    boolean hasUnsent() {
        for (Subflow s : all) {
            if (s != null && !s.dead && s.sender.hasUnsent()) {
                return true;
            }
        }
        return false;
    }

    /** {@return the payload bytes every subflow, dead ones too, handed to its kernel socket} */
    long bytesSent() {
        long sent = 0;
        for (Subflow s : all) {
            if (s != null) {
                sent += s.bytesSent;
            }
        }
        return sent;
    }

    /** Appends every subflow, dead ones too, to {@code b}. */
    void describe(StringBuilder b) {
        for (Subflow s : all) {
            if (s != null) {
                b.append(' ').append(s);
            }
        }
    }
}
