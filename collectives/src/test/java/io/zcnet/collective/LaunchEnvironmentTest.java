package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.collective.LaunchEnvironment.Launcher;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What {@link LaunchEnvironment#detect} reads from each launcher's variables, and what it refuses. */
class LaunchEnvironmentTest {

    private static Map<String, String> env(String... pairs) {
        Map<String, String> env = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            env.put(pairs[i], pairs[i + 1]);
        }
        return env;
    }

    private static void assertLaunch(LaunchEnvironment e, Launcher launcher, int rank, int size, int localRank,
            String host, int port, String storeFrom) {
        assertEquals(new LaunchEnvironment(launcher, rank, size, localRank, InetSocketAddress.createUnresolved(host,
                port), storeFrom), e);
    }

    private static void assertRefused(Map<String, String> env, String message) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LaunchEnvironment.detect(env));
        assertTrue(e.getMessage().contains(message), () -> "'" + e.getMessage() + "' does not say '" + message + "'");
    }

    @Test
    void theJobSecretComesFromItsVariableUnlessTheConfigHasOne() {
        CommunicatorConfig none = CommunicatorConfig.defaults();
        String secret = "0123456789abcdef0123456789abcdef";
        Map<String, String> env = Map.of(LaunchEnvironment.JOB_SECRET_VARIABLE, secret);
        assertArrayEquals(secret.getBytes(StandardCharsets.UTF_8),
                LaunchEnvironment.withJobSecretOf(env, none).jobSecret());
        assertEquals(null, LaunchEnvironment.withJobSecretOf(Map.of(), none).jobSecret());
        byte[] own = "the config's own secret, kept".getBytes(StandardCharsets.UTF_8);
        assertArrayEquals(own, LaunchEnvironment.withJobSecretOf(env, none.withJobSecret(own)).jobSecret());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LaunchEnvironment.withJobSecretOf(Map.of(LaunchEnvironment.JOB_SECRET_VARIABLE, "short"), none));
        assertTrue(e.getMessage().contains(LaunchEnvironment.JOB_SECRET_VARIABLE), e::getMessage);
    }

    @Test
    void torchrunNamesRankSizeLocalRankAndTheStore() {
        assertLaunch(LaunchEnvironment.detect(env("RANK", "5", "WORLD_SIZE", "8", "LOCAL_RANK", "1",
                "MASTER_ADDR", "trainer-master-0", "MASTER_PORT", "23456")),
                Launcher.TORCHRUN, 5, 8, 1, "trainer-master-0", 23456, "MASTER_ADDR:MASTER_PORT");
    }

    @Test
    void aKubernetesOperatorSetsNoLocalRank() {
        assertLaunch(LaunchEnvironment.detect(env("RANK", "0", "WORLD_SIZE", "2", "MASTER_ADDR", "10.1.2.3",
                "MASTER_PORT", "23456")), Launcher.TORCHRUN, 0, 2, -1, "10.1.2.3", 23456, "MASTER_ADDR:MASTER_PORT");
    }

    @Test
    void openMpiTakesTheStoreFromZcnetStore() {
        assertLaunch(LaunchEnvironment.detect(env("OMPI_COMM_WORLD_RANK", "3", "OMPI_COMM_WORLD_SIZE", "4",
                "OMPI_COMM_WORLD_LOCAL_RANK", "3", "ZCNET_STORE", "127.0.0.1:7000")),
                Launcher.OPEN_MPI, 3, 4, 3, "127.0.0.1", 7000, "ZCNET_STORE");
    }

    @Test
    void slurmHostsTheStoreOnTheStepsFirstNodeAtItsDefaultPort() {
        assertLaunch(LaunchEnvironment.detect(env("SLURM_PROCID", "6", "SLURM_NTASKS", "16", "SLURM_LOCALID", "2",
                "SLURM_STEP_NODELIST", "node[03-06,09],gpu1")),
                Launcher.SLURM, 6, 16, 2, "node03", LaunchEnvironment.SLURM_STORE_PORT, "SLURM_STEP_NODELIST's first host");
    }

    @Test
    void pmiTakesHydrasLocalRankWhereItIsSet() {
        assertLaunch(LaunchEnvironment.detect(env("PMI_RANK", "1", "PMI_SIZE", "3", "MPI_LOCALRANKID", "0",
                "ZCNET_STORE", "[::1]:9000")), Launcher.PMI, 1, 3, 0, "::1", 9000, "ZCNET_STORE");
    }

    @Test
    void zcnetStoreComesBeforeTheLaunchersOwnAddress() {
        assertLaunch(LaunchEnvironment.detect(env("RANK", "1", "WORLD_SIZE", "2", "MASTER_ADDR", "m", "MASTER_PORT",
                "29500", "ZCNET_STORE", "m:29600")), Launcher.TORCHRUN, 1, 2, -1, "m", 29600, "ZCNET_STORE");
    }

    /** torchrun started by srun, one agent per node: the ranks are torchrun's, the step counts the agents. */
    @Test
    void theInnerLauncherWinsOverTheOneThatStartedIt() {
        assertLaunch(LaunchEnvironment.detect(env("RANK", "5", "WORLD_SIZE", "8", "LOCAL_RANK", "1", "MASTER_ADDR",
                "node01", "MASTER_PORT", "29400", "SLURM_PROCID", "1", "SLURM_NTASKS", "2", "SLURM_LOCALID", "0",
                "SLURM_STEP_NODELIST", "node[01-02]")), Launcher.TORCHRUN, 5, 8, 1, "node01", 29400,
                "MASTER_ADDR:MASTER_PORT");
        assertLaunch(LaunchEnvironment.detect(env("OMPI_COMM_WORLD_RANK", "2", "OMPI_COMM_WORLD_SIZE", "4",
                "SLURM_PROCID", "0", "SLURM_NTASKS", "1", "SLURM_STEP_NODELIST", "n1", "ZCNET_STORE", "n1:1")),
                Launcher.OPEN_MPI, 2, 4, -1, "n1", 1, "ZCNET_STORE");
    }

    /** mpirun in a batch script: the script's own SLURM_PROCID=0 of all the job's tasks is no step of ranks. */
    @Test
    void aBatchScriptsEnvironmentIsNoSlurmLaunch() {
        assertLaunch(LaunchEnvironment.detect(env("OMPI_COMM_WORLD_RANK", "2", "OMPI_COMM_WORLD_SIZE", "4",
                "SLURM_PROCID", "0", "SLURM_NTASKS", "4", "SLURM_JOB_NODELIST", "n1", "ZCNET_STORE", "n1:1")),
                Launcher.OPEN_MPI, 2, 4, -1, "n1", 1, "ZCNET_STORE");
        assertRefused(env("SLURM_PROCID", "0", "SLURM_NTASKS", "4", "SLURM_JOB_NODELIST", "n1"),
                "no launcher's variables are set");
    }

    @Test
    void twoLaunchersOfTheSameSizeWithDifferentRanksDisagree() {
        assertRefused(env("SLURM_PROCID", "2", "SLURM_NTASKS", "4", "SLURM_STEP_NODELIST", "n[1-4]", "PMI_RANK", "3",
                "PMI_SIZE", "4"), "two launchers disagree: SLURM_PROCID=2 (Slurm) but PMI_RANK=3 (PMI), both of 4 ranks");
        assertLaunch(LaunchEnvironment.detect(env("SLURM_PROCID", "2", "SLURM_NTASKS", "4", "SLURM_STEP_NODELIST",
                "n[1-4]", "PMI_RANK", "2", "PMI_SIZE", "4")), Launcher.SLURM, 2, 4, -1, "n1",
                LaunchEnvironment.SLURM_STORE_PORT, "SLURM_STEP_NODELIST's first host");
    }

    @ParameterizedTest
    @CsvSource(delimiter = ';', value = {
        "RANK=4,WORLD_SIZE=4;                    RANK=4 is not below WORLD_SIZE=4 (torchrun-style launch)",
        "RANK=-1,WORLD_SIZE=4;                   RANK=-1 is negative (torchrun-style launch)",
        "RANK=one,WORLD_SIZE=4;                  RANK='one' is not a number (torchrun-style launch)",
        "RANK=0,WORLD_SIZE=0;                    WORLD_SIZE=0 is outside 1..65536",
        "RANK=0,WORLD_SIZE=65537;                WORLD_SIZE=65537 is outside 1..65536",
        "RANK=0,WORLD_SIZE=99999999999;          WORLD_SIZE='99999999999' is not a number",
        "RANK=0;                                 WORLD_SIZE is not set, but RANK is (torchrun-style launch)",
        "WORLD_SIZE=2;                           RANK is not set, but WORLD_SIZE is",
        "RANK=0,WORLD_SIZE=2,LOCAL_RANK=2;       LOCAL_RANK=2 is not below WORLD_SIZE=2",
        "RANK=0,WORLD_SIZE=2,LOCAL_RANK=x;       LOCAL_RANK='x' is not a number",
        "RANK=0,WORLD_SIZE=2,MASTER_PORT=1;      MASTER_ADDR is not set (torchrun-style launch), nor is ZCNET_STORE",
        "RANK=0,WORLD_SIZE=2,MASTER_ADDR=h;      MASTER_PORT is not set (torchrun-style launch), nor is ZCNET_STORE",
        "RANK=0,WORLD_SIZE=2,MASTER_ADDR=h,MASTER_PORT=0;  MASTER_PORT: port '0' is not a number in 1..65535",
        "OMPI_COMM_WORLD_RANK=0,OMPI_COMM_WORLD_SIZE=2;    ZCNET_STORE is not set, and Open MPI names no store",
        "PMI_RANK=0,PMI_SIZE=2;                            ZCNET_STORE is not set, and PMI names no store",
        "PMI_RANK=0,PMI_SIZE=2,ZCNET_STORE=host;           ZCNET_STORE='host' is not host:port",
        "PMI_RANK=0,PMI_SIZE=2,ZCNET_STORE=:80;            ZCNET_STORE=':80' is not host:port",
        "PMI_RANK=0,PMI_SIZE=2,ZCNET_STORE=::1:80;         ZCNET_STORE='::1:80' is not host:port",
        "PMI_RANK=0,PMI_SIZE=2,ZCNET_STORE=h:http;         ZCNET_STORE: port 'http' is not a number in 1..65535",
        "SLURM_PROCID=0,SLURM_NTASKS=2,SLURM_STEP_NODELIST=n[1-;  SLURM_STEP_NODELIST='n[1-' is not a Slurm host list",
        "OMPI_COMM_WORLD_RANK=0,OMPI_COMM_WORLD_SIZE=2,ZCNET_STORE=h:1,PMI_RANK=x,PMI_SIZE=2;  PMI_RANK='x' is not a number",
        "USER=root;                              no launcher's variables are set"})
    void aBadEnvironmentIsRefusedNamingTheVariable(String variables, String message) {
        Map<String, String> env = new HashMap<>();
        for (String pair : variables.split(",")) {
            int eq = pair.indexOf('=');
            env.put(pair.substring(0, eq), pair.substring(eq + 1));
        }
        assertRefused(env, message);
    }

    @Test
    void theEnvironmentAndTheConfigAreRequired() {
        assertRefused(null, "an environment is required");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Communicator.fromEnvironment(env("RANK", "0", "WORLD_SIZE", "1"), null));
        assertEquals("a config is required", e.getMessage());
    }

    @Test
    void anUnresolvableStoreHostIsNamedWithItsVariable() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Communicator.fromEnvironment(env("RANK", "0", "WORLD_SIZE", "1", "MASTER_ADDR",
                        "no-such-host.invalid", "MASTER_PORT", "29500"), CommunicatorConfig.defaults()));
        assertEquals("cannot resolve the store host 'no-such-host.invalid' (MASTER_ADDR:MASTER_PORT)", e.getMessage());
    }
}
