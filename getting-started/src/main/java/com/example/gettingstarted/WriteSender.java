package com.example.gettingstarted;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.WorkCompletion;
import io.zcnet.qp.WorkRequest;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Connects a queue pair to a {@link WriteReceiver}, receives where it may write, and writes a message
 * there with an RDMA WRITE with immediate. The WRITE completes once the receiver has the bytes in place.
 *
 * <p>Usage: {@code WriteSender host port message [immediate]} (immediate 42 by default).
 */
public final class WriteSender {
    private static final Duration WAIT = Duration.ofSeconds(30);

    public static void main(String[] args) throws IOException {
        InetSocketAddress receiver = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
        byte[] message = args[2].getBytes(StandardCharsets.UTF_8);
        int immediate = args.length > 3 ? Integer.parseInt(args[3]) : 42;
        try (QpContext context = QpContext.open(); Arena arena = Arena.ofShared()) {
            MemorySegment bytes = arena.allocate(message.length);
            MemorySegment.copy(message, 0, bytes, ValueLayout.JAVA_BYTE, 0, message.length);
            MemoryRegion source = context.register(bytes, 0); // 0: no rights beyond local reads, all a WRITE needs
            MemoryRegion where = context.register(arena.allocate(WriteTarget.BYTES), Access.LOCAL_WRITE);

            try (QueuePair qp = context.connect(receiver, QpConfig.defaults())) {
                WorkCompletion wc = new WorkCompletion();
                qp.postReceive(1, where.localKey(), 0, WriteTarget.BYTES);
                expect(qp, wc, WorkCompletion.OP_RECV);
                int remoteKey = WriteTarget.remoteKey(where.segment());
                long offset = WriteTarget.offset(where.segment());

                qp.postSend(new WorkRequest().writeWithImmediate(2, source.localKey(), 0, message.length,
                        remoteKey, offset, immediate));
                expect(qp, wc, WorkCompletion.OP_RDMA_WRITE);
                System.out.println("wrote " + message.length + " bytes at offset " + offset + " with immediate "
                        + immediate);
            }
        }
    }

    private static void expect(QueuePair qp, WorkCompletion wc, int opcode) throws IOException {
        if (!qp.await(wc, WAIT)) {
            throw new IOException("no completion within " + WAIT);
        }
        if (!wc.isSuccess() || wc.opcode() != opcode) {
            throw new IOException("expected a successful " + WorkCompletion.opcodeName(opcode) + ", got " + wc);
        }
    }
}
