package io.zcnet.ring;

import io.zcnet.ring.sys.Native;

/**
 * The CPU the calling thread runs on ({@code sched_getcpu(3)}), for code that adapts to where the scheduler
 * put it, such as ranks sharing one machine's cores. A hint, not a binding: the thread may move right after.
 * A few nanoseconds, no system call (the kernel keeps it in the thread's rseq area or the vDSO reads it).
 */
public final class CurrentCpu {
    private CurrentCpu() {
    }

    /** {@return the CPU's number, from 0; -1 where it cannot be read (native access refused)} */
    public static int get() {
        return Native.currentCpu();
    }
}
