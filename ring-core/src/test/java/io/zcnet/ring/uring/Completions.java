package io.zcnet.ring.uring;

import io.zcnet.ring.CompletionHandler;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.Op;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.fail;

/** Records completions on the loop thread (the test thread here: these tests drive the loop inline). */
class Completions implements CompletionHandler {
    record Completion(int op, int tag, int result, int flags) {
        @Override
        public String toString() {
            return Op.name(op) + "#" + tag + " res=" + result + " flags=0x" + Integer.toHexString(flags);
        }
    }

    final List<Completion> all = new ArrayList<>();

    @Override
    public void onCompletion(int op, int tag, int result, int flags) {
        all.add(new Completion(op, tag, result, flags));
    }

    List<Completion> of(int op) {
        return all.stream().filter(c -> c.op() == op).toList();
    }

    Completion last(int op) {
        List<Completion> list = of(op);
        return list.isEmpty() ? null : list.get(list.size() - 1);
    }

    /** Polls {@code loop} until {@code done} holds; fails with the loop's state after {@code millis}. */
    static void pollUntil(EventLoop loop, BooleanSupplier done, long millis) {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("condition not met within " + millis + " ms: " + loop);
            }
            loop.poll(1_000_000L);
        }
    }
}
