package io.zcnet.jmh;

import io.zcnet.ring.CompletionHandler;
import io.zcnet.ring.EventLoop;

import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * Connects a socket of an event loop owned by the calling thread (a benchmark's) to a blocking listener
 * on loopback: the listener's accept runs in between, since io_uring submits the connect only at the
 * loop's next poll and the kernel then completes the handshake into the listener's backlog.
 */
public final class LoopbackConnect {
    /** What the test side does once the connect is submitted: typically accept on its listener. */
    @FunctionalInterface
    public interface Accept<T> {
        T accept() throws IOException;
    }

    private LoopbackConnect() {
    }

    /**
     * Returns the loop's connected socket handle; {@code accept} gets the other end.
     *
     * @throws IOException if the connect completes with an error
     */
    public static <T> int connect(EventLoop loop, InetSocketAddress address, Accept<T> accept, T[] acceptedInto)
            throws IOException {
        int socket = loop.socket(address);
        int[] connected = {1};
        CompletionHandler onConnect = (op, tag, result, flags) -> connected[0] = result;
        int id = loop.registerHandler(onConnect);
        loop.connect(id, 0, socket, address);
        loop.poll(0);
        acceptedInto[0] = accept.accept();
        while (connected[0] == 1) {
            loop.poll(1_000_000);
        }
        loop.unregisterHandler(id);
        if (connected[0] != 0) {
            throw new IOException("connect to " + address + ": " + connected[0]);
        }
        return socket;
    }
}
