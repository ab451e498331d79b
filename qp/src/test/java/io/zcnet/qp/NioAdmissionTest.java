package io.zcnet.qp;

import io.zcnet.ring.EventLoopConfig;

/** Admission and bounds of a listener on the NIO engine. */
class NioAdmissionTest extends AdmissionContractTest {
    @Override
    protected EventLoopConfig.Choice engine() {
        return EventLoopConfig.Choice.NIO;
    }
}
