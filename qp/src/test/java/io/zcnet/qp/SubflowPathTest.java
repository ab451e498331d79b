package io.zcnet.qp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;

import org.junit.jupiter.api.Test;

/** Parsing of {@code --path LOCAL=REMOTE}: engine-independent, no sockets. */
class SubflowPathTest {

    @Test
    void localAndRemoteWithAndWithoutPorts() {
        SubflowPath p = SubflowPath.parse("127.0.0.2=127.0.0.1:7000", 0);
        assertEquals(new InetSocketAddress("127.0.0.2", 0), p.local());
        assertEquals(new InetSocketAddress("127.0.0.1", 7000), p.remote());
        SubflowPath q = SubflowPath.parse("127.0.0.1", 9000);
        assertNull(q.local());
        assertEquals(9000, q.remote().getPort());
    }

    @Test
    void badPathsAreRefusedWithoutALookup() {
        for (String bad : new String[] {"", "1.2.3.4=:x", "1.2.3.4=:", "=127.0.0.1:1", "127.0.0.1:99999", "127.0.0.1:p"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SubflowPath.parse(bad, 7000),
                    bad);
            assertTrue(e.getMessage().contains("path") || e.getMessage().contains("address"), e::getMessage);
        }
    }
}
