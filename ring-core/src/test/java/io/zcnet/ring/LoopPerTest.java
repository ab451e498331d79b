package io.zcnet.ring;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * A contract suite whose every test gets a fresh loop of the engine its subclass names, on a thread of
 * its own ({@link LoopHarness}), closed after the test with what the test opened on it.
 */
abstract class LoopPerTest {
    protected LoopHarness h;
    protected EventLoop loop;

    /** The engine under test. */
    protected abstract EventLoopConfig.Choice engine();

    @BeforeEach
    void startLoop() throws Exception {
        h = LoopHarness.start(engine());
        loop = h.loop();
    }

    @AfterEach
    void stopLoop() throws Exception {
        if (h != null) {
            h.close();
        }
    }
}
