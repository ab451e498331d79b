package io.zcnet.jmh.rx;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.zcnet.jmh.echo.NettyTransport;

import java.io.IOException;

/**
 * One Netty connection on 127.0.0.1 for the rx programs: a server that accepts it and a client that
 * makes it, each on its own one-thread event loop of the given transport (one thread per end),
 * configured as the echo peers are ({@link NettyTransport}: pooled direct
 * buffers, TCP_NODELAY, io_uring's provided buffer ring). The event-loop threads are daemons: the
 * connection lives until the process ends, and a program ends by returning from {@code main}.
 */
final class NettyLoopbackPair {
    /** Pooled direct buffers, as Netty's users configure for throughput (and as the echo peers do). */
    static final ByteBufAllocator ALLOCATOR = PooledByteBufAllocator.DEFAULT;

    private NettyLoopbackPair() {
    }

    /**
     * Starts the server with {@code serverChild} as the accepted channel's handler (typically a
     * {@code ChannelInitializer}), then connects a client whose handler is {@code client}; returns once
     * connected. Any thread may call this.
     */
    static void connect(NettyTransport transport, ChannelHandler serverChild, ChannelHandler client)
            throws IOException {
        EventLoopGroup serverLoop = group(transport, "receiver");
        ServerBootstrap server = new ServerBootstrap()
                .group(serverLoop)
                .channel(transport.serverChannel())
                .option(ChannelOption.ALLOCATOR, ALLOCATOR)
                .childOption(ChannelOption.ALLOCATOR, ALLOCATOR)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(serverChild);
        transport.configure(server);
        ChannelFuture bound = server.bind("127.0.0.1", 0).awaitUninterruptibly();
        if (!bound.isSuccess()) {
            throw new IOException(transport.label + ": the server failed to bind", bound.cause());
        }

        Bootstrap connector = new Bootstrap()
                .group(group(transport, "sender"))
                .channel(transport.channel())
                .option(ChannelOption.ALLOCATOR, ALLOCATOR)
                .option(ChannelOption.TCP_NODELAY, true)
                .handler(client);
        transport.configure(connector);
        ChannelFuture connected = connector.connect(bound.channel().localAddress()).awaitUninterruptibly();
        if (!connected.isSuccess()) {
            throw new IOException(transport.label + ": the client failed to connect", connected.cause());
        }
    }

    private static EventLoopGroup group(NettyTransport transport, String role) {
        return new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory(transport.label + "-" + role, true),
                transport.factory());
    }
}
