package io.zcnet.qp;

import java.util.List;

/**
 * A snapshot of one queue pair: its state, what it resent after subflow failures, and what each subflow
 * carried. Immutable.
 *
 * @param state        the state when the snapshot was taken
 * @param errorReason  why it went to ERROR, or null
 * @param framesResent frames sent again on a survivor after the subflow that carried them failed
 * @param bytesResent  payload bytes of those frames
 * @param subflows     every subflow the queue pair has had, by index
 */
public record QpStatistics(QpState state, String errorReason, long framesResent, long bytesResent,
        List<SubflowStatistics> subflows) {

    /**
     * One subflow's share of the queue pair.
     *
     * @param index        the subflow's index in its queue pair
     * @param path         where it runs
     * @param alive        whether it still carries frames
     * @param payloadBytes payload bytes handed to it
     * @param frames       frames handed to it
     * @param rateBytesPerSecond its measured drain rate
     * @param roundTripMicros its smoothed round trip from the header timestamps, 0 until measured
     */
    public record SubflowStatistics(int index, String path, boolean alive, long payloadBytes, long frames,
            double rateBytesPerSecond, double roundTripMicros) {
    }

    /** Copies the subflow list, so a snapshot handed out cannot change. */
    public QpStatistics {
        subflows = List.copyOf(subflows);
    }

    /** {@return the payload bytes over all subflows} */
    public long payloadBytes() {
        return subflows.stream().mapToLong(SubflowStatistics::payloadBytes).sum();
    }
}
