package io.zcnet.examples;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code zcnet dump}: the wire-format dump tool ({@link WireDump}) on the command line. */
@Command(name = "dump", mixinStandardHelpOptions = true,
        description = {"Print a raw zcnet frame stream one frame per line, or encode frames from JSON lines.",
                "Stops at the first frame it must reject, with the error and its byte position.",
                "Example: ./zcnet dump --json capture.bin | ./zcnet dump --encode > same.bin"})
final class DumpCommand implements Callable<Integer> {
    @Option(names = "--json", description = "One JSON object per frame, fields named as in docs/wire-format.md"
            + " (rsn: the receive a SEND frame or the last frame of a WRITE with immediate consumes).")
    boolean json;

    @Option(names = "--payload", description = "With --json: add payload_hex, so the output re-encodes exactly.")
    boolean payload;

    @Option(names = "--mss", paramLabel = "BYTES", description = "Maximum segment size the frames were cut to.")
    Integer mss;

    @Option(names = "--encode", description = "Read JSON lines, write raw frames to stdout.")
    boolean encode;

    @Option(names = "--icrc", description = "With --encode: compute and fill the ICRC of every frame.")
    boolean icrc;

    @Parameters(arity = "0..1", paramLabel = "FILE", description = "Input file; '-' or none for stdin.")
    String file;

    @Override
    public Integer call() {
        List<String> args = new ArrayList<>();
        if (json) {
            args.add("--json");
        }
        if (payload) {
            args.add("--payload");
        }
        if (mss != null) {
            args.add("--mss");
            args.add(Integer.toString(mss));
        }
        if (encode) {
            args.add("--encode");
        }
        if (icrc) {
            args.add("--icrc");
        }
        if (file != null) {
            args.add(file);
        }
        PrintStream out = System.out;
        int code = WireDump.run(args.toArray(String[]::new), System.in, out, System.err);
        out.flush();
        return code;
    }
}
