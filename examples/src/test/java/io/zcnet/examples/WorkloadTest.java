package io.zcnet.examples;

import io.zcnet.collective.Algorithm;
import io.zcnet.collective.Communicator;
import io.zcnet.collective.CommunicatorConfig;
import io.zcnet.ring.EventLoopConfig;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The checks of {@code zcnet allreduce} are not vacuous: on a communicator of one rank, an output the
 * operation did not write fails its check, the operation's own passes.
 */
class WorkloadTest {

    @ParameterizedTest
    @EnumSource(value = CollectiveOp.class, names = {"ALLGATHER", "REDUCE_SCATTER", "REDUCE", "ALLTOALL"})
    void anOutputTheOperationDidNotWriteFailsItsCheck(CollectiveOp op) throws Exception {
        int port = AllreduceCommandTest.freePort();
        CommunicatorConfig config = CommunicatorConfig.defaults().withEngine(EventLoopConfig.Choice.NIO);
        try (Communicator comm = Communicator.rendezvous(0, 1,
                new InetSocketAddress(InetAddress.getLoopbackAddress(), port), config);
                Arena arena = Arena.ofConfined()) {
            Workload w = Workload.of(op, comm, arena, 4096, op.resolve(Algorithm.AUTO));
            w.fill();
            assertFalse(w.check(1), "an output left as filled");
            w.run();
            assertTrue(w.check(1), "the operation's output");
        }
    }
}
