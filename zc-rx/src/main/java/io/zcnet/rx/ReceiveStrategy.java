package io.zcnet.rx;

import io.zcnet.ring.ZeroCopyReceive;

import java.lang.foreign.MemorySegment;

/**
 * Which receive path a connection gets, decided once when it is set up: hardware zero-copy receive (zcrx)
 * where the owner asked for it and the kernel and device accept it, otherwise the software path of
 * {@link FrameReceiver} (provided buffer ring, direct placement), with one line saying why.
 *
 * <p>zcrx is attempted only when an interface and RX queue are named: it binds a whole NIC queue and needs
 * out-of-band NIC setup (header split, flow steering), so it is never a silent default. zc-rx has no
 * {@code RECV_ZC} receive loop yet (no device here could ever run one), so even an accepted registration is
 * released again and reported as a fallback; see {@link ZeroCopyReceive} for what has and has not run.
 *
 * @param zeroCopy whether the connection receives through zcrx (never, for now)
 * @param reason   one line for logs: why this path
 */
public record ReceiveStrategy(boolean zeroCopy, String reason) {

    /**
     * Decides the path. With {@code interfaceName} null, zcrx was not asked for and nothing is attempted.
     *
     * @param area          page-aligned native memory for the zcrx area (pool memory), when asked
     * @param refillEntries refill ring entries, a power of two
     * @param interfaceName the network interface to try zcrx on, or null for the software receive path
     * @param rxQueue the hardware receive queue, when asked
     * @return the path taken, with the reason for it
     * @throws IllegalArgumentException for arguments {@link ZeroCopyReceive#attempt} refuses as mistakes
     */
    public static ReceiveStrategy choose(String interfaceName, int rxQueue, MemorySegment area, int refillEntries) {
        if (interfaceName == null) {
            return new ReceiveStrategy(false, "software receive: zcrx not asked for");
        }
        return switch (ZeroCopyReceive.attempt(interfaceName, rxQueue, area, refillEntries)) {
            case ZeroCopyReceive.Refused refused ->
                    new ReceiveStrategy(false, "zcrx refused, software receive instead: " + refused.reason());
            case ZeroCopyReceive.Queue queue -> {
                queue.close();
                yield new ReceiveStrategy(false, "zcrx registered on " + interfaceName + " rx queue " + rxQueue
                        + " but zc-rx has no RECV_ZC receive loop yet; software receive instead");
            }
        };
    }
}
