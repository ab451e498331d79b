package io.zcnet.ring.uring;

import io.zcnet.ring.Availability;
import io.zcnet.ring.Errno;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class UringTest {

    @Test
    void usableOnThisKernelAndCached() {
        Availability a = Uring.availability();
        assertTrue(a.usable(), a.reason());
        assertSame(a, Uring.availability());
    }

    @Test
    void failuresAreExplainedInOneActionableLine() {
        assertTrue(Uring.explain(-Errno.ENOSYS).contains("without io_uring"), Uring.explain(-Errno.ENOSYS));
        String eperm = Uring.explain(-Errno.EPERM);
        assertTrue(eperm.startsWith("io_uring_setup: EPERM") && eperm.contains("io_uring_disabled"), eperm);
        String enomem = Uring.explain(-Errno.ENOMEM);
        assertTrue(enomem.contains("RLIMIT_MEMLOCK is " + Uring.formatLimit(Uring.memlockLimit())), enomem);
        assertEquals("io_uring_setup: EINVAL", Uring.explain(-Errno.EINVAL));
        assertTrue(!eperm.contains("\n") && !enomem.contains("\n"));
    }

    @Test
    void infoDescribesKernelLimitsFlagsAndOpcodes() {
        Uring.Info info = Uring.info();
        assertEquals(Uring.kernelRelease(), info.kernelRelease());
        assertTrue(info.kernelRelease().matches("\\d+\\.\\d+.*"), info.kernelRelease());
        assertTrue(info.ioUringDisabled() >= 0 && info.ioUringDisabled() <= 2, "io_uring_disabled " + info.ioUringDisabled());
        assertTrue(info.memlockLimit() > 0);
        assertTrue(info.setupFlags().contains("SINGLE_ISSUER"), info.setupFlags().toString());
        assertTrue(info.kernelFeatures().contains("EXT_ARG"), info.kernelFeatures().toString());
        assertTrue(info.supportedOps().contains("SEND_ZC"), info.supportedOps().toString());
        String text = info.describe();
        assertTrue(text.contains("io_uring: usable") && text.contains("opcodes: NOP"), text);
    }
}
