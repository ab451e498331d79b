package io.zcnet.ring.sys;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@code struct msghdr} ({@code include/linux/socket.h} user layout, 56 bytes on 64-bit), what
 * {@code IORING_OP_SENDMSG} and {@code IORING_OP_SENDMSG_ZC} read through {@code sqe->addr}:
 *
 * <pre>
 *  0        8            16         24            32            40              48          56
 * +--------+------------+----------+-------------+-------------+---------------+-----------+
 * |msg_name|msg_namelen |msg_iov   |msg_iovlen   |msg_control  |msg_controllen |msg_flags  |
 * | ptr    | u32 + pad  | ptr      | size_t      | ptr         | size_t        | i32 + pad |
 * +--------+------------+----------+-------------+-------------+---------------+-----------+
 * </pre>
 */
public final class MsgHdr {
    private MsgHdr() {
    }

    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            JAVA_LONG.withName("msg_name"),
            JAVA_INT.withName("msg_namelen"),
            MemoryLayout.paddingLayout(4),
            JAVA_LONG.withName("msg_iov"),
            JAVA_LONG.withName("msg_iovlen"),
            JAVA_LONG.withName("msg_control"),
            JAVA_LONG.withName("msg_controllen"),
            JAVA_INT.withName("msg_flags"),
            MemoryLayout.paddingLayout(4));

    public static final long SIZE = LAYOUT.byteSize();
    public static final long MSG_NAME = LAYOUT.byteOffset(groupElement("msg_name"));
    public static final long MSG_IOV = LAYOUT.byteOffset(groupElement("msg_iov"));
    public static final long MSG_IOVLEN = LAYOUT.byteOffset(groupElement("msg_iovlen"));
    public static final long MSG_CONTROL = LAYOUT.byteOffset(groupElement("msg_control"));
    public static final long MSG_FLAGS = LAYOUT.byteOffset(groupElement("msg_flags"));
}
