package io.zcnet.buffer;

/**
 * Access rights of a {@link MemoryRegion}, as bit flags.
 *
 * <p>Modelled on {@code enum ibv_access_flags} of ibv_reg_mr(3): with no flag a region may only be read
 * locally (sent from); {@link #REMOTE_WRITE} requires {@link #LOCAL_WRITE}, as it does there, because a
 * region the peer may write is one the local side must be allowed to write too. Stateless, thread-safe.
 */
public final class Access {

    /** The local side may write the region (receive into it). */
    public static final int LOCAL_WRITE = 1;
    /** A peer may write the region (RDMA WRITE) through its remote key. */
    public static final int REMOTE_WRITE = 2;
    /** A peer may read the region (RDMA READ) through its remote key. */
    public static final int REMOTE_READ = 4;

    /** Every defined flag. */
    public static final int ALL = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ;

    private Access() {
    }

    /**
     * {@return whether {@code access} uses only defined flags and does not grant remote write without local write}
     *
     * @param access a combination of this class's flags
     */
    public static boolean isValid(int access) {
        return (access & ~ALL) == 0 && ((access & REMOTE_WRITE) == 0 || (access & LOCAL_WRITE) != 0);
    }

    /**
     * {@return whether {@code access} grants every right in {@code required}}
     *
     * @param access the rights a region has
     * @param required the rights an operation needs
     */
    public static boolean grants(int access, int required) {
        return (access & required) == required;
    }

    /**
     * {@return a readable form such as {@code LOCAL_WRITE|REMOTE_READ}; {@code NONE} for 0; undefined bits in hex}
     *
     * @param access a combination of this class's flags
     */
    public static String describe(int access) {
        if (access == 0) {
            return "NONE";
        }
        StringBuilder sb = new StringBuilder();
        append(sb, access, LOCAL_WRITE, "LOCAL_WRITE");
        append(sb, access, REMOTE_WRITE, "REMOTE_WRITE");
        append(sb, access, REMOTE_READ, "REMOTE_READ");
        int unknown = access & ~ALL;
        if (unknown != 0) {
            sb.append(sb.isEmpty() ? "" : "|").append("0x").append(Integer.toHexString(unknown));
        }
        return sb.toString();
    }

    private static void append(StringBuilder sb, int access, int flag, String name) {
        if ((access & flag) != 0) {
            sb.append(sb.isEmpty() ? "" : "|").append(name);
        }
    }
}
