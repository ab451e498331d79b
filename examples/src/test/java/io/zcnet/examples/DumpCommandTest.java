package io.zcnet.examples;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code zcnet dump} through the CLI: JSON lines to frames and back. */
class DumpCommandTest {

    private static byte[] runCapturingStdout(int expectedExit, String... args) {
        return run(expectedExit, new ByteArrayOutputStream(), args);
    }

    /** Runs the CLI with stdout captured (returned) and stderr captured into {@code errors}. */
    private static byte[] run(int expectedExit, ByteArrayOutputStream errors, String... args) {
        PrintStream originalOut = System.out;
        PrintStream originalErr = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(captured, true, StandardCharsets.UTF_8);
                PrintStream err = new PrintStream(errors, true, StandardCharsets.UTF_8)) {
            System.setOut(out);
            System.setErr(err);
            assertEquals(expectedExit, ZcnetCli.commandLine().execute(args), "exit code of dump " + String.join(" ", args));
        } finally {
            System.setOut(originalOut);
            System.setErr(originalErr);
        }
        return captured.toByteArray();
    }

    @Test
    void encodedFramesDumpBackWithTheSameFields(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("frames.jsonl");
        Files.writeString(json, """
                {"opcode":"SEND_ONLY","msn":7,"rsn":3,"imm_data":0,"payload_hex":"0102030405"}
                {"opcode":"RDMA_WRITE_ONLY","msn":8,"rkey":305419896,"region_offset":4096,"payload_hex":"ff"}
                """);
        byte[] frames = runCapturingStdout(0, "dump", "--encode", "--icrc", json.toString());
        assertEquals(32 + 4 + 5 + 32 + 12 + 1, frames.length, "two frames: base headers, the SEND's RSN, a tagged extension, payloads");
        Path raw = dir.resolve("frames.bin");
        Files.write(raw, frames);
        String[] lines = new String(runCapturingStdout(0, "dump", "--json", raw.toString()), StandardCharsets.UTF_8)
                .strip().split("\n");
        assertEquals(2, lines.length);
        assertTrue(lines[0].contains("\"opcode\":\"SEND_ONLY\"") && lines[0].contains("\"msn\":7")
                && lines[0].contains("\"length\":5") && lines[0].contains("\"icrc_ok\":true")
                && lines[0].endsWith(",\"rsn\":3}"), lines[0]);
        assertTrue(lines[1].contains("\"rkey\":305419896") && lines[1].contains("\"region_offset\":4096"), lines[1]);
    }

    /** The SEND_PACKED vector of docs/wire-format.md (section 17.8): "hello", then "net!" with immediate data. */
    private static final String PACKED_VECTOR = "62c0ffff00000000f0a073ae002dc6c0002dc2d80000000000000015000400010000001400000005"
            + "68656c6c6f80000004cafef00d6e657421";

    @Test
    void aPackedFrameEncodesToTheSpecificationsBytesAndDumpsWithItsRecords(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("packed.jsonl");
        Files.writeString(json, """
                {"opcode":"SEND_PACKED","msn":65535,"rsn":20,"ack_request":true,"timestamp_present":true,\
                "timestamp":3000000,"timestamp_echo":2999000,"subflow":1,\
                "payload_hex":"0000000568656c6c6f80000004cafef00d6e657421"}
                """);
        byte[] frame = runCapturingStdout(0, "dump", "--encode", "--icrc", json.toString());
        assertArrayEquals(HexFormat.of().parseHex(PACKED_VECTOR), frame, "the ICRC leaves out what each subflow sets");
        Path raw = dir.resolve("packed.bin");
        Files.write(raw, frame);
        String line = new String(runCapturingStdout(0, "dump", "--json", raw.toString()), StandardCharsets.UTF_8).strip();
        Map<String, Object> decoded = FlatJson.parse(line);
        assertEquals("SEND_PACKED", decoded.get("opcode"));
        assertEquals(true, decoded.get("icrc_ok"));
        assertEquals(List.of(
                Map.of("msn", 65535L, "rsn", 20L, "immediate_present", false, "message_length", 5L),
                Map.of("msn", 0L, "rsn", 21L, "immediate_present", true, "message_length", 4L, "imm_data", 0xCAFEF00DL)),
                decoded.get("records"), line);
        String text = new String(runCapturingStdout(0, "dump", raw.toString()), StandardCharsets.UTF_8).strip();
        assertTrue(text.endsWith(" rsn=20 records=2 [msn=65535 rsn=20 len=5] [msn=0 rsn=21 len=4 imm=3405705229]"), text);
    }

    @Test
    void aTruncatedStreamStopsWithTheBytePosition(@TempDir Path dir) throws Exception {
        Path raw = dir.resolve("short.bin");
        Files.write(raw, new byte[] {0x40, 0x04, 0, 1});
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        byte[] out = run(1, errors, "dump", raw.toString());
        String all = new String(out, StandardCharsets.UTF_8) + new String(errors.toByteArray(), StandardCharsets.UTF_8);
        assertTrue(all.contains("at byte 0") && all.contains("TRUNCATED"), "error names position and cause: " + all);
    }

    @Test
    void aNacaMessageShowsItsHeaderAndARefusedOneWhy(@TempDir Path dir) throws Exception {
        // The CHUNK and the split-element CHUNK of docs/wire-format.md, section 20.5, as SENDs to an aggregator.
        String chunk = "4e0105000007011100040002000300000000000b000000100000000200000000"
                + "0000803f000000400000404000008040";
        String split = "4e0105010007012100040002000300000000000b000000060000000200000000000000000000";
        Path json = dir.resolve("naca.jsonl");
        Files.writeString(json, "{\"opcode\":\"SEND_ONLY\",\"msn\":1,\"rsn\":0,\"payload_hex\":\"" + chunk + "\"}\n"
                + "{\"opcode\":\"SEND_ONLY\",\"msn\":2,\"rsn\":1,\"payload_hex\":\"" + split + "\"}\n");
        Path raw = dir.resolve("naca.bin");
        Files.write(raw, runCapturingStdout(0, "dump", "--encode", json.toString()));
        String[] text = new String(runCapturingStdout(0, "dump", raw.toString()), StandardCharsets.UTF_8).strip()
                .split("\n");
        assertTrue(text[0].endsWith(" naca=[CHUNK job=7 rank=2/4 slot=3 seq=11 op=2 FLOAT SUM len=16]"), text[0]);
        assertTrue(text[1].contains(" naca=[CHUNK job=7 rank=2/4 slot=3 seq=11 op=2 DOUBLE SUM len=6 resend error=")
                && text[1].contains("whole DOUBLE elements"), text[1]);
        String[] lines = new String(runCapturingStdout(0, "dump", "--json", raw.toString()), StandardCharsets.UTF_8)
                .strip().split("\n");
        assertTrue(lines[0].contains(",\"naca\":{\"type\":\"CHUNK\",\"flags\":0,\"job\":7,\"collective\":1,\"dtype\":1,"
                + "\"redop\":1,\"ranks\":4,\"rank\":2,\"slot\":3,\"sequence\":11,\"length\":16,\"operation\":2}"), lines[0]);
        assertTrue(lines[1].contains("\"error\":"), lines[1]);
    }
}
