package io.zcnet.examples;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The CLI's help and argument checking, in process. */
class CliTest {

    /** Runs the CLI in process and returns its standard output and error, one after the other. */
    static String run(int expectedExit, String... args) {
        CommandLine cli = ZcnetCli.commandLine();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cli.setOut(new PrintWriter(out));
        cli.setErr(new PrintWriter(err));
        int exit = cli.execute(args);
        if (expectedExit == 0) {
            assertEquals(0, exit, "exit code; stderr: " + err);
        } else {
            assertNotEquals(0, exit, "expected failure; stdout: " + out);
        }
        return out + "\n" + err;
    }

    @Test
    void topLevelHelpListsEverySubcommand() {
        String help = run(0, "--help");
        for (String sub : new String[] {"demo", "bulk", "allreduce", "echo-server", "echo-client", "info", "dump"}) {
            assertTrue(help.contains(sub), "help mentions " + sub + ":\n" + help);
        }
    }

    @Test
    void subcommandHelpDescribesOptions() {
        assertTrue(run(0, "echo-client", "--help").contains("--mode"));
        assertTrue(run(0, "echo-server", "--help").contains("--engine"));
        assertTrue(run(0, "echo-server", "--help").contains("--protocol"));
        assertTrue(run(0, "demo", "--help").contains("--seconds"));
        assertTrue(run(0, "bulk", "--help").contains("--verify"));
    }

    @Test
    void badArgumentsFailWithAMessage() {
        assertTrue(run(2, "echo-client", "--mode", "sideways").contains("sideways"));
        assertTrue(run(1, "echo-client", "--port", "0").contains("--port"));
        assertTrue(run(1, "echo-server", "--engine", "quantum").contains("use auto, uring or nio"));
        assertTrue(run(2, "echo-server", "--protocol", "http").contains("http"));
        assertTrue(run(2, "no-such-command").contains("no-such-command"));
    }
}
