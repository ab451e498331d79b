package io.zcnet.qp.lab;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One external command run to its end within a deadline: its exit code and everything it printed. A
 * command that outlives its deadline is killed with its children and reported as a failure, so no lab
 * step can hang a test run. Any thread.
 */
record Command(List<String> argv, int exit, String stdout, String stderr) {

    /** Thrown when a command cannot start, outlives its deadline or (for {@link #orThrow}) fails. */
    static final class Failed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Failed(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** Runs {@code argv} with nothing on its standard input. */
    static Command run(Duration timeout, List<String> argv) {
        return run(timeout, argv, null);
    }

    /**
     * Runs {@code argv}, writing {@code stdin} (if not null) to its standard input, and waits up to
     * {@code timeout}. A non-zero exit is returned, not thrown: callers that need success say
     * {@link #orThrow}.
     */
    static Command run(Duration timeout, List<String> argv, String stdin) {
        Process process;
        try {
            process = new ProcessBuilder(argv).start();
        } catch (IOException e) {
            throw new Failed("cannot start `" + String.join(" ", argv) + "`: " + e.getMessage(), e);
        }
        // Both streams are drained while the command runs: a full pipe would stall it until the deadline.
        CompletableFuture<String> out = drain(process.getInputStream());
        CompletableFuture<String> err = drain(process.getErrorStream());
        try (OutputStream in = process.getOutputStream()) {
            if (stdin != null) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            // The command exited without reading its input: its exit code and stderr tell why.
        }
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                kill(process);
                throw new Failed("`" + String.join(" ", argv) + "` did not finish within " + timeout.toMillis()
                        + " ms and was killed; stderr: " + collected(err), null);
            }
            return new Command(List.copyOf(argv), process.exitValue(), collected(out), collected(err));
        } catch (InterruptedException e) {
            kill(process);
            Thread.currentThread().interrupt();
            throw new Failed("interrupted while running `" + String.join(" ", argv) + "`", e);
        }
    }

    /** This result, or a {@link Failed} naming the command line, its exit code and its stderr. */
    Command orThrow() {
        if (exit != 0) {
            throw new Failed("`" + String.join(" ", argv) + "` exited " + exit + ": " + stderr.strip()
                    + (stdout.isBlank() ? "" : " (stdout: " + stdout.strip() + ")"), null);
        }
        return this;
    }

    /** Kills {@code process} and whatever it started, at once: a lab process has no state worth saving. */
    static void kill(Process process) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }

    private static CompletableFuture<String> drain(InputStream stream) {
        CompletableFuture<String> text = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try (stream) {
                text.complete(new String(stream.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                text.completeExceptionally(new UncheckedIOException(e));
            }
        });
        return text;
    }

    /** What a drained stream held; a killed command's streams close at once, so the wait is short. */
    private static String collected(CompletableFuture<String> text) {
        try {
            return text.get(5, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            return "(unreadable: " + e + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "(interrupted)";
        }
    }
}
