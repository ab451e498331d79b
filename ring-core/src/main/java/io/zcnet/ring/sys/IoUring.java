package io.zcnet.ring.sys;

/**
 * io_uring constants, each named once, as {@code int}s (never {@code byte}: several flag sets use bits
 * above 7). Values from {@code include/uapi/linux/io_uring.h} as of Linux 6.18; names drop the
 * {@code IORING_} prefix but keep the rest of the kernel's name. Nothing here is post-6.18.
 */
public final class IoUring {
    private IoUring() {
    }

    // ---------------------------------------------------------------- mmap offsets (io_uring_setup(2))
    public static final long OFF_SQ_RING = 0L;
    public static final long OFF_CQ_RING = 0x8000000L;
    public static final long OFF_SQES = 0x10000000L;

    // ---------------------------------------------------------------- setup flags (io_uring_params.flags)
    public static final int SETUP_IOPOLL = 1;
    public static final int SETUP_SQPOLL = 1 << 1;
    public static final int SETUP_SQ_AFF = 1 << 2;
    public static final int SETUP_CQSIZE = 1 << 3;
    public static final int SETUP_CLAMP = 1 << 4;
    public static final int SETUP_ATTACH_WQ = 1 << 5;
    public static final int SETUP_R_DISABLED = 1 << 6;
    public static final int SETUP_SUBMIT_ALL = 1 << 7;
    public static final int SETUP_COOP_TASKRUN = 1 << 8;
    public static final int SETUP_TASKRUN_FLAG = 1 << 9;
    public static final int SETUP_SQE128 = 1 << 10;
    public static final int SETUP_CQE32 = 1 << 11;
    public static final int SETUP_SINGLE_ISSUER = 1 << 12;
    public static final int SETUP_DEFER_TASKRUN = 1 << 13;
    public static final int SETUP_NO_MMAP = 1 << 14;
    public static final int SETUP_REGISTERED_FD_ONLY = 1 << 15;
    public static final int SETUP_NO_SQARRAY = 1 << 16;
    public static final int SETUP_HYBRID_IOPOLL = 1 << 17;
    public static final int SETUP_CQE_MIXED = 1 << 18;

    private static final String[] SETUP_NAMES = {
        "IOPOLL", "SQPOLL", "SQ_AFF", "CQSIZE", "CLAMP", "ATTACH_WQ", "R_DISABLED", "SUBMIT_ALL",
        "COOP_TASKRUN", "TASKRUN_FLAG", "SQE128", "CQE32", "SINGLE_ISSUER", "DEFER_TASKRUN", "NO_MMAP",
        "REGISTERED_FD_ONLY", "NO_SQARRAY", "HYBRID_IOPOLL", "CQE_MIXED"
    };

    // ---------------------------------------------------------------- features (io_uring_params.features)
    public static final int FEAT_SINGLE_MMAP = 1;
    public static final int FEAT_NODROP = 1 << 1;
    public static final int FEAT_SUBMIT_STABLE = 1 << 2;
    public static final int FEAT_RW_CUR_POS = 1 << 3;
    public static final int FEAT_CUR_PERSONALITY = 1 << 4;
    public static final int FEAT_FAST_POLL = 1 << 5;
    public static final int FEAT_POLL_32BITS = 1 << 6;
    public static final int FEAT_SQPOLL_NONFIXED = 1 << 7;
    public static final int FEAT_EXT_ARG = 1 << 8;
    public static final int FEAT_NATIVE_WORKERS = 1 << 9;
    public static final int FEAT_RSRC_TAGS = 1 << 10;
    public static final int FEAT_CQE_SKIP = 1 << 11;
    public static final int FEAT_LINKED_FILE = 1 << 12;
    public static final int FEAT_REG_REG_RING = 1 << 13;
    public static final int FEAT_RECVSEND_BUNDLE = 1 << 14;
    public static final int FEAT_MIN_TIMEOUT = 1 << 15;
    public static final int FEAT_RW_ATTR = 1 << 16;
    public static final int FEAT_NO_IOWAIT = 1 << 17;

    private static final String[] FEATURE_NAMES = {
        "SINGLE_MMAP", "NODROP", "SUBMIT_STABLE", "RW_CUR_POS", "CUR_PERSONALITY", "FAST_POLL",
        "POLL_32BITS", "SQPOLL_NONFIXED", "EXT_ARG", "NATIVE_WORKERS", "RSRC_TAGS", "CQE_SKIP",
        "LINKED_FILE", "REG_REG_RING", "RECVSEND_BUNDLE", "MIN_TIMEOUT", "RW_ATTR", "NO_IOWAIT"
    };

