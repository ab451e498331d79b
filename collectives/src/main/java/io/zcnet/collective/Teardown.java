package io.zcnet.collective;

/**
 * The steps of freeing what a rank holds, each taken whatever the ones before it threw, so that one failure
 * leaves nothing else behind; the first failure, carrying the later ones as suppressed, is the caller's to
 * report once all steps ran. One thread.
 */
final class Teardown {
    private RuntimeException failure;

    /** Takes {@code step}, keeping what it throws for {@link #failure()}. */
    void run(Runnable step) {
        try {
            step.run();
        } catch (RuntimeException e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        }
    }

    /** {@return the first step's failure, the later ones suppressed on it; null if every step succeeded} */
    RuntimeException failure() {
        return failure;
    }
}
