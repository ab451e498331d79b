package com.example.gettingstarted;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.QpListener;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.WorkCompletion;
import io.zcnet.qp.WorkRequest;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Accepts one queue pair, tells the peer where it may write, and prints what the peer's RDMA WRITE with
 * immediate put there. The bytes land in the registered region without this program reading the socket;
 * the immediate arrives in the completion of the receive the WRITE consumed.
 *
 * <p>Usage: {@code WriteReceiver [port]} (default 7000; 0 picks a free port).
 */
public final class WriteReceiver {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final long TARGET_OFFSET = 256;

    public static void main(String[] args) throws IOException, InterruptedException {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 7000;
        try (QpContext context = QpContext.open();
                Arena arena = Arena.ofShared(); // the context's loop thread reaches registered memory too
                QpListener listener = context.listen(new InetSocketAddress(port), QpConfig.defaults())) {
            MemoryRegion target = context.register(arena.allocate(4096), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            MemoryRegion where = context.register(arena.allocate(WriteTarget.BYTES), Access.LOCAL_WRITE);
            System.out.println("listening on port " + listener.address().getPort() + " (" + context.engine() + ")");

            QueuePair qp = listener.accept(WAIT);
            if (qp == null) {
                throw new IOException("no queue pair connected within " + WAIT);
            }
            try (qp) {
                // A WRITE with immediate consumes a posted receive: this one takes no bytes, only the immediate.
                qp.postReceive(1, target.localKey(), 0, 0);
                WriteTarget.put(where.segment(), target.remoteKey(), TARGET_OFFSET);
                qp.postSend(new WorkRequest().send(2, where.localKey(), 0, WriteTarget.BYTES));

                WorkCompletion wc = new WorkCompletion();
                for (int pending = 2; pending > 0; pending--) {
                    if (!qp.await(wc, WAIT) || !wc.isSuccess()) {
                        throw new IOException("queue pair failed: " + (wc.isSuccess() ? "timed out" : wc));
                    }
                    if (wc.opcode() == WorkCompletion.OP_RECV_RDMA_WITH_IMM) {
                        byte[] landed = target.segment().asSlice(TARGET_OFFSET, wc.byteCount())
                                .toArray(ValueLayout.JAVA_BYTE);
                        System.out.println("WRITE_WITH_IMM landed at offset " + TARGET_OFFSET + ": "
                                + wc.byteCount() + " bytes \"" + new String(landed, StandardCharsets.UTF_8)
                                + "\", immediate " + wc.immediate());
                    }
                }
            }
        }
    }
}
