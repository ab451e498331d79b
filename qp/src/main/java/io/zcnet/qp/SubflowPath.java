package io.zcnet.qp;

import java.net.InetSocketAddress;

/**
 * Where one subflow runs: from {@code local} (null: wherever the routing table says; port 0 in it: any
 * port) to {@code remote}. A queue pair over several paths of different networks has one subflow per path.
 *
 * @param local the local address to bind, or null
 * @param remote the listener's address
 */
public record SubflowPath(InetSocketAddress local, InetSocketAddress remote) {

    /** Checks that the remote address is given and both are resolved. */
    public SubflowPath {
        if (remote == null) {
            throw new IllegalArgumentException("remote address is required");
        }
        if (remote.isUnresolved() || local != null && local.isUnresolved()) {
            throw new IllegalArgumentException("unresolved address in path " + local + " -> " + remote);
        }
    }

    /**
     * {@return a path to {@code remote} from wherever the routing table says}
     *
     * @param remote the listener's address
     */
    public static SubflowPath to(InetSocketAddress remote) {
        return new SubflowPath(null, remote);
    }

    /**
     * Parses {@code LOCAL=REMOTE} ({@code 10.0.1.1=10.0.1.2:7000}; LOCAL may carry a port) or {@code REMOTE}
     * alone; {@code defaultPort} fills a REMOTE without one.
     *
     * @param text {@code LOCAL=REMOTE} or {@code REMOTE}, each {@code HOST} or {@code HOST:PORT}
     * @param defaultPort the port of a REMOTE given without one
     * @return the path
     */
    public static SubflowPath parse(String text, int defaultPort) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("empty path: expected LOCAL=REMOTE[:PORT] or REMOTE[:PORT]");
        }
        int eq = text.indexOf('=');
        InetSocketAddress local = eq < 0 ? null : address(text.substring(0, eq), 0, text);
        InetSocketAddress remote = address(text.substring(eq + 1), defaultPort, text);
        return new SubflowPath(local, remote);
    }

    private static InetSocketAddress address(String hostPort, int defaultPort, String whole) {
        String host = hostPort;
        int port = defaultPort;
        int colon = hostPort.lastIndexOf(':');
        if (colon >= 0 && hostPort.indexOf(':') == colon) {
            host = hostPort.substring(0, colon);
            try {
                port = Integer.parseInt(hostPort.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad port in path '" + whole + "'");
            }
        }
        if (host.isEmpty() || port < 0 || port > 65535) {
            throw new IllegalArgumentException("bad address '" + hostPort + "' in path '" + whole + "'");
        }
        InetSocketAddress a = new InetSocketAddress(host, port);
        if (a.isUnresolved()) {
            throw new IllegalArgumentException("cannot resolve '" + host + "' in path '" + whole + "'");
        }
        return a;
    }

    @Override
    public String toString() {
        return (local == null ? "" : local.getAddress().getHostAddress() + "=") + remote.getAddress().getHostAddress()
                + ":" + remote.getPort();
    }
}
