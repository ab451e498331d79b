package io.zcnet.ring.uring;

import io.zcnet.ring.EngineKind;
import io.zcnet.ring.internal.Counters;
import io.zcnet.ring.sys.ErrnoException;
import io.zcnet.ring.sys.IoUring;
import io.zcnet.ring.sys.Linux;
import io.zcnet.ring.sys.Native;
import io.zcnet.ring.sys.Zcrx;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

/**
 * A zcrx interface queue (io_uring zero-copy receive, Linux 6.15+): one RX queue of a NIC bound to a
 * caller's memory area through its own io_uring instance, with the refill ring mapped and ready.
 *
 * <h2>What the kernel requires, and how this class meets it</h2>
 * <ul>
 * <li>A ring of its own, set up with exactly {@link #RING_FLAGS}: the kernel refuses the registration
 *     with EINVAL on a ring without {@code DEFER_TASKRUN} or without 32-byte CQEs, and zcnet's event loop
 *     ring may have negotiated {@code DEFER_TASKRUN} away and never has {@code CQE32}
 *     ({@link Ring#openExact}: nothing is dropped here).</li>
 * <li>The area: page-aligned user memory, a page multiple, given by the caller and pinned by the
 *     kernel; checked here first ({@link #checkArguments}, {@link #register}).</li>
 * <li>The refill ring: user memory ({@code IORING_MEM_REGION_TYPE_USER}) of one header page plus
 *     {@code entries * 16} bytes rounded up to pages, mapped anonymously here so that nothing else of the
 *     process ever shares its pages, and read through the offsets the kernel returns
 *     ({@link ZcrxRefillRing}, which checks them against the region).</li>
 * <li>{@code CAP_NET_ADMIN}, a device with a parent and queue-management ops, {@code tcp-data-split} on
 *     and {@code hds-thresh} 0: the kernel checks these and answers with an errno, which
 *     {@link ZcrxRefusals} turns into a reason.</li>
 * </ul>
 *
 * <h2>Threading and lifetime</h2>
 * Confined to the thread that registered it: the ring's {@code SINGLE_ISSUER} made that thread its only
 * submitter, {@code DEFER_TASKRUN} runs completions only when that thread enters the ring, and the
 * scratch arena is confined to it. {@link #close} closes the ring, which is the only way 6.18 offers to
 * release a zcrx queue; the kernel then restores the RX queue and unpins the area and the refill ring
 * in its ring teardown, which runs asynchronously after the close (inferred from the kernel's ring
 * exit path, not observable here). The refill ring is unmapped at once, which is safe because the kernel
 * holds its own page references; the caller's area must not be handed to other uses until the
 * kernel is done with it, and is safest when it is memory the caller unmaps rather than recycles.
 *
 * <p>Only registration attempts and their refusals have run on the machine this was written on; no
 * device there can register a queue, so the success path beyond {@code io_uring_register} has not.
 */
public final class ZcrxQueue implements AutoCloseable {
    /** Setup flags of the dedicated ring: what {@code io_register_zcrx_ifq} demands, plus a CQ size of ours. */
    static final int RING_FLAGS = IoUring.SETUP_CQE32 | IoUring.SETUP_DEFER_TASKRUN | IoUring.SETUP_SINGLE_ISSUER
            | IoUring.SETUP_CQSIZE;
    /** SQ entries of the dedicated ring: it carries one multishot RECV_ZC per socket and little else. */
    static final int SQ_ENTRIES = 64;
    /** The largest area whose offsets fit the 48 bits a CQE has for them. */
    static final long AREA_MAX = 1L << Zcrx.AREA_SHIFT;

    private final Thread owner;
    private final Arena arena;
    private final Native sys;
    private final Ring ring;
    private final String interfaceName;
    private final int interfaceIndex;
    private final int rxQueue;
    private final MemorySegment area;
    private final MemorySegment refillRegion;
    private final int zcrxId;
    private final ZcrxRefillRing refill;
    private boolean closed;

