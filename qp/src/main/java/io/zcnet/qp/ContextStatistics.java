package io.zcnet.qp;

import io.zcnet.rx.ReceiveBuffers;
import io.zcnet.tx.SenderSpaces;

import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * A snapshot of what a {@link QpContext} holds, for an operator: its queue pairs by state, the handshakes its
 * listeners have in progress and what they turned away, by cause, and the working memory lent to its subflows, summed
 * over its loops. Taken on each loop thread by {@link QpContext#statistics()}.
 *
 * @param ready      queue pairs in RTS, taken by the application or waiting to be
 * @param failed     queue pairs in ERROR that the application has not closed yet
 * @param waiting    queue pairs established and waiting in a listener to be accepted
 * @param handshakes handshakes in progress on the context's listeners
 * @param refused    connections the listeners refused or dropped, by cause, since they opened
 * @param senderSpacesLent    senders' working spaces lent now: subflows with something to send
 * @param senderSpacesIdle    spaces kept for the next sender that needs one
 * @param receiveBytesLent    receive scratch memory (carries, drains, deferred stores) lent now, in bytes
 * @param receiveBytesIdle    receive scratch memory kept for the next lease, in bytes
 */
public record ContextStatistics(int ready, int failed, int waiting, int handshakes, Map<Refusal, Long> refused,
        int senderSpacesLent, int senderSpacesIdle, long receiveBytesLent, long receiveBytesIdle) {
    /** Copies the counts. */
    public ContextStatistics {
        EnumMap<Refusal, Long> copy = new EnumMap<>(Refusal.class);
        copy.putAll(refused);
        refused = Collections.unmodifiableMap(copy);
    }

    /** Counts what one loop holds now: its queue pairs and spaces, no listener's. Its loop thread. */
    static ContextStatistics ofLoop(List<QpEngine> queuePairs, SenderSpaces senderSpaces, ReceiveBuffers receiveBuffers) {
        int ready = 0;
        int failed = 0;
        for (int i = 0; i < queuePairs.size(); i++) {
            if (queuePairs.get(i).state() == QpState.RTS) {
                ready++;
            } else {
                failed++;
            }
        }
        return new ContextStatistics(ready, failed, 0, 0, Map.of(), senderSpaces.lent(), senderSpaces.idle(),
                receiveBuffers.lentBytes(), receiveBuffers.idleBytes());
    }

    /**
     * Sums what each loop holds and adds what the listeners count. Any thread (the listeners' list under its own
     * lock, as the context keeps it; their counts are thread-safe).
     */
    static ContextStatistics of(List<ContextStatistics> loops, List<QpListener> listeners) {
        int ready = 0;
        int failed = 0;
        int lent = 0;
        int idle = 0;
        long bytesLent = 0;
        long bytesIdle = 0;
        for (ContextStatistics l : loops) {
            ready += l.ready;
            failed += l.failed;
            lent += l.senderSpacesLent;
            idle += l.senderSpacesIdle;
            bytesLent += l.receiveBytesLent;
            bytesIdle += l.receiveBytesIdle;
        }
        int waiting = 0;
        int handshakes = 0;
        EnumMap<Refusal, Long> refused = new EnumMap<>(Refusal.class);
        synchronized (listeners) {
            for (QpListener l : listeners) {
                waiting += l.waiting();
                handshakes += l.handshakes();
                for (Refusal r : Refusal.values()) {
                    refused.merge(r, l.refused(r), Long::sum);
                }
            }
        }
        return new ContextStatistics(ready, failed, waiting, handshakes, refused, lent, idle, bytesLent, bytesIdle);
    }

    /** {@return every connection refused or dropped, whatever the cause} */
    public long refusedInAll() {
        long n = 0;
        for (long v : refused.values()) {
            n += v;
        }
        return n;
    }
}
