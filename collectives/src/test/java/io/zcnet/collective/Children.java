package io.zcnet.collective;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * The child processes of one test (rank JVMs, or a launcher and the ranks it starts), their output read
 * line by line as it comes, every one killed at the end with all it started, whatever happened.
 */
final class Children implements AutoCloseable {
    /** Prefixes and names of what launchers set: the test's own launcher, if any, must not reach a child. */
    private static final List<String> LAUNCH_PREFIXES = List.of("OMPI_", "PMIX_", "PMI_", "SLURM_");
    private static final List<String> LAUNCH_NAMES = List.of("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR",
            "MASTER_PORT", "MPI_LOCALRANKID", LaunchEnvironment.STORE_VARIABLE);

    private final List<Process> processes = new ArrayList<>();

    /** A started child: its standard output and error, a line at a time. */
    record Child(Process process, BlockingQueue<String> out, BlockingQueue<String> err) {
    }

    /** {@code java} with this test's class path, native access and {@code -Dzcnet.engine}, running {@code main}. */
    static List<String> java(String engine, Class<?> main, String... args) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "--enable-native-access=ALL-UNNAMED", "-Xmx256m", "-Dzcnet.engine=" + engine, "-cp",
                System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        return command;
    }

    /** Starts {@code command} with this environment less every launch variable, plus {@code environment}. */
    Child start(List<String> command, Map<String, String> environment) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().keySet().removeIf(k -> LAUNCH_NAMES.contains(k)
                || LAUNCH_PREFIXES.stream().anyMatch(k::startsWith));
        builder.environment().putAll(environment);
        Process p = builder.start();
        processes.add(p);
        String name = p.pid() + "-" + Path.of(command.get(0)).getFileName();
        return new Child(p, lines(p.getInputStream(), name + "-out"), lines(p.getErrorStream(), name + "-err"));
    }

    private static BlockingQueue<String> lines(InputStream stream, String thread) {
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread.ofPlatform().daemon().name(thread).start(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // the process was killed: its lines end here
            }
        });
        return lines;
    }

    @Override
    public void close() {
        for (Process p : processes) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }
}