    private ZcrxQueue(Arena arena, Native sys, Ring ring, String interfaceName, int interfaceIndex, int rxQueue,
            MemorySegment area, MemorySegment refillRegion, ZcrxRegistration registration) {
        this.owner = Thread.currentThread();
        this.arena = arena;
        this.sys = sys;
        this.ring = ring;
        this.interfaceName = interfaceName;
        this.interfaceIndex = interfaceIndex;
        this.rxQueue = rxQueue;
        this.area = area;
        this.refillRegion = refillRegion;
        this.zcrxId = registration.zcrxId();
        this.refill = new ZcrxRefillRing(refillRegion, registration.headOffset(), registration.tailOffset(),
                registration.rqesOffset(), registration.refillEntries(), registration.areaToken(), area.byteSize());
    }

    /**
     * Checks what can be checked without the kernel, so that a caller's mistake is an exception and not
     * a refusal: the interface name as the kernel would accept one ({@code dev_valid_name}), the queue
     * index, the refill entries (a power of two up to {@link Zcrx#RQ_MAX_ENTRIES}) and the area (native,
     * writable, alive, not empty, at most {@link #AREA_MAX} bytes). Page alignment is checked by
     * {@link #register}, which knows the page size.
     *
     * @throws IllegalArgumentException naming the argument and what is wrong with it
     */
    public static void checkArguments(String interfaceName, int rxQueue, MemorySegment area, int refillEntries) {
        if (interfaceName == null || interfaceName.isBlank()) {
            throw new IllegalArgumentException("interface name is " + (interfaceName == null ? "null" : "blank"));
        }
        int bytes = interfaceName.getBytes(StandardCharsets.UTF_8).length;
        if (bytes >= Linux.IFNAMSIZ || interfaceName.equals(".") || interfaceName.equals("..")
                || interfaceName.chars().anyMatch(c -> c == '/' || c == ':' || c == 0 || Character.isWhitespace(c))) {
            throw new IllegalArgumentException("\"" + interfaceName + "\" cannot be an interface name (at most "
                    + (Linux.IFNAMSIZ - 1) + " bytes, no '/', ':', NUL or whitespace, not . or ..)");
        }
        if (rxQueue < 0) {
            throw new IllegalArgumentException("rx queue must be >= 0, got " + rxQueue);
        }
        if (refillEntries <= 0 || refillEntries > Zcrx.RQ_MAX_ENTRIES || Integer.bitCount(refillEntries) != 1) {
            throw new IllegalArgumentException("refill entries must be a power of two in [1, " + Zcrx.RQ_MAX_ENTRIES
                    + "], got " + refillEntries);
        }
        if (area == null) {
            throw new IllegalArgumentException("area is null");
        }
        if (!area.isNative() || area.isReadOnly() || !area.scope().isAlive()) {
            throw new IllegalArgumentException("area must be live, writable native memory, got " + area);
        }
        if (area.byteSize() == 0 || area.byteSize() > AREA_MAX) {
            throw new IllegalArgumentException("area must hold 1 to 2^" + Zcrx.AREA_SHIFT + " bytes, got "
                    + area.byteSize());
        }
    }

