package io.zcnet.ring.uring;

import io.zcnet.ring.Errno;

/**
 * One line saying why a zcrx queue could not be registered, from the step that failed and its errno,
 * mapped from the kernel's contract ({@code io_register_zcrx_ifq} and {@code __net_mp_open_rxq} in 6.18,
 * {@code Documentation/networking/iou-zcrx.rst}). Each line names the interface and RX queue, so a log
 * that says "falling back to the software receive path" says for what. Stateless; any thread.
 */
public final class ZcrxRefusals {
    static final String NAME_LOOKUP = "if_nametoindex";
    static final String SETUP = "io_uring_setup";
    static final String REGISTER = "io_uring_register(ZCRX_IFQ)";

    private ZcrxRefusals() {
    }

    /**
     * @param call  the failed step, as {@link io.zcnet.ring.sys.ErrnoException#call()} names it
     * @param errno the positive errno
     */
    public static String reason(String call, int errno, String interfaceName, int rxQueue) {
        return interfaceName + " rx queue " + rxQueue + ": " + Errno.name(errno) + " from " + call + ", "
                + why(call, errno, interfaceName, rxQueue);
    }

    private static String why(String call, int errno, String interfaceName, int rxQueue) {
        if (call.equals(NAME_LOOKUP)) {
            return errno == Errno.ENODEV ? "no interface of that name in this thread's network namespace"
                    : "the interface name could not be resolved";
        }
        if (call.equals(SETUP)) {
            String cause = Uring.cause(errno);
            return errno == Errno.EINVAL
                    ? "the kernel refused the setup flags a zcrx ring needs (CQE32|DEFER_TASKRUN|SINGLE_ISSUER, Linux 6.1+)"
                    : "io_uring unavailable" + (cause.isEmpty() ? "" : ": " + cause);
        }
        if (!call.equals(REGISTER)) {
            return "zcnet could not prepare the registration";
        }
        return switch (errno) {
            case Errno.EPERM -> "registering a zcrx queue needs CAP_NET_ADMIN";
            case Errno.EINVAL -> "the kernel refused the arguments: tcp-data-split must be on and hds-thresh 0"
                    + " (ethtool -G " + interfaceName + " tcp-data-split on hds-thresh 0), the ring needs"
                    + " CQE32|DEFER_TASKRUN, and kernels before 6.15 have no zcrx at all";
            case Errno.ENODEV -> "the interface disappeared before the kernel looked it up";
            case Errno.EOPNOTSUPP -> "the device cannot do zcrx: it has no parent device (loopback, veth and other"
                    + " virtual devices) or its driver has no queue-management ops (virtio_net)";
            case Errno.EEXIST -> "the rx queue is already bound to a memory provider (zcrx or devmem) or an XDP"
                    + " program is attached to the device";
            case Errno.EBUSY -> "the rx queue is in use by an AF_XDP socket";
            case Errno.ERANGE -> "rx queue " + rxQueue + " is out of range (ethtool -l " + interfaceName
                    + " shows the queue count)";
            case Errno.ENOMEM -> "the kernel could not pin the area or allocate the queue (RLIMIT_MEMLOCK is "
                    + Uring.formatLimit(Uring.memlockLimit()) + ")";
            case Errno.EFAULT -> "the kernel could not access the area or the registration structures";
            default -> "refused by the kernel";
        };
    }
}
