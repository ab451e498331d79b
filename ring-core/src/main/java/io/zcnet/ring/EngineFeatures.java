package io.zcnet.ring;

import java.util.List;

/**
 * What an engine negotiated, for users and {@code zcnet info}.
 *
 * @param engine          the engine
 * @param setupFlags      io_uring setup flags that were accepted, by name (empty on NIO)
 * @param setupFlagBits   the same as the raw {@code io_uring_params.flags} value (0 on NIO)
 * @param kernelFeatures  {@code io_uring_params.features}, by name (empty on NIO)
 * @param supportedOps    opcodes the kernel's probe reports, by name (empty on NIO)
 * @param sqEntries       submission queue size (0 on NIO)
 * @param cqEntries       completion queue size (0 on NIO)
 * @param registeredRing  whether the ring fd is registered ({@code IORING_REGISTER_RING_FDS})
 * @param notes           anything degraded, with its reason
 */
public record EngineFeatures(EngineKind engine, List<String> setupFlags, int setupFlagBits,
        List<String> kernelFeatures, List<String> supportedOps, int sqEntries, int cqEntries,
        boolean registeredRing, List<String> notes) {

    /** Copies the lists, so a record handed out cannot change. */
    public EngineFeatures {
        setupFlags = List.copyOf(setupFlags);
        kernelFeatures = List.copyOf(kernelFeatures);
        supportedOps = List.copyOf(supportedOps);
        notes = List.copyOf(notes);
    }

    /** {@return one line for logs: the engine and the setup flags it runs with} */
    public String summary() {
        if (engine == EngineKind.NIO) {
            return "nio";
        }
        return "io_uring sq=" + sqEntries + " cq=" + cqEntries + " flags=" + String.join("|", setupFlags)
                + (registeredRing ? " registered-ring" : "");
    }
}
