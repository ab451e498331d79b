package io.zcnet.qp.lab;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.random.RandomGenerator;

/**
 * Picks the IPv4 /24 a lab path gets: inside the private ranges (RFC 1918) and overlapping none of the
 * routes the machine has, so a path that reaches the root namespace cannot capture or shadow any of its
 * traffic. The /24 is random so that labs running in parallel on one machine are unlikely to pick the
 * same one; a lab re-reads the routes before every pick, so a path another lab already linked to the
 * root namespace is avoided too.
 */
final class Subnets {
    /** A route's destination as {@code ip -4 route} prints it: network and prefix length. */
    record Route(int network, int prefix) {
        boolean covers(int address, int addressPrefix) {
            int shorter = Math.min(prefix, addressPrefix);
            return (address & mask(shorter)) == (network & mask(shorter));
        }
    }

    /** 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, in the order they are tried. */
    private static final Route[] PRIVATE = {
            new Route(0x0A000000, 8), new Route(0xAC100000, 12), new Route(0xC0A80000, 16)};
    static final int PREFIX = 24;
    /** Random picks per range before the next is tried; a range can only be this full if a route covers it. */
    private static final int TRIES = 512;
    /** The first word of a line of {@code ip route show table all} that is a route type, not a destination. */
    private static final Set<String> ROUTE_TYPES = Set.of("unicast", "local", "broadcast", "multicast",
            "anycast", "unreachable", "blackhole", "prohibit", "throw", "nat");

    private Subnets() {
    }

    /**
     * The destinations in the output of {@code ip -4 -o route show table all}. Default routes are left
     * out: they cover everything, and a more specific route to a lab subnet is what the lab adds.
     */
    static List<Route> parse(String ipRouteOutput) {
        List<Route> routes = new ArrayList<>();
        for (String line : ipRouteOutput.split("\n")) {
            String[] words = line.strip().split("\\s+");
            if (words.length == 0 || words[0].isEmpty()) {
                continue;
            }
            String destination = ROUTE_TYPES.contains(words[0]) && words.length > 1 ? words[1] : words[0];
            if (destination.equals("default")) {
                continue;
            }
            int slash = destination.indexOf('/');
            String address = slash < 0 ? destination : destination.substring(0, slash);
            int prefix = slash < 0 ? 32 : Integer.parseInt(destination.substring(slash + 1));
            if (prefix > 0) {
                routes.add(new Route(toInt(address), prefix));
            }
        }
        return routes;
    }

    /** The network of a /24 in a private range that none of {@code taken} overlaps. */
    static int pick(List<Route> taken, RandomGenerator random) {
        for (Route range : PRIVATE) {
            int subnets = 1 << (PREFIX - range.prefix());
            for (int i = 0; i < TRIES; i++) {
                int candidate = range.network() | (random.nextInt(subnets) << (32 - PREFIX));
                if (taken.stream().noneMatch(r -> r.covers(candidate, PREFIX))) {
                    return candidate;
                }
            }
        }
        throw new IllegalStateException("no free /24 in the private ranges among " + TRIES
                + " random picks each; the machine's routes cover them: " + taken);
    }

    static InetAddress address(int value) {
        byte[] bytes = {(byte) (value >>> 24), (byte) (value >>> 16), (byte) (value >>> 8), (byte) value};
        try {
            return InetAddress.getByAddress(bytes);
        } catch (UnknownHostException e) {
            throw new AssertionError("four bytes are always an address", e);
        }
    }

    static int toInt(String dottedQuad) {
        try {
            InetAddress address = InetAddress.getByName(dottedQuad); // a literal: no lookup
            if (!(address instanceof Inet4Address)) {
                throw new IllegalArgumentException("not IPv4: " + dottedQuad);
            }
            byte[] b = address.getAddress();
            return (b[0] & 0xFF) << 24 | (b[1] & 0xFF) << 16 | (b[2] & 0xFF) << 8 | (b[3] & 0xFF);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("not an address: " + dottedQuad, e);
        }
    }

    private static int mask(int prefix) {
        return prefix == 0 ? 0 : -1 << (32 - prefix);
    }
}
