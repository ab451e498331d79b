package io.zcnet.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.zcnet.ring.Recorder.Completion;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a multipath connection needs of a socket before and after {@code connect}, identically on both
 * engines: {@link EventLoop#bind} to leave from a chosen local address (one subflow per path), and
 * {@link EventLoop#setUserTimeout} to bound how long a black-holed path can go unnoticed. Loopback
 * answers every address of 127/8, so 127.0.0.2 stands for a second local address. Subclassed per engine.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
abstract class SocketOptionsContractTest extends LoopPerTest {
    static final InetAddress SECOND_LOOPBACK = address(127, 0, 0, 2);

    /** Whether this engine's {@link EventLoop#setUserTimeout} reaches the kernel. */
    protected abstract boolean setsUserTimeout();

    // ------------------------------------------------------------------ bind

    @Test
    void aSocketBoundToASecondLocalAddressConnectsFromIt() throws Exception {
        try (ServerSocket server = Peers.listener()) {
            InetSocketAddress remote = Peers.loopback(server.getLocalPort());
            int socket = h.call(() -> h.track(loop.socket(remote)));
            h.run(() -> loop.bind(socket, new InetSocketAddress(SECOND_LOOPBACK, 0)));
            InetSocketAddress bound = h.call(() -> loop.localAddress(socket));
            assertEquals(null, h.call(() -> loop.remoteAddress(socket)), "no peer before connect");

            connect(socket, remote);
            try (Socket accepted = server.accept()) {
                assertEquals(SECOND_LOOPBACK, accepted.getInetAddress(), "the peer sees the bound address");
                assertEquals(bound.getPort(), accepted.getPort(), "the peer sees the port bind took");
            }
            assertEquals(bound, h.call(() -> loop.localAddress(socket)), "connect kept the bound address");
            assertEquals(remote, h.call(() -> loop.remoteAddress(socket)), "the connected peer");
        }
    }

    @Test
    void bindingToPortZeroTakesAnEphemeralPortAtOnce() throws Exception {
        int socket = h.call(() -> h.track(loop.socket(Peers.loopback(1))));
        assertEquals(0, h.call(() -> loop.localAddress(socket)).getPort(), "unbound before");
        h.run(() -> loop.bind(socket, new InetSocketAddress(SECOND_LOOPBACK, 0)));
        InetSocketAddress bound = h.call(() -> loop.localAddress(socket));
        assertEquals(SECOND_LOOPBACK, bound.getAddress());
        assertNotEquals(0, bound.getPort(), "bind(port 0) picks the port now, not at connect");
    }

    @Test
    void bindingTwiceIsRefusedAndKeepsTheFirstAddress() throws Exception {
        int socket = h.call(() -> h.track(loop.socket(Peers.loopback(1))));
        h.run(() -> loop.bind(socket, new InetSocketAddress(SECOND_LOOPBACK, 0)));
        InetSocketAddress first = h.call(() -> loop.localAddress(socket));
        assertRefused(IOException.class, "has the local address " + first + " already",
                () -> loop.bind(socket, Peers.loopback(0)));
        assertEquals(first, h.call(() -> loop.localAddress(socket)));
    }

    @Test
    void bindingAConnectedOrListeningSocketIsRefused() throws Exception {
        int[] pair = h.connectedPair();
        InetSocketAddress local = new InetSocketAddress(SECOND_LOOPBACK, 0);
        assertRefused(IOException.class, "is connected to", () -> loop.bind(pair[0], local));
        assertRefused(IOException.class, "is connected to", () -> loop.bind(pair[1], local));
        int listener = h.call(() -> h.track(loop.listen(Peers.loopback(0), 1)));
        assertRefused(IOException.class, "already", () -> loop.bind(listener, local));
    }

    @Test
    void bindRefusesMissingUnresolvedAndForeignFamilyAddresses() throws Exception {
        int socket = h.call(() -> h.track(loop.socket(Peers.loopback(1))));
        assertRefused(IllegalArgumentException.class, "local is null", () -> loop.bind(socket, null));
        assertRefused(IllegalArgumentException.class, "unresolved",
                () -> loop.bind(socket, InetSocketAddress.createUnresolved("localhost", 0)));
        assertRefused(IllegalArgumentException.class, "was opened for IPv4",
                () -> loop.bind(socket, new InetSocketAddress(InetAddress.getByName("::1"), 0)));
        assertEquals(0, h.call(() -> loop.localAddress(socket)).getPort(), "a refused bind binds nothing");
    }

    @Test
    void anIpv6SocketRefusesAnIpv4LocalAddress() throws Exception {
        InetSocketAddress ipv6Loopback = new InetSocketAddress(InetAddress.getByName("::1"), 0);
        assumeTrue(ipv6Works(ipv6Loopback), "no IPv6 loopback on this machine");
        int socket = h.call(() -> h.track(loop.socket(ipv6Loopback)));
        assertRefused(IllegalArgumentException.class, "was opened for IPv6",
                () -> loop.bind(socket, new InetSocketAddress(SECOND_LOOPBACK, 0)));
        h.run(() -> loop.bind(socket, ipv6Loopback));
        assertEquals(ipv6Loopback.getAddress(), h.call(() -> loop.localAddress(socket)).getAddress());
    }

    @Test
    void bindRefusesHandlesThatAreNotOpenSockets() throws Exception {
        InetSocketAddress local = new InetSocketAddress(SECOND_LOOPBACK, 0);
        assertRefused(IllegalArgumentException.class, "must be >= 0", () -> loop.bind(-1, local));
        assertRefused(IOException.class, "is not open on this loop", () -> loop.bind(100_000, local));
        int closed = closedSocket();
        assertRefused(IOException.class, "is not open on this loop", () -> loop.bind(closed, local));
    }

    @Test
    void bindToAnAddressThisHostDoesNotHaveFails() throws Exception {
        int socket = h.call(() -> h.track(loop.socket(Peers.loopback(1))));
        // TEST-NET-2 (RFC 5737): on no interface here. bind only asks the kernel, nothing is sent.
        InetSocketAddress foreign = new InetSocketAddress(address(198, 51, 100, 7), 0);
        Throwable t = h.thrownOnLoop(() -> loop.bind(socket, foreign));
        assertInstanceOf(IOException.class, t, "EADDRNOTAVAIL expected, got " + t);
        assertEquals(0, h.call(() -> loop.localAddress(socket)).getPort(), "a failed bind binds nothing");
    }

    // ------------------------------------------------------------------ TCP_USER_TIMEOUT

    @Test
    void setUserTimeoutReportsWhetherTheKernelGotIt() throws Exception {
        int[] pair = h.connectedPair();
        assertEquals(setsUserTimeout(), h.call(() -> loop.setUserTimeout(pair[0], 3_000)));
        assertEquals(setsUserTimeout(), h.call(() -> loop.setUserTimeout(pair[0], 0)), "0: the default again");
    }

    @Test
    void setUserTimeoutRefusesNegativeTimesAndHandlesThatAreNotOpen() throws Exception {
        int[] pair = h.connectedPair();
        assertRefused(IllegalArgumentException.class, "must be >= 0 ms", () -> loop.setUserTimeout(pair[0], -1));
        assertRefused(IOException.class, "is not open on this loop", () -> loop.setUserTimeout(100_000, 1_000));
        int closed = closedSocket();
        assertRefused(IOException.class, "is not open on this loop", () -> loop.setUserTimeout(closed, 1_000));
    }

    // ------------------------------------------------------------------ SO_LINGER 0

    @Test
    void aSocketSetToResetOnCloseEndsItsConnectionWithAResetAPlainOneWithEof() throws Exception {
        try (ServerSocket server = Peers.listener()) {
            assertEquals("reset", endAsThePeerSeesIt(server, true));
            assertEquals("EOF", endAsThePeerSeesIt(server, false));
        }
    }

    @Test
    void setResetOnCloseRefusesHandlesThatAreNotOpen() throws Exception {
        assertRefused(IOException.class, "is not open on this loop", () -> loop.setResetOnClose(100_000));
        int closed = closedSocket();
        assertRefused(IOException.class, "is not open on this loop", () -> loop.setResetOnClose(closed));
    }

    /** Connects a loop socket to {@code server}, closes it (abortively if {@code reset}) and reads at the peer. */
    private String endAsThePeerSeesIt(ServerSocket server, boolean reset) throws Exception {
        InetSocketAddress remote = Peers.loopback(server.getLocalPort());
        int socket = h.call(() -> loop.socket(remote));
        connect(socket, remote);
        try (Socket accepted = server.accept()) {
            accepted.setSoTimeout(Peers.IO_TIMEOUT_MILLIS);
            if (reset) {
                h.run(() -> loop.setResetOnClose(socket));
            }
            Recorder r = new Recorder();
            int id = h.register(r);
            h.run(() -> loop.close(id, 2, socket));
            Completion closed = r.next();
            assertEquals(0, closed.result(), closed.toString());
            try {
                return accepted.getInputStream().read() < 0 ? "EOF" : "data";
            } catch (SocketException e) {
                return "reset";
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    /** Connects loop socket {@code socket} to {@code remote} and waits until it is connected. */
    private void connect(int socket, InetSocketAddress remote) throws Exception {
        Recorder r = new Recorder();
        int id = h.register(r);
        h.run(() -> loop.connect(id, 1, socket, remote));
        Completion connected = r.next();
        assertEquals(0, connected.result(), connected.toString());
    }

    /** Asserts {@code action} threw {@code type} on the loop thread with {@code text} in its message. */
    void assertRefused(Class<? extends Throwable> type, String text, LoopHarness.LoopAction action)
            throws Exception {
        Throwable t = h.thrownOnLoop(action);
        assertInstanceOf(type, t, "expected " + type.getSimpleName() + " saying \"" + text + "\", got " + t);
        assertTrue(t.getMessage().contains(text), "message \"" + t.getMessage() + "\" lacks \"" + text + "\"");
    }

    /** A handle this loop opened and has closed since (its close completed). */
    int closedSocket() throws Exception {
        int socket = h.call(() -> loop.socket(Peers.loopback(1)));
        Recorder r = new Recorder();
        int id = h.register(r);
        h.run(() -> loop.close(id, 1, socket));
        Completion closed = r.next();
        assertEquals(0, closed.result(), closed.toString());
        return socket;
    }

    private static boolean ipv6Works(InetSocketAddress loopback) {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(loopback);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static InetAddress address(int a, int b, int c, int d) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) a, (byte) b, (byte) c, (byte) d});
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
