package io.zcnet.examples;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.net.InetSocketAddress;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code zcnet echo-server}: echoes raw bytes, or answers as sockperf's server does, on every connection
 * until SIGINT/SIGTERM.
 */
@Command(name = "echo-server", mixinStandardHelpOptions = true,
        description = {"Echo every byte back on every connection until stopped (Ctrl-C or SIGTERM).",
                "Any TCP client can drive it in raw mode, e.g. nc or 'zcnet echo-client';",
                "sockperf's client ('sockperf ping-pong|throughput --tcp') needs --protocol sockperf."})
final class EchoServerCommand implements Callable<Integer> {
    @Option(names = "--port", defaultValue = "7777", description = "TCP port. Default: ${DEFAULT-VALUE}.")
    int port;

    @Option(names = "--bind", defaultValue = "127.0.0.1", paramLabel = "ADDR",
            description = "Address to listen on. Default: ${DEFAULT-VALUE}.")
    String bind;

    @Option(names = "--protocol", defaultValue = "raw", paramLabel = "raw|sockperf",
            description = {"raw: send every byte back. sockperf: parse sockperf's TCP messages and answer",
                    "those that request a reply, as 'sockperf server' does. Default: ${DEFAULT-VALUE}."})
    EchoServer.Protocol protocol;

    @Mixin
    LoopOptions loop;

    @Override
    public Integer call() throws Exception {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("--port must be in [0, 65535], got " + port);
        }
        EchoServer server = EchoServer.start(loop.config(), new InetSocketAddress(bind, port), protocol);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().unstarted(() -> {
            server.close();
            stopped.countDown();
        }));
        System.out.println("zcnet echo-server (" + protocol.name().toLowerCase(Locale.ROOT)
                + ") listening on " + server.address() + " (" + server.features().summary() + ")");
        System.out.flush();
        stopped.await();
        return 0;
    }
}
