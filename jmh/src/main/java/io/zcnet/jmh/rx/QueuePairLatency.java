package io.zcnet.jmh.rx;

import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.WorkCompletion;
import io.zcnet.qp.WorkRequest;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.LoopIdle;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.SingleWriterRecorder;

import java.io.IOException;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;

/**
 * Round-trip latency of messages of one size ({@code --size}, 1 B to 1 MiB) on one queue pair, both ends in
 * this process on two loop threads ({@link QueuePairEnds}), one round trip outstanding at a time (ping-pong,
 * as sockperf's ping-pong is):
 * <ul>
 *   <li>{@code --op send}: the client SENDs {@code size} bytes; the server's receive completion makes it
 *   SEND {@code size} bytes back; the client's receive completion ends the round trip;</li>
 *   <li>{@code --op write-imm}: the same ping-pong with RDMA WRITEs with immediate: each side writes
 *   {@code size} bytes into the other's registered region, and the receive that the immediate completes
 *   at the other end is what makes it answer (the server) or ends the round trip (the client);</li>
 *   <li>{@code --op read}: the client posts an RDMA READ of {@code size} bytes of the server's registered
 *   region; its completion ends the round trip (the server's application does nothing).</li>
 * </ul>
 * Both ends are driven inline on their loop threads through {@link QueuePair#onCompletions}: a spinning
 * application thread would take a core from the two loops on a small machine. A round trip is timed
 * with {@code System.nanoTime} from just before its first post to the client's poll of its completion,
 * so it includes the loop turn that hands the completion over, as an application sees it.
 *
 * <p>The client's loop records each round trip into an HdrHistogram recorder (one writer, no allocation);
 * the measured interval's histogram ends the RESULT line as
 * {@code p50_us p99_us p999_us mean_us max_us}; {@code messages} and {@code msg_per_s} count round trips.
 *
 * <p>{@code --busy-poll true} builds both contexts' loops busy-polling ({@link LoopIdle#yielding()}): no
 * loop thread sleeps in the kernel, so no round trip waits for a wake-up.
 *
 * <pre>QueuePairLatency --engine uring|nio --op send|write-imm|read --seconds S --warmup W --size 64 --icrc false --busy-poll false</pre>
 */
public final class QueuePairLatency {
    /** Longest round trip the histogram holds; a longer one is recorded as this (and shows as the max). */
    private static final long HIGHEST_NANOS = 10_000_000_000L;
    /** Receives each end keeps posted: the one in use and spares, so a SEND never waits for credit. */
    private static final int RECEIVES = 8;
    /** The largest {@code --size}: the top of bench/qp-latency-sweep.sh's sizes; each end registers 9 of them. */
    static final int MAX_SIZE = 1 << 20;

    /** What a round trip is made of; {@link #option} is its {@code --op} name. */
    enum Op {
        SEND("send"), WRITE_IMM("write-imm"), READ("read");

        final String option;

        Op(String option) {
            this.option = option;
        }

        static Op parse(String text) {
            for (Op op : values()) {
                if (op.option.equals(text)) {
                    return op;
                }
            }
            throw new IllegalArgumentException("--op wants send, write-imm or read, not '" + text + "'");
        }
    }

    /** One run's command line, checked before anything is opened. */
    record Options(EventLoopConfig.Choice engine, Op op, int seconds, int warmupSeconds, int size, boolean icrc,
            boolean busyPoll) {
        static Options parse(String[] args) {
            RunOptions options = RunOptions.parse(args, Map.of("engine", "uring", "op", "send", "seconds", "5",
                    "warmup", Long.toString(MeasuredInterval.MESSAGES_WARMUP.toSeconds()), "size", "64",
                    "icrc", "false", "busy-poll", "false"));
            return new Options(EventLoopConfig.parseChoice(options.text("engine")), Op.parse(options.text("op")),
                    options.integer("seconds", 1, Integer.MAX_VALUE), options.integer("warmup", 0, Integer.MAX_VALUE),
                    options.integer("size", 1, MAX_SIZE), options.flag("icrc"), options.flag("busy-poll"));
        }

        /** The RESULT line's {@code impl}, e.g. {@code zcnet-qp-write-imm-uring-busy-poll}. */
        String impl() {
            return "zcnet-qp-" + op.option + "-" + engine.name().toLowerCase(Locale.ROOT) + (busyPoll ? "-busy-poll" : "");
        }
    }

    private final Op op;
    private final int size;
    private final QueuePairEnds ends;
    private final QueuePair client;
    private final QueuePair server;
    private final MemoryRegion clientRegion;
    private final MemoryRegion serverRegion;
    private final DeliveryCount roundTrips;
    private final SingleWriterRecorder recorder = new SingleWriterRecorder(1, HIGHEST_NANOS, 3);
    // Each end's holders, used only by that end's loop thread (and by the main thread before it starts).
    private final WorkRequest clientRequest = new WorkRequest();
    private final WorkRequest serverRequest = new WorkRequest();
    private final WorkCompletion clientCompletion = new WorkCompletion();
    private final WorkCompletion serverCompletion = new WorkCompletion();
    /** When the outstanding round trip started; client loop thread (the main thread starts the first). */
    private long startedNanos;
    private long sequence;

