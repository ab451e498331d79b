package io.zcnet.collective;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QpContext;
import io.zcnet.ring.EventLoopConfig;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Four ranks form a communicator and run an allreduce while a hundred strangers hit the rendezvous store and
 * the ranks' listeners: silent connections, garbage, claims of free and taken ranks without the job secret (or,
 * without one, claims of taken ranks), queue pairs that never say which rank they are. A {@link StoreTap}
 * holds rank 3's introduction until the strangers claiming ranks 0 to 2 have been answered, so those ranks are
 * taken, and holds the first round's answer until the strangers at the listeners are in, so every rank meets
 * them before its peers. Subclassed once per engine.
 */
@Timeout(120)
abstract class StrangerContractTest {
    private static final int SIZE = 4;
    private static final InetSocketAddress ANY = new InetSocketAddress("127.0.0.1", 0);
    private static final byte[] SECRET = "the secret of this test's job".getBytes(StandardCharsets.UTF_8);
    private static final byte[] WRONG = "the secret of some other job!".getBytes(StandardCharsets.UTF_8);

    protected abstract EventLoopConfig.Choice engine();

    private CommunicatorConfig config(byte[] secret) {
        return CollectiveContractTest.smallSlots().withJobSecret(secret)
                .withTimeouts(Duration.ofSeconds(30), Duration.ofSeconds(30));
    }

    @Test
    void withAJobSecretAHundredStrangersNeitherStallNorAbortTheRendezvous() throws Exception {
        CommunicatorConfig config = config(SECRET);
        try (RendezvousServer store = RendezvousServer.start(ANY, SIZE, config.connectTimeout(), SECRET);
             StoreTap tap = new StoreTap(store.address(), SIZE, SIZE - 1);
             QpContext strangers = QpContext.open(EventLoopConfig.defaults().withEngine(engine()));
             Strays strays = new Strays()) {
            for (int i = 0; i < 15; i++) {
                strays.silent(store.address());
                strays.garbage(store.address());
            }
            CompletableFuture<RankGroup> group = CompletableFuture.supplyAsync(() -> join(config, tap));
            for (int i = 0; i < 10; i++) {
                assertTrue(strays.claim(store.address(), SIZE - 1, SIZE, i % 2 == 0 ? WRONG : null, 10_000),
                        "a stranger claiming the free rank 3 is refused");
            }
            assertTrue(tap.othersIntroduced().await(30, TimeUnit.SECONDS), "ranks 0 to 2 introduced themselves");
            for (int i = 0; i < 10; i++) {
                assertTrue(strays.claim(store.address(), i % (SIZE - 1), SIZE, WRONG, 10_000),
                        "a stranger claiming the taken rank " + i % (SIZE - 1) + " is refused");
            }
            tap.releaseHeld();
            RankCard[] cards = tap.cards().get(30, TimeUnit.SECONDS);
            QpConfig keyless = QpConfig.defaults();
            QpConfig wrongKey = QpConfig.defaults().withPreSharedKey(WRONG);
            for (int i = 0; i < 10; i++) {
                strays.silent(cards[i % SIZE].listen());
                strays.garbage(cards[i % SIZE].listen());
            }
            for (int i = 0; i < 15; i++) {
                InetSocketAddress at = cards[i % SIZE].listen();
                assertFalse(strays.queuePair(strangers, at, keyless, Immediate.hello(SIZE - 1)),
                        "a queue pair without the key is refused");
                assertFalse(strays.queuePair(strangers, at, wrongKey, Immediate.hello(SIZE - 1)),
                        "a queue pair with another key is refused");
            }
            allreduceOnceInAfter(strays, tap, group);
        }
    }

