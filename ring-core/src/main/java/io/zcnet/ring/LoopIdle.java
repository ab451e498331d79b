package io.zcnet.ring;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

/**
 * How an {@link EventLoopThread} in busy-poll mode idles between polls ({@link EventLoopConfig#withIdle}):
 * it never blocks in the kernel, and hands each poll's work count to {@link #idle(int)}, which should
 * return at once when there was work and back off otherwise. Called on the loop thread only.
 *
 * <p>The factories wrap Agrona's idle strategies (Agrona stays an implementation detail: it is not part of
 * zcnet's API, so a user's own Agrona version cannot clash with it).
 */
@FunctionalInterface
public interface LoopIdle {

    /**
     * Idles after one poll: returns at once after work, backs off after none.
     *
     * @param workCount what the last {@link EventLoop#poll} returned: 0 means nothing was done
     */
    void idle(int workCount);

    /** {@return a strategy that spins (with {@link Thread#onSpinWait()})}: lowest latency, one core at 100%. */
    static LoopIdle busySpin() {
        return new BusySpinIdleStrategy()::idle;
    }

    /** {@return a strategy that yields the core to other threads between idle polls} */
    static LoopIdle yielding() {
        return new YieldingIdleStrategy()::idle;
    }

    /**
     * {@return Spins, then yields, then parks from {@code minParkNanos} doubling up to {@code maxParkNanos}: the
     * usual compromise between latency and CPU}
     *
     * @param maxSpins idle polls spent spinning before yielding
     * @param maxYields idle polls spent yielding before parking
     * @param minParkNanos the first park
     * @param maxParkNanos the longest park
     */
    static LoopIdle backoff(long maxSpins, long maxYields, long minParkNanos, long maxParkNanos) {
        return new BackoffIdleStrategy(maxSpins, maxYields, minParkNanos, maxParkNanos)::idle;
    }
}
