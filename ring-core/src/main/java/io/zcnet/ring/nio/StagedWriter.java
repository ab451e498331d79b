package io.zcnet.ring.nio;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * Writes a gathered send without {@code SocketChannel.write(ByteBuffer[])}: the JDK allocates two
 * objects per buffer of every gathering write whose buffers are views of memory segments (a releaser of
 * the segment's session and a link in a list of them), and every zcnet buffer is such a view. A single
 * buffer's write allocates nothing, so each step writes one buffer:
 * <ul>
 *   <li>a piece with at least {@link #DIRECT_MIN} bytes left is written straight from its own memory;</li>
 *   <li>smaller pieces (frame headers, small messages) are copied together into a staging buffer and
 *       written at once. A large piece after them lends its first bytes to fill the staged write to
 *       {@link #FILL_TO}, so a header does not leave as a packet of its own.</li>
 * </ul>
 * The staging buffer is {@link ByteBuffer#allocateDirect} memory, which has no segment session. Nothing is
 * kept between steps: a step starts from the operation's {@code done}, so one staging buffer serves every
 * socket of the loop. Owner-thread only.
 */
final class StagedWriter {
    /** Below this, a piece's bytes are copied rather than given a system call of their own. */
    static final int DIRECT_MIN = 16 * 1024;
    /** A staged write takes the head of a following large piece up to this many bytes in all. */
    static final int FILL_TO = 4096;
    static final int STAGING_BYTES = 64 * 1024;

    private final ByteBuffer staging = ByteBuffer.allocateDirect(STAGING_BYTES);
    private final MemorySegment stagingMemory = MemorySegment.ofBuffer(staging);
    private int attempted;

    /**
     * Writes the next step of {@code pieces} from byte {@code done} of the send on: returns the bytes the
     * socket took (0 when its buffer is full). {@link #attempted()} then says how many were offered; fewer
     * taken means the socket is full.
     *
     * @throws IllegalStateException when a piece's memory was freed under the send
     */
    int write(SocketChannel channel, GatherPieces pieces, int done) throws IOException {
        int i = 0;
        int skip = done;
        while (skip >= pieces.length(i)) { // done < the send's length, so a piece with bytes left exists
            skip -= pieces.length(i);
            i++;
        }
        int left = pieces.length(i) - skip;
        if (left >= DIRECT_MIN) {
            attempted = left;
            return channel.write(pieces.view(i, skip));
        }
        int staged = 0;
        while (i < pieces.count()) {
            int take = Math.min(left, STAGING_BYTES - staged);
            boolean large = left >= DIRECT_MIN;
            if (large) {
                take = Math.min(take, Math.max(0, FILL_TO - staged));
            }
            MemorySegment.copy(pieces.segment(i), pieces.offset(i) + skip, stagingMemory, staged, take);
            staged += take;
            if (take < left || large) {
                break;
            }
            if (++i < pieces.count()) {
                skip = 0;
                left = pieces.length(i);
            }
        }
        attempted = staged;
        staging.limit(staged).position(0);
        return channel.write(staging);
    }

    /** The bytes the last {@link #write} offered the socket. */
    int attempted() {
        return attempted;
    }
}
