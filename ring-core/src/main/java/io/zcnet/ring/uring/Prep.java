package io.zcnet.ring.uring;

import io.zcnet.ring.sys.IoUring;
import io.zcnet.ring.sys.Sqe;

/**
 * Writes one request into a zeroed SQE, one function per opcode, as liburing's {@code io_uring_prep_*}
 * functions do ({@code src/include/liburing.h}, same names and argument order): the generic
 * {@link Sqe#prepare} ({@code io_uring_prep_rw}) plus the fields the opcode adds. A variant is its base
 * function plus a field or two, as in liburing ({@link #recvMultishot} is {@link #recv} plus
 * {@code IORING_RECV_MULTISHOT}). None sets {@code user_data} or the IOSQE_* flags, which are the
 * caller's, except {@link #selectBuffer}, which says where a receive takes its buffer from.
 *
 * <p>Addresses are native addresses the kernel reads or writes; memory behind them must stay valid
 * until the submitting {@code io_uring_enter} returns (the ring has {@code FEAT_SUBMIT_STABLE}) or, for
 * data buffers, until the completion. Static and allocation-free: each returns the SQE it was given.
 */
final class Prep {
    private Prep() {
    }

    /** {@code io_uring_prep_nop}. */
    static Sqe nop(Sqe sqe) {
        return sqe.prepare(IoUring.OP_NOP, -1, 0, 0, 0);
    }

    /** {@code io_uring_prep_read}: {@code len} bytes at file {@code offset} (-1: the current position). */
    static Sqe read(Sqe sqe, int fd, long addr, int len, long offset) {
        return sqe.prepare(IoUring.OP_READ, fd, addr, len, offset);
    }

    /**
     * {@code io_uring_prep_accept} without the peer address, or {@code io_uring_prep_multishot_accept}:
     * {@code flags} are {@code accept4(2)}'s ({@code SOCK_CLOEXEC}).
     */
    static Sqe accept(Sqe sqe, int fd, int flags, boolean multishot) {
        return sqe.prepare(IoUring.OP_ACCEPT, fd, 0, 0, 0)
                .opFlags(flags)
                .ioprio(multishot ? IoUring.ACCEPT_MULTISHOT : 0);
    }

    /** {@code io_uring_prep_connect}: the sockaddr at {@code addr}, {@code addrLen} bytes, goes in {@code off}. */
    static Sqe connect(Sqe sqe, int fd, long addr, int addrLen) {
        return sqe.prepare(IoUring.OP_CONNECT, fd, addr, 0, addrLen);
    }

    /** {@code io_uring_prep_send}: {@code flags} are {@code send(2)}'s ({@code MSG_*}). */
    static Sqe send(Sqe sqe, int fd, long addr, int len, int flags) {
        return sqe.prepare(IoUring.OP_SEND, fd, addr, len, 0).opFlags(flags);
    }

    /** {@code io_uring_prep_send_zc}: {@code zcFlags} ({@code IORING_SEND_ZC_*}) go in {@code ioprio}. */
    static Sqe sendZc(Sqe sqe, int fd, long addr, int len, int flags, int zcFlags) {
        return sqe.prepare(IoUring.OP_SEND_ZC, fd, addr, len, 0).opFlags(flags).ioprio(zcFlags);
    }

    /** {@code io_uring_prep_send_zc_fixed}: {@link #sendZc} from registered buffer {@code bufIndex}. */
    static Sqe sendZcFixed(Sqe sqe, int fd, long addr, int len, int flags, int zcFlags, int bufIndex) {
        return sendZc(sqe, fd, addr, len, flags, zcFlags | IoUring.RECVSEND_FIXED_BUF).bufIndex(bufIndex);
    }

    /** {@code io_uring_prep_sendmsg}: the {@code struct msghdr} at {@code msghdr}; {@code flags} are {@code MSG_*}. */
    static Sqe sendmsg(Sqe sqe, int fd, long msghdr, int flags) {
        return sqe.prepare(IoUring.OP_SENDMSG, fd, msghdr, 1, 0).opFlags(flags);
    }

    /** {@code io_uring_prep_sendmsg_zc}: {@link #sendmsg} without the copy; {@code zcFlags} go in {@code ioprio}. */
    static Sqe sendmsgZc(Sqe sqe, int fd, long msghdr, int flags, int zcFlags) {
        return sqe.prepare(IoUring.OP_SENDMSG_ZC, fd, msghdr, 1, 0).opFlags(flags).ioprio(zcFlags);
    }

