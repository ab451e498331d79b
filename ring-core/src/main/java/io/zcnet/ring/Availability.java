package io.zcnet.ring;

/**
 * Whether an engine can run here, and if not, why, in one line a user can act on.
 *
 * @param usable whether the engine works on this machine
 * @param reason why not ("" when usable), e.g. "io_uring_setup: EPERM (blocked by seccomp or
 *               kernel.io_uring_disabled=2)"
 */
public record Availability(boolean usable, String reason) {
    public static final Availability USABLE = new Availability(true, "");

    /**
     * {@return an unusable engine, for {@code reason}}
     *
     * @param reason why, in one line a user can act on
     */
    public static Availability unusable(String reason) {
        return new Availability(false, reason);
    }
}
