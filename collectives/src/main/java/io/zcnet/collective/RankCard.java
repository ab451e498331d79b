package io.zcnet.collective;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;

/**
 * What a rank tells the others in the first rendezvous round: where it accepts queue pairs, the remote key
 * of its inbox (the staging memory peers write into) and the slot geometry, which must be the same on
 * every rank. Encoded big-endian:
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
 * |       ... slot bytes          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 * (offsets after the address shift by its length).
 */
record RankCard(InetSocketAddress listen, int inboxKey, int slots, int slotBytes) {

    byte[] encode() {
        byte[] address = listen.getAddress().getAddress();
        return ByteBuffer.allocate(1 + address.length + 2 + 12).put((byte) address.length).put(address)
                .putShort((short) listen.getPort()).putInt(inboxKey).putInt(slots).putInt(slotBytes).array();
    }

    static RankCard decode(byte[] bytes, int rank) throws IOException {
        try {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            byte[] address = new byte[b.get()];
            b.get(address);
            int port = Short.toUnsignedInt(b.getShort());
            RankCard card = new RankCard(new InetSocketAddress(InetAddress.getByAddress(address), port), b.getInt(),
                    b.getInt(), b.getInt());
            if (b.hasRemaining()) {
                throw new IOException("rank " + rank + "'s card has " + b.remaining() + " bytes too many");
            }
            return card;
        } catch (BufferUnderflowException | NegativeArraySizeException | UnknownHostException e) {
            throw new IOException("rank " + rank + "'s card is malformed: " + e, e);
        }
    }
}