    private QueuePairLatency(EventLoopConfig loops, Op op, int size, boolean icrc, DeliveryCount roundTrips)
            throws IOException, InterruptedException {
        this.op = op;
        this.size = size;
        this.roundTrips = roundTrips;
        ends = new QueuePairEnds(loops, QpConfig.defaults().withIcrc(icrc));
        client = ends.client;
        server = ends.server;
        // Slots 0..RECEIVES-1 take receives (and, from slot 0, the peer's WRITEs: a WRITE with immediate fills
        // no receive buffer); slot RECEIVES is what this end sends or writes (or the READ's source/sink).
        clientRegion = ends.clientRegion((long) (RECEIVES + 1) * size);
        serverRegion = ends.serverRegion((long) (RECEIVES + 1) * size);
        serverRegion.segment().fill((byte) 0x5A);
        if (op != Op.READ) {
            for (int slot = 0; slot < RECEIVES; slot++) {
                server.postReceive(slot, serverRegion.localKey(), (long) slot * size, size);
                client.postReceive(slot, clientRegion.localKey(), (long) slot * size, size);
            }
            server.onCompletions(this::serverTurn);
        }
        client.onCompletions(this::clientTurn);
    }

    /**
     * Posts the next round trip's first work request. The main thread posts the first (before anything can
     * complete), the client's loop every later one: one poster at a time, ordered by the rings.
     */
    private void startRoundTrip() {
        sequence++;
        long source = (long) RECEIVES * size;
        WorkRequest wr = switch (op) {
            case SEND -> clientRequest.send(sequence, clientRegion.localKey(), source, size).unsignaled();
            case WRITE_IMM -> clientRequest.writeWithImmediate(sequence, clientRegion.localKey(), source, size,
                    serverRegion.remoteKey(), 0, (int) sequence).unsignaled();
            case READ -> clientRequest.read(sequence, clientRegion.localKey(), source, size,
                    serverRegion.remoteKey(), source);
        };
        startedNanos = System.nanoTime();
        if (!client.postSend(wr)) {
            ends.fail("client: send queue full with one round trip outstanding");
        }
    }

    /**
     * Client loop: a receive (SEND, WRITE with immediate) or READ completion ends the round trip and starts
     * the next.
     */
    private void clientTurn() {
        while (client.poll(clientCompletion)) {
            long now = System.nanoTime();
            if (ends.failed("client", clientCompletion)) {
                return;
            }
            if (op == Op.WRITE_IMM && clientCompletion.immediate() != (int) sequence) {
                // The server answers with the immediate it got: another value means a lost or stale answer.
                ends.fail("client: immediate " + clientCompletion.immediate() + " answered round trip " + sequence);
                return;
            }
            if (op != Op.READ) {
                long slot = clientCompletion.workRequestId();
                client.postReceive(slot, clientRegion.localKey(), slot * size, size);
            }
            recorder.recordValue(Math.min(now - startedNanos, HIGHEST_NANOS));
            roundTrips.add(size);
            startRoundTrip();
        }
    }

    /**
     * Server loop: each received message is answered the way it came (a SEND, or a WRITE with immediate into
     * the client's region carrying the same immediate), of the same size; the receive is posted again.
     */
    private void serverTurn() {
        while (server.poll(serverCompletion)) {
            if (ends.failed("server", serverCompletion)) {
                return;
            }
            long slot = serverCompletion.workRequestId();
            server.postReceive(slot, serverRegion.localKey(), slot * size, size);
            long source = (long) RECEIVES * size;
            if (op == Op.SEND) {
                serverRequest.send(slot, serverRegion.localKey(), source, size).unsignaled();
            } else {
                serverRequest.writeWithImmediate(slot, serverRegion.localKey(), source, size, clientRegion.remoteKey(),
                        0, serverCompletion.immediate()).unsignaled();
            }
            if (!server.postSend(serverRequest)) {
                ends.fail("server: send queue full with one round trip outstanding");
            }
        }
    }

    /** The round trips of the measured interval, as RESULT fields. */
    private final class Latencies implements MeasuredInterval.Probe {
        @Override
        public void begin() {
            recorder.reset(); // the warm-up's round trips are not measured
        }

        @Override
        public String end() {
            Histogram h = recorder.getIntervalHistogram();
            return String.format(Locale.ROOT, "p50_us=%.2f p99_us=%.2f p999_us=%.2f mean_us=%.2f max_us=%.2f",
                    h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(99) / 1e3,
                    h.getValueAtPercentile(99.9) / 1e3, h.getMean() / 1e3, h.getMaxValue() / 1e3);
        }
    }

    /**
     * Runs one measurement as the command line says and prints its RESULT line.
     *
     * @param args {@code --name value} pairs, as the class comment shows
     * @throws Exception if the command line is bad (before anything runs)
     */
    public static void main(String[] args) throws Exception {
        Options options = Options.parse(args);
        String impl = options.impl();
        EventLoopConfig loops = EventLoopConfig.defaults().withEngine(options.engine());
        DeliveryCount roundTrips = new DeliveryCount();
        QueuePairLatency run = null;
        try {
            run = new QueuePairLatency(options.busyPoll() ? loops.withIdle(LoopIdle.yielding()) : loops, options.op(),
                    options.size(), options.icrc(), roundTrips);
            run.startRoundTrip();
            MeasuredInterval.run(impl, roundTrips, Duration.ofSeconds(options.warmupSeconds()), options.seconds(),
                    run.new Latencies());
            run.ends.check();
            System.out.println("DETAIL client " + run.client.statistics() + " server " + run.server.statistics());
        } catch (Exception | Error e) {
            MeasuredInterval.abort(impl, e);
        } finally {
            if (run != null) {
                run.ends.close();
            }
        }
    }
}
