package io.zcnet.examples;

import java.io.IOException;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

/**
 * The four control messages of a bulk run (the exchange is described on {@link BulkCommand}), each a SEND
 * with immediate data naming its type, laid out little-endian as below. Offsets are derived from the
 * layouts. HELLO and DONE fit in {@link #SMALL} bytes, which every receive the server posts holds; READY
 * and RESULT fit in {@link #LARGE}, the client's one control receive. Stateless.
 */
final class BulkProtocol {
    /** "ZCB1": a zcnet bulk peer speaking this version. */
    static final int MAGIC = 0x5A434231;
    static final int HELLO = 1;
    static final int READY = 2;
    static final int DONE = 3;
    static final int RESULT = 4;
    static final int SMALL = 64;
    static final int LARGE = 1024;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Client to server: the {@link BulkPlan}. */
    static final StructLayout HELLO_LAYOUT = MemoryLayout.structLayout(INT.withName("magic"), INT.withName("op"),
            INT.withName("verify"), INT.withName("message"), INT.withName("window"), MemoryLayout.paddingLayout(4),
            LONG.withName("total_bytes"), LONG.withName("nanos"));
    /** Server to client: where to write or read, or why not (status 1 and a reason in ASCII). */
    static final StructLayout READY_LAYOUT = MemoryLayout.structLayout(INT.withName("magic"), INT.withName("status"),
            INT.withName("rkey"), INT.withName("slots"), LONG.withName("stride"), INT.withName("reason_length"));
    /** Client to server: what the client moved. */
    static final StructLayout DONE_LAYOUT = MemoryLayout.structLayout(INT.withName("magic"), MemoryLayout.paddingLayout(4),
            LONG.withName("messages"), LONG.withName("bytes"));
    /** Server to client: its check, its resends and its subflows' payload bytes (followed by one long each). */
    static final StructLayout RESULT_LAYOUT = MemoryLayout.structLayout(INT.withName("magic"),
            INT.withName("subflows"), LONG.withName("received"), LONG.withName("mismatches"),
            LONG.withName("frames_resent"), LONG.withName("bytes_resent"));

    private static final long H_OP = offset(HELLO_LAYOUT, "op");
    private static final long H_VERIFY = offset(HELLO_LAYOUT, "verify");
    private static final long H_MESSAGE = offset(HELLO_LAYOUT, "message");
    private static final long H_WINDOW = offset(HELLO_LAYOUT, "window");
    private static final long H_TOTAL = offset(HELLO_LAYOUT, "total_bytes");
    private static final long H_NANOS = offset(HELLO_LAYOUT, "nanos");
    private static final long R_STATUS = offset(READY_LAYOUT, "status");
    private static final long R_RKEY = offset(READY_LAYOUT, "rkey");
    private static final long R_SLOTS = offset(READY_LAYOUT, "slots");
    private static final long R_STRIDE = offset(READY_LAYOUT, "stride");
    private static final long R_REASON_LENGTH = offset(READY_LAYOUT, "reason_length");
    private static final long R_REASON = READY_LAYOUT.byteSize();
    private static final long D_MESSAGES = offset(DONE_LAYOUT, "messages");
    private static final long D_BYTES = offset(DONE_LAYOUT, "bytes");
    private static final long S_SUBFLOWS = offset(RESULT_LAYOUT, "subflows");
    private static final long S_RECEIVED = offset(RESULT_LAYOUT, "received");
    private static final long S_MISMATCHES = offset(RESULT_LAYOUT, "mismatches");
    private static final long S_FRAMES = offset(RESULT_LAYOUT, "frames_resent");
    private static final long S_BYTES = offset(RESULT_LAYOUT, "bytes_resent");
    private static final long S_SUBFLOW_BYTES = RESULT_LAYOUT.byteSize();
    static final int MAX_SUBFLOWS = (int) ((LARGE - S_SUBFLOW_BYTES) / Long.BYTES);

    /** The server's answer to a HELLO it accepted. */
    record Ready(int rkey, int slots, long stride) {
    }

    /** The client's totals. */
    record Done(long messages, long bytes) {
    }

    /**
     * The server's side of the outcome: messages it checked and how many were wrong, and, as the sender of
     * READ responses, its resends and what each subflow carried (by subflow index).
     */
    record Result(long received, long mismatches, long framesResent, long bytesResent, long[] subflowBytes) {
    }

    private BulkProtocol() {
    }

    private static long offset(StructLayout layout, String field) {
        return layout.byteOffset(groupElement(field));
    }

    static int writeHello(MemorySegment s, long at, BulkPlan plan) {
        s.set(INT, at, MAGIC);
        s.set(INT, at + H_OP, plan.op().ordinal());
        s.set(INT, at + H_VERIFY, plan.verify() ? 1 : 0);
        s.set(INT, at + H_MESSAGE, plan.messageSize());
        s.set(INT, at + H_WINDOW, plan.window());
        s.set(LONG, at + H_TOTAL, plan.totalBytes());
        s.set(LONG, at + H_NANOS, plan.nanos());
        return (int) HELLO_LAYOUT.byteSize();
    }

