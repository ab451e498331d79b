package io.zcnet.jmh.echo;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringAdaptiveBufferRingAllocator;
import io.netty.channel.uring.IoUringBufferRingConfig;
import io.netty.channel.uring.IoUringChannelOption;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringIoHandlerConfig;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;

/**
 * The Netty 4.2 transports zcnet is measured against, each set up as its users would for speed:
 * native transports where available, and for io_uring a provided buffer ring (Netty's opt-in multishot
 * receive path) with its adaptive allocator and incremental consumption where the kernel has it.
 */
public enum NettyTransport {
    IO_URING("netty-io_uring") {
        private static final short GROUP_ID = 1;

        @Override
        public IoHandlerFactory factory() {
            if (!IoUring.isAvailable()) {
                throw new IllegalStateException("Netty io_uring is not available", IoUring.unavailabilityCause());
            }
            IoUringBufferRingConfig ring = IoUringBufferRingConfig.builder()
                    .bufferGroupId(GROUP_ID)
                    .bufferRingSize((short) 512)
                    .batchSize(64)
                    .allocator(new IoUringAdaptiveBufferRingAllocator(NettyEcho.ALLOCATOR))
                    .build();
            return IoUringIoHandler.newFactory(new IoUringIoHandlerConfig().setBufferRingConfig(ring));
        }

        @Override
        public Class<? extends ServerChannel> serverChannel() {
            return IoUringServerSocketChannel.class;
        }

        @Override
        public Class<? extends SocketChannel> channel() {
            return IoUringSocketChannel.class;
        }

        @Override
        public void configure(ServerBootstrap server) {
            server.childOption(IoUringChannelOption.IO_URING_BUFFER_GROUP_ID, GROUP_ID);
        }

        @Override
        public void configure(Bootstrap client) {
            client.option(IoUringChannelOption.IO_URING_BUFFER_GROUP_ID, GROUP_ID);
        }
    },
    EPOLL("netty-epoll") {
        @Override
        public IoHandlerFactory factory() {
            if (!Epoll.isAvailable()) {
                throw new IllegalStateException("Netty epoll is not available", Epoll.unavailabilityCause());
            }
            return EpollIoHandler.newFactory();
        }

        @Override
        public Class<? extends ServerChannel> serverChannel() {
            return EpollServerSocketChannel.class;
        }

        @Override
        public Class<? extends SocketChannel> channel() {
            return EpollSocketChannel.class;
        }
    },
    NIO("netty-nio") {
        @Override
        public IoHandlerFactory factory() {
            return NioIoHandler.newFactory();
        }

        @Override
        public Class<? extends ServerChannel> serverChannel() {
            return NioServerSocketChannel.class;
        }

        @Override
        public Class<? extends SocketChannel> channel() {
            return NioSocketChannel.class;
        }
    };

    /** The name of this peer in benchmark results, e.g. {@code netty-io_uring}. */
    public final String label;

    NettyTransport(String label) {
        this.label = label;
    }

    /** A fresh handler factory (one per event loop: each owns its ring or selector). */
    public abstract IoHandlerFactory factory();

    public abstract Class<? extends ServerChannel> serverChannel();

    public abstract Class<? extends SocketChannel> channel();

    /** Transport-specific server options. */
    public void configure(ServerBootstrap server) {
    }

    /** Transport-specific client options. */
    public void configure(Bootstrap client) {
    }

    /** The transport for a benchmark label such as {@code netty-epoll}, or null if it is not a Netty one. */
    public static NettyTransport byLabel(String label) {
        for (NettyTransport t : values()) {
            if (t.label.equals(label)) {
                return t;
            }
        }
        return null;
    }
}
