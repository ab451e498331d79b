package io.zcnet.ring.nio;

import io.zcnet.ring.Errno;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.net.ServerSocket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.channels.AlreadyConnectedException;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ConnectionPendingException;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.SocketChannel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

class ErrnoMapperTest {

    @Test
    void mapsChannelExceptionTypes() {
        assertEquals(Errno.EBADF, ErrnoMapper.errno(new ClosedChannelException()));
        assertEquals(Errno.EBADF, ErrnoMapper.errno(new AsynchronousCloseException()));
        assertEquals(Errno.ENOTCONN, ErrnoMapper.errno(new NotYetConnectedException()));
        assertEquals(Errno.EALREADY, ErrnoMapper.errno(new ConnectionPendingException()));
        assertEquals(Errno.EISCONN, ErrnoMapper.errno(new AlreadyConnectedException()));
        assertEquals(Errno.EHOSTUNREACH, ErrnoMapper.errno(new NoRouteToHostException("x")));
    }

    @Test
    void mapsStrerrorAndJdkMessages() {
        assertEquals(Errno.ECONNRESET, ErrnoMapper.errno(new SocketException("Connection reset")));
        assertEquals(Errno.ECONNRESET, ErrnoMapper.errno(new IOException("Connection reset by peer")));
        assertEquals(Errno.EPIPE, ErrnoMapper.errno(new IOException("Broken pipe")));
        assertEquals(Errno.ECONNREFUSED, ErrnoMapper.errno(new ConnectException("Connection refused")));
        assertEquals(Errno.ETIMEDOUT, ErrnoMapper.errno(new ConnectException("Connection timed out")));
        assertEquals(Errno.ENOTCONN, ErrnoMapper.errno(new SocketException("Transport endpoint is not connected")));
        assertEquals(Errno.EMFILE, ErrnoMapper.errno(new IOException("Too many open files")));
        assertEquals(Errno.EADDRINUSE, ErrnoMapper.errno(new java.net.BindException("Address already in use")));
        assertEquals(Errno.ECONNABORTED, ErrnoMapper.errno(new IOException("Software caused connection abort")));
        assertEquals(Errno.EIO, ErrnoMapper.errno(new IOException("something nobody expected")));
        assertEquals(Errno.EIO, ErrnoMapper.errno(new IOException((String) null)));
        assertThrows(IllegalArgumentException.class, () -> ErrnoMapper.errno(null));
    }

    @Test
    void mapsWhatTheJdkReallyThrowsForARefusedConnect() throws IOException {
        InetSocketAddress closedPort;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = new InetSocketAddress(InetAddress.getLoopbackAddress(), probe.getLocalPort());
        }
        try (SocketChannel channel = SocketChannel.open()) {
            IOException failure = assertThrows(IOException.class, () -> channel.connect(closedPort));
            assertEquals(Errno.ECONNREFUSED, ErrnoMapper.errno(failure), failure.toString());
        }
    }

    @Test
    void mapsWhatTheJdkReallyThrowsForAWriteAfterShutdown() throws IOException {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                SocketChannel channel = SocketChannel.open(server.getLocalSocketAddress())) {
            channel.shutdownOutput();
            IOException failure = assertThrows(IOException.class, () -> channel.write(ByteBuffer.allocate(1)));
            assertInstanceOf(ClosedChannelException.class, failure, "the loop turns this into EPIPE");
        }
    }
}
