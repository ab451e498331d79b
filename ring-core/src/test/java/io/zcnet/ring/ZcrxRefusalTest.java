package io.zcnet.ring;

import io.zcnet.ring.sys.Native;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The refusals this machine can produce, through the public facade: no device here supports zcrx, so
 * every attempt must come back {@link ZeroCopyReceive.Refused} with the kernel's errno and a reason that
 * names the interface. An attempt that unexpectedly succeeds is closed and fails the test.
 */
class ZcrxRefusalTest implements RequiresUring {
    private static final long PAGE = Native.pageSize();

    private Arena arena;
    private MemorySegment area;

    @BeforeEach
    void allocate() {
        arena = Arena.ofShared();
        area = arena.allocate(16 * PAGE, PAGE);
    }

    @AfterEach
    void free() {
        arena.close();
    }

    /** An attempt whose queue, if it opened, is closed by the thread that owns it. */
    private ZeroCopyReceive.Refused refusedOn(String interfaceName) {
        ZeroCopyReceive.Outcome outcome = ZeroCopyReceive.attempt(interfaceName, 0, area, 64);
        if (outcome instanceof ZeroCopyReceive.Queue queue) {
            queue.close();
        }
        return assertInstanceOf(ZeroCopyReceive.Refused.class, outcome, "zcrx registered on " + interfaceName);
    }

    private static void assertRefusal(ZeroCopyReceive.Refused refused, String interfaceName, String errnoName,
            String because) {
        assertEquals(errnoName, refused.errnoName(), refused.reason());
        assertEquals(interfaceName, refused.interfaceName());
        assertTrue(refused.reason().startsWith(interfaceName + " rx queue 0: " + errnoName + " from "), refused.reason());
        assertTrue(refused.reason().contains(because), refused.reason());
        assertTrue(refused.reason().indexOf('\n') < 0, "one line: " + refused.reason());
    }

    @Test
    void loopbackIsRefusedForTheReasonThisProcessPrivilegeLeadsTo() throws Exception {
        ZeroCopyReceive.Refused refused = refusedOn("lo");
        if (ZcrxTestSupport.hasNetAdmin()) {
            // past the capability check, the kernel finds no parent device behind lo
            assertRefusal(refused, "lo", "EOPNOTSUPP", "loopback");
        } else {
            assertRefusal(refused, "lo", "EPERM", "CAP_NET_ADMIN");
        }
    }

    @Test
    void aThreadWithoutNetAdminIsRefusedWithEperm() throws Exception {
        assumeTrue(ZcrxTestSupport.hasNetAdmin(), "needs CAP_NET_ADMIN to give it up (the plain EPERM case runs "
                + "in loopbackIsRefusedForTheReasonThisProcessPrivilegeLeadsTo without it)");
        ZeroCopyReceive.Refused refused = ZcrxTestSupport.onFreshThread(ZcrxTestSupport::dropNetAdmin,
                () -> refusedOn("lo"));
        assertRefusal(refused, "lo", "EPERM", "CAP_NET_ADMIN");
    }

    @Test
    void anUnknownInterfaceIsEnodev() {
        String name = "zcnone" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
        assertRefusal(refusedOn(name), name, "ENODEV", "no interface of that name");
    }

    /**
     * A virtio NIC has a parent device, so the kernel gets further than on {@code lo} (it pins and maps the
     * area) before refusing: virtio_net has no queue-management ops on 6.18.
     */
    @Test
    void aVirtioNicIsRefused() throws Exception {
        assumeTrue(ZcrxTestSupport.hasNetAdmin(), "needs CAP_NET_ADMIN to get past the kernel's EPERM");
        String virtio = null;
        try (var interfaces = Files.list(Path.of("/sys/class/net"))) {
            for (Path dir : (Iterable<Path>) interfaces::iterator) {
                Path driver = dir.resolve("device/driver");
                if (Files.exists(driver) && driver.toRealPath().getFileName().toString().equals("virtio_net")) {
                    virtio = dir.getFileName().toString();
                }
            }
        }
        assumeTrue(virtio != null, "no virtio_net interface here");
        assertRefusal(refusedOn(virtio), virtio, "EOPNOTSUPP", "queue-management ops");
    }

    /**
     * A veth pair split across namespaces: end A in a fresh namespace, end B in this one. Registration
     * looks the name up in the calling thread's namespace, so A is found (and refused as a device) only
     * from a thread inside the namespace, and B only from outside.
     */
    @Test
    void vethIsRefusedInsideAndOutsideANetworkNamespace() throws Exception {
        assumeTrue(ZcrxTestSupport.isRoot(), "needs root to create a network namespace and a veth pair");
        assumeTrue(ZcrxTestSupport.hasNetAdmin(), "needs CAP_NET_ADMIN to get past the kernel's EPERM");
        String tag = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt()).substring(2);
        String netns = "zcrx-test-" + tag;
        String inside = "zcva" + tag;
        String outside = "zcvb" + tag;
        try {
            ZcrxTestSupport.ip("netns", "add", netns);
            ZcrxTestSupport.ip("link", "add", inside, "netns", netns, "type", "veth", "peer", "name", outside);

            assertRefusal(refusedOn(outside), outside, "EOPNOTSUPP", "no parent device");
            assertRefusal(refusedOn(inside), inside, "ENODEV", "namespace");

            ZeroCopyReceive.Refused[] fromInside = ZcrxTestSupport.onFreshThread(
                    () -> ZcrxTestSupport.enterNetns(netns),
                    () -> new ZeroCopyReceive.Refused[] {refusedOn(inside), refusedOn(outside)});
            assertRefusal(fromInside[0], inside, "EOPNOTSUPP", "no parent device");
            assertRefusal(fromInside[1], outside, "ENODEV", "namespace");
        } finally {
            // Deleting the namespace destroys the end inside it, which takes its peer along; the link
            // delete is for a namespace that was created without the pair getting there.
            String failed = ZcrxTestSupport.ipTolerant("netns", "del", netns);
            ZcrxTestSupport.ipTolerant("link", "del", outside);
            if (failed != null) {
                System.err.println("ip netns del " + netns + ": " + failed);
            }
        }
    }
}
