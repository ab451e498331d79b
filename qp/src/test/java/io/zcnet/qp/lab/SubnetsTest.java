package io.zcnet.qp.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

/** How the lab reads the machine's routes and picks a /24 clear of them: no root needed. */
class SubnetsTest {
    private static final String ROUTES = """
            default via 192.0.2.1 dev eth0
            10.0.0.0/8 dev tun0 scope link
            172.16.5.0/24 dev br0 proto kernel scope link src 172.16.5.1
            local 127.0.0.0/8 dev lo table local proto kernel scope host src 127.0.0.1
            broadcast 172.16.5.255 dev br0 table local proto kernel scope link src 172.16.5.1
            local 192.0.2.2 dev eth0 table local proto kernel scope host src 192.0.2.2
            """;

    @Test
    void routesAreReadWithTheirTypeWordSkippedAndTheDefaultLeftOut() {
        List<Subnets.Route> routes = Subnets.parse(ROUTES);
        assertEquals(List.of(
                new Subnets.Route(Subnets.toInt("10.0.0.0"), 8),
                new Subnets.Route(Subnets.toInt("172.16.5.0"), 24),
                new Subnets.Route(Subnets.toInt("127.0.0.0"), 8),
                new Subnets.Route(Subnets.toInt("172.16.5.255"), 32),
                new Subnets.Route(Subnets.toInt("192.0.2.2"), 32)), routes);
    }

    @Test
    void aPickAvoidsEveryRouteAndTheSubnetsPickedBefore() {
        List<Subnets.Route> taken = new ArrayList<>(Subnets.parse(ROUTES));
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 200; i++) {
            int subnet = Subnets.pick(taken, random);
            assertEquals(0, subnet & 0xFF, "a /24 network");
            for (Subnets.Route route : taken) {
                assertFalse(route.covers(subnet, Subnets.PREFIX), Subnets.address(subnet) + " overlaps " + route);
            }
            assertFalse(subnet >>> 24 == 10, "10/8 is routed here, so the pick moves to 172.16/12");
            taken.add(new Subnets.Route(subnet, Subnets.PREFIX));
        }
    }

    @Test
    void coversComparesOnTheShorterPrefix() {
        Subnets.Route host = new Subnets.Route(Subnets.toInt("10.1.2.3"), 32);
        assertTrue(host.covers(Subnets.toInt("10.1.2.0"), 24), "a host route inside the /24 overlaps it");
        assertFalse(host.covers(Subnets.toInt("10.1.3.0"), 24));
        assertTrue(new Subnets.Route(Subnets.toInt("10.0.0.0"), 8).covers(Subnets.toInt("10.200.0.0"), 24));
    }

    @Test
    void aMachineThatRoutesEveryPrivateRangeGetsNoSubnet() {
        List<Subnets.Route> all = Subnets.parse("10.0.0.0/8 dev a\n172.16.0.0/12 dev b\n192.168.0.0/16 dev c\n");
        assertThrows(IllegalStateException.class, () -> Subnets.pick(all, new SplittableRandom(1)));
    }
}
