package io.zcnet.examples;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.QpContext;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;

/**
 * Memory registered with a queue-pair context for one run, freed only once nothing can write into it any
 * more: {@link #close()} deregisters every region, waiting while a placement still pins one (the kernel may
 * be receiving into it until the queue pair's sockets are closed), and frees the memory only if all of them
 * could be deregistered; otherwise it leaks it rather than let the kernel write into freed memory. Close the
 * queue pairs that use the regions first. Not thread-safe.
 */
final class RegionArena implements AutoCloseable {
    private static final long PIN_WAIT_NANOS = 5_000_000_000L;

    private final QpContext context;
    private final Arena arena = Arena.ofShared();
    private final List<MemoryRegion> regions = new ArrayList<>();

    RegionArena(QpContext context) {
        this.context = context;
    }

    /** Allocates {@code bytes} (zeroed, page-aligned) and registers them with every access right. */
    MemoryRegion register(long bytes) {
        MemoryRegion region = context.register(arena.allocate(bytes, 4096), Access.ALL);
        regions.add(region);
        return region;
    }

    @Override
    public void close() {
        long deadline = System.nanoTime() + PIN_WAIT_NANOS;
        for (MemoryRegion region : regions) {
            while (!deregister(region)) {
                if (System.nanoTime() - deadline > 0) {
                    return; // still lent to the kernel: leak the memory rather than free it under a write
                }
                Thread.onSpinWait();
                Thread.yield();
            }
        }
        arena.close();
    }

    private boolean deregister(MemoryRegion region) {
        if (!region.isValid()) {
            return true;
        }
        try {
            context.deregister(region);
            return true;
        } catch (IllegalStateException pinned) {
            return false;
        }
    }
}
