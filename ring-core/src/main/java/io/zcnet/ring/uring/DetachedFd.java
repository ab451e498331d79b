package io.zcnet.ring.uring;

import io.zcnet.ring.DetachedSocket;
import io.zcnet.ring.EngineKind;
import io.zcnet.ring.sys.Native;

import java.lang.foreign.Arena;

/** A socket fd that an {@link UringEventLoop} no longer tracks, for another one to adopt. */
public final class DetachedFd extends DetachedSocket {
    final int fd;

    DetachedFd(int fd) {
        this.fd = fd;
    }

    @Override
    public EngineKind engine() {
        return EngineKind.URING;
    }

    /** Whether the adopting loop may own the fd now (the first take only). */
    boolean adopt() {
        return take();
    }

    @Override
    protected void closeUnadopted() {
        try (Arena arena = Arena.ofConfined()) { // a rare path: a loop closed before it adopted the socket
            new Native(arena).close(fd);
        }
    }

    @Override
    public String toString() {
        return "DetachedFd[" + fd + "]";
    }
}
