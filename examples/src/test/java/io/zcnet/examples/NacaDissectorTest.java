package io.zcnet.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.zcnet.collective.NacaHeader;
import io.zcnet.framing.FrameHeader;
import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.Segmenter;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dissector's NACA header (docs/wire-format.md, section 20) against {@link NacaHeader}: the messages of the
 * section's test vectors, and each broken in one way, sent as SEND_ONLY frames (one TCP connection each of a
 * capture written here), must show in tshark the fields {@link NacaHeader} reads and, as {@code zcnet.naca.error},
 * exactly the refusal of {@link NacaHeader#validate}. Needs tshark ({@link CaptureTools}); skipped with the reason
 * otherwise.
 */
class NacaDissectorTest {

    private static final int PORT = 7000;
    private static final String CHUNK = "4e0105000007011100040002000300000000000b000000100000000200000000"
            + "0000803f000000400000404000008040";
    private static final String JOIN = "4e010200000700000004000200000000000000000000003000000000000000000008000000010000"
            + "0102030400000000946ebcc68c29f24f47fff9f4e9b80049a5b05b2653d0291d561a7115d97e2952";
    private static final String CHALLENGE = "4e01010000000000000000000000000000000000000000100000000000000000"
            + "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf";

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void tsharkShowsEveryNacaHeaderAsTheCodecReadsIt() throws Exception {
        CaptureTools.assumeAvailable();
        List<byte[]> messages = new ArrayList<>();
        for (String hex : List.of(CHUNK, JOIN, CHALLENGE)) {
            messages.add(HexFormat.of().parseHex(hex));
        }
        byte[] chunk = HexFormat.of().parseHex(CHUNK);
        messages.add(changed(chunk, 7, (byte) 0x71));            // dtype 7
        messages.add(changed(chunk, 3, (byte) 0x02));            // FALLBACK on a CHUNK
        messages.add(changed(chunk, 11, (byte) 0x04));           // rank 4 of 4
        messages.add(changed(chunk, 31, (byte) 0x01));           // reserved
        messages.add(Arrays.copyOf(chunk, chunk.length - 4));    // shorter than its length says
        messages.add(changed(HexFormat.of().parseHex(CHALLENGE), 5, (byte) 0x07)); // a CHALLENGE naming a job

        List<byte[]> frames = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            frames.add(sendOnly(i, messages.get(i)));
        }
        Path capture = dir.resolve("naca.pcap");
        Files.write(capture, CaptureTools.pcap(frames, PORT));
        String out = CaptureTools.run(List.of("tshark", "-n", "-r", capture.toString(), "-X",
                "lua_script:" + CaptureTools.DISSECTOR, "-o", "zcnet.tcp_port:" + PORT, "-Y", "zcnet.naca", "-T",
                "fields", "-E", "separator=/t", "-e", "tcp.srcport", "-e", "zcnet.naca.type", "-e", "zcnet.naca.job",
                "-e", "zcnet.naca.rank", "-e", "zcnet.naca.ranks", "-e", "zcnet.naca.slot", "-e",
                "zcnet.naca.sequence", "-e", "zcnet.naca.operation", "-e", "zcnet.naca.length", "-e",
                "zcnet.naca.error"), 20);
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            byte[] m = messages.get(i);
            NacaHeader h = new NacaHeader().wrap(MemorySegment.ofArray(m), 0);
            String error = h.validate(m.length);
            expected.add(String.join("\t", Integer.toString(CaptureTools.clientPort(i)), Integer.toString(h.type()),
                    Integer.toString(h.job()), Integer.toString(h.rank()), Integer.toString(h.ranks()),
                    Integer.toString(h.slot()), Long.toString(h.sequence()), Long.toString(h.operation()),
                    Long.toString(h.length()), error == null ? "" : error));
        }
        assertEquals(expected, out.strip().lines().toList());
    }

    private static byte[] changed(byte[] message, int at, byte value) {
        byte[] copy = message.clone();
        copy[at] = value;
        return copy;
    }

    private static byte[] sendOnly(int msn, byte[] payload) {
        Segmenter s = new Segmenter(new FramingConfig(1024, false, 64));
        s.beginSend(msn, msn, MemorySegment.ofArray(payload), 0, payload.length);
        byte[] out = new byte[FrameHeader.LENGTH + 4 + payload.length];
        MemorySegment m = MemorySegment.ofArray(out);
        int headerBytes = s.writeFrame(0, m, 0);
        MemorySegment.copy(s.source(), s.payloadOffset(), m, headerBytes, s.payloadLength());
        return out;
    }
}
