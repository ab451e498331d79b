package io.zcnet.examples;

import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.QpListener;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.WorkCompletion;
import io.zcnet.qp.WorkRequest;
import io.zcnet.ring.EventLoopConfig;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.zip.CRC32C;

/**
 * The queue-pair part of {@code zcnet demo}: two contexts of this process (two loop threads) joined by a
 * queue pair over three loopback subflows; a SEND into a posted receive, a WRITE with immediate into the
 * server's region, a READ of it back and a SEND of inline data from a heap array, each printed with where
 * its bytes landed and the CRC32C of both ends. The calling thread posts and polls.
 */
final class QueuePairDemo {
    private static final int SUBFLOWS = 3;
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final int SEND_BYTES = 4096;
    private static final int WRITE_BYTES = 256 * 1024;
    private static final long SEND_AT = 0;
    private static final long WRITE_AT = 64 * 1024;
    private static final long RECEIVE_AT = 8192;
    private static final long PLACED_AT = 1 << 20;
    private static final long READ_INTO = 2 << 20;
    private static final int IMMEDIATE = 0xC0FFEE;
    private static final int INLINE_BYTES = 64;
    private static final long INLINE_RECEIVE_AT = 3 << 20;

    private final PrintStream out;
    private final QueuePair client;
    private final QueuePair server;
    private final MemoryRegion clientRegion;
    private final MemoryRegion serverRegion;
    private final WorkRequest wr = new WorkRequest();
    private final WorkCompletion wc = new WorkCompletion();

    private QueuePairDemo(PrintStream out, QueuePair client, QueuePair server, MemoryRegion clientRegion,
            MemoryRegion serverRegion) {
        this.out = out;
        this.client = client;
        this.server = server;
        this.clientRegion = clientRegion;
        this.serverRegion = serverRegion;
    }

