package io.zcnet.ring.sys;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@code struct io_uring_getevents_arg} ({@code include/uapi/linux/io_uring.h}), passed to
 * {@code io_uring_enter(2)} with {@code IORING_ENTER_EXT_ARG} and {@code argsz} = {@link #SIZE}.
 * <pre>
 * +-------------------------------+---------------+---------------+
 * |            sigmask            |  sigmask_sz   | min_wait_usec |  0
 * +-------------------------------+---------------+---------------+
 * |     ts (__kernel_timespec *)  |                                  16
 * +-------------------------------+                                  24
 * </pre>
 */
public final class GeteventsArg {
    private GeteventsArg() {
    }

    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            JAVA_LONG.withName("sigmask"),
            JAVA_INT.withName("sigmask_sz"),
            JAVA_INT.withName("min_wait_usec"),
            JAVA_LONG.withName("ts"));

    public static final long SIZE = LAYOUT.byteSize();
    public static final long SIGMASK = LAYOUT.byteOffset(groupElement("sigmask"));
    public static final long SIGMASK_SZ = LAYOUT.byteOffset(groupElement("sigmask_sz"));
    public static final long MIN_WAIT_USEC = LAYOUT.byteOffset(groupElement("min_wait_usec"));
    public static final long TS = LAYOUT.byteOffset(groupElement("ts"));
}
