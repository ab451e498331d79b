package io.zcnet.examples;

import io.zcnet.ring.EngineKind;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.EventLoops;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code zcnet demo}: an echo server and a client in one process on loopback, first on the best engine,
 * then on NIO, with a ping-pong and a pipelined phase each, printed side by side; then two queue pairs
 * over three subflows on the best engine ({@link QueuePairDemo}).
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = {"Echo server and client on loopback in one process: ping-pong and pipelined phases,",
                "on the best engine and then on NIO, with messages/s, latency percentiles and syscalls/msg;",
                "then a SEND, a WRITE with immediate and a READ between two queue pairs over three subflows."})
final class DemoCommand implements Callable<Integer> {
    @Option(names = "--seconds", defaultValue = "2", description = "Seconds per phase. Default: ${DEFAULT-VALUE}.")
    double seconds;

    @Option(names = "--size", defaultValue = "64", description = "Message size in bytes. Default: ${DEFAULT-VALUE}.")
    int size;

    @Option(names = "--window", defaultValue = "64",
            description = "Messages in flight in the pipelined phase. Default: ${DEFAULT-VALUE}.")
    int window;

    @Override
    public Integer call() throws Exception {
        if (!(seconds > 0) || seconds > 600) {
            throw new IllegalArgumentException("--seconds must be in (0, 600], got " + seconds);
        }
        List<EventLoopConfig.Choice> engines = new ArrayList<>();
        if (EventLoops.bestEngine() == EngineKind.URING) {
            engines.add(EventLoopConfig.Choice.URING);
        } else {
            System.out.println("io_uring is not usable here (" + io.zcnet.ring.uring.Uring.availability().reason()
                    + "): running on NIO only");
        }
        engines.add(EventLoopConfig.Choice.NIO);

        List<String> rows = new ArrayList<>();
        int failures = 0;
        for (EventLoopConfig.Choice choice : engines) {
            EventLoopConfig config = EventLoopConfig.defaults().withEngine(choice);
            try (EchoServer server = EchoServer.start(config, new InetSocketAddress("127.0.0.1", 0))) {
                System.out.println("engine " + choice.name().toLowerCase(java.util.Locale.ROOT) + ": "
                        + server.features().summary());
                for (EchoClient.Mode mode : EchoClient.Mode.values()) {
                    EchoClient.Result r = EchoClient.run(new EchoClient.Settings(server.address(), size, mode, 1,
                            Duration.ofNanos((long) (seconds * 1e9)), Duration.ofMillis(500), window, config));
                    rows.add(Reports.row(mode.name().toLowerCase(java.util.Locale.ROOT) + " " + size + " B", r));
                    if (r.errors() > 0 || r.messages() == 0) {
                        failures++;
                    }
                }
            }
        }
        System.out.println();
        System.out.println(Reports.header());
        rows.forEach(System.out::println);
        System.out.println();
        System.out.println("sys/msg counts the client loop's system calls per echoed message (io_uring_enter, or"
                + " selects, reads and writes on NIO).");
        System.out.println();
        if (!QueuePairDemo.run(engines.getFirst(), System.out)) {
            failures++;
        }
        return failures == 0 ? 0 : 1;
    }
}
