package io.zcnet.examples;

import io.zcnet.ring.EngineKind;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.LoopIdle;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.net.InetSocketAddress;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The echo server and client programs against each other, on each engine. */
class EchoProgramsTest {

    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void clientAndServerAgreeInBothModes(EventLoopConfig.Choice engine) throws Exception {
        BulkRunTest.assumeUsable(engine);
        EventLoopConfig config = EventLoopConfig.defaults().withEngine(engine);
        try (EchoServer server = EchoServer.start(config, new InetSocketAddress("127.0.0.1", 0))) {
            assertEquals(engine.name(), server.features().engine().name());
            int[] sizes = {1, 64, 100_000};
            int connections = 3;
            for (EchoClient.Mode mode : EchoClient.Mode.values()) {
                for (int size : sizes) {
                    EchoClient.Result r = EchoClient.run(new EchoClient.Settings(server.address(), size, mode, connections,
                            Duration.ofMillis(300), Duration.ofMillis(50), 16, config));
                    assertEquals(0, r.errors(), mode + " " + size + " B had failed connections");
                    assertTrue(r.messages() > 0, mode + " " + size + " B echoed nothing");
                    assertEquals((long) size * r.messages(), r.bytes());
                    assertEquals(r.messages(), r.latency().getTotalCount(), "one latency sample per message");
                    assertEquals(engine == EventLoopConfig.Choice.URING ? EngineKind.URING : EngineKind.NIO,
                            r.engine());
                }
            }
            assertEquals((long) EchoClient.Mode.values().length * sizes.length * connections, server.connectionsAccepted(), "every client connection reached the server");
            assertTrue(server.bytesEchoed() > 0);
        }
    }

    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void busyPollingClientAndServerEchoToo(EventLoopConfig.Choice engine) throws Exception {
        BulkRunTest.assumeUsable(engine);
        EventLoopConfig config = EventLoopConfig.defaults().withEngine(engine).withIdle(LoopIdle.busySpin());
        try (EchoServer server = EchoServer.start(config, new InetSocketAddress("127.0.0.1", 0))) {
            EchoClient.Result r = EchoClient.run(new EchoClient.Settings(server.address(), 64, EchoClient.Mode.PINGPONG,
                    1, Duration.ofMillis(300), Duration.ofMillis(50), 1, config));
            assertEquals(0, r.errors());
            assertTrue(r.messages() > 0, "busy-polling ping-pong echoed nothing");
            assertEquals(r.messages(), r.latency().getTotalCount());
        }
    }
}
