package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;

import org.junit.jupiter.api.Test;

class RankCardTest {

    @Test
    void cardsRoundTripWithTheLayoutOfTheJavadoc() throws Exception {
        RankCard card = new RankCard(new InetSocketAddress(InetAddress.getByAddress(new byte[] {10, 0, 0, 7}), 40001),
                0xCAFEBABE, 4, 262144);
        byte[] bytes = card.encode();
        assertArrayEquals(new byte[] {4, 10, 0, 0, 7, (byte) 0x9C, 0x41, (byte) 0xCA, (byte) 0xFE, (byte) 0xBA,
            (byte) 0xBE, 0, 0, 0, 4, 0, 4, 0, 0}, bytes);
        assertEquals(card, RankCard.decode(bytes, 3));
        RankCard six = new RankCard(new InetSocketAddress(InetAddress.getByName("::1"), 1), 1, 2, 64);
        assertEquals(six, RankCard.decode(six.encode(), 0));
    }

    @Test
    void aMalformedCardNamesTheRank() {
        IOException e = assertThrows(IOException.class, () -> RankCard.decode(new byte[] {4, 1, 2}, 5));
        assertEquals(true, e.getMessage().startsWith("rank 5's card is malformed"), e.getMessage());
        byte[] longer = java.util.Arrays.copyOf(new RankCard(new InetSocketAddress("127.0.0.1", 1), 1, 1, 64).encode(), 20);
        assertThrows(IOException.class, () -> RankCard.decode(longer, 0));
    }
}
