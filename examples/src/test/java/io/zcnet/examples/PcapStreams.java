package io.zcnet.examples;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The TCP byte streams of a pcap capture file, each direction reassembled from its segments by sequence
 * number (retransmitted bytes counted once), independently of any dissector: what a test compares a
 * dissector's view of the same capture with. Reads classic pcap files (either byte order, micro- or
 * nanosecond timestamps) of Ethernet, Linux cooked (v1 and v2) or raw IP captures, IPv4 and IPv6 without
 * extension headers. A direction whose bytes have a hole is refused: nothing is guessed.
 */
final class PcapStreams {

    /** One direction of a TCP connection, by its ports ({@code "srcport>dstport"}): the bytes it carried. */
    static Map<String, byte[]> read(Path capture) throws IOException {
        byte[] bytes = Files.readAllBytes(capture);
        ByteBuffer file = ByteBuffer.wrap(bytes); // the file's own byte order, for its headers
        ByteBuffer net = ByteBuffer.wrap(bytes); // network byte order, for what the packets carry
        int magic = file.order(ByteOrder.LITTLE_ENDIAN).getInt(0);
        if (magic != 0xa1b2c3d4 && magic != 0xa1b23c4d) {
            file.order(ByteOrder.BIG_ENDIAN);
            magic = file.getInt(0);
            if (magic != 0xa1b2c3d4 && magic != 0xa1b23c4d) {
                throw new IOException(capture + " is not a classic pcap file (magic 0x" + Integer.toHexString(magic) + ")");
            }
        }
        int linkType = file.getInt(20);
        Map<String, List<long[]>> segments = new LinkedHashMap<>(); // direction -> (seq, start in file, length)
        Map<String, Long> firstByte = new LinkedHashMap<>();
        int at = 24;
        while (at + 16 <= file.limit()) {
            int captured = file.getInt(at + 8);
            int packet = at + 16;
            at = packet + captured;
            if (at > file.limit()) {
                throw new IOException(capture + " ends inside a packet");
            }
            if (file.getInt(packet - 4) != captured) {
                throw new IOException(capture + ": a packet was cut to the snapshot length; capture with -s 0");
            }
            int ip = ipStart(net, packet, linkType);
            if (ip >= 0) {
                tcpSegment(net, ip, packet + captured, segments, firstByte);
            }
        }
        Map<String, byte[]> streams = new LinkedHashMap<>();
        segments.forEach((direction, list) -> streams.put(direction, join(direction, list, firstByte.get(direction), bytes)));
        return streams;
    }

    /** Where the IP header starts in the packet at {@code packet}, or -1 if it carries no IP. */
    private static int ipStart(ByteBuffer file, int packet, int linkType) {
        int etherType;
        int ip;
        switch (linkType) {
            case 1 -> { // Ethernet
                etherType = Short.toUnsignedInt(file.getShort(packet + 12));
                ip = packet + 14;
            }
            case 113 -> { // Linux cooked v1
                etherType = Short.toUnsignedInt(file.getShort(packet + 14));
                ip = packet + 16;
            }
            case 276 -> { // Linux cooked v2
                etherType = Short.toUnsignedInt(file.getShort(packet));
                ip = packet + 20;
            }
            case 101 -> { // raw IP
                return packet;
            }
            default -> throw new IllegalArgumentException("link type " + linkType + " is not read here");
        }
        return etherType == 0x0800 || etherType == 0x86DD ? ip : -1;
    }

    private static void tcpSegment(ByteBuffer file, int ip, int end, Map<String, List<long[]>> segments,
                                   Map<String, Long> firstByte) {
        int version = (file.get(ip) & 0xFF) >>> 4;
        int tcp;
        int ipEnd;
        if (version == 4) {
            if (file.get(ip + 9) != 6) {
                return;
            }
            tcp = ip + (file.get(ip) & 0x0F) * 4;
            ipEnd = ip + Short.toUnsignedInt(file.getShort(ip + 2));
        } else if (version == 6) {
            if (file.get(ip + 6) != 6) {
                return;
            }
            tcp = ip + 40;
            ipEnd = ip + 40 + Short.toUnsignedInt(file.getShort(ip + 4));
        } else {
            return;
        }
        int ports0 = Short.toUnsignedInt(file.getShort(tcp));
        int ports1 = Short.toUnsignedInt(file.getShort(tcp + 2));
        String direction = ports0 + ">" + ports1;
        long seq = Integer.toUnsignedLong(file.getInt(tcp + 4));
        int flags = file.get(tcp + 13) & 0xFF;
        int payload = tcp + ((file.get(tcp + 12) & 0xF0) >>> 4) * 4;
        int length = Math.min(ipEnd, end) - payload;
        if ((flags & 0x02) != 0) { // SYN: data starts one after it
            firstByte.put(direction, seq + 1);
        }
        if (length > 0) {
            segments.computeIfAbsent(direction, d -> new ArrayList<>()).add(new long[] {seq, payload, length});
        }
    }

    private static byte[] join(String direction, List<long[]> list, Long first, byte[] file) {
        if (first == null) {
            throw new IllegalStateException(direction + ": the capture has no SYN, so where its bytes start is unknown");
        }
        // Relative sequence numbers, mod 2^32 from the first byte: a stream of a few MB never wraps that.
        list.forEach(s -> s[0] = (s[0] - first) & 0xFFFF_FFFFL);
        list.sort(Comparator.comparingLong(s -> s[0]));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (long[] s : list) {
            long have = bytes.size();
            if (s[0] > have) {
                throw new IllegalStateException(direction + ": bytes " + have + ".." + s[0] + " are missing from the capture");
            }
            int skip = (int) (have - s[0]);
            if (skip < s[2]) {
                bytes.write(file, (int) s[1] + skip, (int) s[2] - skip);
            }
        }
        return bytes.toByteArray();
    }

    private PcapStreams() {
    }
}
