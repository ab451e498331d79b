package io.zcnet.gettingstarted;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One child process of a test: its output goes to files under {@code logs} (kept for a failed run), read
 * back as it runs. Every wait is bounded; {@link #close()} kills what is still running.
 */
final class Program implements AutoCloseable {
    private final String name;
    private final Process process;
    private final Path out;
    private final Path err;

    private Program(String name, Process process, Path out, Path err) {
        this.name = name;
        this.process = process;
        this.out = out;
        this.err = err;
    }

    /** Starts {@code command} in {@code directory}. */
    static Program start(String name, Path directory, Path logs, ProcessBuilder command) throws IOException {
        Files.createDirectories(logs);
        Path out = logs.resolve(name + ".out");
        Path err = logs.resolve(name + ".err");
        Process process = command
                .directory(directory.toFile())
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .start();
        return new Program(name, process, out, err);
    }

    /** Waits for a line of standard output that {@code pattern} finds; returns its first group. */
    String awaitOutput(Pattern pattern, Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            Matcher m = pattern.matcher(stdout());
            if (m.find()) {
                return m.group(1);
            }
            if (!process.isAlive()) {
                break;
            }
            Thread.sleep(20);
        }
        throw new AssertionError(name + " printed no line matching " + pattern + " within " + timeout + describe());
    }

    /** Waits for the process to exit by itself; fails the test if it does not, or exits non-zero. */
    void awaitSuccess(Duration timeout) throws IOException, InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError(name + " did not exit within " + timeout + describe());
        }
        if (process.exitValue() != 0) {
            throw new AssertionError(name + " exited with " + process.exitValue() + describe());
        }
    }

    String stdout() throws IOException {
        return Files.readString(out);
    }

    String stderr() throws IOException {
        return Files.readString(err);
    }

    /** Both outputs, for a failure message. */
    String describe() throws IOException {
        return "\n--- " + name + " stdout:\n" + stdout() + "--- " + name + " stderr:\n" + stderr();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
