package io.zcnet.jmh.rx;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.FixedLengthFrameDecoder;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.zcnet.jmh.echo.NettyTransport;

import java.util.Map;

/**
 * Small messages through Netty 4.2 over one loopback connection, the peer figure of
 * {@code ZcnetMessages}. The sender writes each message as a duplicate of one preallocated direct
 * payload through {@link LengthFieldPrepender} (4-byte length); the receiver's
 * {@link LengthFieldBasedFrameDecoder} hands each message to a handler, one call per message, which
 * counts it and releases it.
 *
 * <p>Window: the sender keeps at most {@code --window} messages sent but not yet credited. The
 * receiver credits over the same connection: at the end of a read, once it has counted an eighth of the
 * window or more since its last credit, it sends its cumulative count (8 bytes), and the sender tops the
 * window up on each credit. So seven eighths of the window or more are in flight at any time, memory is
 * bounded by the window, and the two event loops meet only through the socket.
 *
 * <pre>NettyMessages --transport io_uring|epoll --seconds S --size 64 --window 1024</pre>
 * prints a {@link MeasuredInterval} RESULT line.
 */
public final class NettyMessages {
    private NettyMessages() {
    }

    public static void main(String[] args) throws Exception {
        RunOptions options = RunOptions.parse(args,
                Map.of("transport", "io_uring", "seconds", "5", "size", "64", "window", "1024"));
        NettyTransport transport = NettyTransport.byLabel("netty-" + options.text("transport"));
        if (transport == null) {
            throw new IllegalArgumentException("--transport is io_uring, epoll or nio");
        }
        int size = options.integer("size");
        int window = options.integer("window");
        DeliveryCount delivered = new DeliveryCount();
        // Lives as long as the process: every message is a duplicate of it.
        ByteBuf payload = NettyLoopbackPair.ALLOCATOR.directBuffer(size).writeZero(size);

        NettyLoopbackPair.connect(transport,
                new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel channel) {
                        channel.pipeline().addLast(
                                new LengthFieldBasedFrameDecoder(Integer.BYTES + size, 0, Integer.BYTES, 0, Integer.BYTES),
                                new CreditingReceiver(transport.label, delivered, Math.max(1, window / 8)));
                    }
                },
                new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel channel) {
                        channel.pipeline().addLast(
                                new FixedLengthFrameDecoder(Long.BYTES),
                                new LengthFieldPrepender(Integer.BYTES),
                                new WindowedSender(transport.label, payload, window));
                    }
                });
        MeasuredInterval.run(transport.label, delivered, MeasuredInterval.MESSAGES_WARMUP, options.integer("seconds"));
    }

    /** The receiving end's handler: counts each message, and credits the sender. Its event loop only. */
    private static final class CreditingReceiver extends ChannelInboundHandlerAdapter {
        private final String impl;
        private final DeliveryCount delivered;
        private final int creditEvery;
        private long counted;
        private long credited;

        CreditingReceiver(String impl, DeliveryCount delivered, int creditEvery) {
            this.impl = impl;
            this.delivered = delivered;
            this.creditEvery = creditEvery;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf message = (ByteBuf) msg;
            counted = delivered.add(message.readableBytes());
            message.release();
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            if (counted - credited >= creditEvery) {
                credited = counted;
                ctx.writeAndFlush(ctx.alloc().directBuffer(Long.BYTES).writeLong(counted), ctx.voidPromise());
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            MeasuredInterval.abort(impl, cause);
        }
    }

    /** The sending end's handler: keeps the window full as credits arrive. Its event loop only. */
    private static final class WindowedSender extends ChannelInboundHandlerAdapter {
        private final String impl;
        private final ByteBuf payload;
        private final int window;
        private long sent;
        private long credited;

        WindowedSender(String impl, ByteBuf payload, int window) {
            this.impl = impl;
            this.payload = payload;
            this.window = window;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            topUp(ctx);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf credit = (ByteBuf) msg;
            credited = credit.readLong();
            credit.release();
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            topUp(ctx);
        }

        /** Writes until {@code window} messages are uncredited, then flushes them in one go. */
        private void topUp(ChannelHandlerContext ctx) {
            long limit = credited + window;
            if (sent == limit) {
                return;
            }
            while (sent < limit) {
                ctx.write(payload.retainedDuplicate(), ctx.voidPromise());
                sent++;
            }
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            MeasuredInterval.abort(impl, cause);
        }
    }
}
