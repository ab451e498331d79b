package io.zcnet.collective;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * What the launcher that started this process says about the communicator: which launcher, this rank, the
 * number of ranks, the rank's index on its host, and where the rendezvous store is. Read by
 * {@link Communicator#fromEnvironment} from the variables each launcher sets ({@link #detect}; the docs'
 * "Launching ranks" lists them all).
 *
 * <p>Launchers nest: torchrun runs under srun, mpirun in a Slurm allocation, and a process sees the outer
 * launcher's variables beside the inner one's. The inner launcher is the one that started the process, so
 * detection takes the first of {@link Launcher}'s order (innermost first) that is present. An outer one
 * counts other processes (nodes, agents) and so has another size; one that claims the same size but another
 * rank contradicts the inner one, and detection fails rather than guess.
 *
 * @param launcher  whose variables were read
 * @param rank      this rank, 0 .. {@code size - 1}
 * @param size      the number of ranks, 1 .. 65536
 * @param localRank this rank's index among the ranks on its host, or -1 where the launcher does not say
 * @param store     the rendezvous store's address as the environment names it (unresolved: resolving is
 *                  {@link Communicator#fromEnvironment}'s, at the time of joining)
 * @param storeFrom the variables the store's address came from, for messages
 */
public record LaunchEnvironment(Launcher launcher, int rank, int size, int localRank, InetSocketAddress store,
        String storeFrom) {

    /**
     * The one variable that names the rendezvous store, {@code host:port} ({@code [v6]:port} for an IPv6
     * address): needed under launchers that have no such address (Open MPI, PMI), and taken before the
     * launcher's own where it has one (torchrun's {@code MASTER_ADDR}, whose port torch.distributed's own
     * store may hold already; Slurm's first node).
     */
    public static final String STORE_VARIABLE = "ZCNET_STORE";

    /**
     * The variable that gives every rank the job secret ({@link CommunicatorConfig#withJobSecret}): 16 to 64
     * characters (their UTF-8 bytes), e.g. {@code openssl rand -hex 32}, the same for every rank; set it in the
     * launcher's environment (it passes it on, {@code mpirun -x} under Open MPI), never on a command line, which
     * other users of the host can read. Unset: no secret, and anyone who reaches the store may join. A secret the
     * config has already is kept.
     */
    public static final String JOB_SECRET_VARIABLE = "ZCNET_JOB_SECRET";

    /**
     * The store's port under Slurm without {@value #STORE_VARIABLE}, on the step's first node: torchrun's
     * default port, since a Slurm step that runs zcnet ranks runs no torchrun store beside them.
     */
    public static final int SLURM_STORE_PORT = 29500;

    private static final int MAX_SIZE = 1 << 16;

    /** The launchers detected, in the order of detection: the one that starts processes itself first. */
    public enum Launcher {
        /**
         * torchrun, and what starts ranks as it does: Kubernetes' training operators (PyTorchJob), Ray,
         * DeepSpeed. {@code RANK}, {@code WORLD_SIZE}, {@code LOCAL_RANK} (optional: one rank per pod), the
         * store at {@code MASTER_ADDR:MASTER_PORT}.
         */
        TORCHRUN("torchrun-style", "RANK", "WORLD_SIZE", "LOCAL_RANK"),
        /** Open MPI's mpirun: {@code OMPI_COMM_WORLD_RANK}, {@code _SIZE}, {@code _LOCAL_RANK}. */
        OPEN_MPI("Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
        /**
         * A Slurm job step (srun): {@code SLURM_PROCID}, {@code SLURM_NTASKS}, {@code SLURM_LOCALID}, the
         * store on the first host of {@code SLURM_STEP_NODELIST}. A batch script's own environment, which
         * has no step node list, is not a launch of ranks (it says rank 0 of all the job's tasks) and is
         * not detected.
         */
        SLURM("Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),
        /** A PMI process manager (MPICH's and Intel MPI's Hydra): {@code PMI_RANK}, {@code PMI_SIZE}. */
        PMI("PMI", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID");

        private final String label;
        private final String rankVariable;
        private final String sizeVariable;
        private final String localRankVariable;

        Launcher(String label, String rankVariable, String sizeVariable, String localRankVariable) {
            this.label = label;
            this.rankVariable = rankVariable;
            this.sizeVariable = sizeVariable;
            this.localRankVariable = localRankVariable;
        }

        private boolean present(Map<String, String> env) {
            boolean set = env.get(rankVariable) != null || env.get(sizeVariable) != null;
            return this == SLURM ? set && env.get("SLURM_STEP_NODELIST") != null : set;
        }

        /** {@return the launcher's name for people} */
        @Override
        public String toString() {
            return label;
        }
    }

    /**
     * Checks every component.
     *
     * @throws IllegalArgumentException if a component is null, {@code size} is outside 1 .. 65536,
     *                                  {@code rank} or {@code localRank} is not below it, {@code rank} is
     *                                  negative or {@code localRank} below -1
     */
    public LaunchEnvironment {
        if (launcher == null || store == null || storeFrom == null) {
            throw new IllegalArgumentException("launcher, store and storeFrom are required");
        }
        if (size < 1 || size > MAX_SIZE || rank < 0 || rank >= size || localRank < -1 || localRank >= size) {
            throw new IllegalArgumentException("rank " + rank + ", local rank " + localRank + " and size " + size
                    + " do not fit: need 0 <= rank < size <= " + MAX_SIZE + ", -1 <= local rank < size");
        }
    }

    /**
     * Reads the launch from {@code env}, a process environment ({@link System#getenv()}, or a map in tests):
     * the first launcher of {@link Launcher}'s order whose rank or size variable is set, every other one
     * checked against it, and the store from {@value #STORE_VARIABLE} or else the launcher's own address.
     *
     * @param env the environment, variable to value
     * @return what the environment says
     * @throws IllegalArgumentException naming the variable, if {@code env} is null, no launcher's variables
     *                                  are set, a launcher's rank or size is missing, not a number, negative,
     *                                  or out of range (rank not below size, size above 65536), its local rank
     *                                  is so, two launchers claim the same size with different ranks, or no
     *                                  store address is set or it is not {@code host:port}
     */
    public static LaunchEnvironment detect(Map<String, String> env) {
        if (env == null) {
            throw new IllegalArgumentException("an environment is required");
        }
        Launcher found = null;
        int rank = 0;
        int size = 0;
        for (Launcher l : Launcher.values()) {
            if (!l.present(env)) {
                continue;
            }
            int s = number(env, l, l.sizeVariable);
            if (s < 1 || s > MAX_SIZE) {
                throw new IllegalArgumentException(l.sizeVariable + "=" + s + " is outside 1.." + MAX_SIZE + " (" + l
                        + " launch)");
            }
            int r = number(env, l, l.rankVariable);
            if (r >= s) {
                throw new IllegalArgumentException(l.rankVariable + "=" + r + " is not below " + l.sizeVariable + "="
                        + s + " (" + l + " launch)");
            }
            if (found == null) {
                found = l;
                rank = r;
                size = s;
            } else if (s == size && r != rank) {
                throw new IllegalArgumentException("two launchers disagree: " + found.rankVariable + "=" + rank + " ("
                        + found + ") but " + l.rankVariable + "=" + r + " (" + l + "), both of " + size
                        + " ranks; unset the variables of the one that did not start this process");
            }
        }
        if (found == null) {
            throw new IllegalArgumentException("no launcher's variables are set: expected RANK and WORLD_SIZE"
                    + " (torchrun-style), OMPI_COMM_WORLD_RANK (mpirun), SLURM_PROCID in a job step (srun) or PMI_RANK");
        }
        int localRank = -1;
        if (env.get(found.localRankVariable) != null) {
            localRank = number(env, found, found.localRankVariable);
            if (localRank >= size) {
                throw new IllegalArgumentException(found.localRankVariable + "=" + localRank + " is not below "
                        + found.sizeVariable + "=" + size + " (" + found + " launch)");
            }
        }
        String named = env.get(STORE_VARIABLE);
        if (named != null) {
            return new LaunchEnvironment(found, rank, size, localRank, hostPort(STORE_VARIABLE, named), STORE_VARIABLE);
        }
        return switch (found) {
            case TORCHRUN -> new LaunchEnvironment(found, rank, size, localRank, InetSocketAddress.createUnresolved(
                    required(env, found, "MASTER_ADDR"), port("MASTER_PORT", required(env, found, "MASTER_PORT"))),
                    "MASTER_ADDR:MASTER_PORT");
            case SLURM -> new LaunchEnvironment(found, rank, size, localRank, InetSocketAddress.createUnresolved(
                    SlurmHostList.first("SLURM_STEP_NODELIST", env.get("SLURM_STEP_NODELIST")), SLURM_STORE_PORT),
                    "SLURM_STEP_NODELIST's first host");
            case OPEN_MPI, PMI -> throw new IllegalArgumentException(STORE_VARIABLE + " is not set, and " + found
                    + " names no store: set " + STORE_VARIABLE + "=host:port, an address of rank 0's host"
                    + " (mpirun -x " + STORE_VARIABLE + " passes it on)");
        };
    }

    /**
     * Resolves the store, then joins as {@link Communicator#rendezvous} does; rank 0 hosts the store when
     * {@code config} lets it and the address is one of this host's. Prints one line to standard error saying
     * what was detected, so that every rank's log shows how it joined.
     */
    Communicator join(CommunicatorConfig config) throws IOException {
        InetSocketAddress resolved = new InetSocketAddress(store.getHostString(), store.getPort());
        if (resolved.isUnresolved()) {
            throw new IllegalArgumentException("cannot resolve the store host '" + store.getHostString() + "' ("
                    + storeFrom + ")");
        }
        boolean hosts = rank == 0 && config.hostStore() && isLocal(resolved.getAddress());
        String address = store.getHostString() + ":" + store.getPort();
        String resolvedTo = resolved.getAddress().getHostAddress();
        System.err.println("zcnet: " + launcher + " launch: rank " + rank + " of " + size + ", local rank "
                + (localRank < 0 ? "not given" : localRank) + ", store " + address
                + (resolvedTo.equals(store.getHostString()) ? "" : " (" + resolvedTo + ")") + " from " + storeFrom
                + (rank != 0 ? "" : hosts ? ", hosted by this rank" : ", not hosted by this rank")
                + (config.jobSecret() != null ? ", job secret set" : ", no job secret: anyone may join"));
        return Communicator.rendezvous(rank, size, resolved, config.withHostStore(hosts));
    }

    /**
     * {@code config} with the job secret of {@value #JOB_SECRET_VARIABLE}, where it has none of its own and the
     * variable is set.
     *
     * @throws IllegalArgumentException if the variable is set but not 16 .. 64 bytes
     */
    static CommunicatorConfig withJobSecretOf(Map<String, String> env, CommunicatorConfig config) {
        String secret = env.get(JOB_SECRET_VARIABLE);
        if (secret == null || config.jobSecret() != null) {
            return config;
        }
        byte[] bytes = secret.getBytes(StandardCharsets.UTF_8);
        if (bytes.length < 16 || bytes.length > 64) {
            throw new IllegalArgumentException(JOB_SECRET_VARIABLE + " must be 16..64 bytes, it has " + bytes.length);
        }
        return config.withJobSecret(bytes);
    }

    /** Whether {@code address} is one this host can listen on, so that rank 0 can host the store there. */
    private static boolean isLocal(InetAddress address) {
        if (address.isLoopbackAddress() || address.isAnyLocalAddress()) {
            return true;
        }
        try {
            return NetworkInterface.getByInetAddress(address) != null;
        } catch (SocketException e) {
            return false;
        }
    }

    private static String required(Map<String, String> env, Launcher launcher, String variable) {
        String value = env.get(variable);
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(variable + " is not set (" + launcher + " launch), nor is "
                    + STORE_VARIABLE + ": one of them must name the rendezvous store");
        }
        return value.strip();
    }

    /** A rank, size or local rank: a decimal number, at least 0. */
    private static int number(Map<String, String> env, Launcher launcher, String variable) {
        String value = env.get(variable);
        if (value == null) {
            throw new IllegalArgumentException(variable + " is not set, but " + (variable.equals(launcher.rankVariable)
                    ? launcher.sizeVariable : launcher.rankVariable) + " is (" + launcher + " launch)");
        }
        int n;
        try {
            n = Integer.parseInt(value.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(variable + "='" + value + "' is not a number (" + launcher + " launch)");
        }
        if (n < 0) {
            throw new IllegalArgumentException(variable + "=" + n + " is negative (" + launcher + " launch)");
        }
        return n;
    }

    /** {@code host:port} or {@code [v6]:port}, unresolved. */
    private static InetSocketAddress hostPort(String variable, String value) {
        String text = value.strip();
        int colon = text.lastIndexOf(':');
        String host = colon < 0 ? "" : text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (host.isEmpty() || host.indexOf(':') >= 0 && !text.startsWith("[")) {
            throw new IllegalArgumentException(variable + "='" + value + "' is not host:port ([v6]:port for IPv6)");
        }
        return InetSocketAddress.createUnresolved(host, port(variable, text.substring(colon + 1)));
    }

    private static int port(String variable, String text) {
        int port;
        try {
            port = Integer.parseInt(text.strip());
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException(variable + ": port '" + text + "' is not a number in 1..65535");
        }
        return port;
    }
}
