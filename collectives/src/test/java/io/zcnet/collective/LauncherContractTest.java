package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.zcnet.ring.EventLoopConfig;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Ranks started by real launchers, each joining by {@link Communicator#fromEnvironment} ({@link RankProcess}
 * {@code --from-env}): Open MPI's mpirun, and a torchrun-style launcher (this test, doing what torchrun's
 * agent does: one process per rank with {@code RANK}, {@code WORLD_SIZE}, {@code LOCAL_RANK},
 * {@code MASTER_ADDR} and {@code MASTER_PORT} set). Every rank checks every operation against the reference;
 * a rank the launcher kills must fail every other within {@link ProcessRanksTest}'s bound, naming it.
 * Subclassed once per engine, which reaches the ranks as {@code -Dzcnet.engine}.
 */
@Timeout(120)
abstract class LauncherContractTest {
    private static final int SIZE = 4;
    private static final int VICTIM = 1;

    /** How each rank's line ends: these launches set no {@value LaunchEnvironment#JOB_SECRET_VARIABLE}. */
    private static final String NO_SECRET = ", no job secret: anyone may join";

    protected abstract EventLoopConfig.Choice engine();

    @Test
    void mpirunStartsRanksThatJoinFromItsEnvironmentAndAgreeOnEveryOperation() throws Exception {
        String missing = OpenMpi.missing();
        assumeTrue(missing == null, () -> "Open MPI's mpirun: " + missing);
        InetSocketAddress store = ProcessRanksTest.freeAddress();
        String address = store.getAddress().getHostAddress() + ":" + store.getPort();
        List<String> command = new ArrayList<>(List.of("mpirun", "-np", String.valueOf(SIZE), "--oversubscribe",
                "--allow-run-as-root", "-x", LaunchEnvironment.STORE_VARIABLE));
        command.addAll(Children.java(engine().name(), RankProcess.class, "--from-env", "ok"));
        try (Children children = new Children()) {
            Children.Child mpirun = children.start(command, Map.of(LaunchEnvironment.STORE_VARIABLE, address));
            assertTrue(mpirun.process().waitFor(90, TimeUnit.SECONDS), "mpirun still runs after 90 s");
            List<String> out = new ArrayList<>(mpirun.out());
            List<String> err = new ArrayList<>(mpirun.err());
            assertEquals(0, mpirun.process().exitValue(), () -> "mpirun failed: " + out + " " + err);
            Set<String> expected = new TreeSet<>();
            Set<String> detected = new TreeSet<>();
            for (int r = 0; r < SIZE; r++) {
                expected.add("rank " + r + " of " + SIZE + " on " + engine());
                expected.add("rank " + r + " ok");
                detected.add("zcnet: Open MPI launch: rank " + r + " of " + SIZE + ", local rank " + r + ", store "
                        + address + " from ZCNET_STORE" + (r == 0 ? ", hosted by this rank" : "") + NO_SECRET);
            }
            assertEquals(expected, new TreeSet<>(out));
            assertTrue(err.containsAll(detected), () -> err + " lacks one of " + detected);
        }
    }

    @Test
    void torchrunStyleRanksJoinFromTheirEnvironmentAndAgreeOnEveryOperation() throws Exception {
        try (Children children = new Children()) {
            List<Children.Child> ranks = torchrun(children, "ok");
            ProcessRanksTest.awaitLine(ranks, "ok");
            for (int k = 0; k < SIZE; k++) {
                int r = k;
                Children.Child rank = ranks.get(r);
                assertTrue(rank.process().waitFor(30, TimeUnit.SECONDS), "rank " + r + " did not exit");
                assertEquals(0, rank.process().exitValue(), rank.err()::toString);
                String said = rank.err().poll();
                assertTrue(said != null && said.startsWith("zcnet: torchrun-style launch: rank " + r + " of " + SIZE
                        + ", local rank " + r + ", store 127.0.0.1:"), () -> "rank " + r + " said " + said);
                assertEquals(r == 0, said.endsWith(" from MASTER_ADDR:MASTER_PORT, hosted by this rank" + NO_SECRET),
                        said);
            }
        }
    }

    @Test
    void aRankTheLauncherKillsFailsEveryOtherNamingIt() throws Exception {
        try (Children children = new Children()) {
            List<Children.Child> ranks = torchrun(children, "loop");
            ProcessRanksTest.awaitLine(ranks, "ok");
            ProcessRanksTest.killAndAwaitTheOthers(ranks, VICTIM);
        }
    }

    /** Starts the ranks as torchrun does, with its variables, and waits for each to say what it joined. */
    private List<Children.Child> torchrun(Children children, String then) throws IOException, InterruptedException {
        ProcessRanksTest.assumeUsable(engine());
        InetSocketAddress store = ProcessRanksTest.freeAddress();
        List<Children.Child> ranks = new ArrayList<>();
        for (int r = 0; r < SIZE; r++) {
            ranks.add(children.start(Children.java(engine().name(), RankProcess.class, "--from-env", then),
                    Map.of("RANK", String.valueOf(r), "WORLD_SIZE", String.valueOf(SIZE), "LOCAL_RANK", String.valueOf(r),
                            "MASTER_ADDR", store.getAddress().getHostAddress(),
                            "MASTER_PORT", String.valueOf(store.getPort()))));
        }
        ProcessRanksTest.awaitLine(ranks, "of " + SIZE + " on " + engine());
        return ranks;
    }

    /** Debian's openmpi-bin, installed when missing and this is root (CI is), else the reason it is not. */
    private static final class OpenMpi {
        private static String missing() throws IOException, InterruptedException {
            if (found()) {
                return null;
            }
            if (!"0".equals(run("id", "-u"))) {
                return "not installed, and only root may install it (apt-get install -y openmpi-bin)";
            }
            run("apt-get", "update", "-q");
            String said = run("env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-q", "openmpi-bin");
            return found() ? null : "still missing after apt-get install -y openmpi-bin: " + said;
        }

        private static boolean found() throws IOException, InterruptedException {
            return !run("sh", "-c", "command -v mpirun || true").isEmpty();
        }

        /** What {@code argv} printed, its last line. */
        private static String run(String... argv) throws IOException, InterruptedException {
            Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            p.waitFor();
            return out.substring(out.lastIndexOf('\n') + 1);
        }
    }
}
