package io.zcnet.ring;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.zcnet.ring.sys.Linux;
import io.zcnet.ring.sys.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.junit.jupiter.api.Test;

/**
 * The socket-option contract on io_uring, and what the kernel then holds: a handle is the socket's fd,
 * so {@code getsockopt(2)} reads the option back. Skipped with the kernel's reason where io_uring cannot
 * run.
 */
class UringSocketOptionsContractTest extends SocketOptionsContractTest implements RequiresUring {

    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.URING;
    }

    @Override
    protected boolean setsUserTimeout() {
        return true;
    }

    @Test
    void theUserTimeoutReadsBackFromTheKernel() throws Exception {
        int[] pair = h.connectedPair();
        h.run(() -> loop.setUserTimeout(pair[0], 2_500));
        assertEquals(2_500, userTimeout(pair[0]));
        assertEquals(0, userTimeout(pair[1]), "the other end keeps the default");
        h.run(() -> loop.setUserTimeout(pair[0], 0));
        assertEquals(0, userTimeout(pair[0]), "0 restores the default");
    }

    @Test
    void socketsAcceptedFromAListenerInheritItsUserTimeout() throws Exception {
        Recorder r = new Recorder();
        int id = h.register(r);
        int listener = h.call(() -> h.track(loop.listen(Peers.loopback(0), 1)));
        h.run(() -> loop.setUserTimeout(listener, 4_000));
        int port = h.call(() -> loop.localAddress(listener).getPort());
        try (var peer = Peers.connect(Peers.loopback(port))) {
            h.run(() -> loop.accept(id, 1, listener, false));
            int accepted = r.next().result();
            h.run(() -> h.track(accepted));
            assertEquals(4_000, userTimeout(accepted));
        }
    }

    /** {@code TCP_USER_TIMEOUT} as the kernel holds it for fd {@code socket}. */
    private static int userTimeout(int socket) {
        try (Arena arena = Arena.ofConfined()) {
            Native sys = new Native(arena);
            MemorySegment value = arena.allocate(JAVA_INT);
            MemorySegment length = arena.allocate(JAVA_INT);
            length.set(JAVA_INT, 0, 4);
            int r = sys.getsockopt(socket, Linux.IPPROTO_TCP, Linux.TCP_USER_TIMEOUT, value, length);
            assertEquals(0, r, "getsockopt(TCP_USER_TIMEOUT)");
            return value.get(JAVA_INT, 0);
        }
    }
}
