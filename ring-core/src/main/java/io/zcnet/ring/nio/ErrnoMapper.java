package io.zcnet.ring.nio;

import io.zcnet.ring.Errno;

import java.net.BindException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.PortUnreachableException;
import java.nio.channels.AlreadyConnectedException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ConnectionPendingException;
import java.nio.channels.NoConnectionPendingException;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.channels.UnsupportedAddressTypeException;

/**
 * Turns what {@code java.nio} throws into the errno the kernel would have put in a CQE, so NIO
 * completions carry the same {@code -errno} results as io_uring ones.
 *
 * <p>The JDK reports most socket errors as a plain {@link java.io.IOException} whose message is the C
 * library's {@code strerror} text ("Connection reset by peer", "Broken pipe"), or a short JDK text for
 * a few ("Connection reset"); exception types are tried first, then those texts. Anything unknown is
 * {@link Errno#EIO}. Stateless and thread-safe; used only on error paths.
 */
final class ErrnoMapper {

    /** strerror texts (glibc) and JDK texts, each with the errno it stands for. */
    private static final String[] MESSAGES = {
        "Connection reset", "Connection refused", "Broken pipe", "Bad file descriptor",
        "not connected", "Connection timed out", "Network is unreachable", "No route to host",
        "Software caused connection abort", "Connection aborted", "Too many open files",
        "Address already in use", "Cannot assign requested address", "Permission denied",
        "Operation not permitted", "Invalid argument", "Cannot allocate memory",
        "No buffer space available", "Operation not supported", "Socket closed",
    };
    private static final int[] ERRNOS = {
        Errno.ECONNRESET, Errno.ECONNREFUSED, Errno.EPIPE, Errno.EBADF,
        Errno.ENOTCONN, Errno.ETIMEDOUT, Errno.ENETUNREACH, Errno.EHOSTUNREACH,
        Errno.ECONNABORTED, Errno.ECONNABORTED, Errno.EMFILE,
        Errno.EADDRINUSE, Errno.EADDRNOTAVAIL, Errno.EACCES,
        Errno.EPERM, Errno.EINVAL, Errno.ENOMEM,
        Errno.ENOBUFS, Errno.EOPNOTSUPP, Errno.EBADF,
    };

    private ErrnoMapper() {
    }

    /** The positive errno for {@code failure}; negate it for a completion result. */
    static int errno(Throwable failure) {
        if (failure == null) {
            throw new IllegalArgumentException("failure is null");
        }
        // ClosedChannelException covers AsynchronousCloseException and ClosedByInterruptException.
        if (failure instanceof ClosedChannelException) {
            return Errno.EBADF;
        }
        if (failure instanceof NotYetConnectedException) {
            return Errno.ENOTCONN;
        }
        if (failure instanceof ConnectionPendingException) {
            return Errno.EALREADY;
        }
        if (failure instanceof AlreadyConnectedException) {
            return Errno.EISCONN;
        }
        if (failure instanceof NoConnectionPendingException) {
            return Errno.ENOTCONN;
        }
        if (failure instanceof UnresolvedAddressException) {
            return Errno.EINVAL;
        }
        if (failure instanceof UnsupportedAddressTypeException) {
            return Errno.EAFNOSUPPORT;
        }
        if (failure instanceof NoRouteToHostException) {
            return Errno.EHOSTUNREACH;
        }
        if (failure instanceof PortUnreachableException) {
            return Errno.ECONNREFUSED;
        }
        int fromMessage = fromMessage(failure.getMessage());
        if (fromMessage != 0) {
            return fromMessage;
        }
        if (failure instanceof ConnectException) {
            return Errno.ECONNREFUSED;
        }
        if (failure instanceof BindException) {
            return Errno.EADDRINUSE;
        }
        return Errno.EIO;
    }

    private static int fromMessage(String message) {
        if (message == null) {
            return 0;
        }
        for (int i = 0; i < MESSAGES.length; i++) {
            if (message.contains(MESSAGES[i])) {
                return ERRNOS[i];
            }
        }
        return 0;
    }
}
