package io.zcnet.ring.uring;

import io.zcnet.buffer.BufferPool;
import io.zcnet.buffer.PoolConfig;
import io.zcnet.buffer.SizeClass;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.Op;
import io.zcnet.ring.internal.UserData;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The user_data to ring table against a HashMap model, through growth and backward-shift deletion. */
class ReceiveRingsTest {

    @Test
    void agreesWithAMapThroughArmsAndDisarms() throws IOException {
        assumeTrue(Uring.availability().usable(), Uring.availability().reason());
        // The loop closes first: its rings give their buffers (and pins) back before the pool closes.
        try (BufferPool pool = BufferPool.create(PoolConfig.of(new SizeClass(64, 8)));
                UringEventLoop loop = UringEventLoop.open(EventLoopConfig.defaults().withEngine(EventLoopConfig.Choice.URING))) {
            UringBufferRing[] rings = new UringBufferRing[3];
            for (int i = 0; i < rings.length; i++) {
                rings[i] = (UringBufferRing) loop.createBufferRing(i, pool, 2, 64);
            }
            ReceiveRings table = new ReceiveRings();
            Map<Long, Integer> armed = new HashMap<>();
            Random random = new Random(7);
            for (int step = 0; step < 20_000; step++) {
                int handler = random.nextInt(8);
                long userData = UserData.pack(handler, Op.RECV_MULTISHOT, random.nextInt(200));
                UringBufferRing ring = rings[handler % rings.length];
                if (random.nextBoolean() || !armed.containsKey(userData)) {
                    table.arm(userData, ring);
                    armed.merge(userData, 1, Integer::sum);
                } else {
                    table.disarm(userData);
                    if (armed.merge(userData, -1, Integer::sum) == 0) {
                        armed.remove(userData);
                    }
                }
                int probeHandler = random.nextInt(8);
                long probe = UserData.pack(probeHandler, Op.RECV_MULTISHOT, random.nextInt(200));
                assertSame(armed.containsKey(probe) ? rings[probeHandler % rings.length] : null, table.get(probe),
                        "step " + step);
            }
            for (Map.Entry<Long, Integer> e : armed.entrySet()) {
                for (int i = 0; i < e.getValue(); i++) {
                    table.disarm(e.getKey());
                }
            }
            for (long key : armed.keySet()) {
                assertNull(table.get(key), "disarmed as often as armed: gone");
            }
        }
    }
}
