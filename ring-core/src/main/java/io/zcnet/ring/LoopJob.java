package io.zcnet.ring;

/**
 * Work that {@link EventLoopThread#runDriving} runs on a loop thread between two polls, so that the work may
 * wait by polling the loop itself ({@link EventLoop#poll}) instead of parking until the loop thread wakes it.
 * Meant to be made once and run many times: handing it over allocates nothing.
 */
@FunctionalInterface
public interface LoopJob {

    /**
     * Runs on the loop thread, outside any poll.
     *
     * @throws Exception whatever the work throws; {@link EventLoopThread#runDriving} rethrows it to its caller
     */
    void run() throws Exception;
}
