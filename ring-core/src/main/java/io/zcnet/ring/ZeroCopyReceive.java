package io.zcnet.ring;

import io.zcnet.ring.sys.ErrnoException;
import io.zcnet.ring.sys.Native;
import io.zcnet.ring.uring.ZcrxQueue;
import io.zcnet.ring.uring.ZcrxRefusals;

import java.lang.foreign.MemorySegment;

/**
 * io_uring zero-copy receive (zcrx, Linux 6.15+): an attempt, made only when asked, to bind one RX queue
 * of a NIC to a memory area, with its answer. Either the queue is {@link Queue open}, or the kernel (or
 * this JVM) {@link Refused refused}, and the caller keeps receiving through zcnet's software path
 * (multishot receives into provided-buffer rings) and logs {@link Refused#reason()}, one line.
 *
 * <pre>{@code
 * switch (ZeroCopyReceive.attempt("eth1", 3, region.segment(), 4096)) {
 *     case ZeroCopyReceive.Queue queue -> ...;                      // keep it open; close() when done
 *     case ZeroCopyReceive.Refused refused -> log.info("zcrx off: " + refused.reason());
 * }
 * }</pre>
 *
 * <h2>What the kernel asks for</h2>
 * {@code CAP_NET_ADMIN} (else EPERM); a NIC whose driver supports it (bnxt, gve, mlx5, fbnic; loopback,
 * veth and virtio_net answer EOPNOTSUPP); header/data split configured out of band
 * ({@code ethtool -G <if> tcp-data-split on hds-thresh 0}, else EINVAL); flow steering of the wanted
 * traffic to the queue ({@code ethtool -N}); no XDP program and the queue not already bound (EEXIST), not
 * used by AF_XDP (EBUSY), within range (ERANGE). zcnet does the rest: a ring of its own with
 * {@code CQE32|DEFER_TASKRUN|SINGLE_ISSUER}, and the refill ring.
 *
 * <h2>What has run, and what has not</h2>
 * On the machine this was written on (Linux 6.18, io_uring enabled; {@code lo}, veth and a virtio NIC) no
 * device can register a queue, so what has been exercised is the attempt and its refusals: argument
 * checks, the interface lookup (ENODEV), the dedicated ring's setup, and the registration call answered
 * by the kernel with EOPNOTSUPP for {@code lo}, veth (inside and outside a network namespace) and
 * virtio_net, EPERM on a thread without {@code CAP_NET_ADMIN}, ENODEV for an unknown index, EINVAL on
 * rings without {@code CQE32} or {@code DEFER_TASKRUN}; a RECV_ZC naming no queue completes with EINVAL
 * in a 32-byte CQE. Never run: an accepted registration, the refill ring as the kernel maps and reads it,
 * RECV_ZC data completions, EEXIST/EBUSY/ERANGE and the tcp-data-split EINVAL (their reasons come from
 * the kernel source, not from a device). The completion parsing, its bounds checks and the refill ring
 * are unit-tested on plain memory only, and an open {@link Queue} offers no receive yet.
 *
 * <p>Stateless; any thread may call {@link #attempt}, and the calling thread owns the queue it returns.
 */
public final class ZeroCopyReceive {
    private ZeroCopyReceive() {
    }

    /** What {@link #attempt} came to: a {@link Queue} or a {@link Refused}. */
    public sealed interface Outcome permits Queue, Refused {
    }

    /**
     * Tries to register RX queue {@code rxQueue} of {@code interfaceName}, in the calling thread's network
     * namespace, to receive into {@code area}.
     *
     * @param area          native memory the NIC writes packets into: page-aligned, whole pages, writable;
     *                      pinned by the kernel while the queue is open, and not to be reused for anything
     *                      else after {@link Queue#close()} (the kernel lets go of it asynchronously)
     * @param refillEntries refill ring entries, a power of two up to 32768
     * @return the open queue, or why not
     * @param interfaceName the network interface, e.g. {@code eth0}
     * @param rxQueue the hardware receive queue to take over
     * @throws IllegalArgumentException for a null, blank or impossible interface name, a negative queue, a
     *                                  null, heap, read-only, unaligned or partial-page area, or refill
     *                                  entries out of range: mistakes of the caller, not refusals
     */
    public static Outcome attempt(String interfaceName, int rxQueue, MemorySegment area, int refillEntries) {
        ZcrxQueue.checkArguments(interfaceName, rxQueue, area, refillEntries);
        String linkError = Native.linkError();
        if (linkError != null) {
            return new Refused(interfaceName, rxQueue, 0, interfaceName + " rx queue " + rxQueue
                    + ": not attempted, " + linkError);
        }
        try {
            return new Queue(ZcrxQueue.register(interfaceName, rxQueue, area, refillEntries));
        } catch (ErrnoException e) {
            return new Refused(interfaceName, rxQueue, e.errno(),
                    ZcrxRefusals.reason(e.call(), e.errno(), interfaceName, rxQueue));
        }
    }

    /**
     * The attempt failed; nothing was left registered, mapped or open.
     *
     * @param errno  the positive errno of the failed step, or 0 when no system call could be made (native
     *               access refused by the JVM)
     * @param reason one line: interface, queue, errno, the step, and the likely cause, e.g. "lo rx queue 0:
     *               EOPNOTSUPP from io_uring_register(ZCRX_IFQ), the device cannot do zcrx: ..."
     * @param interfaceName the interface that was asked for
     * @param rxQueue the receive queue that was asked for
     */
    public record Refused(String interfaceName, int rxQueue, int errno, String reason) implements Outcome {
        /** {@return "EOPNOTSUPP", "EPERM", ...; "none" when {@link #errno()} is 0} */
        public String errnoName() {
            return errno == 0 ? "none" : Errno.name(errno);
        }
    }

    /**
     * An open zcrx queue: the RX queue is bound to the area until {@link #close()}. Owned by the thread
     * that {@linkplain #attempt attempted} it ({@code SINGLE_ISSUER}); other threads get
     * {@link IllegalStateException} from {@link #close()}.
     */
    public static final class Queue implements Outcome, AutoCloseable {
        private final ZcrxQueue queue;

        private Queue(ZcrxQueue queue) {
            this.queue = queue;
        }

        /** {@return the interface the queue belongs to} */
        public String interfaceName() {
            return queue.interfaceName();
        }

        /** {@return the interface's index in the namespace it was registered in} */
        public int interfaceIndex() {
            return queue.interfaceIndex();
        }

        /** {@return the hardware receive queue} */
        public int rxQueue() {
            return queue.rxQueue();
        }

        /** {@return the refill ring's entries, as the kernel sized the ring} */
        public int refillEntries() {
            return queue.refillEntries();
        }

        /** Closes the queue's ring, which makes the kernel release the RX queue; idempotent, owner only. */
        @Override
        public void close() {
            queue.close();
        }

        @Override
        public String toString() {
            return queue.toString();
        }
    }
}
