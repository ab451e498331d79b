package io.zcnet.qp;

import io.zcnet.buffer.MemoryRegion;
import io.zcnet.buffer.MemoryRegistry;
import io.zcnet.framing.FrameError;
import io.zcnet.framing.MessageAssembler;
import io.zcnet.framing.ReadRequest;

/**
 * The READ-answering half of rxe's responder ({@code rxe_resp.c}): turns each READ request the assembler checked
 * into a ledger entry of the READ response this side owes, sent by the {@link Requester} in turn with the rest.
 * The rest of the responder's work, checking and placing what arrives, is the {@link MessageAssembler}'s; its
 * acknowledging is the {@link AcknowledgePolicy}'s. Owner thread of the loop.
 */
final class Responder {
    private final QpEngine engine;
    private final SendLedger ledger;
    private final MessageAssembler assembler;
    private final MemoryRegistry registry;
    private final ReadRequest readRequest = new ReadRequest();

    Responder(QpEngine engine) {
        this.engine = engine;
        this.ledger = engine.ledger;
        this.assembler = engine.assembler;
        this.registry = engine.registry;
    }

    /** Queues the READ responses the peer asked for. */
    void takeReadRequests() {
        while (ledger.hasRoom() && assembler.pollReadRequest(readRequest)) {
            MemoryRegion source = readRequest.sourceRegion(registry);
            if (source == null) {
                engine.failure.end(WorkCompletion.LOCAL_PROTECTION_ERROR, "READ request names a region that went away: "
                        + readRequest, FrameError.REMOTE_ACCESS, readRequest.msn());
                return;
            }
            ledger.nextLocal().clear().add(source.segment(), readRequest.regionOffset(), readRequest.length());
            ledger.append(SendLedger.READ_RESPONSE, 0, false, false, 0, 0, 0, readRequest.sinkRkey(), readRequest.sinkOffset());
        }
    }
}
