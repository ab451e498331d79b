package io.zcnet.qp;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.ring.EventLoopConfig;

import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.BitSet;

/**
 * The far end of the multipath tests, run as its own process inside a network namespace: listens, prints
 * {@code READY port=P rkey=K}, accepts one queue pair and checks every RDMA WRITE with immediate that
 * lands: the immediate is the message's number, the message's bytes at {@code number * size} of its
 * region must be {@link #pattern} of that number, and no number may complete twice. An immediate of -1
 * ends the run with {@code DONE verified=N mismatches=M duplicates=D}.
 *
 * <pre>MultipathPeer ENGINE MESSAGE_SIZE MESSAGES SILENCE_MILLIS</pre>
 */
public final class MultipathPeer {
    private MultipathPeer() {
    }

    /** The byte at {@code offset} of message {@code number}. */
    static byte pattern(int number, int offset) {
        return (byte) (number * 31 + offset * 7 + (offset >>> 9));
    }

    /** Prints every refused subflow handshake, for the test's diagnostics. */
    private static void reportRefusals(QpListener listener) {
        long seen = 0;
        while (true) {
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                return;
            }
            if (listener.refused() != seen) {
                seen = listener.refused();
                System.out.println("REFUSED " + seen + ": " + listener.lastRefusal());
            }
        }
    }

    public static void main(String[] args) throws Exception {
        EventLoopConfig.Choice engine = EventLoopConfig.parseChoice(args[0]);
        int size = Integer.parseInt(args[1]);
        int messages = Integer.parseInt(args[2]);
        QpConfig config = QpConfig.defaults().withMaxSubflows(8)
                .withTimeouts(Duration.ofSeconds(10), Duration.ofMillis(Long.parseLong(args[3])));
        try (QpContext context = QpContext.open(engine); Arena arena = Arena.ofShared()) {
            MemoryRegion region = context.register(arena.allocate((long) size * messages, 4096), Access.ALL);
            QpListener listener = context.listen(new InetSocketAddress("0.0.0.0", 0), config);
            Thread.ofPlatform().daemon().start(() -> reportRefusals(listener));
            System.out.println("READY port=" + listener.address().getPort() + " rkey=" + region.remoteKey());
            System.out.flush();
            QueuePair qp = listener.accept(Duration.ofSeconds(60));
            if (qp == null) {
                System.out.println("FAILED no queue pair");
                return;
            }
            int depth = qp.config().receiveQueueDepth();
            for (int i = 0; i < depth; i++) {
                qp.postReceive(i, region.localKey(), 0, 0);
            }
            BitSet seen = new BitSet(messages);
            long verified = 0;
            long mismatches = 0;
            long duplicates = 0;
            WorkCompletion wc = new WorkCompletion();
            while (true) {
                if (!qp.await(wc, Duration.ofSeconds(60))) {
                    System.out.println("FAILED no completion in 60 s: " + qp.statistics());
                    return;
                }
                if (!wc.isSuccess()) {
                    System.out.println("FAILED " + wc + ": " + qp.statistics());
                    return;
                }
                int number = wc.immediate();
                if (number == -1) {
                    break;
                }
                if (seen.get(number)) {
                    duplicates++;
                } else {
                    seen.set(number);
                    long base = (long) number * size;
                    boolean same = true;
                    for (int o = 0; o < size && same; o++) {
                        same = region.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, base + o) == pattern(number, o);
                    }
                    if (same) {
                        verified++;
                    } else {
                        mismatches++;
                    }
                }
                qp.postReceive(wc.workRequestId(), region.localKey(), 0, 0);
            }
            System.out.println("DONE verified=" + verified + " mismatches=" + mismatches + " duplicates=" + duplicates
                    + " resent=" + qp.statistics().framesResent());
            System.out.flush();
        }
    }
}
