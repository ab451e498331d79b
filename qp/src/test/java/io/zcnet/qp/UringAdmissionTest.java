package io.zcnet.qp;

import io.zcnet.ring.EventLoopConfig;

/** Admission and bounds of a listener on io_uring; skipped with the reason where io_uring cannot run. */
class UringAdmissionTest extends AdmissionContractTest implements RequiresUring {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.URING;
    }
}