    @Test
    void withoutAJobSecretStrangersWhoClaimNothingFreeNeitherStallNorAbortTheRendezvous() throws Exception {
        CommunicatorConfig config = config(null);
        try (RendezvousServer store = RendezvousServer.start(ANY, SIZE, config.connectTimeout());
             StoreTap tap = new StoreTap(store.address(), SIZE, SIZE - 1);
             QpContext strangers = QpContext.open(EventLoopConfig.defaults().withEngine(engine()));
             Strays strays = new Strays()) {
            for (int i = 0; i < 20; i++) {
                strays.silent(store.address());
                strays.garbage(store.address());
            }
            CompletableFuture<RankGroup> group = CompletableFuture.supplyAsync(() -> join(config, tap));
            assertTrue(tap.othersIntroduced().await(30, TimeUnit.SECONDS), "ranks 0 to 2 introduced themselves");
            for (int i = 0; i < 10; i++) {
                assertTrue(strays.claim(store.address(), i % (SIZE - 1), SIZE, null, 10_000),
                        "a stranger claiming the taken rank " + i % (SIZE - 1) + " is refused");
            }
            tap.releaseHeld();
            RankCard[] cards = tap.cards().get(30, TimeUnit.SECONDS);
            for (int i = 0; i < 10; i++) {
                strays.silent(cards[i % SIZE].listen());
                strays.garbage(cards[i % SIZE].listen());
            }
            for (int i = 0; i < 15; i++) {
                int target = i % SIZE;
                InetSocketAddress at = cards[target].listen();
                // Nothing said; a hello naming the listening rank itself; a message that is no hello.
                assertTrue(strays.queuePair(strangers, at, QpConfig.defaults(), null));
                assertTrue(strays.queuePair(strangers, at, QpConfig.defaults(), i % 2 == 0 ? Immediate.hello(target)
                        : 0x1234_5678));
            }
            allreduceOnceInAfter(strays, tap, group);
        }
    }

    @Test
    void aRankThatNeverComesIsNamedWithinTheDeadlineThoughStrangersCome() throws Exception {
        CommunicatorConfig config = config(SECRET).withTimeouts(Duration.ofSeconds(30), Duration.ofSeconds(4));
        try (RendezvousServer store = RendezvousServer.start(ANY, 3, config.connectTimeout(), SECRET);
             Strays strays = new Strays()) {
            for (int i = 0; i < 10; i++) {
                strays.silent(store.address());
                strays.garbage(store.address());
            }
            long start = System.nanoTime();
            CompletableFuture<RankGroup> group = CompletableFuture.supplyAsync(() -> join(config, store.address(), 3));
            ExecutionException e = assertThrows(ExecutionException.class, () -> group.get(60, TimeUnit.SECONDS));
            long took = System.nanoTime() - start;
            String message = String.valueOf(e.getCause());
            assertTrue(message.contains("ranks [1] did not join"), message);
            assertTrue(took < config.connectTimeout().toNanos() + TimeUnit.SECONDS.toNanos(5),
                    "failed " + took / 1_000_000 + " ms after the ranks started, within the 4 s deadline and its grace");
        }
    }

    /** Once all hundred strangers are in, the ranks form the communicator and run an allreduce. */
    private static void allreduceOnceInAfter(Strays strays, StoreTap tap, CompletableFuture<RankGroup> group)
            throws Exception {
        assertEquals(100, strays.sent());
        tap.releaseRound();
        try (RankGroup ranks = group.get(60, TimeUnit.SECONDS)) {
            ranks.run(StrangerContractTest::allreduceIsRight);
        }
    }

    /** Ranks 0 and 2 of 3 (size 3) or all four ranks, at {@code store}. */
    private RankGroup join(CommunicatorConfig config, InetSocketAddress store, int size) {
        try {
            if (size == 3) {
                return RankGroup.startSome(size, new int[] {0, 2}, engine(), config, store);
            }
            return RankGroup.start(size, engine(), config, store);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private RankGroup join(CommunicatorConfig config, StoreTap tap) {
        return join(config, tap.address(), SIZE);
    }

    private static void allreduceIsRight(Communicator c) throws CollectiveException {
        int count = 5000;
        try (Arena arena = Arena.ofShared()) {
            MemorySegment data = arena.allocate(count * 4L, 64);
            for (int i = 0; i < count; i++) {
                data.setAtIndex(JAVA_FLOAT, i, c.rank() + i % 7);
            }
            c.allreduce(data, count, DataType.FLOAT, ReduceOp.SUM);
            for (int i = 0; i < count; i++) {
                float expected = SIZE * (SIZE - 1) / 2f + SIZE * (i % 7);
                if (data.getAtIndex(JAVA_FLOAT, i) != expected) {
                    throw new AssertionError("element " + i + " at rank " + c.rank() + ": " + data.getAtIndex(JAVA_FLOAT, i)
                            + ", expected " + expected);
                }
            }
        }
    }
}
