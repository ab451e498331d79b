package io.zcnet.examples;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.Callable;

/** {@code zcnet echo-client}: drives any echo server and prints throughput and latency percentiles. */
@Command(name = "echo-client", mixinStandardHelpOptions = true,
        description = "Send messages to an echo server and report messages/s, MB/s and round-trip percentiles.")
final class EchoClientCommand implements Callable<Integer> {
    @Option(names = "--host", defaultValue = "127.0.0.1", description = "Server host. Default: ${DEFAULT-VALUE}.")
    String host;

    @Option(names = "--port", defaultValue = "7777", description = "Server port. Default: ${DEFAULT-VALUE}.")
    int port;

    @Option(names = "--size", defaultValue = "64", description = "Message size in bytes. Default: ${DEFAULT-VALUE}.")
    int size;

    @Option(names = "--mode", defaultValue = "pingpong", paramLabel = "pingpong|pipelined",
            description = "pingpong: one message in flight per connection; pipelined: --window in flight."
                    + " Default: ${DEFAULT-VALUE}.")
    EchoClient.Mode mode;

    @Option(names = "--connections", defaultValue = "1", description = "Connections. Default: ${DEFAULT-VALUE}.")
    int connections;

    @Option(names = "--seconds", defaultValue = "5", description = "Measured seconds. Default: ${DEFAULT-VALUE}.")
    double seconds;

    @Option(names = "--warmup", defaultValue = "1", description = "Warm-up seconds. Default: ${DEFAULT-VALUE}.")
    double warmup;

    @Option(names = "--window", defaultValue = "64",
            description = "Messages in flight per connection when pipelined. Default: ${DEFAULT-VALUE}.")
    int window;

    @Mixin
    LoopOptions loop;

    @Override
    public Integer call() throws Exception {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("--port must be in [1, 65535], got " + port);
        }
        if (!(seconds > 0) || !(warmup >= 0) || seconds > 3600 || warmup > 3600) {
            throw new IllegalArgumentException("--seconds must be in (0, 3600] and --warmup in [0, 3600]");
        }
        EchoClient.Settings settings = new EchoClient.Settings(new InetSocketAddress(host, port), size, mode,
                connections, Duration.ofNanos((long) (seconds * 1e9)), Duration.ofNanos((long) (warmup * 1e9)),
                window, loop.config());
        EchoClient.Result result = EchoClient.run(settings);
        System.out.println(Reports.header());
        System.out.println(Reports.row(mode.name().toLowerCase(java.util.Locale.ROOT) + " " + size + " B", result));
        return result.errors() == 0 && result.messages() > 0 ? 0 : 1;
    }
}
