package io.zcnet.examples;

import io.zcnet.ring.EventLoopConfig;
import picocli.CommandLine.Option;

/** The {@code --engine} option of the commands that open event loops. */
final class EngineOption {
    @Option(names = "--engine", paramLabel = "auto|uring|nio", defaultValue = "${sys:zcnet.engine:-auto}",
            description = "Engine: auto (io_uring when usable, else NIO), uring or nio. Default: ${DEFAULT-VALUE}.")
    String engine;

    EventLoopConfig.Choice choice() {
        return EventLoopConfig.parseChoice(engine);
    }
}
