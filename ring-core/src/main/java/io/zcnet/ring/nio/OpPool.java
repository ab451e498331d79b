package io.zcnet.ring.nio;

import java.util.Arrays;

/**
 * The NIO engine's operation objects: {@link NioOp}s indexed by id, reused through a free list so that
 * preparing an operation allocates nothing once the pool has grown to the number in flight. An id
 * stays with its object for the pool's life (it names the op's timer). Owner-thread only.
 */
final class OpPool {
    private NioOp[] ops;
    private int count;
    private int[] free;
    private int freeCount;
    /** Operations taken and not yet given back. */
    private int live;

    OpPool(int capacity) {
        ops = new NioOp[capacity];
        free = new int[capacity];
    }

    NioOp take() {
        NioOp op;
        if (freeCount > 0) {
            op = ops[free[--freeCount]];
        } else {
            if (count == ops.length) {
                ops = Arrays.copyOf(ops, count * 2);
                free = Arrays.copyOf(free, count * 2);
            }
            op = new NioOp(count);
            ops[count++] = op;
        }
        live++;
        return op;
    }

    /** Clears {@code op} and makes it free for reuse. */
    void give(NioOp op) {
        op.clear();
        free[freeCount++] = op.id;
        live--;
    }

    /** The operation with id {@code id}, free or not. */
    NioOp get(int id) {
        return ops[id];
    }

    /** Operation objects ever created: ids run from 0 to this, exclusive. */
    int size() {
        return count;
    }

    int live() {
        return live;
    }

    /** Frees every operation without a completion: only for handlers that never stop re-arming in close(). */
    void dropAll() {
        for (int id = 0; id < count; id++) {
            NioOp op = ops[id];
            if (op.state != NioOp.FREE) {
                if (op.armed) {
                    op.ring.disarmed();
                }
                give(op);
            }
        }
    }
}
