package io.zcnet.ring.uring;

import io.zcnet.ring.Errno;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Each errno of the kernel's contract gives its own reason, naming the interface, queue, errno and step. */
class ZcrxRefusalsTest {

    private static void check(String call, int errno, String cause) {
        String reason = ZcrxRefusals.reason(call, errno, "eth7", 5);
        assertTrue(reason.startsWith("eth7 rx queue 5: " + Errno.name(errno) + " from " + call + ", "), reason);
        assertTrue(reason.contains(cause), reason);
        assertTrue(reason.indexOf('\n') < 0, reason);
    }

    @Test
    void registrationErrnosOfTheContract() {
        Map<Integer, String> causes = Map.of(
                Errno.EPERM, "CAP_NET_ADMIN",
                Errno.EINVAL, "ethtool -G eth7 tcp-data-split on hds-thresh 0",
                Errno.ENODEV, "disappeared",
                Errno.EOPNOTSUPP, "no parent device (loopback, veth",
                Errno.EEXIST, "XDP",
                Errno.EBUSY, "AF_XDP",
                Errno.ERANGE, "rx queue 5 is out of range",
                Errno.ENOMEM, "RLIMIT_MEMLOCK",
                Errno.EFAULT, "could not access");
        Set<String> distinct = new HashSet<>();
        causes.forEach((errno, cause) -> {
            check(ZcrxRefusals.REGISTER, errno, cause);
            distinct.add(ZcrxRefusals.reason(ZcrxRefusals.REGISTER, errno, "eth7", 5));
        });
        assertEquals(causes.size(), distinct.size());
        check(ZcrxRefusals.REGISTER, Errno.EIO, "refused by the kernel");
    }

    @Test
    void ioUringUnavailableAndTheRingsFlags() {
        check(ZcrxRefusals.SETUP, Errno.ENOSYS, "io_uring unavailable: kernel built without io_uring");
        check(ZcrxRefusals.SETUP, Errno.EPERM, "io_uring unavailable: ");
        check(ZcrxRefusals.SETUP, Errno.EINVAL, "CQE32|DEFER_TASKRUN|SINGLE_ISSUER");
    }

    @Test
    void nameLookup() {
        check(ZcrxRefusals.NAME_LOOKUP, Errno.ENODEV, "no interface of that name in this thread's network namespace");
    }
}
