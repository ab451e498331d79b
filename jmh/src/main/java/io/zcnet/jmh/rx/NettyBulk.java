package io.zcnet.jmh.rx;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.zcnet.jmh.echo.NettyTransport;

import java.util.Map;

/**
 * Bulk transfer through Netty 4.2 over one loopback connection, the peer figure of {@code ZcnetBulk}
 * (and beside iperf3). The sender writes {@code --size}-byte messages, each a 4-byte length from
 * {@link LengthFieldPrepender} and a duplicate of one preallocated direct payload (no per-message
 * allocation but Netty's own small header and duplicate objects), whenever the channel is writable. The
 * receiver's {@link LengthFieldBasedFrameDecoder} assembles each whole message from the reads (copying it
 * into its cumulation buffer is Netty's cost) and hands it to a handler that counts its bytes and releases
 * it.
 *
 * <p>The sender's write-buffer water marks are one and two messages: with Netty's defaults (32 and
 * 64 KiB) each message alone would cross both, and the sender would wait for the outbound buffer to
 * drain to 32 KiB before writing the next; a user moving large messages raises them.
 *
 * <pre>NettyBulk --transport io_uring|epoll --seconds S --size 1048576</pre>
 * prints a {@link MeasuredInterval} RESULT line.
 */
public final class NettyBulk {
    private NettyBulk() {
    }

    public static void main(String[] args) throws Exception {
        RunOptions options = RunOptions.parse(args, Map.of("transport", "io_uring", "seconds", "5", "size", "1048576"));
        NettyTransport transport = NettyTransport.byLabel("netty-" + options.text("transport"));
        if (transport == null) {
            throw new IllegalArgumentException("--transport is io_uring, epoll or nio");
        }
        int size = options.integer("size");
        DeliveryCount delivered = new DeliveryCount();
        // Lives as long as the process: every message is a duplicate of it.
        ByteBuf payload = NettyLoopbackPair.ALLOCATOR.directBuffer(size).writeZero(size);

        NettyLoopbackPair.connect(transport,
                new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel channel) {
                        channel.pipeline().addLast(
                                new LengthFieldBasedFrameDecoder(Integer.BYTES + size, 0, Integer.BYTES, 0, Integer.BYTES),
                                new CountingReceiver(transport.label, delivered));
                    }
                },
                new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel channel) {
                        channel.config().setWriteBufferWaterMark(new WriteBufferWaterMark(size, 2 * size));
                        channel.pipeline().addLast(
                                new LengthFieldPrepender(Integer.BYTES),
                                new WritableSender(transport.label, payload));
                    }
                });
        MeasuredInterval.run(transport.label, delivered, MeasuredInterval.BULK_WARMUP, options.integer("seconds"));
    }

    /** The receiving end's handler: counts each whole message and releases it. Its event loop only. */
    private static final class CountingReceiver extends ChannelInboundHandlerAdapter {
        private final String impl;
        private final DeliveryCount delivered;

        CountingReceiver(String impl, DeliveryCount delivered) {
            this.impl = impl;
            this.delivered = delivered;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf message = (ByteBuf) msg;
            delivered.add(message.readableBytes());
            message.release();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            MeasuredInterval.abort(impl, cause);
        }
    }

    /** The sending end's handler: writes messages while the channel is writable. Its event loop only. */
    private static final class WritableSender extends ChannelInboundHandlerAdapter {
        private final String impl;
        private final ByteBuf payload;

        WritableSender(String impl, ByteBuf payload) {
            this.impl = impl;
            this.payload = payload;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            fill(ctx);
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            fill(ctx);
        }

        private void fill(ChannelHandlerContext ctx) {
            while (ctx.channel().isWritable()) {
                ctx.write(payload.retainedDuplicate(), ctx.voidPromise());
            }
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            MeasuredInterval.abort(impl, cause);
        }
    }
}
