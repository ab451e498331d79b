package io.zcnet.examples;

import io.zcnet.collective.NacaHeader;
import io.zcnet.framing.FrameHeader;
import io.zcnet.framing.Opcode;

import java.lang.foreign.MemorySegment;

/**
 * The NACA header (docs/wire-format.md, section 20) in a frame of {@code ./zcnet dump} ({@link WireDump}): found in
 * the payload of the first frame of a SEND or a WRITE with immediate, where a NACA message puts it, when the
 * payload starts with its magic and version and names a known type. A single-frame message is also checked
 * against every rule ({@link NacaHeader#validate}); of a longer one only the header is shown. Diagnostic:
 * allocates freely. Stateless.
 */
final class NacaDump {
    private NacaDump() {
    }

    /** {@return the NACA header in the frame at the start of {@code frame}, which {@code h} wraps, or null} */
    static NacaHeader find(MemorySegment frame, FrameHeader h) {
        int op = h.opcode();
        boolean carrier = op == Opcode.SEND_ONLY || op == Opcode.SEND_FIRST || op == Opcode.RDMA_WRITE_FIRST
                || op == Opcode.RDMA_WRITE_ONLY_WITH_IMMEDIATE;
        if (!carrier || h.messageOffset() != 0 || h.length() < NacaHeader.LENGTH) {
            return null;
        }
        NacaHeader n = new NacaHeader().wrap(frame, FrameHeader.LENGTH + h.extLength());
        boolean known = n.type() >= NacaHeader.CHALLENGE && n.type() <= NacaHeader.RESULT;
        return n.magic() == NacaHeader.MAGIC && n.version() == NacaHeader.VERSION && known ? n : null;
    }

    /** {@return why the whole message breaks a NACA rule, or null when it keeps them or is not one frame} */
    static String problem(NacaHeader n, FrameHeader h) {
        return Opcode.isLast(h.opcode()) ? n.validate(h.length()) : null;
    }

    /** Appends the header as the text form shows it: {@code naca=[CHUNK job=7 rank=2/4 ...]}. */
    static void text(StringBuilder sb, NacaHeader n, FrameHeader h) {
        sb.append(" naca=[").append(NacaHeader.typeName(n.type())).append(" job=").append(n.job()).append(" rank=")
                .append(n.rank()).append('/').append(n.ranks());
        if (n.type() == NacaHeader.CHUNK || n.type() == NacaHeader.RESULT) {
            sb.append(" slot=").append(n.slot()).append(" seq=").append(n.sequence()).append(" op=")
                    .append(n.operation()).append(' ').append(dataType(n)).append(' ').append(reduction(n));
        }
        sb.append(" len=").append(n.length());
        if ((n.flags() & NacaHeader.FLAG_RESEND) != 0) {
            sb.append(" resend");
        }
        if ((n.flags() & NacaHeader.FLAG_FALLBACK) != 0) {
            sb.append(" fallback");
        }
        String problem = problem(n, h);
        if (problem != null) {
            sb.append(" error=\"").append(problem).append('"');
        }
        sb.append(']');
    }

    /** Appends the header as one JSON object, fields named as in section 20.2, to a JSON object being built. */
    static void json(StringBuilder sb, NacaHeader n, FrameHeader h) {
        sb.append(",\"naca\":{\"type\":\"").append(NacaHeader.typeName(n.type())).append("\",\"flags\":")
                .append(n.flags()).append(",\"job\":").append(n.job()).append(",\"collective\":")
                .append(n.collective()).append(",\"dtype\":").append(n.dataType()).append(",\"redop\":")
                .append(n.reduction()).append(",\"ranks\":").append(n.ranks()).append(",\"rank\":").append(n.rank())
                .append(",\"slot\":").append(n.slot()).append(",\"sequence\":").append(n.sequence())
                .append(",\"length\":").append(n.length()).append(",\"operation\":").append(n.operation());
        String problem = problem(n, h);
        if (problem != null) {
            sb.append(",\"error\":\"").append(problem.replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
        }
        sb.append('}');
    }

    private static String dataType(NacaHeader n) {
        return n.dataType() >= 1 && n.dataType() <= 6 ? NacaHeader.dataType(n.dataType()).name() : "dtype" + n.dataType();
    }

    private static String reduction(NacaHeader n) {
        return n.reduction() >= 1 && n.reduction() <= 4 ? NacaHeader.reduction(n.reduction()).name()
                : "redop" + n.reduction();
    }
}
