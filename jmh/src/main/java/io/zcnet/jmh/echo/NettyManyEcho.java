package io.zcnet.jmh.echo;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import org.HdrHistogram.Histogram;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The peer of {@code zcnet qp-server}/{@code qp-load} with many clients: Netty 4.2 io_uring, one event-loop thread
 * each side (as each zcnet side has one loop), length-prefixed messages (a 4-byte length, then the bytes) echoed
 * whole by the server ({@link NettyEcho}'s handler behind a frame decoder), every reply checked byte for byte. Two processes, as the zcnet pair runs:
 * <pre>
 *   java -cp benchmarks.jar io.zcnet.jmh.echo.NettyManyEcho server PORT
 *   java -cp benchmarks.jar io.zcnet.jmh.echo.NettyManyEcho load HOST:PORT CONNECTIONS SECONDS INFLIGHT SIZE
 * </pre>
 * The load prints one line in qp-load's shape:
 * {@code netty-echo: connections=N established=N round_trips=R rt_per_s=X p50_us=P p99_us=Q verify=ok|FAILED}.
 */
public final class NettyManyEcho {
    private static final ByteBufAllocator ALLOCATOR = NettyEcho.ALLOCATOR;
    private static final int MAX_FRAME = 1 << 20;

    private NettyManyEcho() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("server")) {
            serve(Integer.parseInt(args[1]));
        } else if (args.length == 6 && args[0].equals("load")) {
            String[] hp = args[1].split(":");
            load(new InetSocketAddress(hp[0], Integer.parseInt(hp[1])), Integer.parseInt(args[2]),
                    Double.parseDouble(args[3]), Integer.parseInt(args[4]), Integer.parseInt(args[5]));
        } else {
            System.err.println("usage: NettyManyEcho server PORT | load HOST:PORT CONNECTIONS SECONDS INFLIGHT SIZE");
            System.exit(2);
        }
    }

    private static void serve(int port) throws InterruptedException {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, IoUringIoHandler.newFactory());
        ServerBootstrap bootstrap = new ServerBootstrap().group(group).channel(IoUringServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 4096)
                .childOption(ChannelOption.ALLOCATOR, ALLOCATOR)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(MAX_FRAME, 0, 4), NettyEcho.EchoHandler.INSTANCE);
                    }
                });
        Channel channel = bootstrap.bind(new InetSocketAddress("127.0.0.1", port)).sync().channel();
        System.out.println("netty-echo: listening on " + channel.localAddress());
        channel.closeFuture().sync();
    }

    private static void load(InetSocketAddress server, int connections, double seconds, int inflight, int size)
            throws Exception {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, IoUringIoHandler.newFactory());
        Histogram latency = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        long[] roundTrips = new long[1];
        boolean[] failed = new boolean[1];
        List<Client> clients = new ArrayList<>();
        Bootstrap bootstrap = new Bootstrap().group(group).channel(IoUringSocketChannel.class)
                .option(ChannelOption.ALLOCATOR, ALLOCATOR).option(ChannelOption.TCP_NODELAY, true);
        int established = 0;
        for (int i = 0; i < connections; i++) {
            Client c = new Client(i, inflight, size, latency, roundTrips, failed);
            ChannelFuture f = bootstrap.clone().handler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(MAX_FRAME, 0, 4), c);
                }
            }).connect(server).awaitUninterruptibly();
            if (f.isSuccess()) {
                established++;
                clients.add(c);
            }
        }
        long start = System.nanoTime();
        group.next().submit(() -> {
            for (Client c : clients) {
                c.start();
            }
        }).sync();
        Thread.sleep((long) (seconds * 1000));
        long[] count = new long[1];
        Histogram[] copy = new Histogram[1];
        group.next().submit(() -> {
            for (Client c : clients) {
                c.stop();
            }
            count[0] = roundTrips[0];
            copy[0] = latency.copy();
        }).sync();
        double elapsed = (System.nanoTime() - start) / 1e9;
        System.out.printf("netty-echo: connections=%d established=%d round_trips=%d rt_per_s=%.0f p50_us=%.1f p99_us=%.1f verify=%s%n",
                connections, established, count[0], count[0] / elapsed, copy[0].getValueAtPercentile(50) / 1e3,
                copy[0].getValueAtPercentile(99) / 1e3, failed[0] ? "FAILED" : "ok");
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        System.exit(failed[0] || established != connections ? 1 : 0);
    }

    /**
     * One connection: {@code inflight} messages out, each one's reply checked and answered by the next message.
     * A message is its length and then {@code size} bytes: its sequence number (8 bytes, so a reply can be matched
     * to the time it was sent) and a pattern of the connection. Event-loop thread only.
     */
    private static final class Client extends ChannelInboundHandlerAdapter {
        private final int id;
        private final int inflight;
        private final int size;
        private final Histogram latency;
        private final long[] roundTrips;
        private final boolean[] failed;
        private final long[] sentAt;
        private ChannelHandlerContext ctx;
        private long sent;
        private long received;
        private boolean stopped;

        Client(int id, int inflight, int size, Histogram latency, long[] roundTrips, boolean[] failed) {
            this.id = id;
            this.inflight = inflight;
            this.size = Math.max(size, 8);
            this.latency = latency;
            this.roundTrips = roundTrips;
            this.failed = failed;
            this.sentAt = new long[inflight];
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }

        void start() {
            for (int i = 0; i < inflight; i++) {
                send();
            }
            ctx.flush();
        }

        void stop() {
            stopped = true;
            ctx.close();
        }

        private void send() {
            ByteBuf b = ctx.alloc().directBuffer(4 + size);
            b.writeInt(size);
            b.writeLong(sent);
            for (int i = 8; i < size; i++) {
                b.writeByte((byte) (id * 31 + i));
            }
            sentAt[(int) (sent % inflight)] = System.nanoTime();
            sent++;
            ctx.write(b, ctx.voidPromise());
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            try {
                boolean ok = b.readableBytes() == 4 + size && b.readInt() == size && b.readLong() == received;
                for (int i = 8; ok && i < size; i++) {
                    ok = b.readByte() == (byte) (id * 31 + i);
                }
                if (!ok) {
                    failed[0] = true;
                }
            } finally {
                b.release();
            }
            long now = System.nanoTime();
            latency.recordValue(Math.max(0, now - sentAt[(int) (received % inflight)]));
            received++;
            roundTrips[0]++;
            if (!stopped) {
                send();
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (!stopped) {
                failed[0] = true;
            }
            ctx.close();
        }
    }
}
