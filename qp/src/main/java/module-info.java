/**
 * Queue pairs: the public message API of zcnet. Two processes exchange SENDs into posted receives and
 * read and write each other's registered memory with the semantics of RDMA verbs, over one or several
 * TCP connections (subflows) that may take different paths and survive the loss of any of them.
 */
module io.zcnet.qp {
    requires transitive io.zcnet.buffer;
    requires transitive io.zcnet.ring;
    requires io.zcnet.framing;
    requires jdk.jfr;
    requires org.jctools.core;
    requires io.zcnet.tx;
    requires io.zcnet.rx;

    exports io.zcnet.qp;
}
