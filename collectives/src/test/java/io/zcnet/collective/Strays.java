package io.zcnet.collective;

import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.WorkRequest;

import java.io.DataInputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Strangers that hit a rendezvous store or a rank's listener over real sockets, kept open until {@link #close()}:
 * silent connections, garbage, rendezvous clients that claim a rank without proving the job secret, and queue
 * pairs that never say which rank they are. Counts how many it sent. One thread.
 */
final class Strays implements AutoCloseable {
    private final List<AutoCloseable> open = new ArrayList<>();
    private final Random random = new Random(33);
    private int sent;

    int sent() {
        return sent;
    }

    /** A connection that says nothing. */
    void silent(InetSocketAddress at) throws IOException {
        open.add(new Socket(at.getAddress(), at.getPort()));
        sent++;
    }

    /** A connection that sends random bytes and then nothing. */
    void garbage(InetSocketAddress at) throws IOException {
        Socket s = new Socket(at.getAddress(), at.getPort());
        open.add(s);
        byte[] bytes = new byte[1 + random.nextInt(200)];
        random.nextBytes(bytes);
        s.getOutputStream().write(bytes);
        sent++;
    }

    /**
     * A rendezvous client that claims {@code rank} of {@code size} with a proof under {@code secret} (null: the
     * zeros of no secret) and waits for the store's answer: true if the store refused it (FAILED), false if the
     * store took it as the rank (it answered nothing within {@code waitMillis}).
     */
    boolean claim(InetSocketAddress store, int rank, int size, byte[] secret, int waitMillis) throws IOException {
        Socket s = new Socket(store.getAddress(), store.getPort());
        open.add(s);
        sent++;
        byte[] header = ByteBuffer.allocate(RendezvousServer.HEADER_BYTES).putInt(RendezvousServer.MAGIC)
                .putShort((short) RendezvousServer.VERSION).putInt(rank).putInt(size).array();
        s.getOutputStream().write(header);
        s.setSoTimeout(waitMillis);
        DataInputStream in = new DataInputStream(s.getInputStream());
        byte[] nonce = in.readNBytes(MembershipProof.NONCE_BYTES);
        s.getOutputStream().write(MembershipProof.of(secret, nonce, header));
        try {
            return in.read() == RendezvousServer.FAILED;
        } catch (java.net.SocketTimeoutException taken) {
            return false;
        }
    }

    /**
     * A queue pair opened from {@code context} with {@code config} (its pre-shared key, if any, the stray's own);
     * once established, it sends {@code immediate} as its first message, unless that is null. Returns whether the
     * listener let it open at all.
     */
    boolean queuePair(QpContext context, InetSocketAddress at, QpConfig config, Integer immediate) {
        sent++;
        QueuePair qp;
        try {
            qp = context.connect(at, config);
        } catch (IOException refused) {
            return false;
        }
        open.add(qp);
        if (immediate != null) {
            MemoryRegion empty = context.register(Arena.ofAuto().allocate(64), 0);
            qp.postSend(new WorkRequest().sendWithImmediate(7, empty.localKey(), 0, 0, immediate));
        }
        return true;
    }

    @Override
    public void close() throws Exception {
        for (AutoCloseable c : open) {
            c.close();
        }
    }
}
