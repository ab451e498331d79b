package io.zcnet.buffer;

/**
 * Results of {@link MemoryRegistry#checkRemote} and {@link MemoryRegistry#checkLocal}: {@link #OK} or the
 * first reason the access is refused, in the order they are checked.
 *
 * <p>Plain {@code int} codes so the check neither allocates nor throws on hostile input. They correspond
 * to the verbs "remote access error" causes (invalid R_Key, access rights, bounds). Stateless,
 * thread-safe.
 */
public final class AccessStatus {

    /** The access is allowed. */
    public static final int OK = 0;
    /** No region has this key: never issued, or issued for a slot that now holds another region. */
    public static final int INVALID_KEY = 1;
    /** The range is outside the region, negative, or {@code offset + length} overflows. */
    public static final int OUT_OF_BOUNDS = 2;
    /** The region does not grant the required rights. */
    public static final int NOT_PERMITTED = 3;
    /** The key belonged to a region that was deregistered (or whose memory was freed). */
    public static final int DEREGISTERED = 4;

    private static final String[] NAMES = {"OK", "INVALID_KEY", "OUT_OF_BOUNDS", "NOT_PERMITTED", "DEREGISTERED"};

    private AccessStatus() {
    }

    /**
     * {@return the constant's name, or {@code UNKNOWN(n)}}
     *
     * @param status one of this class's constants, or any int
     */
    public static String name(int status) {
        return status >= 0 && status < NAMES.length ? NAMES[status] : "UNKNOWN(" + status + ")";
    }
}
