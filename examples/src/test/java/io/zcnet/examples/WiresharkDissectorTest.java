package io.zcnet.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.zcnet.buffer.MemoryRegion;
import io.zcnet.framing.Opcode;
import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.QpListener;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.WorkCompletion;
import io.zcnet.qp.WorkRequest;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Wireshark dissector ({@code tools/wireshark/zcnet.lua}) against a real queue-pair transfer: tcpdump
 * captures two subflows on loopback carrying a handshake, a JOIN, SENDs, WRITEs with and without immediate
 * data, a READ and small SENDs packed in one frame with the ICRC on, then a close (a NAK); tshark decodes the
 * capture with the dissector, once
 * on the configured port and once by its heuristic alone; and every frame tshark shows must carry exactly the
 * fields, with exactly the values, that {@link WireDump} ({@code ./zcnet dump --json}) gives for the same
 * bytes, reassembled from the capture independently ({@link PcapStreams}). The handshake messages at the
 * start of each stream are compared the same way.
 *
 * <p>Needs Linux, root (to capture) and tcpdump and tshark, which it installs with apt-get when they are
 * missing; skipped with the reason otherwise.
 */
class WiresharkDissectorTest {

    private static final int SEGMENT = 1024;
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final int HANDSHAKE = 96;
    private static final List<String> FRAME_FIELDS = List.of("ver", "timestamp_present", "more_segments", "rtr",
            "rtr_ack", "ack_request", "quiet", "opcode", "msn", "offset", "seg", "icrc", "icrc_ok", "timestamp", "timestamp_echo",
            "imm_data",
            "length", "ext_length", "subflow", "rkey", "region_offset", "rsn", "read_length", "sink_rkey", "sink_offset",
            "payload", "error", "nak.syndrome", "nak.failed_msn", "records", "record.msn", "record.rsn", "record.descriptor",
            "record.immediate_present", "record.reserved", "record.message_length", "record.imm_data", "record.payload");
    private static final List<String> HANDSHAKE_FIELDS = List.of("type", "version", "flags", "segment_size",
            "message_window", "max_subflows", "subflow", "reason", "token", "nonce", "mac", "silence_ms");

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 50, unit = TimeUnit.SECONDS)
    void tsharkDecodesEveryFrameAsTheDumpDoes() throws Exception {
        CaptureTools.assumeAvailable();
        Path capture = dir.resolve("queue-pair.pcap");
        int port;
        try (QpContext serverContext = QpContext.open(); QpContext clientContext = QpContext.open();
                QpListener listener = listen(serverContext);
                RegionArena serverMemory = new RegionArena(serverContext);
                RegionArena clientMemory = new RegionArena(clientContext)) {
            port = listener.address().getPort();
            Process tcpdump = startCapture(capture, port);
            try {
                transfer(clientContext, listener, clientMemory.register(1 << 20), serverMemory.register(1 << 20));
            } finally {
                stopCapture(tcpdump);
            }
        }

        Map<String, byte[]> streams = PcapStreams.read(capture);
        assertEquals(4, streams.size(), "two subflows, both directions: " + streams.keySet());
        Map<String, List<Map<String, String>>> expectedFrames = new LinkedHashMap<>();
        Map<String, List<Map<String, String>>> expectedHandshakes = new LinkedHashMap<>();
        streams.forEach((direction, bytes) -> {
            int frames = handshakes(bytes, expectedHandshakes.computeIfAbsent(direction, d -> new ArrayList<>()));
            expectedFrames.put(direction, dump(direction, Arrays.copyOfRange(bytes, frames, bytes.length)));
        });
        checkCoverage(expectedFrames, expectedHandshakes);

        Decoded onPort = tshark(capture, port, false);
        compare(expectedFrames, expectedHandshakes, onPort);
        Decoded heuristic = tshark(capture, 0, true);
        assertEquals(onPort.frames, heuristic.frames, "the heuristic alone finds and decodes every frame");
        assertEquals(onPort.handshakes, heuristic.handshakes, "the heuristic alone decodes every handshake message");
    }

    // ---------------------------------------------------------------- the transfer

    /**
     * Listens on the dissector's default port, 7000, if it is free, else on any: a port below the ephemeral
     * range is the one TCP dissection tries first, so no other protocol's port can take the connections.
     */
    private static QpListener listen(QpContext context) throws IOException {
        QpConfig config = QpConfig.defaults().withSegmentSize(SEGMENT);
        try {
            return context.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 7000), config);
        } catch (IOException | RuntimeException taken) {
            return context.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), config);
        }
    }

    /**
     * A few work requests of each kind over two subflows, 1 KiB segments, ICRC on; then three small SENDs posted
     * in one loop turn, which the client packs into one SEND_PACKED frame; then the client closes.
     */
    private static void transfer(QpContext clientContext, QpListener listener, MemoryRegion clientRegion,
                                 MemoryRegion serverRegion) throws Exception {
        QpConfig config = QpConfig.defaults().withSegmentSize(SEGMENT).withIcrc(true).withSubflows(2);
        for (long i = 0; i < clientRegion.size(); i++) {
            clientRegion.segment().set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 3));
        }
        try (QueuePair client = clientContext.connect(listener.address(), config); QueuePair server = listener.accept(WAIT)) {
            assertTrue(server != null, "the listener accepted the queue pair");
            for (int r = 0; r < 7; r++) {
                server.postReceive(100 + r, serverRegion.localKey(), 8192L * r, 8192);
            }
            WorkRequest wr = new WorkRequest();
            int lkey = clientRegion.localKey();
            int rkey = serverRegion.remoteKey();
            client.postSend(wr.send(1, lkey, 0, 100));
            client.postSend(wr.send(2, lkey, 1000, 3000));
            client.postSend(wr.sendWithImmediate(3, lkey, 5000, 2000, 0xC0FFEE));
            client.postSend(wr.write(4, lkey, 10_000, 5000, rkey, 65_536));
            client.postSend(wr.writeWithImmediate(5, lkey, 20_000, 2500, rkey, 131_072, 42));
            client.postSend(wr.read(6, lkey, 200_000, 4000, rkey, 65_536));
            WorkCompletion wc = new WorkCompletion();
            for (int i = 0; i < 6; i++) {
                assertTrue(client.await(wc, WAIT) && wc.isSuccess(), "client completion " + i + ": " + wc);
            }
            // On the loop thread, posted sends wait for the end of the turn: all three are ready together.
            clientContext.runOnLoop(() -> {
                client.postSend(wr.send(7, lkey, 300_000, 64));
                client.postSend(wr.sendWithImmediate(8, lkey, 301_000, 0, 0xFEEDFACE));
                client.postSend(wr.sendWithImmediate(9, lkey, 302_000, 300, 7));
            });
            for (int i = 6; i < 9; i++) {
                assertTrue(client.await(wc, WAIT) && wc.isSuccess(), "client completion " + i + ": " + wc);
            }
            for (int i = 0; i < 7; i++) {
                assertTrue(server.await(wc, WAIT) && wc.isSuccess(), "server completion " + i + ": " + wc);
            }
            client.close(); // its NAK (QUEUE_PAIR_IN_ERROR) is the last frame on each subflow
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (server.liveSubflows() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
        }
    }

    // ---------------------------------------------------------------- capture

    private Process startCapture(Path capture, int port) throws Exception {
        // --immediate-mode: packets are written as they come, not when a ring block fills or times out, so the
        // stop below loses none.
        Process p = new ProcessBuilder("tcpdump", "-i", "lo", "--immediate-mode", "-U", "-s", "0", "-B", "16384",
                "-w", capture.toString(),
                "tcp port " + port).redirectError(dir.resolve("tcpdump.err").toFile()).start();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!Files.readString(dir.resolve("tcpdump.err")).contains("listening on")) {
            if (!p.isAlive() || System.nanoTime() > deadline) {
                p.destroy();
                fail("tcpdump did not start: " + Files.readString(dir.resolve("tcpdump.err")));
            }
            Thread.sleep(20);
        }
        return p;
    }

    private void stopCapture(Process tcpdump) throws Exception {
        Thread.sleep(200); // the last FINs and ACKs
        tcpdump.destroy(); // SIGTERM: tcpdump flushes the file and prints its counts
        assertTrue(tcpdump.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS), "tcpdump did not stop");
        String counts = Files.readString(dir.resolve("tcpdump.err"));
        assertTrue(counts.matches("(?s).*\\b0 packets dropped by kernel.*"), "tcpdump lost packets: " + counts);
    }

    // ---------------------------------------------------------------- what the Java side reads

    /** Decodes the handshake messages at the start of {@code bytes} into {@code into}; returns where frames begin. */
    private static int handshakes(byte[] bytes, List<Map<String, String>> into) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        int at = 0;
        while (bytes.length - at >= HANDSHAKE && b.getInt(at) == 0x5A515031) {
            Map<String, String> m = new LinkedHashMap<>();
            m.put("type", Integer.toString(b.get(at + 4) & 0xFF));
            m.put("version", Integer.toString(b.get(at + 5) & 0xFF));
            m.put("flags", Integer.toString(Short.toUnsignedInt(b.getShort(at + 6))));
            m.put("segment_size", Integer.toUnsignedString(b.getInt(at + 8)));
            m.put("message_window", Integer.toUnsignedString(b.getInt(at + 12)));
            m.put("max_subflows", Integer.toString(Short.toUnsignedInt(b.getShort(at + 16))));
            m.put("subflow", Integer.toString(Short.toUnsignedInt(b.getShort(at + 18))));
            m.put("reason", Integer.toUnsignedString(b.getInt(at + 20)));
            m.put("token", Long.toUnsignedString(b.getLong(at + 24)));
            m.put("nonce", HexFormat.of().formatHex(bytes, at + 32, at + 48));
            m.put("mac", HexFormat.of().formatHex(bytes, at + 48, at + 80));
            m.put("silence_ms", Integer.toUnsignedString(b.getInt(at + 80)));
            into.add(m);
            at += HANDSHAKE;
        }
        return at;
    }

    /** {@code ./zcnet dump --json --payload} of a stream of frames, one map of canonical values per frame. */
    private static List<Map<String, String>> dump(String direction, byte[] frames) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = WireDump.run(new String[] {"--json", "--payload", "--mss", Integer.toString(SEGMENT)},
                new ByteArrayInputStream(frames), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        String text = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, direction + ": the dump refused the stream: " + text + err);
        List<Map<String, String>> list = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            Map<String, String> m = new LinkedHashMap<>();
            FlatJson.parse(line).forEach((k, v) -> {
                if (k.equals("opcode")) {
                    m.put(k, Integer.toString(Opcode.valueOf((String) v)));
                } else if (k.equals("records")) {
                    List<?> records = (List<?>) v;
                    m.put(k, Integer.toString(records.size()));
                    for (int i = 0; i < records.size(); i++) {
                        Map<?, ?> r = (Map<?, ?>) records.get(i);
                        m.put("records[" + i + "]", record(r.get("msn"), r.get("rsn"), r.get("immediate_present"),
                                r.get("message_length"), r.get("imm_data"), r.get("payload_hex")));
                    }
                } else if (k.equals("payload_hex")) {
                    m.put("payload", (String) v);
                } else if (v != null) {
                    m.put(k, String.valueOf(v));
                }
            });
            list.add(m);
        }
        return list;
    }

    /** One record of a SEND_PACKED frame as both sides show it; {@code imm} is null without immediate data. */
    private static String record(Object msn, Object rsn, Object immediate, Object length, Object imm, Object payload) {
        return "msn=" + msn + " rsn=" + rsn + " immediate_present=" + immediate + " message_length=" + length
                + (imm == null ? "" : " imm_data=" + imm) + " payload=" + payload;
    }

    /** The capture holds what the test means to decode: every handshake type and the frame kinds asked for. */
    private static void checkCoverage(Map<String, List<Map<String, String>>> frames,
                                      Map<String, List<Map<String, String>>> handshakes) {
        Set<String> types = new TreeSet<>();
        handshakes.values().forEach(l -> l.forEach(m -> types.add(m.get("type"))));
        assertEquals(Set.of("1", "2", "3", "4"), types, "OPEN, JOIN, CHALLENGE and PROOF were captured");
        assertTrue(handshakes.values().stream().flatMap(List::stream)
                .anyMatch(m -> m.get("type").equals("1") && !m.get("silence_ms").equals("0")), "an OPEN's silence_ms");
        Set<Integer> opcodes = new TreeSet<>();
        boolean[] seen = new boolean[6]; // rtr, rtr_ack, nak, icrc, ack_request, a packed record with immediate data
        frames.values().forEach(l -> l.forEach(m -> {
            opcodes.add(Integer.parseInt(m.get("opcode")));
            seen[0] |= m.get("rtr").equals("true");
            seen[1] |= m.get("rtr_ack").equals("true");
            seen[2] |= m.get("opcode").equals(Integer.toString(Opcode.ACKNOWLEDGE)) && !m.get("seg").equals("0");
            seen[3] |= "true".equals(m.get("icrc_ok"));
            seen[4] |= m.get("ack_request").equals("true");
            seen[5] |= m.containsKey("records[1]") && m.get("records[1]").contains(" imm_data=");
        }));
        assertTrue(opcodes.containsAll(Set.of(Opcode.SEND_FIRST, Opcode.SEND_MIDDLE, Opcode.SEND_LAST, Opcode.SEND_ONLY,
                Opcode.SEND_LAST_WITH_IMMEDIATE, Opcode.RDMA_WRITE_FIRST, Opcode.RDMA_WRITE_LAST,
                Opcode.RDMA_WRITE_LAST_WITH_IMMEDIATE, Opcode.RDMA_READ_REQUEST, Opcode.RDMA_READ_RESPONSE_FIRST,
                Opcode.RDMA_READ_RESPONSE_LAST, Opcode.ACKNOWLEDGE, Opcode.SEND_PACKED)), "opcodes captured: " + opcodes);
        assertTrue(seen[0] && seen[1] && seen[2] && seen[3] && seen[4], "RTR, RTR_ACK, a NAK, ICRCs and an ACK request were captured");
        assertTrue(seen[5], "a SEND_PACKED frame of several records, with immediate data, was captured");
    }

    // ---------------------------------------------------------------- what tshark reads

    /** tshark's frames and handshake messages, by direction ({@code "srcport>dstport"}), in stream order. */
    private record Decoded(Map<String, List<Map<String, String>>> frames, Map<String, List<Map<String, String>>> handshakes) {
    }

    /**
     * Runs tshark with the dissector on {@code port} (0: by the heuristic alone, tried before any port's
     * dissector), one line of fields per packet.
     */
    private Decoded tshark(Path capture, int port, boolean heuristicFirst) throws Exception {
        List<String> argv = new ArrayList<>(List.of("tshark", "-n", "-r", capture.toString(), "-X",
                "lua_script:" + CaptureTools.DISSECTOR, "-o", "zcnet.tcp_port:" + port,
                "-o", "tcp.try_heuristic_first:" + (heuristicFirst ? "TRUE" : "FALSE"), "-Y", "zcnet", "-T", "fields",
                "-E", "occurrence=a", "-E", "aggregator=;", "-E", "separator=/t", "-e", "tcp.srcport", "-e", "tcp.dstport"));
        FRAME_FIELDS.forEach(f -> argv.addAll(List.of("-e", "zcnet." + f)));
        HANDSHAKE_FIELDS.forEach(f -> argv.addAll(List.of("-e", "zcnet.hs." + f)));
        String out = CaptureTools.run(argv, 30);
        Decoded decoded = new Decoded(new LinkedHashMap<>(), new LinkedHashMap<>());
        for (String line : out.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            String[] columns = line.split("\t", -1);
            assertEquals(2 + FRAME_FIELDS.size() + HANDSHAKE_FIELDS.size(), columns.length, "tshark line: " + line);
            String direction = columns[0] + ">" + columns[1];
            Map<String, ArrayDeque<String>> values = new HashMap<>();
            for (int i = 2; i < columns.length; i++) {
                String name = i - 2 < FRAME_FIELDS.size() ? FRAME_FIELDS.get(i - 2)
                        : "hs." + HANDSHAKE_FIELDS.get(i - 2 - FRAME_FIELDS.size());
                values.put(name, new ArrayDeque<>(columns[i].isEmpty() ? List.of() : List.of(columns[i].split(";"))));
            }
            perPacket(values, decoded.frames.computeIfAbsent(direction, d -> new ArrayList<>()),
                    decoded.handshakes.computeIfAbsent(direction, d -> new ArrayList<>()));
            values.forEach((name, left) -> assertTrue(left.isEmpty(), "tshark's " + name + " has values no frame took: "
                    + left + " in " + line));
        }
        return decoded;
    }

    /**
     * Splits one packet's field lists into frames. tshark lists each field's values in frame order, so a field
     * every frame has is taken one per frame, and one only some frames have by what the frame's opcode (or
     * lengths) says it carries: exactly the fields the specification gives it.
     */
    private static void perPacket(Map<String, ArrayDeque<String>> values, List<Map<String, String>> frames,
                                  List<Map<String, String>> handshakes) {
        while (!values.get("hs.type").isEmpty()) {
            Map<String, String> m = new LinkedHashMap<>();
            HANDSHAKE_FIELDS.forEach(f -> m.put(f, number(values.get("hs." + f).pop(), f.equals("nonce") || f.equals("mac"))));
            handshakes.add(m);
        }
        while (!values.get("opcode").isEmpty()) {
            Map<String, String> m = new LinkedHashMap<>();
            for (String f : List.of("ver", "timestamp_present", "more_segments", "rtr", "rtr_ack", "ack_request", "quiet", "opcode",
                    "msn", "offset", "seg", "icrc")) {
                m.put(f, value(f, values.get(f).pop()));
            }
            if (!m.get("icrc").equals("0")) {
                m.put("icrc_ok", value("icrc_ok", values.get("icrc_ok").pop()));
            }
            for (String f : List.of("timestamp", "timestamp_echo", "imm_data", "length", "ext_length", "subflow")) {
                m.put(f, value(f, values.get(f).pop()));
            }
            int opcode = Integer.parseInt(m.get("opcode"));
            List<String> extension = opcode == Opcode.RDMA_READ_REQUEST
                    ? List.of("rkey", "region_offset", "read_length", "sink_rkey", "sink_offset")
                    : Opcode.isTagged(opcode) ? List.of("rkey", "region_offset") : List.of();
            extension.forEach(f -> m.put(f, value(f, values.get(f).pop())));
            if (Opcode.rsnOffset(opcode) >= 0) {
                m.put("rsn", value("rsn", values.get("rsn").pop()));
            }
            if (Opcode.isPacked(opcode)) {
                records(values, m);
            }
            m.put("payload", m.get("length").equals("0") ? "" : values.get("payload").pop());
            if (opcode == Opcode.ACKNOWLEDGE && !m.get("seg").equals("0")) {
                assertEquals(m.get("seg"), values.get("nak.syndrome").pop(), "the syndrome is the segment byte");
                assertEquals(m.get("imm_data"), number(values.get("nak.failed_msn").pop(), false), "the failed MSN is imm_data");
            }
            frames.add(m);
        }
    }

    /**
     * The records of a SEND_PACKED frame into {@code m}: their count, then each with the fields its descriptor
     * says it has (immediate data when present, message bytes when there are any).
     */
    private static void records(Map<String, ArrayDeque<String>> values, Map<String, String> m) {
        int records = Integer.parseInt(value("records", values.get("records").pop()));
        m.put("records", Integer.toString(records));
        for (int i = 0; i < records; i++) {
            long descriptor = Long.parseLong(value("record.descriptor", values.get("record.descriptor").pop()));
            String immediate = value("record.immediate_present", values.get("record.immediate_present").pop());
            String length = value("record.message_length", values.get("record.message_length").pop());
            assertEquals("0", value("record.reserved", values.get("record.reserved").pop()), "reserved bits");
            assertEquals((immediate.equals("true") ? 0x8000_0000L : 0) | Long.parseLong(length), descriptor,
                    "the descriptor's bits are its fields");
            m.put("records[" + i + "]", record(value("record.msn", values.get("record.msn").pop()),
                    value("record.rsn", values.get("record.rsn").pop()), immediate, length,
                    immediate.equals("true") ? value("record.imm_data", values.get("record.imm_data").pop()) : null,
                    length.equals("0") ? "" : values.get("record.payload").pop()));
        }
    }

    /** tshark's text of a field as {@link #dump} gives it: decimal numbers, true/false. */
    private static String value(String field, String text) {
        return switch (field) {
            case "timestamp_present", "more_segments", "rtr", "rtr_ack", "ack_request", "quiet", "icrc_ok",
                    "record.immediate_present" ->
                    Boolean.toString(text.equals("1"));
            default -> number(text, false);
        };
    }

    private static String number(String text, boolean bytes) {
        if (bytes) {
            return text.toLowerCase(Locale.ROOT);
        }
        return text.startsWith("0x") ? Long.toUnsignedString(Long.parseUnsignedLong(text.substring(2), 16)) : text;
    }

    private static void compare(Map<String, List<Map<String, String>>> frames,
                                Map<String, List<Map<String, String>>> handshakes, Decoded tshark) {
        assertEquals(handshakes.keySet(), tshark.handshakes.keySet(), "directions");
        for (String direction : frames.keySet()) {
            assertEquals(handshakes.get(direction), tshark.handshakes.get(direction), direction + ": handshake messages");
            List<Map<String, String>> expected = frames.get(direction);
            List<Map<String, String>> actual = tshark.frames.get(direction);
            assertEquals(expected.size(), actual.size(), direction + ": frames decoded");
            for (int i = 0; i < expected.size(); i++) {
                assertEquals(expected.get(i), actual.get(i), direction + " frame " + i);
            }
        }
    }
}
