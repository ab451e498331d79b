package io.zcnet.ring;

/** The two engines that run an {@link EventLoop}. */
public enum EngineKind {
    /** Linux io_uring, driven through the FFM API. */
    URING,
    /** {@code java.nio} selectors: same operations and completions, fewer features, more syscalls. */
    NIO
}
