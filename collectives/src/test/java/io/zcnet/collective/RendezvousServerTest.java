package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class RendezvousServerTest {
    private static final InetSocketAddress ANY = new InetSocketAddress("127.0.0.1", 0);
    private static final byte[] SECRET = "the secret of this test's job".getBytes(StandardCharsets.UTF_8);
    private static final byte[] OTHER = "the secret of some other job!".getBytes(StandardCharsets.UTF_8);

    @Test
    void everyRankGetsEveryBlobInRankOrderRoundAfterRound() throws Exception {
        int size = 4;
        ExecutorService threads = Executors.newFixedThreadPool(size);
        try (RendezvousServer server = RendezvousServer.start(ANY, size, Duration.ofSeconds(20))) {
            List<Future<byte[][][]>> rounds = new ArrayList<>();
            for (int r = size - 1; r >= 0; r--) { // joining out of order changes nothing
                int rank = r;
                rounds.add(0, threads.submit(() -> {
                    long deadline = System.nanoTime() + 20_000_000_000L;
                    try (RendezvousClient c = RendezvousClient.join(server.address(), rank, size, deadline, null)) {
                        return new byte[][][] {c.exchange(new byte[] {(byte) rank, 1}, deadline, null),
                            c.exchange(new byte[rank], deadline, null)};
                    }
                }));
            }
            for (int r = 0; r < size; r++) {
                byte[][][] got = rounds.get(r).get();
                for (int q = 0; q < size; q++) {
                    assertArrayEquals(new byte[] {(byte) q, 1}, got[0][q], "round 1, rank " + q + "'s blob at rank " + r);
                    assertEquals(q, got[1][q].length, "round 2");
                }
            }
            assertTrue(server.await(Duration.ofSeconds(10)), "the store ends once every rank hung up");
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void aRankThatWaitsForTheRoundKeepsRunningItsWaitingWorkAndStillGetsEveryBlob() throws Exception {
        ExecutorService late = Executors.newSingleThreadExecutor();
        try (RendezvousServer server = RendezvousServer.start(ANY, 2, Duration.ofSeconds(20))) {
            long deadline = System.nanoTime() + 20_000_000_000L;
            try (RendezvousClient early = RendezvousClient.join(server.address(), 0, 2, deadline, null)) {
                Future<byte[][]> second = late.submit(() -> {
                    Thread.sleep(300); // the first rank waits this long for the round
                    try (RendezvousClient c = RendezvousClient.join(server.address(), 1, 2, deadline, null)) {
                        return c.exchange(new byte[] {1}, deadline, null);
                    }
                });
                int[] turns = new int[1];
                byte[][] got = early.exchange(new byte[] {0}, deadline, () -> turns[0]++);
                assertArrayEquals(new byte[] {0}, got[0]);
                assertArrayEquals(new byte[] {1}, got[1]);
                assertArrayEquals(new byte[] {1}, second.get()[1]);
                assertTrue(turns[0] >= 300 / RendezvousClient.WAIT_SLICE_MILLIS / 4,
                        "the waiting work ran " + turns[0] + " times in about 300 ms");
            }
        } finally {
            late.shutdownNow();
        }
    }

    @Test
    void aRankThatNeverJoinsIsNamedWhenTheTimeoutPasses() throws Exception {
        try (RendezvousServer server = RendezvousServer.start(ANY, 3, Duration.ofMillis(500))) {
            long deadline = System.nanoTime() + 10_000_000_000L;
            try (RendezvousClient c = RendezvousClient.join(server.address(), 0, 3, deadline, null);
                 RendezvousClient d = RendezvousClient.join(server.address(), 2, 3, deadline, null)) {
                IOException e = assertThrows(IOException.class, () -> c.exchange(new byte[1], deadline, null));
                assertTrue(e.getMessage().contains("ranks [1] did not join"), e::getMessage);
            }
            assertTrue(server.await(Duration.ofSeconds(10)));
            assertTrue(server.failure().contains("ranks [1] did not join"), server::failure);
        }
    }

    @Test
    void aRankThatLeavesMidRoundIsNamedToTheOthers() throws Exception {
        try (RendezvousServer server = RendezvousServer.start(ANY, 2, Duration.ofSeconds(20))) {
            long deadline = System.nanoTime() + 10_000_000_000L;
            try (RendezvousClient c = RendezvousClient.join(server.address(), 0, 2, deadline, null)) {
                RendezvousClient.join(server.address(), 1, 2, deadline, null).close();
                IOException e = assertThrows(IOException.class, () -> c.exchange(new byte[1], deadline, null));
                assertTrue(e.getMessage().contains("ranks [1] left"), e::getMessage);
            }
        }
    }

    @Test
    void aConnectionWithTheWrongSizeIsRefusedAloneAndTheRanksCarryOn() throws Exception {
        try (RendezvousServer server = RendezvousServer.start(ANY, 1, Duration.ofSeconds(20))) {
            try (Socket stray = new Socket(InetAddress.getLoopbackAddress(), server.address().getPort())) {
                DataOutputStream out = new DataOutputStream(stray.getOutputStream());
                out.writeInt(RendezvousServer.MAGIC);
                out.writeShort(RendezvousServer.VERSION);
                out.writeInt(0);
                out.writeInt(5);
                out.flush();
                stray.getInputStream().readNBytes(MembershipProof.NONCE_BYTES);
                assertEquals(RendezvousServer.FAILED, stray.getInputStream().read());
            }
            long deadline = System.nanoTime() + 10_000_000_000L;
            try (RendezvousClient c = RendezvousClient.join(server.address(), 0, 1, deadline, null)) {
                assertArrayEquals(new byte[] {7}, c.exchange(new byte[] {7}, deadline, null)[0]);
            }
        }
    }

    @Test
    void twoProcessesProvingTheSecretForOneRankFailTheRendezvousNamingIt() throws Exception {
        try (RendezvousServer server = RendezvousServer.start(ANY, 3, Duration.ofSeconds(20), SECRET)) {
            long deadline = System.nanoTime() + 10_000_000_000L;
            try (RendezvousClient c = RendezvousClient.join(server.address(), 1, 3, deadline, SECRET);
                 RendezvousClient d = RendezvousClient.join(server.address(), 1, 3, deadline, SECRET)) {
                IOException e = assertThrows(IOException.class, () -> c.exchange(new byte[1], deadline, null));
                assertTrue(e.getMessage().contains("two processes joined as rank 1"), e::getMessage);
                assertTrue(e.getMessage().contains("ranks [0, 2] have not joined"), e::getMessage);
            }
        }
    }

    @Test
    void withoutASecretASecondClaimOfARankIsRefusedAloneAndTheRanksCarryOn() throws Exception {
        try (RendezvousServer server = RendezvousServer.start(ANY, 2, Duration.ofSeconds(20));
             Strays strays = new Strays()) {
            long deadline = System.nanoTime() + 10_000_000_000L;
            try (RendezvousClient c = RendezvousClient.join(server.address(), 1, 2, deadline, null)) {
                awaitJoined(server, 1);
                assertTrue(strays.claim(server.address(), 1, 2, null, 10_000), "the second claim of rank 1 is refused");
                try (RendezvousClient d = RendezvousClient.join(server.address(), 0, 2, deadline, null)) {
                    twoRanksExchange(c, d, deadline);
                }
            }
        }
    }

    @Test
    void withASecretClaimsThatDoNotProveItAreRefusedAloneFreeRankOrTaken() throws Exception {
        try (RendezvousServer server = RendezvousServer.start(ANY, 2, Duration.ofSeconds(20), SECRET);
             Strays strays = new Strays()) {
            long deadline = System.nanoTime() + 10_000_000_000L;
            assertTrue(strays.claim(server.address(), 0, 2, null, 10_000), "no proof");
            assertTrue(strays.claim(server.address(), 0, 2, OTHER, 10_000), "another job's secret");
            try (RendezvousClient c = RendezvousClient.join(server.address(), 1, 2, deadline, SECRET)) {
                awaitJoined(server, 1);
                assertTrue(strays.claim(server.address(), 1, 2, OTHER, 10_000), "a taken rank, another job's secret");
                try (RendezvousClient d = RendezvousClient.join(server.address(), 0, 2, deadline, SECRET)) {
                    twoRanksExchange(c, d, deadline);
                }
            }
        }
    }

    @Test
    void silentAndGarbageConnectionsDelayNoRank() throws Exception {
        try (RendezvousServer server = RendezvousServer.start(ANY, 2, Duration.ofSeconds(20));
             Strays strays = new Strays()) {
            for (int i = 0; i < 20; i++) {
                strays.silent(server.address());
                strays.garbage(server.address());
            }
            long deadline = System.nanoTime() + 10_000_000_000L;
            try (RendezvousClient c = RendezvousClient.join(server.address(), 0, 2, deadline, null);
                 RendezvousClient d = RendezvousClient.join(server.address(), 1, 2, deadline, null)) {
                twoRanksExchange(c, d, deadline);
            }
        }
    }

    @Test
    void aRankThatNeverJoinsIsNamedThoughSilentConnectionsCame() throws Exception {
        try (RendezvousServer server = RendezvousServer.start(ANY, 3, Duration.ofMillis(1500));
             Strays strays = new Strays()) {
            for (int i = 0; i < 5; i++) {
                strays.silent(server.address());
            }
            long deadline = System.nanoTime() + 10_000_000_000L;
            try (RendezvousClient c = RendezvousClient.join(server.address(), 0, 3, deadline, null);
                 RendezvousClient d = RendezvousClient.join(server.address(), 2, 3, deadline, null)) {
                IOException e = assertThrows(IOException.class, () -> c.exchange(new byte[1], deadline, null));
                assertTrue(e.getMessage().contains("ranks [1] did not join"), e::getMessage);
            }
        }
    }

    /** Waits until the store has taken {@code rank}: a stranger's claim of it must come after. */
    private static void awaitJoined(RendezvousServer server, int rank) throws InterruptedException {
        while (server.missing().contains(rank)) {
            Thread.sleep(5);
        }
    }

    private static void twoRanksExchange(RendezvousClient c, RendezvousClient d, long deadline) throws Exception {
        ExecutorService other = Executors.newSingleThreadExecutor();
        try {
            Future<byte[][]> theirs = other.submit(() -> d.exchange(new byte[] {4}, deadline, null));
            byte[][] mine = c.exchange(new byte[] {3}, deadline, null);
            assertEquals(2, mine.length);
            assertEquals(mine.length, theirs.get().length);
        } finally {
            other.shutdownNow();
        }
    }

    @Test
    void aClientRetriesUntilTheStoreIsUpAndGivesUpAtItsDeadline() throws Exception {
        InetSocketAddress nobody;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            nobody = (InetSocketAddress) s.getLocalSocketAddress();
        }
        long start = System.nanoTime();
        IOException e = assertThrows(IOException.class,
                () -> RendezvousClient.join(nobody, 0, 1, System.nanoTime() + 400_000_000L, null));
        assertTrue(e.getMessage().contains("no rendezvous store answered"), e::getMessage);
        assertTrue(System.nanoTime() - start >= 300_000_000L, "it kept trying until about the deadline");
    }
}