    // ---------------------------------------------------------------- ring flags
    /** {@code IORING_SQ_NEED_WAKEUP}: SQPOLL thread sleeps (unused: zcnet never sets up SQPOLL). */
    public static final int SQ_NEED_WAKEUP = 1;
    /** {@code IORING_SQ_CQ_OVERFLOW}: completions wait in the kernel's overflow list. */
    public static final int SQ_CQ_OVERFLOW = 1 << 1;
    /** {@code IORING_SQ_TASKRUN}: task work is pending (with {@link #SETUP_TASKRUN_FLAG}). */
    public static final int SQ_TASKRUN = 1 << 2;

    /**
     * {@code EBADR} (asm-generic errno 53): {@code io_uring_enter} returns it once completions were
     * dropped because the kernel could not even park them in its overflow list.
     */
    public static final int ENTER_ERR_DROPPED = 53;

    // ---------------------------------------------------------------- io_uring_enter(2) flags
    public static final int ENTER_GETEVENTS = 1;
    public static final int ENTER_SQ_WAKEUP = 1 << 1;
    public static final int ENTER_SQ_WAIT = 1 << 2;
    public static final int ENTER_EXT_ARG = 1 << 3;
    public static final int ENTER_REGISTERED_RING = 1 << 4;

    // ---------------------------------------------------------------- SQE flags (IOSQE_*)
    public static final int IOSQE_FIXED_FILE = 1;
    public static final int IOSQE_IO_DRAIN = 1 << 1;
    public static final int IOSQE_IO_LINK = 1 << 2;
    public static final int IOSQE_IO_HARDLINK = 1 << 3;
    public static final int IOSQE_ASYNC = 1 << 4;
    public static final int IOSQE_BUFFER_SELECT = 1 << 5;
    public static final int IOSQE_CQE_SKIP_SUCCESS = 1 << 6;

    // ---------------------------------------------------------------- opcodes (enum io_uring_op)
    public static final int OP_NOP = 0;
    public static final int OP_SENDMSG = 9;
    public static final int OP_RECVMSG = 10;
    public static final int OP_TIMEOUT = 11;
    public static final int OP_TIMEOUT_REMOVE = 12;
    public static final int OP_ACCEPT = 13;
    public static final int OP_ASYNC_CANCEL = 14;
    public static final int OP_LINK_TIMEOUT = 15;
    public static final int OP_CONNECT = 16;
    public static final int OP_CLOSE = 19;
    public static final int OP_READ = 22;
    public static final int OP_WRITE = 23;
    public static final int OP_SEND = 26;
    public static final int OP_RECV = 27;
    public static final int OP_PROVIDE_BUFFERS = 31;
    public static final int OP_REMOVE_BUFFERS = 32;
    public static final int OP_SHUTDOWN = 34;
    public static final int OP_MSG_RING = 40;
    public static final int OP_SOCKET = 45;
    public static final int OP_URING_CMD = 46;
    public static final int OP_SEND_ZC = 47;
    public static final int OP_SENDMSG_ZC = 48;
    public static final int OP_READ_MULTISHOT = 49;
    public static final int OP_FIXED_FD_INSTALL = 54;
    public static final int OP_BIND = 56;
    public static final int OP_LISTEN = 57;
    public static final int OP_RECV_ZC = 58;
    public static final int OP_EPOLL_WAIT = 59;
    public static final int OP_READV_FIXED = 60;
    public static final int OP_WRITEV_FIXED = 61;
    public static final int OP_PIPE = 62;

    private static final String[] OP_NAMES = {
        "NOP", "READV", "WRITEV", "FSYNC", "READ_FIXED", "WRITE_FIXED", "POLL_ADD", "POLL_REMOVE",
        "SYNC_FILE_RANGE", "SENDMSG", "RECVMSG", "TIMEOUT", "TIMEOUT_REMOVE", "ACCEPT", "ASYNC_CANCEL",
        "LINK_TIMEOUT", "CONNECT", "FALLOCATE", "OPENAT", "CLOSE", "FILES_UPDATE", "STATX", "READ", "WRITE",
        "FADVISE", "MADVISE", "SEND", "RECV", "OPENAT2", "EPOLL_CTL", "SPLICE", "PROVIDE_BUFFERS",
        "REMOVE_BUFFERS", "TEE", "SHUTDOWN", "RENAMEAT", "UNLINKAT", "MKDIRAT", "SYMLINKAT", "LINKAT",
        "MSG_RING", "FSETXATTR", "SETXATTR", "FGETXATTR", "GETXATTR", "SOCKET", "URING_CMD", "SEND_ZC",
        "SENDMSG_ZC", "READ_MULTISHOT", "WAITID", "FUTEX_WAIT", "FUTEX_WAKE", "FUTEX_WAITV",
        "FIXED_FD_INSTALL", "FTRUNCATE", "BIND", "LISTEN", "RECV_ZC", "EPOLL_WAIT", "READV_FIXED",
        "WRITEV_FIXED", "PIPE"
    };

