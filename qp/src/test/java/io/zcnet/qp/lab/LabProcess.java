package io.zcnet.qp.lab;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A process a {@link NetnsLab} started in one of its namespaces. Its stdout and stderr go, interleaved,
 * to one log file for diagnostics; the lab kills it on close, so a test need not. Any thread.
 */
public final class LabProcess {
    private final String description;
    private final Process process;
    private final Path log;

    LabProcess(String description, Process process, Path log) {
        this.description = description;
        this.process = process;
        this.log = log;
    }

    /** The file holding everything it printed (deleted when the lab closes). */
    public Path log() {
        return log;
    }

    /** Everything it printed so far. */
    public String output() {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the log of " + description, e);
        }
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /**
     * Waits until it has printed {@code text} (a server's "ready" line, say).
     *
     * @throws IllegalStateException naming what it printed, if it exits or {@code timeout} passes first
     */
    public void awaitOutput(String text, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!output().contains(text)) {
            if (!process.isAlive() && !output().contains(text)) { // read again: it may have printed, then exited
                throw new IllegalStateException(description + " exited " + process.exitValue()
                        + " before printing \"" + text + "\"; it printed: " + output());
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(description + " did not print \"" + text + "\" within "
                        + timeout.toMillis() + " ms; it printed: " + output());
            }
            Thread.sleep(10);
        }
    }

    /** Its exit code once it ends within {@code timeout}, else the process is killed and that said. */
    public int awaitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            kill();
            throw new IllegalStateException(description + " still ran after " + timeout.toMillis()
                    + " ms and was killed; it printed: " + output());
        }
        return process.exitValue();
    }

    /** Kills it and whatever it started, and waits (bounded) for it to be gone. */
    void kill() throws InterruptedException {
        Command.kill(process);
        process.waitFor(5, TimeUnit.SECONDS);
    }

    @Override
    public String toString() {
        String state = process.isAlive() ? "running" : "exited " + process.exitValue();
        return description + " (" + state + ", log " + log + ")";
    }
}
