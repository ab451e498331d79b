package io.zcnet.ring.sys;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Pins every structure size and field offset to the kernel's numbers (reference/io_uring.md, uapi header). */
class LayoutTest {

    @Test
    void ioUringParams() {
        assertEquals(120, Params.LAYOUT.byteSize());
        assertEquals(40, Params.SQ_OFFSETS.byteSize());
        assertEquals(40, Params.CQ_OFFSETS.byteSize());
        assertEquals(0, Params.SQ_ENTRIES);
        assertEquals(4, Params.CQ_ENTRIES);
        assertEquals(8, Params.FLAGS);
        assertEquals(20, Params.FEATURES);
        assertEquals(24, Params.WQ_FD);
        assertEquals(40, Params.SQ_OFF);
        assertEquals(40, Params.SQ_OFF_HEAD);
        assertEquals(44, Params.SQ_OFF_TAIL);
        assertEquals(48, Params.SQ_OFF_RING_MASK);
        assertEquals(52, Params.SQ_OFF_RING_ENTRIES);
        assertEquals(56, Params.SQ_OFF_FLAGS);
        assertEquals(60, Params.SQ_OFF_DROPPED);
        assertEquals(64, Params.SQ_OFF_ARRAY);
        assertEquals(72, Params.SQ_OFF_USER_ADDR);
        assertEquals(80, Params.CQ_OFF);
        assertEquals(80, Params.CQ_OFF_HEAD);
        assertEquals(84, Params.CQ_OFF_TAIL);
        assertEquals(88, Params.CQ_OFF_RING_MASK);
        assertEquals(92, Params.CQ_OFF_RING_ENTRIES);
        assertEquals(96, Params.CQ_OFF_OVERFLOW);
        assertEquals(100, Params.CQ_OFF_CQES);
        assertEquals(104, Params.CQ_OFF_FLAGS);
        assertEquals(112, Params.CQ_OFF_USER_ADDR);
    }

    @Test
    void sqe() {
        assertEquals(64, Sqe.SIZE);
        assertEquals(0, Sqe.OPCODE);
        assertEquals(1, Sqe.FLAGS);
        assertEquals(2, Sqe.IOPRIO);
        assertEquals(4, Sqe.FD);
        assertEquals(8, Sqe.OFF);
        assertEquals(8, Sqe.ADDR2);
        assertEquals(8, Sqe.CMD_OP);
        assertEquals(16, Sqe.ADDR);
        assertEquals(16, Sqe.LEVEL);
        assertEquals(20, Sqe.OPTNAME);
        assertEquals(24, Sqe.LEN);
        assertEquals(28, Sqe.OP_FLAGS);
        assertEquals(28, Sqe.MSG_FLAGS);
        assertEquals(32, Sqe.USER_DATA);
        assertEquals(40, Sqe.BUF_INDEX);
        assertEquals(40, Sqe.BUF_GROUP);
        assertEquals(42, Sqe.PERSONALITY);
        assertEquals(44, Sqe.FILE_INDEX);
        assertEquals(44, Sqe.ZCRX_IFQ_IDX);
        assertEquals(44, Sqe.OPTLEN);
        assertEquals(44, Sqe.ADDR_LEN);
        assertEquals(48, Sqe.ADDR3);
        assertEquals(48, Sqe.OPTVAL);
        assertEquals(56, Sqe.PAD2);
    }

    @Test
    void cqe() {
        assertEquals(16, Cqe.SIZE);
        assertEquals(32, Cqe.SIZE_32);
        assertEquals(0, Cqe.USER_DATA);
        assertEquals(8, Cqe.RES);
        assertEquals(12, Cqe.FLAGS);
        assertEquals(16, Cqe.BIG_CQE);
    }

    @Test
    void providedBufferRing() {
        assertEquals(16, BufRingLayout.BUF_SIZE);
        assertEquals(0, BufRingLayout.BUF_ADDR);
        assertEquals(8, BufRingLayout.BUF_LEN);
        assertEquals(12, BufRingLayout.BUF_BID);
        assertEquals(14, BufRingLayout.RING_TAIL);
        assertEquals(40, BufRingLayout.REG.byteSize());
        assertEquals(0, BufRingLayout.REG_RING_ADDR);
        assertEquals(8, BufRingLayout.REG_RING_ENTRIES);
        assertEquals(12, BufRingLayout.REG_BGID);
        assertEquals(14, BufRingLayout.REG_FLAGS);
    }

