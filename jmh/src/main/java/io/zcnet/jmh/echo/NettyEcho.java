package io.zcnet.jmh.echo;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ManualIoEventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * The Netty side of the comparison: the canonical Netty echo server (write on read, flush on read
 * complete) on one event-loop thread, and a client on a {@link ManualIoEventLoop} driven by the
 * benchmark thread itself, exactly like the zcnet client, so neither side pays a thread hand-off the
 * other does not. Pooled direct buffers, TCP_NODELAY on both ends.
 */
final class NettyEcho {
    /** Pooled direct buffers, as Netty's users configure for throughput. */
    static final ByteBufAllocator ALLOCATOR = PooledByteBufAllocator.DEFAULT;

    private NettyEcho() {
    }

    /** The echo server: one event loop accepts and serves. Start and close from any thread. */
    static final class Server implements AutoCloseable {
        private final EventLoopGroup group;
        private final Channel channel;

        Server(NettyTransport transport) throws IOException {
            group = new MultiThreadIoEventLoopGroup(1, transport.factory());
            try {
                ServerBootstrap bootstrap = new ServerBootstrap()
                        .group(group)
                        .channel(transport.serverChannel())
                        .option(ChannelOption.ALLOCATOR, ALLOCATOR)
                        .childOption(ChannelOption.ALLOCATOR, ALLOCATOR)
                        .childOption(ChannelOption.TCP_NODELAY, true)
                        .childHandler(EchoHandler.INSTANCE);
                transport.configure(bootstrap);
                ChannelFuture bound = bootstrap.bind(new InetSocketAddress("127.0.0.1", 0)).awaitUninterruptibly();
                if (!bound.isSuccess()) {
                    throw new IOException(transport.label + " server failed to bind", bound.cause());
                }
                channel = bound.channel();
            } catch (IOException | RuntimeException e) {
                group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
                throw e;
            }
        }

        InetSocketAddress address() {
            return (InetSocketAddress) channel.localAddress();
        }

        @Override
        public void close() {
            channel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
    }

    @ChannelHandler.Sharable
    static final class EchoHandler extends ChannelInboundHandlerAdapter {
        static final EchoHandler INSTANCE = new EchoHandler();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.write(msg, ctx.voidPromise());
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /** The client, confined to the thread that creates it, which runs its event loop. */
    static final class Client extends StreamClient {
        private static final long CONNECT_NANOS = TimeUnit.SECONDS.toNanos(5);

        private final NettyTransport transport;
        private final ManualIoEventLoop loop;
        private final ByteBuf pattern;
        private Channel channel;
        private boolean closing;

        Client(NettyTransport transport, InetSocketAddress server, int size, int window, long seed)
                throws IOException {
            super(size, window);
            this.transport = transport;
            this.loop = new ManualIoEventLoop(Thread.currentThread(), transport.factory());
            this.pattern = ALLOCATOR.directBuffer(2 * period);
            pattern.writeBytes(pattern(period, seed));
            try {
                Bootstrap bootstrap = new Bootstrap()
                        .group(loop)
                        .channel(transport.channel())
                        .option(ChannelOption.ALLOCATOR, ALLOCATOR)
                        .option(ChannelOption.TCP_NODELAY, true)
                        .handler(new Reader());
                transport.configure(bootstrap);
                ChannelFuture connected = bootstrap.connect(server);
                long deadline = System.nanoTime() + CONNECT_NANOS;
                while (!connected.isDone()) {
                    if (System.nanoTime() > deadline) {
                        throw new IOException(transport.label + ": no connection to " + server + " within 5 s");
                    }
                    loop.run(POLL_NANOS);
                }
                if (!connected.isSuccess()) {
                    throw new IOException(transport.label + ": connect to " + server + " failed", connected.cause());
                }
                channel = connected.channel();
            } catch (IOException | RuntimeException e) {
                shutdown();
                throw e;
            }
        }

        private final class Reader extends ChannelInboundHandlerAdapter {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                ByteBuf buf = (ByteBuf) msg;
                try {
                    int length = buf.readableBytes();
                    int offset = received(length);
                    if (offset >= 0 && !ByteBufUtil.equals(pattern, offset, buf, buf.readerIndex(), length)) {
                        mismatch(offset, length);
                    }
                } finally {
                    buf.release();
                }
                sendMore();
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                if (!closing) {
                    fail("connection closed by the server");
                }
            }

            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                fail(cause.toString());
            }
        }

        @Override
        boolean canSend() {
            return channel != null; // Netty queues writes in order, so several may be outstanding
        }

        @Override
        void transmit(int offset, int length) {
            channel.writeAndFlush(pattern.retainedSlice(offset, length), channel.voidPromise());
        }

        @Override
        int runLoop(long nanos) {
            return loop.run(nanos);
        }

        @Override
        String transportName() {
            return transport.label;
        }

        @Override
        public void close() {
            closing = true;
            if (channel != null) {
                ChannelFuture closed = channel.close();
                long deadline = System.nanoTime() + CONNECT_NANOS;
                while (!closed.isDone() && System.nanoTime() < deadline) {
                    loop.run(POLL_NANOS);
                }
            }
            shutdown();
        }

        private void shutdown() {
            pattern.release();
            loop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + CONNECT_NANOS;
            while (!loop.isTerminated() && System.nanoTime() < deadline) {
                loop.runNow();
            }
        }
    }
}
