package io.zcnet.examples;

import io.zcnet.qp.QpContext;
import picocli.CommandLine.Option;

/** The {@code --loops} option of the queue-pair commands: how many loop threads their context runs. */
final class LoopCountOption {
    @Option(names = "--loops", defaultValue = "1", paramLabel = "N",
            description = {"Loop threads of the queue-pair context, 1..64: queue pairs spread over them, each living",
                    "on one. More than the cores only adds hand-offs. Default: ${DEFAULT-VALUE}."})
    int loops;

    /** {@return the loop count, checked} */
    int count() {
        if (loops < 1 || loops > QpContext.MAX_LOOPS) {
            throw new IllegalArgumentException("--loops must be in 1.." + QpContext.MAX_LOOPS + ", got " + loops);
        }
        return loops;
    }
}
