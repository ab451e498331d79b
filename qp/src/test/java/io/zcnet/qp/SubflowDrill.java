package io.zcnet.qp;

/**
 * Failover drills: ends a queue pair's subflow as if its network path had failed, through what the package
 * gives its tests, so that no production class carries the hook.
 */
final class SubflowDrill {
    private SubflowDrill() {
    }

    /**
     * Fails subflow {@code index} of {@code qp} as a broken socket would (an empty index: nothing). Any thread:
     * it runs on the queue pair's loop, and another thread waits for it ({@link QueuePair#call}).
     */
    static void kill(QueuePair qp, int index) {
        qp.call(() -> {
            Subflow s = qp.engine().subflow(index);
            if (s != null) {
                qp.engine().onSubflowFailed(s, 0, 0, "killed");
            }
            return null;
        });
    }
}
