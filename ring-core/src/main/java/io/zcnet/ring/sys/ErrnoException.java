package io.zcnet.ring.sys;

import io.zcnet.ring.Errno;

import java.io.IOException;

/**
 * A control-path system call failed: carries the call's name and the errno, so callers can branch on
 * the cause (EINVAL during flag negotiation, ENOMEM from RLIMIT_MEMLOCK) and users read both.
 * Never thrown on the data path, where failures are {@code -errno} results.
 */
public final class ErrnoException extends IOException {
    private static final long serialVersionUID = 1L;

    private final String call;
    private final int errno;

    /** @param negativeErrno the call's result, {@code -errno} */
    public ErrnoException(String call, int negativeErrno, String detail) {
        super(call + ": " + Errno.name(negativeErrno) + (detail == null || detail.isEmpty() ? "" : " (" + detail + ")"));
        this.call = call;
        this.errno = Math.abs(negativeErrno);
    }

    /** Throws an {@code ErrnoException} if {@code result} is negative; returns it otherwise. */
    public static int check(String call, int result) throws ErrnoException {
        if (result < 0) {
            throw new ErrnoException(call, result, null);
        }
        return result;
    }

    public String call() {
        return call;
    }

    /** The positive errno value. */
    public int errno() {
        return errno;
    }
}
