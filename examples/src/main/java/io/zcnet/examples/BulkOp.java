package io.zcnet.examples;

import java.util.Locale;

/** The work request a bulk run moves its data with. */
enum BulkOp {
    /** RDMA WRITEs into the server's region (WRITEs with immediate when verifying, so the server sees each one). */
    WRITE,
    /** SENDs into receives the server keeps posted. */
    SEND,
    /** RDMA READs of the server's region into the client's. */
    READ;

    /** The name as the command line and the result line spell it. */
    String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
