package io.zcnet.ring.fallback;

import io.zcnet.ring.EventLoop;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.EventLoops;

/**
 * Child-process entry for {@link UringRefusedFallbackTest}: opens a loop with the automatic choice and
 * prints what it got, so the parent sees exactly what a user's process would see.
 */
public final class FallbackProbe {
    private FallbackProbe() {
    }

    public static void main(String[] args) throws Exception {
        try (EventLoop loop = EventLoops.open(EventLoopConfig.defaults().withEngine(EventLoopConfig.Choice.AUTO))) {
            System.out.println("engine=" + loop.engine());
            System.out.println("reason=" + EventLoops.fallbackReason());
        }
        try (EventLoop loop = EventLoops.open(EventLoopConfig.defaults().withEngine(EventLoopConfig.Choice.URING))) {
            System.out.println("explicit-uring=opened " + loop.engine());
        } catch (java.io.IOException e) {
            System.out.println("explicit-uring=refused " + e.getMessage());
        }
    }
}
