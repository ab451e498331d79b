package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.UUID;

import org.junit.jupiter.api.Test;

class RankCardTest {
    private static final UUID KERNEL = new UUID(0x0102030405060708L, 0x090A0B0C0D0E0F10L);

    @Test
    void cardsRoundTripWithTheLayoutOfTheJavadoc() throws Exception {
        RankCard card = new RankCard(new InetSocketAddress(InetAddress.getByAddress(new byte[] {10, 0, 0, 7}), 40001),
                0xCAFEBABE, 4, 262144, KERNEL, 6, CoreSharing.DEDICATED);
        byte[] bytes = card.encode();
        assertArrayEquals(new byte[] {4, 10, 0, 0, 7, (byte) 0x9C, 0x41, (byte) 0xCA, (byte) 0xFE, (byte) 0xBA,
            (byte) 0xBE, 0, 0, 0, 4, 0, 4, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0, 0, 0, 6, 2},
                bytes);
        assertEquals(card, RankCard.decode(bytes, 3));
        RankCard six = new RankCard(new InetSocketAddress(InetAddress.getByName("::1"), 1), 1, 2, 64, KERNEL, 1,
                CoreSharing.SHARED);
        assertEquals(six, RankCard.decode(six.encode(), 0));
    }

    @Test
    void aMalformedCardNamesTheRank() throws Exception {
        IOException e = assertThrows(IOException.class, () -> RankCard.decode(new byte[] {4, 1, 2}, 5));
        assertTrue(e.getMessage().startsWith("rank 5's card is malformed"), e.getMessage());
        byte[] good = card(KERNEL, 2, CoreSharing.DETECT).encode();
        assertThrows(IOException.class, () -> RankCard.decode(Arrays.copyOf(good, good.length + 1), 0));
        assertThrows(IOException.class, () -> RankCard.decode(Arrays.copyOf(good, good.length - 1), 0));
        byte[] noProcessors = card(KERNEL, 2, CoreSharing.DETECT).encode();
        noProcessors[noProcessors.length - 2] = 0;
        IOException none = assertThrows(IOException.class, () -> RankCard.decode(noProcessors, 2));
        assertTrue(none.getMessage().contains("0 processors"), none.getMessage());
        byte[] badSharing = good.clone();
        badSharing[badSharing.length - 1] = 3;
        IOException sharing = assertThrows(IOException.class, () -> RankCard.decode(badSharing, 2));
        assertTrue(sharing.getMessage().contains("sharing 3"), sharing.getMessage());
    }

    @Test
    void thisProcessesCardNamesItsKernelAndProcessors() {
        RankCard a = RankCard.ofThisProcess(new InetSocketAddress("127.0.0.1", 1), 1, 1, 64, CoreSharing.DETECT);
        RankCard b = RankCard.ofThisProcess(new InetSocketAddress("127.0.0.1", 2), 1, 1, 64, CoreSharing.SHARED);
        assertEquals(a.kernel(), b.kernel(), "two ranks of one process run on one kernel");
        assertEquals(Runtime.getRuntime().availableProcessors(), a.processors());
        assertEquals(CoreSharing.SHARED, b.sharing());
    }

    @Test
    void ranksShareCoresWhenOneKernelRunsMoreOfThemThanItHasProcessors() {
        UUID other = new UUID(7, 7);
        assertEquals(false, CoreSharing.shared(cards(card(KERNEL, 2, CoreSharing.DETECT), card(KERNEL, 2, CoreSharing.DETECT))));
        assertEquals(true, CoreSharing.shared(cards(card(KERNEL, 2, CoreSharing.DETECT), card(KERNEL, 2, CoreSharing.DETECT),
                card(KERNEL, 2, CoreSharing.DETECT))));
        // Two kernels of two processors, two ranks each: every rank has a core.
        assertEquals(false, CoreSharing.shared(cards(card(KERNEL, 2, CoreSharing.DETECT), card(KERNEL, 2, CoreSharing.DETECT),
                card(other, 2, CoreSharing.DETECT), card(other, 2, CoreSharing.DETECT))));
        // One crowded kernel is enough; a rank limited to fewer processors does not make its kernel smaller.
        assertEquals(true, CoreSharing.shared(cards(card(KERNEL, 1, CoreSharing.DETECT), card(KERNEL, 1, CoreSharing.DETECT),
                card(other, 8, CoreSharing.DETECT))));
        assertEquals(false, CoreSharing.shared(cards(card(KERNEL, 1, CoreSharing.DETECT), card(KERNEL, 2, CoreSharing.DETECT))));
        // A rank's explicit choice applies to all, SHARED before DEDICATED.
        assertEquals(true, CoreSharing.shared(cards(card(KERNEL, 64, CoreSharing.DETECT), card(other, 64, CoreSharing.SHARED))));
        assertEquals(false, CoreSharing.shared(cards(card(KERNEL, 1, CoreSharing.DETECT), card(KERNEL, 1, CoreSharing.DEDICATED))));
        assertEquals(true, CoreSharing.shared(cards(card(KERNEL, 64, CoreSharing.DEDICATED), card(KERNEL, 64, CoreSharing.SHARED))));
    }

    private static RankCard card(UUID kernel, int processors, CoreSharing sharing) {
        return new RankCard(new InetSocketAddress("127.0.0.1", 1), 1, 1, 64, kernel, processors, sharing);
    }

    private static RankCard[] cards(RankCard... cards) {
        return cards;
    }
}