    /** {@code io_uring_prep_recv}: {@code flags} are {@code recv(2)}'s ({@code MSG_*}). */
    static Sqe recv(Sqe sqe, int fd, long addr, int len, int flags) {
        return sqe.prepare(IoUring.OP_RECV, fd, addr, len, 0).opFlags(flags);
    }

    /** {@code io_uring_prep_recv_multishot}: {@link #recv}, armed until a completion without MORE. */
    static Sqe recvMultishot(Sqe sqe, int fd, long addr, int len, int flags) {
        return recv(sqe, fd, addr, len, flags).ioprio(IoUring.RECV_MULTISHOT);
    }

    /**
     * A multishot zero-copy receive ({@code IORING_OP_RECV_ZC}) on TCP socket {@code fd} into zcrx queue
     * {@code zcrxId} (the {@code zcrx_id} its registration returned). liburing has no prep function for it;
     * the fields are those of its {@code examples/zcrx.c}: no address ({@code addr}, {@code addr2},
     * {@code addr3} stay 0, the data lands in the queue's area), {@code len} 0 for no byte limit,
     * {@code msg_flags} 0, and {@code IORING_RECV_MULTISHOT}, which the kernel requires. Completions are
     * 32 bytes; {@link ZcrxCompletion} reads them.
     */
    static Sqe recvZc(Sqe sqe, int fd, int zcrxId) {
        return sqe.prepare(IoUring.OP_RECV_ZC, fd, 0, 0, 0).ioprio(IoUring.RECV_MULTISHOT).zcrxIfqIdx(zcrxId);
    }

    /**
     * Makes a prepared receive take its buffer from provided-buffer group {@code group}
     * ({@code IOSQE_BUFFER_SELECT} and {@code buf_group}, as liburing's callers set them by hand).
     */
    static Sqe selectBuffer(Sqe sqe, int group) {
        return sqe.addFlags(IoUring.IOSQE_BUFFER_SELECT).bufIndex(group);
    }

    /** {@code io_uring_prep_shutdown}: {@code how} is {@code SHUT_RD}, {@code SHUT_WR} or {@code SHUT_RDWR}. */
    static Sqe shutdown(Sqe sqe, int fd, int how) {
        return sqe.prepare(IoUring.OP_SHUTDOWN, fd, 0, how, 0);
    }

    /** {@code io_uring_prep_close}. */
    static Sqe close(Sqe sqe, int fd) {
        return sqe.prepare(IoUring.OP_CLOSE, fd, 0, 0, 0);
    }

    /**
     * {@code io_uring_prep_timeout}: completes after the {@code __kernel_timespec} at {@code ts}, or
     * after {@code count} other completions if that is not 0; {@code flags} are {@code IORING_TIMEOUT_*}.
     */
    static Sqe timeout(Sqe sqe, long ts, int count, int flags) {
        return sqe.prepare(IoUring.OP_TIMEOUT, -1, ts, 1, count).opFlags(flags);
    }

    /** {@code io_uring_prep_link_timeout}: bounds the SQE before it, which must carry {@code IOSQE_IO_LINK}. */
    static Sqe linkTimeout(Sqe sqe, long ts, int flags) {
        return sqe.prepare(IoUring.OP_LINK_TIMEOUT, -1, ts, 1, 0).opFlags(flags);
    }

    /**
     * {@code io_uring_prep_cancel64}: cancels the request with {@code user_data} {@code target}, or with
     * {@code IORING_ASYNC_CANCEL_ANY} in {@code flags} any request ({@code target} unused).
     */
    static Sqe cancel(Sqe sqe, long target, int flags) {
        return sqe.prepare(IoUring.OP_ASYNC_CANCEL, -1, target, 0, 0).opFlags(flags);
    }

    /** {@code io_uring_prep_cancel_fd}: cancels requests on {@code fd} (all of them with {@code ASYNC_CANCEL_ALL}). */
    static Sqe cancelFd(Sqe sqe, int fd, int flags) {
        return sqe.prepare(IoUring.OP_ASYNC_CANCEL, fd, 0, 0, 0).opFlags(flags | IoUring.ASYNC_CANCEL_FD);
    }
}