    /** The plan a HELLO carries; IllegalArgumentException (with the reason to send back) if it is not one. */
    static BulkPlan readHello(MemorySegment s, long at, int length) {
        checkMagic(s, at, length, HELLO_LAYOUT, "HELLO");
        int op = s.get(INT, at + H_OP);
        if (op < 0 || op >= BulkOp.values().length) {
            throw new IllegalArgumentException("HELLO names no known operation (" + op + ")");
        }
        return new BulkPlan(BulkOp.values()[op], s.get(INT, at + H_MESSAGE), s.get(INT, at + H_WINDOW),
                s.get(LONG, at + H_TOTAL), s.get(LONG, at + H_NANOS), s.get(INT, at + H_VERIFY) != 0);
    }

    static int writeReady(MemorySegment s, long at, Ready ready) {
        s.set(INT, at, MAGIC);
        s.set(INT, at + R_STATUS, 0);
        s.set(INT, at + R_RKEY, ready.rkey());
        s.set(INT, at + R_SLOTS, ready.slots());
        s.set(LONG, at + R_STRIDE, ready.stride());
        s.set(INT, at + R_REASON_LENGTH, 0);
        return (int) R_REASON;
    }

    static int writeRefusal(MemorySegment s, long at, String reason) {
        byte[] text = reason.getBytes(StandardCharsets.US_ASCII);
        int length = (int) Math.min(text.length, LARGE - R_REASON);
        s.set(INT, at, MAGIC);
        s.set(INT, at + R_STATUS, 1);
        s.set(INT, at + R_REASON_LENGTH, length);
        MemorySegment.copy(text, 0, s, ValueLayout.JAVA_BYTE, at + R_REASON, length);
        return (int) R_REASON + length;
    }

    /** The server's READY; IOException with the server's reason if it refused the HELLO. */
    static Ready readReady(MemorySegment s, long at, int length) throws IOException {
        checkControl(s, at, length, READY_LAYOUT, "READY");
        if (s.get(INT, at + R_STATUS) != 0) {
            int n = (int) Math.min(Math.max(0, s.get(INT, at + R_REASON_LENGTH)), length - R_REASON);
            byte[] text = new byte[n];
            MemorySegment.copy(s, ValueLayout.JAVA_BYTE, at + R_REASON, text, 0, n);
            throw new IOException("the server refused the run: " + new String(text, StandardCharsets.US_ASCII));
        }
        return new Ready(s.get(INT, at + R_RKEY), s.get(INT, at + R_SLOTS), s.get(LONG, at + R_STRIDE));
    }

    static int writeDone(MemorySegment s, long at, Done done) {
        s.set(INT, at, MAGIC);
        s.set(LONG, at + D_MESSAGES, done.messages());
        s.set(LONG, at + D_BYTES, done.bytes());
        return (int) DONE_LAYOUT.byteSize();
    }

    static Done readDone(MemorySegment s, long at, int length) throws IOException {
        checkControl(s, at, length, DONE_LAYOUT, "DONE");
        return new Done(s.get(LONG, at + D_MESSAGES), s.get(LONG, at + D_BYTES));
    }

    static int writeResult(MemorySegment s, long at, Result result) {
        int n = Math.min(result.subflowBytes().length, MAX_SUBFLOWS);
        s.set(INT, at, MAGIC);
        s.set(INT, at + S_SUBFLOWS, n);
        s.set(LONG, at + S_RECEIVED, result.received());
        s.set(LONG, at + S_MISMATCHES, result.mismatches());
        s.set(LONG, at + S_FRAMES, result.framesResent());
        s.set(LONG, at + S_BYTES, result.bytesResent());
        for (int i = 0; i < n; i++) {
            s.set(LONG, at + S_SUBFLOW_BYTES + (long) i * Long.BYTES, result.subflowBytes()[i]);
        }
        return (int) S_SUBFLOW_BYTES + n * Long.BYTES;
    }

    static Result readResult(MemorySegment s, long at, int length) throws IOException {
        checkControl(s, at, length, RESULT_LAYOUT, "RESULT");
        int n = s.get(INT, at + S_SUBFLOWS);
        if (n < 0 || S_SUBFLOW_BYTES + (long) n * Long.BYTES > length) {
            throw new IOException("RESULT names " + n + " subflows in " + length + " bytes");
        }
        long[] bytes = new long[n];
        for (int i = 0; i < n; i++) {
            bytes[i] = s.get(LONG, at + S_SUBFLOW_BYTES + (long) i * Long.BYTES);
        }
        return new Result(s.get(LONG, at + S_RECEIVED), s.get(LONG, at + S_MISMATCHES), s.get(LONG, at + S_FRAMES),
                s.get(LONG, at + S_BYTES), bytes);
    }

    private static void checkControl(MemorySegment s, long at, int length, StructLayout layout, String what)
            throws IOException {
        try {
            checkMagic(s, at, length, layout, what);
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    private static void checkMagic(MemorySegment s, long at, int length, StructLayout layout, String what) {
        if (length < layout.byteSize() || s.get(INT, at) != MAGIC) {
            throw new IllegalArgumentException(what + " of " + length + " bytes is not from a zcnet bulk peer of this"
                    + " version");
        }
    }
}
