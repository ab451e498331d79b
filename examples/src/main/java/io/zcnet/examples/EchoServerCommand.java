package io.zcnet.examples;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.net.InetSocketAddress;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** {@code zcnet echo-server}: echoes raw bytes on every connection until SIGINT/SIGTERM. */
@Command(name = "echo-server", mixinStandardHelpOptions = true,
        description = {"Echo every byte back on every connection until stopped (Ctrl-C or SIGTERM).",
                "Any TCP client can drive it, e.g. sockperf, nc or 'zcnet echo-client'."})
final class EchoServerCommand implements Callable<Integer> {
    @Option(names = "--port", defaultValue = "7777", description = "TCP port. Default: ${DEFAULT-VALUE}.")
    int port;

    @Option(names = "--bind", defaultValue = "127.0.0.1", paramLabel = "ADDR",
            description = "Address to listen on. Default: ${DEFAULT-VALUE}.")
    String bind;

    @Mixin
    EngineOption engine;

    @Override
    public Integer call() throws Exception {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("--port must be in [0, 65535], got " + port);
        }
        EchoServer server = EchoServer.start(engine.config(), new InetSocketAddress(bind, port));
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().unstarted(() -> {
            server.close();
            stopped.countDown();
        }));
        System.out.println("zcnet echo-server listening on " + server.address() + " ("
                + server.features().summary() + ")");
        System.out.flush();
        stopped.await();
        return 0;
    }
}
