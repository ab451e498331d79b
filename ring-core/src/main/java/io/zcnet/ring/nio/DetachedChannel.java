package io.zcnet.ring.nio;

import io.zcnet.ring.DetachedSocket;
import io.zcnet.ring.EngineKind;

import java.io.IOException;
import java.nio.channels.SocketChannel;

/** A connected channel that a {@link NioEventLoop} gave up (its key cancelled, its handle freed), for another to adopt. */
public final class DetachedChannel extends DetachedSocket {
    final SocketChannel channel;

    DetachedChannel(SocketChannel channel) {
        this.channel = channel;
    }

    @Override
    public EngineKind engine() {
        return EngineKind.NIO;
    }

    /** Whether the adopting loop may own the channel now (the first take only). */
    boolean adopt() {
        return take();
    }

    @Override
    protected void closeUnadopted() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // Nothing to report it to: nobody owns the socket, and its peer sees it end either way.
        }
    }

    @Override
    public String toString() {
        return "DetachedChannel[" + channel + "]";
    }
}
