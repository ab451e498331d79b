package io.zcnet.qp;

/**
 * The shared queues a queue pair uses instead of its own, as verbs' {@code ibv_qp_init_attr} names a
 * {@code send_cq}, {@code recv_cq} and {@code srq}: a {@link SharedCompletionQueue} it completes into (both its
 * queues, as when {@code send_cq == recv_cq}), a {@link SharedReceiveQueue} it takes its receives from; either may be
 * null, for the queue pair's own. Both must be of the context the queue pair is made in, and of one loop of it: the
 * queue pair lives on their loop. Given to
 * {@link QpContext#connect(java.util.List, QpConfig, SharedQueues)} or a listener ({@link ListenerConfig#withSharedQueues}).
 *
 * @param completionQueue where its completions go, or null for its own ({@link QueuePair#poll})
 * @param receiveQueue    where its receives come from, or null for its own ({@link QueuePair#postReceive})
 */
public record SharedQueues(SharedCompletionQueue completionQueue, SharedReceiveQueue receiveQueue) {
    /** No shared queue: a queue pair of its own queues. */
    public static final SharedQueues NONE = new SharedQueues(null, null);

    /**
     * Refuses queues of another context than {@code context} or of two different loops, or receives with more elements
     * than {@code config} takes.
     */
    void check(QpContext context, QpConfig config) {
        if (completionQueue != null && completionQueue.context() != context) {
            throw new IllegalArgumentException("the shared completion queue is of another context");
        }
        if (receiveQueue != null && receiveQueue.context() != context) {
            throw new IllegalArgumentException("the shared receive queue is of another context");
        }
        if (completionQueue != null && receiveQueue != null && completionQueue.home() != receiveQueue.home()) {
            throw new IllegalArgumentException("the shared completion queue is of loop " + completionQueue.home().index()
                    + ", the shared receive queue of loop " + receiveQueue.home().index() + ": a queue pair lives on one");
        }
        if (receiveQueue != null && receiveQueue.maxSge() > config.maxReceiveSge()) {
            throw new IllegalArgumentException("the shared receive queue's receives have up to " + receiveQueue.maxSge()
                    + " elements, the queue pairs take " + config.maxReceiveSge() + " (QpConfig.withMaxSge)");
        }
    }

    /** {@return the loop the queue pairs using these queues must live on, or null when they may live on any} */
    QpLoop home() {
        return completionQueue != null ? completionQueue.home() : receiveQueue != null ? receiveQueue.home() : null;
    }
}
