package io.zcnet.qp;

import io.zcnet.framing.Completion;
import io.zcnet.framing.CompletionQueue;
import io.zcnet.framing.CompletionStatus;
import io.zcnet.framing.FrameError;
import io.zcnet.framing.MessageAssembler;
import io.zcnet.framing.Opcode;
import io.zcnet.ring.LoopSignal;

/**
 * rxe's completer ({@code rxe_comp.c}): matches what the peer acknowledged to the ledger's work requests and
 * completes them in posting order (a READ once its responses have landed), moves completed receives out of the
 * assembler, and writes every completion to the ring the user polls. When that ring is full it stops, and the
 * user's next poll wakes the loop to continue ({@link QueuePair#markCompletionsStalled}). Owner thread of the loop.
 */
final class Completer {
    private final QpEngine engine;
    private final QueuePair qp;
    private final SendLedger ledger;
    private final CompletionQueue arrivals;
    private final MessageAssembler assembler;
    private final Completion arrived = new Completion();
    private final LoopSignal notify;
    private Runnable completionListener;
    private boolean notifyQueued;
    /** READ responses that landed (or were flushed), for the send progress check. */
    private long readResponsesLanded;

    Completer(QpEngine engine, CompletionQueue arrivals) {
        this.engine = engine;
        this.qp = engine.qp;
        this.ledger = engine.ledger;
        this.arrivals = arrivals;
        this.assembler = engine.assembler;
        this.notify = engine.loop.newSignal(this::notifyListener);
    }

    /** {@return the READ responses that landed (or were flushed) so far} */
    long readResponsesLanded() {
        return readResponsesLanded;
    }

    /** Completed receives and READ responses; false if the completion ring filled up first. */
    boolean takeArrivals() {
        if (!moveArrivals()) {
            return false;
        }
        int r = assembler.resumeCompletions();
        if (r < 0 && r != FrameError.QUEUE_PAIR_IN_ERROR && engine.failure.state() != QpState.ERROR) {
            engine.failure.onViolation(r, "completing a message failed: " + FrameError.name(r));
        }
        return true;
    }

    /** Moves the completions the assembler holds into the ring the user polls; false if it filled up first. */
    boolean moveArrivals() {
        while (true) {
            if (qp.completionRing.claim() < 0) {
                stall();
                return false;
            }
            if (!arrivals.poll(arrived)) {
                break;
            }
            long id = arrived.workRequestId();
            int status = statusOf(arrived.status());
            if (id < 0) {
                ledger.readLanded(ledger.slot(-1 - id), status);
                readResponsesLanded++;
                continue;
            }
            int opcode = arrived.opcode();
            boolean withImm = opcode >= 0 && Opcode.hasImmediate(opcode);
            int wcOpcode = opcode >= 0 && Opcode.kind(opcode) == Opcode.KIND_WRITE_WITH_IMMEDIATE
                    ? WorkCompletion.OP_RECV_RDMA_WITH_IMM : WorkCompletion.OP_RECV;
            completion(engine.intake.receiveId(id), status, wcOpcode, arrived.byteCount(), withImm, arrived.immediate());
        }
        return true;
    }

    private static int statusOf(int completionStatus) {
        return switch (completionStatus) {
            case CompletionStatus.SUCCESS -> WorkCompletion.SUCCESS;
            case CompletionStatus.LOCAL_LENGTH_ERROR -> WorkCompletion.LOCAL_LENGTH_ERROR;
            case CompletionStatus.LOCAL_PROTECTION_ERROR -> WorkCompletion.LOCAL_PROTECTION_ERROR;
            case CompletionStatus.REMOTE_ACCESS_ERROR -> WorkCompletion.REMOTE_ACCESS_ERROR;
            case CompletionStatus.FLUSH_ERROR -> WorkCompletion.FLUSH_ERROR;
            default -> WorkCompletion.TRANSPORT_ERROR;
        };
    }

    /** Completes ledger entries from the oldest while they are done; false if the completion ring filled. */
    boolean retire() {
        Requester requester = engine.requester;
        FailurePath failure = engine.failure;
        long acked = requester.acknowledged();
        requester.onAcknowledged(acked);
        while (!ledger.isEmpty()) {
            int i = ledger.slot(ledger.head);
            int kind = ledger.kind[i];
            // Acknowledged work succeeded even if the queue pair failed since: the peer has it.
            boolean done = ledger.isDone(i, acked);
            int status;
            if (ledger.earlyStatus[i] >= 0) {
                status = ledger.earlyStatus[i];
            } else if (!done && (failure.state() != QpState.ERROR || ledger.awaitsResponses(i))) {
                // A READ in ERROR waits for the assembler to flush each response it expects, which it does only
                // once no kernel receive can still write into the sink: then the memory is the user's again.
                return true;
            } else if (kind == WorkRequest.RDMA_READ && ledger.readStatus[i] >= 0) {
                status = ledger.readStatus[i];
            } else {
                status = done ? WorkCompletion.SUCCESS : WorkCompletion.FLUSH_ERROR;
            }
            if (kind != SendLedger.READ_RESPONSE && (ledger.signaled[i] || status != WorkCompletion.SUCCESS)) {
                if (!completion(ledger.workRequestId[i], status, completionOpcode(kind),
                        status == WorkCompletion.SUCCESS ? ledger.length[i] : 0, false, 0)) {
                    return false;
                }
            }
            requester.retiring(ledger.head);
            ledger.retireHead();
            if (status != WorkCompletion.SUCCESS && failure.state() != QpState.ERROR) {
                failure.fail(status, "work request failed: " + WorkCompletion.statusName(status));
            }
        }
        return true;
    }

    private static int completionOpcode(int kind) {
        return switch (kind) {
            case WorkRequest.SEND, WorkRequest.SEND_WITH_IMM -> WorkCompletion.OP_SEND;
            case WorkRequest.RDMA_READ -> WorkCompletion.OP_RDMA_READ;
            default -> WorkCompletion.OP_RDMA_WRITE;
        };
    }

    /** Writes one completion to the ring the user polls; false when it is full. */
    boolean completion(long id, int status, int opcode, int bytes, boolean withImm, int imm) {
        SpscRing cq = qp.completionRing;
        long at = cq.claim();
        if (at < 0) {
            stall();
            return false;
        }
        QueueEntries.writeCompletion(cq.producerMemory(), at, id, status, opcode, bytes, withImm, imm);
        cq.publish();
        if (completionListener != null && !notifyQueued) {
            notifyQueued = true;
            notify.raise();
        }
        return true;
    }

    /**
     * Runs {@code listener} on the loop thread once per loop turn that added completions (null: none), and once soon
     * if completions wait already: those written before it was set (a queue pair that failed while it was being set
     * up) would otherwise wait for a turn that adds more, which may never come.
     */
    void completionListener(Runnable listener) {
        this.completionListener = listener;
        if (listener != null && qp.completionRing.size() > 0 && !notifyQueued) {
            notifyQueued = true;
            notify.raise();
        }
    }

    private void notifyListener() {
        notifyQueued = false;
        Runnable listener = completionListener;
        if (listener != null && !engine.isClosed()) {
            try {
                listener.run();
            } catch (RuntimeException | Error e) {
                engine.failure.onFault("the completion listener", e);
            }
        }
    }

    /** The completion ring is full: the user's next poll wakes the loop to continue. */
    private void stall() {
        qp.markCompletionsStalled();
    }
}
