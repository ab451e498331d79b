package io.zcnet.examples;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * The peers and tools the tests drive (sockperf, tcpdump, tshark) are Debian packages: a test that needs one
 * installs it with apt-get when it is missing and this is root (CI is), after {@code apt-get update} if the
 * first try fails, rather than skipping on every fresh machine.
 */
final class DebianPackages {

    private DebianPackages() {
    }

    /**
     * Makes {@code present} hold by installing {@code packages} if it does not yet.
     *
     * @return null once {@code present} holds; otherwise one line saying why it does not
     */
    static synchronized String ensure(BooleanSupplier present, String... packages) {
        if (present.getAsBoolean()) {
            return null;
        }
        String wanted = "apt-get install -y " + String.join(" ", packages);
        if (!isRoot()) {
            return "missing, and only root may install it: " + wanted;
        }
        String said = install(packages);
        return present.getAsBoolean() ? null : "still missing after `" + wanted + "`: " + said;
    }

    private static boolean isRoot() {
        try {
            Process p = new ProcessBuilder("id", "-u").redirectErrorStream(true).start();
            String uid = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            return p.waitFor() == 0 && uid.equals("0");
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The install, once more after {@code apt-get update} if it failed; its last line of output. */
    private static String install(String... packages) {
        List<String> argv = new ArrayList<>(List.of("env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y"));
        argv.addAll(List.of(packages));
        try {
            String said = run(argv);
            if (said != null) {
                run(List.of("apt-get", "update"));
                said = run(argv);
            }
            return said == null ? "installed" : said;
        } catch (IOException e) {
            return e.toString();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    /** Null if {@code argv} succeeded, else its last line of output. */
    private static String run(List<String> argv) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (p.waitFor() == 0) {
            return null;
        }
        String[] lines = out.split("\n");
        return argv.get(argv.size() - 1) + " exited " + p.exitValue() + ": " + lines[lines.length - 1];
    }
}
