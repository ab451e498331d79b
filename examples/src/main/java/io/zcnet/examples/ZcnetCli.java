package io.zcnet.examples;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code ./zcnet} command line: one subcommand per program. */
@Command(name = "zcnet", mixinStandardHelpOptions = true, version = "zcnet 0.1.0",
        description = "Zero-copy networking for the JVM: io_uring through FFM, with a NIO fallback.",
        subcommands = {DemoCommand.class, BulkCommand.class, AllreduceCommand.class, EchoServerCommand.class,
                EchoClientCommand.class, InfoCommand.class, DumpCommand.class, QpServerCommand.class, QpLoadCommand.class,
                QpFloodCommand.class, AggregatorCommand.class,
                CommandLine.HelpCommand.class})
public final class ZcnetCli implements Runnable {

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The configured command line (also used by tests). */
    public static CommandLine commandLine() {
        return new CommandLine(new ZcnetCli())
                .setCaseInsensitiveEnumValuesAllowed(true)
                .setExecutionExceptionHandler((e, cmd, parsed) -> {
                    if (e instanceof IllegalArgumentException) { // a bad value: the message is the whole story
                        cmd.getErr().println("zcnet " + cmd.getCommandName() + ": " + e.getMessage());
                        cmd.getErr().flush();
                        return 1;
                    }
                    throw e;
                });
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
