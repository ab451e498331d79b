package io.zcnet.jmh.echo;

import io.zcnet.examples.EchoServer;
import io.zcnet.ring.EventLoopConfig;

import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * One transport's echo server and client, connected on loopback in this process. The server runs on a
 * thread of its own; the client on the caller's thread, which must be the only one to use it.
 */
final class EchoPair implements AutoCloseable {
    /** The transports compared, as the benchmarks' {@code transport} parameter spells them. */
    static final String ZCNET_URING = "zcnet-uring";
    static final String ZCNET_NIO = "zcnet-nio";

    private final AutoCloseable server;
    private final EchoServer zcnetServer;
    final StreamClient client;

    private EchoPair(AutoCloseable server, EchoServer zcnetServer, StreamClient client) {
        this.server = server;
        this.zcnetServer = zcnetServer;
        this.client = client;
    }

    /** Starts the server, connects the client, and checks a first exchange byte for byte. */
    static EchoPair open(String transport, int size, int window) throws Exception {
        long seed = 0x5EED_0000L ^ transport.hashCode() ^ ((long) size << 20) ^ window;
        EchoPair pair = switch (transport) {
            case ZCNET_URING -> zcnet(EventLoopConfig.Choice.URING, size, window, seed);
            case ZCNET_NIO -> zcnet(EventLoopConfig.Choice.NIO, size, window, seed);
            default -> {
                NettyTransport netty = NettyTransport.byLabel(transport);
                if (netty == null) {
                    throw new IllegalArgumentException("unknown transport '" + transport + "': use " + ZCNET_URING
                            + ", " + ZCNET_NIO + ", netty-io_uring, netty-epoll or netty-nio");
                }
                NettyEcho.Server server = new NettyEcho.Server(netty);
                try {
                    yield new EchoPair(server, null, new NettyEcho.Client(netty, server.address(), size, window, seed));
                } catch (Exception e) {
                    server.close();
                    throw e;
                }
            }
        };
        try {
            // Every byte of the first windows is compared, including a full pipeline, before timing starts.
            pair.client.verifyEvery(1);
            pair.client.exchange(2 * window, true);
            pair.client.drain();
            pair.client.check();
            pair.client.verifyEvery(16);
            return pair;
        } catch (Exception | Error e) {
            pair.close();
            throw e;
        }
    }

    private static EchoPair zcnet(EventLoopConfig.Choice engine, int size, int window, long seed) throws IOException {
        EventLoopConfig config = EventLoopConfig.defaults().withEngine(engine);
        EchoServer server = EchoServer.start(config, new InetSocketAddress("127.0.0.1", 0));
        try {
            return new EchoPair(server, server, new ZcnetStreamClient(config, server.address(), size, window, seed));
        } catch (IOException | RuntimeException e) {
            server.close();
            throw e;
        }
    }

    /** System calls the client's loop has made so far, or -1 when the transport does not count them. */
    long clientSyscalls() {
        return client instanceof ZcnetStreamClient z ? z.counters().syscalls() : -1;
    }

    /** System calls the server's loop has made so far, or -1 when the transport does not count them. */
    long serverSyscalls() {
        return zcnetServer != null ? zcnetServer.counters().syscalls() : -1;
    }

    /** Drains what is in flight, checks the byte accounting, and closes both ends. */
    String finish() {
        try {
            client.drain();
            String summary = client.check();
            return zcnetServer == null ? summary
                    : summary + "; client loop " + ((ZcnetStreamClient) client).counters()
                            + "; server loop " + zcnetServer.counters();
        } finally {
            close();
        }
    }

    @Override
    public void close() {
        try {
            client.close();
        } finally {
            try {
                server.close();
            } catch (Exception e) {
                System.err.println("echo server did not close cleanly: " + e);
            }
        }
    }
}