    /** Runs the four steps on {@code engine}; false (with the reason printed) if any of them failed. */
    static boolean run(EventLoopConfig.Choice engine, PrintStream out) throws IOException, InterruptedException {
        try (QpContext serverContext = QpContext.open(engine); QpContext clientContext = QpContext.open(engine);
                QpListener listener = serverContext.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                        QpConfig.defaults());
                RegionArena serverMemory = new RegionArena(serverContext);
                RegionArena clientMemory = new RegionArena(clientContext);
                QueuePair client = clientContext.connect(listener.address(),
                        QpConfig.defaults().withSubflows(SUBFLOWS).withMaxInlineData(INLINE_BYTES))) {
            QueuePair server = listener.accept(WAIT);
            if (server == null) {
                out.println("queue pairs: the listener accepted nothing in " + WAIT.toSeconds() + " s");
                return false;
            }
            try (server) {
                out.println("queue pairs (" + clientContext.engine().name().toLowerCase(Locale.ROOT) + ", "
                        + client.liveSubflows() + " subflows on loopback):");
                return new QueuePairDemo(out, client, server, clientMemory.register(4 << 20),
                        serverMemory.register(4 << 20)).steps();
            }
        }
    }

    private boolean steps() {
        return send() && writeWithImmediate() && read() && sendInline();
    }

    /** A SEND lands in the receive the server posted. */
    private boolean send() {
        MessagePattern.fill(clientRegion.segment(), SEND_AT, SEND_BYTES, 1);
        server.postReceive(7, serverRegion.localKey(), RECEIVE_AT, SEND_BYTES);
        client.postSend(wr.send(1, clientRegion.localKey(), SEND_AT, SEND_BYTES));
        if (!next(server, WorkCompletion.OP_RECV, 7) || !next(client, WorkCompletion.OP_SEND, 1)) {
            return false;
        }
        return report(String.format(Locale.ROOT, "SEND            %6d B  client @%-7d -> server receive 7 @%d",
                SEND_BYTES, SEND_AT, RECEIVE_AT), clientRegion, SEND_AT, serverRegion, RECEIVE_AT, SEND_BYTES);
    }

    /** A WRITE with immediate lands in the server's region; its immediate completes a receive there. */
    private boolean writeWithImmediate() {
        MessagePattern.fill(clientRegion.segment(), WRITE_AT, WRITE_BYTES, 2);
        server.postReceive(8, serverRegion.localKey(), 0, 0);
        client.postSend(wr.writeWithImmediate(2, clientRegion.localKey(), WRITE_AT, WRITE_BYTES,
                serverRegion.remoteKey(), PLACED_AT, IMMEDIATE));
        if (!next(server, WorkCompletion.OP_RECV_RDMA_WITH_IMM, 8)) {
            return false;
        }
        int immediate = wc.immediate();
        if (!next(client, WorkCompletion.OP_RDMA_WRITE, 2)) {
            return false;
        }
        return report(String.format(Locale.ROOT, "WRITE_WITH_IMM  %6d B  client @%-7d -> server region @%d,"
                + " immediate 0x%x in receive 8", WRITE_BYTES, WRITE_AT, PLACED_AT, immediate),
                clientRegion, WRITE_AT, serverRegion, PLACED_AT, WRITE_BYTES) && immediate == IMMEDIATE;
    }

    /** A READ copies the server's region back into the client's. */
    private boolean read() {
        client.postSend(wr.read(3, clientRegion.localKey(), READ_INTO, WRITE_BYTES, serverRegion.remoteKey(),
                PLACED_AT));
        if (!next(client, WorkCompletion.OP_RDMA_READ, 3)) {
            return false;
        }
        return report(String.format(Locale.ROOT, "READ            %6d B  server @%-7d -> client @%d", WRITE_BYTES,
                PLACED_AT, READ_INTO), serverRegion, PLACED_AT, clientRegion, READ_INTO, WRITE_BYTES);
    }

    /** A SEND of inline data: bytes of a heap array, registered nowhere, copied when posted and cleared at once. */
    private boolean sendInline() {
        byte[] bytes = new byte[INLINE_BYTES];
        MemorySegment heap = MemorySegment.ofArray(bytes);
        MessagePattern.fill(heap, 0, INLINE_BYTES, 4);
        long source = crc(heap);
        server.postReceive(9, serverRegion.localKey(), INLINE_RECEIVE_AT, INLINE_BYTES);
        client.postSend(wr.send(4).inline(heap, 0, INLINE_BYTES));
        Arrays.fill(bytes, (byte) 0);
        if (!next(server, WorkCompletion.OP_RECV, 9) || !next(client, WorkCompletion.OP_SEND, 4)) {
            return false;
        }
        long landed = crc(serverRegion.segment().asSlice(INLINE_RECEIVE_AT, INLINE_BYTES));
        out.println(String.format(Locale.ROOT, "  SEND inline     %6d B  heap array, cleared once posted ->"
                + " server receive 9 @%d  crc32c %08x -> %08x %s", INLINE_BYTES, INLINE_RECEIVE_AT, source, landed,
                source == landed ? "ok" : "DIFFERENT"));
        return source == landed;
    }

    /** Waits for {@code qp}'s next completion and checks it is the successful {@code opcode} of {@code id}. */
    private boolean next(QueuePair qp, int opcode, long id) {
        if (!qp.await(wc, WAIT)) {
            out.println("  no completion of work request " + id + " in " + WAIT.toSeconds() + " s: " + qp);
            return false;
        }
        if (!wc.isSuccess() || wc.opcode() != opcode || wc.workRequestId() != id) {
            out.println("  expected a successful " + WorkCompletion.opcodeName(opcode) + " of " + id + ", got " + wc
                    + " (" + qp.statistics().errorReason() + ")");
            return false;
        }
        return true;
    }

    /** Prints {@code what} with the CRC32C of the source and of where it landed; true if they agree. */
    private boolean report(String what, MemoryRegion from, long fromOffset, MemoryRegion to, long toOffset, int length) {
        long source = crc(from.segment().asSlice(fromOffset, length));
        long landed = crc(to.segment().asSlice(toOffset, length));
        out.println(String.format(Locale.ROOT, "  %s  crc32c %08x -> %08x %s", what, source, landed,
                source == landed ? "ok" : "DIFFERENT"));
        return source == landed;
    }

    private static long crc(MemorySegment bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes.asByteBuffer());
        return crc.getValue();
    }
}
