package io.zcnet.qp;

import io.zcnet.framing.FrameHeader;
import io.zcnet.framing.Icrc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A header-only frame this side sends of its own, an ACKNOWLEDGE or a NAK, in memory of its own: written through
 * {@link #header()}, sealed with its ICRC when the queue pair uses one, then stamped with each subflow it leaves on
 * (the per-subflow fields lie outside the ICRC). The sender copies the header when it takes the frame, so one
 * serves every frame of its kind. Owner thread of the loop.
 */
final class ControlFrame {
    private final FrameHeader header = new FrameHeader();
    private final Icrc icrc;
    private final MemorySegment memory;
    private final boolean icrcEnabled;

    /** A frame sealed, when {@code icrcEnabled}, with the loop thread's {@code icrc}. */
    ControlFrame(Arena arena, boolean icrcEnabled, Icrc icrc) {
        this.memory = arena.allocate(64, 8);
        this.icrc = icrc;
        this.icrcEnabled = icrcEnabled;
    }

    /** {@return the frame's header, to write} */
    FrameHeader header() {
        return header.wrap(memory, 0);
    }

    /** Sets the ICRC over what {@link #header()} wrote, when the queue pair uses one. */
    void seal() {
        if (icrcEnabled) {
            header.wrap(memory, 0).icrc(icrc.compute(memory, 0));
        }
    }

    /** {@return the frame's bytes, {@link FrameHeader#LENGTH} of them} */
    MemorySegment memory() {
        return memory;
    }
}
