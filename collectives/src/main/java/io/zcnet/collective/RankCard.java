package io.zcnet.collective;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;

/**
 * What a rank tells the others in the first rendezvous round: where it accepts queue pairs, the remote key
 * of its inbox (the staging memory peers write into), the slot geometry, which must be the same on every
 * rank, and what decides {@link CoreSharing}: the kernel it runs on, the processors it has there and its
 * configured choice (the ordinal of a {@link CoreSharing}). Encoded big-endian:
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * | address length|  address (4 bytes IPv4 or 16 bytes IPv6) ...  |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |             port              |         inbox rkey ...        |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |       ... inbox rkey          |            slots ...          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |          ... slots            |          slot bytes ...       |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |       ... slot bytes          |                               |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+                               +
 * |              kernel: the boot id, a UUID (16 bytes)           |
 * +                               +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                               |         processors ...        |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |       ... processors          |    sharing    |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 * (offsets after the address shift by its length).
 */
record RankCard(InetSocketAddress listen, int inboxKey, int slots, int slotBytes, UUID kernel, int processors,
        CoreSharing sharing) {

    /** Where Linux names the running kernel: one id per boot, the same in every namespace and container. */
    private static final CoreSharing[] SHARINGS = CoreSharing.values();
    private static final Path BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");

    /** The card of a rank of this JVM: its kernel and processors filled in. */
    static RankCard ofThisProcess(InetSocketAddress listen, int inboxKey, int slots, int slotBytes,
            CoreSharing sharing) {
        return new RankCard(listen, inboxKey, slots, slotBytes, thisKernel(), Runtime.getRuntime().availableProcessors(),
                sharing);
    }

    /**
     * The boot id of the kernel this JVM runs on; where there is none to read, a random one, so this rank
     * counts as alone on its kernel.
     */
    private static UUID thisKernel() {
        try {
            return UUID.fromString(Files.readString(BOOT_ID).strip());
        } catch (IOException | IllegalArgumentException | SecurityException e) {
            return UUID.randomUUID();
        }
    }

    byte[] encode() {
        byte[] address = listen.getAddress().getAddress();
        return ByteBuffer.allocate(1 + address.length + 2 + 12 + 16 + 4 + 1).put((byte) address.length).put(address)
                .putShort((short) listen.getPort()).putInt(inboxKey).putInt(slots).putInt(slotBytes)
                .putLong(kernel.getMostSignificantBits()).putLong(kernel.getLeastSignificantBits()).putInt(processors)
                .put((byte) sharing.ordinal()).array();
    }

    static RankCard decode(byte[] bytes, int rank) throws IOException {
        try {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            byte[] address = new byte[b.get()];
            b.get(address);
            int port = Short.toUnsignedInt(b.getShort());
            InetSocketAddress listen = new InetSocketAddress(InetAddress.getByAddress(address), port);
            int inboxKey = b.getInt();
            int slots = b.getInt();
            int slotBytes = b.getInt();
            UUID kernel = new UUID(b.getLong(), b.getLong());
            int processors = b.getInt();
            int sharing = b.get();
            if (processors < 1 || sharing < 0 || sharing >= SHARINGS.length) {
                throw new IOException("rank " + rank + "'s card is malformed: " + processors + " processors, sharing "
                        + sharing);
            }
            RankCard card = new RankCard(listen, inboxKey, slots, slotBytes, kernel, processors, SHARINGS[sharing]);
            if (b.hasRemaining()) {
                throw new IOException("rank " + rank + "'s card has " + b.remaining() + " bytes too many");
            }
            return card;
        } catch (BufferUnderflowException | NegativeArraySizeException | UnknownHostException e) {
            throw new IOException("rank " + rank + "'s card is malformed: " + e, e);
        }
    }
}
