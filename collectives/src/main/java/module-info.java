/**
 * Collective operations over queue pairs: a {@link io.zcnet.collective.Communicator} of N ranks formed by
 * rendezvous at one address, with allreduce, reduce-scatter, allgather, broadcast, reduce, all-to-all and
 * barrier on off-heap memory. Data moves as RDMA WRITEs with immediate data into registered staging slots
 * of the peer, which reduces or copies each piece as it lands.
 */
module io.zcnet.collective {
    requires transitive io.zcnet.qp;

    exports io.zcnet.collective;
}