    // ---------------------------------------------------------------- send/recv/accept ioprio flags
    public static final int RECVSEND_POLL_FIRST = 1;
    public static final int RECV_MULTISHOT = 1 << 1;
    public static final int RECVSEND_FIXED_BUF = 1 << 2;
    public static final int SEND_ZC_REPORT_USAGE = 1 << 3;
    public static final int RECVSEND_BUNDLE = 1 << 4;
    /** {@code IORING_NOTIF_USAGE_ZC_COPIED}, in a SEND_ZC notification's {@code res}. */
    public static final int NOTIF_USAGE_ZC_COPIED = 1 << 31;

    public static final int ACCEPT_MULTISHOT = 1;
    public static final int ACCEPT_DONTWAIT = 1 << 1;
    public static final int ACCEPT_POLL_FIRST = 1 << 2;

    /** {@code IORING_FILE_INDEX_ALLOC}: let the kernel pick a direct-descriptor slot. */
    public static final int FILE_INDEX_ALLOC = ~0;

    // ---------------------------------------------------------------- ASYNC_CANCEL flags
    public static final int ASYNC_CANCEL_ALL = 1;
    public static final int ASYNC_CANCEL_FD = 1 << 1;
    public static final int ASYNC_CANCEL_ANY = 1 << 2;
    public static final int ASYNC_CANCEL_FD_FIXED = 1 << 3;
    public static final int ASYNC_CANCEL_USERDATA = 1 << 4;
    public static final int ASYNC_CANCEL_OP = 1 << 5;

    // ---------------------------------------------------------------- timeout flags
    public static final int TIMEOUT_ABS = 1;
    public static final int TIMEOUT_UPDATE = 1 << 1;
    public static final int TIMEOUT_BOOTTIME = 1 << 2;
    public static final int TIMEOUT_REALTIME = 1 << 3;
    public static final int TIMEOUT_LINK_UPDATE = 1 << 4;
    public static final int TIMEOUT_ETIME_SUCCESS = 1 << 5;
    public static final int TIMEOUT_MULTISHOT = 1 << 6;

    // ---------------------------------------------------------------- io_uring_register(2) opcodes
    public static final int REGISTER_BUFFERS = 0;
    public static final int UNREGISTER_BUFFERS = 1;
    public static final int REGISTER_FILES = 2;
    public static final int UNREGISTER_FILES = 3;
    public static final int REGISTER_PROBE = 8;
    public static final int REGISTER_ENABLE_RINGS = 12;
    public static final int REGISTER_FILES2 = 13;
    public static final int REGISTER_BUFFERS2 = 15;
    public static final int REGISTER_RING_FDS = 20;
    public static final int UNREGISTER_RING_FDS = 21;
    public static final int REGISTER_PBUF_RING = 22;
    public static final int UNREGISTER_PBUF_RING = 23;
    public static final int REGISTER_SYNC_CANCEL = 24;
    public static final int REGISTER_FILE_ALLOC_RANGE = 25;
    public static final int REGISTER_PBUF_STATUS = 26;
    public static final int REGISTER_NAPI = 27;
    public static final int UNREGISTER_NAPI = 28;
    public static final int REGISTER_CLOCK = 29;
    public static final int REGISTER_ZCRX_IFQ = 32;
    public static final int REGISTER_RESIZE_RINGS = 33;
    public static final int REGISTER_MEM_REGION = 34;
    /** OR'ed into a register opcode: the fd argument is a registered ring index. */
    public static final int REGISTER_USE_REGISTERED_RING = 1 << 31;

    /** {@code IO_URING_OP_SUPPORTED} in a probe entry's flags. */
    public static final int OP_SUPPORTED = 1;

    // ---------------------------------------------------------------- provided buffer rings
    public static final int IOU_PBUF_RING_MMAP = 1;
    public static final int IOU_PBUF_RING_INC = 2;

    /** Names of the bits set in {@code flags}, e.g. "SINGLE_ISSUER". */
    public static String[] setupFlagNames(int flags) {
        return names(flags, SETUP_NAMES);
    }

    /** Names of the bits set in {@code features}, e.g. "NODROP". */
    public static String[] featureNames(int features) {
        return names(features, FEATURE_NAMES);
    }

    /** The kernel's name of an opcode, or "OP(n)". */
    public static String opName(int opcode) {
        return opcode >= 0 && opcode < OP_NAMES.length ? OP_NAMES[opcode] : "OP(" + opcode + ")";
    }

    private static String[] names(int bits, String[] table) {
        String[] out = new String[Integer.bitCount(bits)];
        int n = 0;
        for (int bit = 0; bit < 32; bit++) {
            if ((bits & (1 << bit)) != 0) {
                out[n++] = bit < table.length ? table[bit] : "BIT" + bit;
            }
        }
        return out;
    }
}
