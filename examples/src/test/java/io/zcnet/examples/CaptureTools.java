package io.zcnet.examples;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * What the tests of the Wireshark dissector need from the machine: Linux, root (to capture), tcpdump and
 * tshark ({@link DebianPackages}: installed when missing), looked at once per JVM; and a way to run them.
 */
final class CaptureTools {

    /** The dissector under test, in the repository this module sits in. */
    static final Path DISSECTOR = Path.of("..", "tools", "wireshark", "zcnet.lua").toAbsolutePath().normalize();

    private static boolean probed;
    private static String unavailable;

    private CaptureTools() {
    }

    /** Skips the calling test, with the reason, unless tcpdump and tshark can run here. */
    static void assumeAvailable() throws Exception {
        String reason = unavailableReason();
        assumeTrue(reason == null, reason);
    }

    /** Null when tcpdump and tshark can run here, else one line saying why not. */
    private static synchronized String unavailableReason() throws Exception {
        if (!probed) {
            probed = true;
            if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
                unavailable = "capturing on loopback needs Linux";
            } else if (!run(List.of("id", "-u"), 10).strip().equals("0")) {
                unavailable = "needs root to capture with tcpdump (and to install it)";
            } else {
                String missing = DebianPackages.ensure(() -> works("tcpdump", "--version") && works("tshark", "--version"),
                        "tshark", "tcpdump");
                unavailable = missing == null ? null : "tcpdump or tshark: " + missing;
            }
        }
        return unavailable;
    }

    /** Runs {@code argv} to completion within {@code seconds} and returns its standard output; fails otherwise. */
    static String run(List<String> argv, long seconds) throws Exception {
        Process p = new ProcessBuilder(argv).start();
        CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> readAll(p.getErrorStream()));
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail(argv.getFirst() + " did not finish in " + seconds + " s");
        }
        if (p.exitValue() != 0) {
            fail(String.join(" ", argv) + " exited " + p.exitValue() + ": " + new String(err.get(), StandardCharsets.UTF_8));
        }
        return new String(out, StandardCharsets.UTF_8);
    }

    private static byte[] readAll(InputStream in) {
        try {
            return in.readAllBytes();
        } catch (IOException e) {
            return new byte[0];
        }
    }

    private static boolean works(String... argv) {
        try {
            return new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start().waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    // ---------------------------------------------------------------- captures written by hand

    /** The client port of the {@code index}-th connection of {@link #pcap}. */
    static int clientPort(int index) {
        return 40_000 + index;
    }

    /** A pcap (raw IPv4) with one TCP connection to {@code port} per frame: handshake, then the frame. */
    static byte[] pcap(List<byte[]> frames, int port) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteBuffer header = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
        header.putInt(0xa1b2c3d4).putShort((short) 2).putShort((short) 4).putInt(0).putInt(0).putInt(262_144).putInt(101);
        out.writeBytes(header.array());
        for (int i = 0; i < frames.size(); i++) {
            int client = clientPort(i);
            record(out, i, tcp(client, port, 1000, 0, 0x02, new byte[0]));
            record(out, i, tcp(port, client, 5000, 1001, 0x12, new byte[0]));
            record(out, i, tcp(client, port, 1001, 5001, 0x18, frames.get(i)));
        }
        return out.toByteArray();
    }

    private static void record(ByteArrayOutputStream out, int second, byte[] packet) {
        ByteBuffer r = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        r.putInt(second).putInt(0).putInt(packet.length).putInt(packet.length);
        out.writeBytes(r.array());
        out.writeBytes(packet);
    }

    /** An IPv4 packet 127.0.0.1 to 127.0.0.1 carrying one TCP segment (checksums left 0: tshark does not check them). */
    private static byte[] tcp(int from, int to, long seq, long ack, int flags, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(40 + payload.length);
        b.put((byte) 0x45).put((byte) 0).putShort((short) (40 + payload.length)).putShort((short) 0)
                .putShort((short) 0x4000).put((byte) 64).put((byte) 6).putShort((short) 0)
                .putInt(0x7F000001).putInt(0x7F000001);
        b.putShort((short) from).putShort((short) to).putInt((int) seq).putInt((int) ack).put((byte) 0x50)
                .put((byte) flags).putShort((short) 65535).putShort((short) 0).putShort((short) 0);
        b.put(payload);
        return b.array();
    }
}