    @Test
    void probe() {
        assertEquals(16, Probe.HEADER_SIZE);
        assertEquals(0, Probe.LAST_OP);
        assertEquals(1, Probe.OPS_LEN);
        assertEquals(8, Probe.OP_SIZE);
        assertEquals(0, Probe.OP_OP);
        assertEquals(2, Probe.OP_FLAGS);
        assertEquals(16 + 256 * 8, Probe.size(256));
    }

    @Test
    void timeStructuresAndArguments() {
        assertEquals(16, Timespec.SIZE);
        assertEquals(0, Timespec.TV_SEC);
        assertEquals(8, Timespec.TV_NSEC);
        assertEquals(24, GeteventsArg.SIZE);
        assertEquals(0, GeteventsArg.SIGMASK);
        assertEquals(8, GeteventsArg.SIGMASK_SZ);
        assertEquals(12, GeteventsArg.MIN_WAIT_USEC);
        assertEquals(16, GeteventsArg.TS);
        assertEquals(16, RsrcUpdate.SIZE);
        assertEquals(0, RsrcUpdate.OFFSET);
        assertEquals(8, RsrcUpdate.DATA);
        assertEquals(16, Iovec.SIZE);
        assertEquals(0, Iovec.IOV_BASE);
        assertEquals(8, Iovec.IOV_LEN);
    }

    @Test
    void messageHeaderAsInLinuxSocketH() {
        assertEquals(56, MsgHdr.SIZE);
        assertEquals(0, MsgHdr.MSG_NAME);
        assertEquals(16, MsgHdr.MSG_IOV);
        assertEquals(24, MsgHdr.MSG_IOVLEN);
        assertEquals(32, MsgHdr.MSG_CONTROL);
        assertEquals(48, MsgHdr.MSG_FLAGS);
    }

    @Test
    void socketAddresses() {
        assertEquals(16, SockAddr.IN_SIZE);
        assertEquals(0, SockAddr.IN_FAMILY);
        assertEquals(2, SockAddr.IN_PORT);
        assertEquals(4, SockAddr.IN_ADDR);
        assertEquals(28, SockAddr.IN6_SIZE);
        assertEquals(0, SockAddr.IN6_FAMILY);
        assertEquals(2, SockAddr.IN6_PORT);
        assertEquals(4, SockAddr.IN6_FLOWINFO);
        assertEquals(8, SockAddr.IN6_ADDR);
        assertEquals(24, SockAddr.IN6_SCOPE_ID);
    }

    @Test
    void zcrx() {
        assertEquals(96, Zcrx.IFQ_REG.byteSize());
        assertEquals(0, Zcrx.IFQ_IF_IDX);
        assertEquals(4, Zcrx.IFQ_IF_RXQ);
        assertEquals(8, Zcrx.IFQ_RQ_ENTRIES);
        assertEquals(12, Zcrx.IFQ_FLAGS);
        assertEquals(16, Zcrx.IFQ_AREA_PTR);
        assertEquals(24, Zcrx.IFQ_REGION_PTR);
        assertEquals(32, Zcrx.IFQ_OFFSETS);
        assertEquals(32, Zcrx.IFQ_OFF_HEAD);
        assertEquals(36, Zcrx.IFQ_OFF_TAIL);
        assertEquals(40, Zcrx.IFQ_OFF_RQES);
        assertEquals(64, Zcrx.IFQ_ZCRX_ID);
        assertEquals(32, Zcrx.OFFSETS.byteSize());
        assertEquals(48, Zcrx.AREA_REG.byteSize());
        assertEquals(0, Zcrx.AREA_ADDR);
        assertEquals(8, Zcrx.AREA_LEN);
        assertEquals(16, Zcrx.AREA_RQ_AREA_TOKEN);
        assertEquals(24, Zcrx.AREA_FLAGS);
        assertEquals(28, Zcrx.AREA_DMABUF_FD);
        assertEquals(16, Zcrx.RQE.byteSize());
        assertEquals(0, Zcrx.RQE_OFF);
        assertEquals(8, Zcrx.RQE_LEN);
        assertEquals(12, Zcrx.RQE_PAD);
        assertEquals(16, Zcrx.CQE.byteSize());
        assertEquals(0, Zcrx.CQE_OFF);
        assertEquals(64, Zcrx.REGION_DESC.byteSize());
        assertEquals(0, Zcrx.REGION_USER_ADDR);
        assertEquals(8, Zcrx.REGION_SIZE);
        assertEquals(16, Zcrx.REGION_FLAGS);
        assertEquals(20, Zcrx.REGION_ID);
        assertEquals(24, Zcrx.REGION_MMAP_OFFSET);
        assertEquals(0xFFFF_0000_0000_0000L, Zcrx.AREA_MASK);
    }
}
