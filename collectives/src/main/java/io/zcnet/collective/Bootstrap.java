package io.zcnet.collective;

import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QpContext;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.LoopIdle;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * How a rank joins its communicator: rank 0 hosts the rendezvous store (unless told otherwise), the rank
 * opens its queue-pair context (on its own loop thread, or on the calling thread when it busy-polls) and
 * its staging memory, meets the others at the store and connects the mesh ({@link Mesh}). On failure it
 * closes everything it opened. Control path; the joining thread.
 */
final class Bootstrap {
    private Bootstrap() {
    }

    /** A rank that has joined: the configuration it runs with, its context, its staging memory and its links. */
    record Joined(CommunicatorConfig config, QpContext context, Staging staging, Mesh.Connected mesh) {
    }

    /**
     * Joins as {@link Communicator#rendezvous} says, refusing its arguments as it says before anything is
     * opened.
     */
    static Joined join(int rank, int size, InetSocketAddress store, CommunicatorConfig config) throws IOException {
        if (size < 1 || size > 1 << 16) {
            throw new IllegalArgumentException("size " + size + " outside 1..65536");
        }
        if (rank < 0 || rank >= size) {
            throw new IllegalArgumentException("rank " + rank + " outside 0.." + (size - 1));
        }
        if (store == null || config == null) {
            throw new IllegalArgumentException("a store address and a config are required");
        }
        if (store.isUnresolved()) {
            throw new IllegalArgumentException("cannot resolve the store address " + store);
        }
        long deadline = System.nanoTime() + config.connectTimeout().toNanos();
        RendezvousServer server = rank == 0 && config.hostStore()
                ? RendezvousServer.start(store, size, config.connectTimeout(), config.jobSecret()) : null;
        QpContext context = null;
        Staging staging = null;
        try {
            EventLoopConfig loop = EventLoopConfig.defaults().withEngine(config.engine());
            if (config.busyPoll()) {
                // Nothing turns between this thread's calls, so no heartbeat: silence cannot mean a dead peer.
                config = config.withQueuePairs(config.queuePairs().withTimeouts(config.queuePairs().handshakeTimeout(),
                        Duration.ofMillis(QpConfig.MAX_SILENCE_MILLIS)));
                context = QpContext.openOnCallingThread(loop.withIdle(LoopIdle.yielding()));
            } else {
                context = QpContext.open(loop);
            }
            staging = new Staging(context, rank, size, config.slots(), config.slotBytes());
            Mesh.Connected mesh;
            try (RendezvousClient client = RendezvousClient.join(store, rank, size, deadline, config.jobSecret())) {
                mesh = Mesh.connect(rank, size, context, staging, client, config, deadline);
            }
            return new Joined(config, context, staging, mesh);
        } catch (IOException | RuntimeException e) {
            IOException failed = new IOException("rank " + rank + " of " + size + " could not join the communicator at "
                    + store + ": " + e.getMessage(), e);
            Teardown teardown = new Teardown();
            if (server != null) {
                teardown.run(server::close);
            }
            if (context != null) {
                teardown.run(context::close);
            }
            if (staging != null) {
                teardown.run(staging::close);
            }
            if (teardown.failure() != null) {
                failed.addSuppressed(teardown.failure());
            }
            throw failed;
        }
    }
}