    /**
     * Registers RX queue {@code rxQueue} of {@code interfaceName} (in the calling thread's network
     * namespace) to receive into {@code area}, on a ring of its own. The calling thread becomes the
     * queue's owner.
     *
     * @param refillEntries refill ring entries: buffers handed back to the kernel before it must wait
     * @throws IllegalArgumentException see {@link #checkArguments}; also if the area is not page-aligned
     *                                  or not a page multiple
     * @throws ErrnoException           the step that failed ({@code if_nametoindex}, {@code io_uring_setup},
     *                                  {@code mmap}, {@code io_uring_register(ZCRX_IFQ)}) and its errno;
     *                                  nothing is left registered, mapped or open
     */
    public static ZcrxQueue register(String interfaceName, int rxQueue, MemorySegment area, int refillEntries)
            throws ErrnoException {
        checkArguments(interfaceName, rxQueue, area, refillEntries);
        long page = Native.pageSize();
        if (area.address() % page != 0 || area.byteSize() % page != 0) {
            throw new IllegalArgumentException("area must start on a page boundary and span whole pages of "
                    + page + " bytes, got address 0x" + Long.toHexString(area.address()) + " size " + area.byteSize());
        }
        Arena arena = Arena.ofConfined();
        Native sys = null;
        Ring ring = null;
        MemorySegment region = null;
        try {
            sys = new Native(arena);
            int ifIndex = sys.ifNameToIndex(arena.allocateFrom(interfaceName));
            if (ifIndex < 0) {
                throw new ErrnoException(ZcrxRefusals.NAME_LOOKUP, ifIndex, interfaceName);
            }
            ring = Ring.openExact(sys, arena, new Counters(EngineKind.URING), SQ_ENTRIES,
                    Math.max(SQ_ENTRIES, refillEntries), RING_FLAGS);
            region = mapRefillRegion(sys, refillRegionSize(refillEntries, page));
            ZcrxRegistration registration = new ZcrxRegistration(arena)
                    .queue(ifIndex, rxQueue)
                    .area(area.address(), area.byteSize())
                    .refillRing(region.address(), region.byteSize(), refillEntries);
            int r = registration.register(sys, ring.fd());
            if (r < 0) {
                throw new ErrnoException(ZcrxRefusals.REGISTER, r, interfaceName + " rx queue " + rxQueue);
            }
            return new ZcrxQueue(arena, sys, ring, interfaceName, ifIndex, rxQueue, area, region, registration);
        } catch (ErrnoException | RuntimeException e) {
            // After a failed registration the kernel has already let go of everything (its error path
            // frees the queue before returning); after a refused offset check, closing the ring does.
            if (ring != null) {
                ring.close();
            }
            if (region != null) {
                sys.munmap(region.address(), region.byteSize());
            }
            arena.close();
            throw e;
        }
    }

    /** One header page (head and tail, each on its own cache line) and the entries, in whole pages. */
    static long refillRegionSize(int entries, long page) {
        long rqes = (long) entries * Zcrx.RQE.byteSize();
        return page + (rqes + page - 1) / page * page;
    }

    private static MemorySegment mapRefillRegion(Native sys, long size) throws ErrnoException {
        long address = sys.mmap(size, Linux.PROT_READ | Linux.PROT_WRITE, Linux.MAP_PRIVATE | Linux.MAP_ANONYMOUS,
                -1, 0);
        if (address < 0 && address > -4096) {
            throw new ErrnoException("mmap refill ring", (int) address, size + " bytes");
        }
        return Native.view(address, size);
    }

    public String interfaceName() {
        return interfaceName;
    }

    public int interfaceIndex() {
        return interfaceIndex;
    }

    public int rxQueue() {
        return rxQueue;
    }

    public int refillEntries() {
        return refill.entries();
    }

    /**
     * Closes the ring (the kernel releases the RX queue, the area and the refill ring as it tears the ring
     * down) and unmaps the refill ring. Idempotent; owner thread only.
     *
     * @throws IllegalStateException on another thread
     */
    @Override
    public void close() {
        checkOwner();
        if (closed) {
            return;
        }
        closed = true;
        ring.close();
        sys.munmap(refillRegion.address(), refillRegion.byteSize());
        arena.close();
    }

    private void checkOwner() {
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("zcrx queue " + interfaceName + "/" + rxQueue + " belongs to " + owner
                    + ", called from " + Thread.currentThread());
        }
    }

    @Override
    public String toString() {
        return "ZcrxQueue[" + interfaceName + "(" + interfaceIndex + ") rxq=" + rxQueue + " zcrx_id=" + zcrxId
                + " area=" + area.byteSize() + "B " + (closed ? "closed" : refill.toString()) + "]";
    }
}
