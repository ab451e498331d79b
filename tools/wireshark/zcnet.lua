-- Wireshark dissector for zcnet wire format v1 (docs/wire-format.md): the handshake messages that open a
-- subflow and the frames that follow, over TCP. No build step:
--
--   wireshark -X lua_script:tools/wireshark/zcnet.lua capture.pcap
--   tshark -X lua_script:tools/wireshark/zcnet.lua -o zcnet.tcp_port:7000 -r capture.pcap -Y zcnet
--
-- or copy it into Wireshark's personal Lua plugins folder. It decodes frames on the TCP port of the
-- preference "zcnet.tcp_port" (default 7000, the port the README's examples use; ./zcnet has no default
-- queue-pair port) and, as a heuristic dissector on TCP, on any connection whose first bytes are a
-- handshake message or a plausible frame header. Frames split over TCP segments are reassembled, several
-- frames in one segment are all decoded. Field names follow the specification: zcnet.msn, zcnet.offset,
-- zcnet.rkey, zcnet.hs.token and so on. The ICRC (CRC32C with the masked fields of section 13) is
-- recomputed and zcnet.icrc_ok says whether it matches; the stateless validation rules of sections 14.1
-- and 14.2 are applied and zcnet.error names the first one a frame breaks. A SEND_PACKED frame's records
-- (section 6.1) are shown one by one, each with its MSN and RSN (zcnet.record.msn, zcnet.record.rsn).

local zcnet = Proto("zcnet", "zcnet queue pair protocol")

-- ---------------------------------------------------------------- 32-bit operations on any Lua version

-- Wireshark's Lua 5.2 has bit32 (and bit); Lua 5.3+ has operators, which Lua 5.2 cannot even parse.
local band, bxor, rshift
if bit32 then
    band, bxor, rshift = bit32.band, bit32.bxor, bit32.rshift
elseif bit then
    band, bxor, rshift = bit.band, bit.bxor, bit.rshift
else
    band, bxor, rshift = load("return function(a, b) return a & b end, "
        .. "function(a, b) return (a ~ b) & 0xffffffff end, "
        .. "function(a, n) return (a & 0xffffffff) >> n end")()
end

local function u32(x)
    return x % 4294967296 -- LuaBitOp answers signed values
end

-- ---------------------------------------------------------------- CRC32C (Castagnoli), reflected, table driven

local CRC_TABLE = {}
for i = 0, 255 do
    local c = i
    for _ = 1, 8 do
        if band(c, 1) ~= 0 then
            c = bxor(rshift(c, 1), 0x82F63B78)
        else
            c = rshift(c, 1)
        end
    end
    CRC_TABLE[i] = c
end

local function crc32c_update(crc, s)
    local byte = string.byte
    for i = 1, #s do
        crc = bxor(CRC_TABLE[band(bxor(crc, byte(s, i)), 0xFF)], rshift(crc, 8))
    end
    return crc
end

-- The ICRC of the frame at the start of tvb: the header with timestamp_present, icrc, timestamp,
-- timestamp_echo and subflow taken as zero, then the extension and payload as they are (section 13).
local function icrc_of(tvb, ext_length, length)
    local h = tvb:raw(0, 32)
    local flags = band(h:byte(1), 0xDF)
    local masked = string.char(flags) .. h:sub(2, 8) .. string.rep("\0", 12) .. h:sub(21, 30) .. "\0\0"
    local crc = crc32c_update(0xFFFFFFFF, masked)
    if ext_length + length > 0 then
        crc = crc32c_update(crc, tvb:raw(32, ext_length + length))
    end
    return u32(bxor(crc, 0xFFFFFFFF))
end

-- ---------------------------------------------------------------- the protocol's tables

local OPCODES = {
    [0x00] = "SEND_FIRST", [0x01] = "SEND_MIDDLE", [0x02] = "SEND_LAST", [0x03] = "SEND_LAST_WITH_IMMEDIATE",
    [0x04] = "SEND_ONLY", [0x05] = "SEND_ONLY_WITH_IMMEDIATE", [0x06] = "RDMA_WRITE_FIRST",
    [0x07] = "RDMA_WRITE_MIDDLE", [0x08] = "RDMA_WRITE_LAST", [0x09] = "RDMA_WRITE_LAST_WITH_IMMEDIATE",
    [0x0A] = "RDMA_WRITE_ONLY", [0x0B] = "RDMA_WRITE_ONLY_WITH_IMMEDIATE", [0x0C] = "RDMA_READ_REQUEST",
    [0x0D] = "RDMA_READ_RESPONSE_FIRST", [0x0E] = "RDMA_READ_RESPONSE_MIDDLE", [0x0F] = "RDMA_READ_RESPONSE_LAST",
    [0x10] = "RDMA_READ_RESPONSE_ONLY", [0x11] = "ACKNOWLEDGE", [0xC0] = "SEND_PACKED",
}
local ACKNOWLEDGE = 0x11
local READ_REQUEST = 0x0C
local SEND_PACKED = 0xC0
local PACKED_MAX = 4096 -- most payload bytes of a SEND_PACKED frame
local RECORD_HEADER = 4 -- a record's descriptor
-- Per opcode: extension length, starts a message, ends it, carries immediate data, tagged, RSN at (or nil).
local OP = {}
local function op(code, ext, first, last, imm, tagged, rsn_at)
    OP[code] = { ext = ext, first = first, last = last, imm = imm, tagged = tagged, rsn_at = rsn_at }
end
op(0x00, 4, true, false, false, false, 0)
op(0x01, 4, false, false, false, false, 0)
op(0x02, 4, false, true, false, false, 0)
op(0x03, 4, false, true, true, false, 0)
op(0x04, 4, true, true, false, false, 0)
op(0x05, 4, true, true, true, false, 0)
op(0x06, 12, true, false, false, true, nil)
op(0x07, 12, false, false, false, true, nil)
op(0x08, 12, false, true, false, true, nil)
op(0x09, 16, false, true, true, true, 12)
op(0x0A, 12, true, true, false, true, nil)
op(0x0B, 16, true, true, true, true, 12)
op(0x0C, 28, true, true, false, false, nil)
op(0x0D, 12, true, false, false, true, nil)
op(0x0E, 12, false, false, false, true, nil)
op(0x0F, 12, false, true, false, true, nil)
op(0x10, 12, true, true, false, true, nil)
op(0x11, 0, true, true, false, false, nil)
op(0xC0, 4, true, true, false, false, 0)

-- FrameError codes, negated: NAK syndromes and the first validation rule a frame breaks.
local ERRORS = {
    [0] = "OK", [1] = "TRUNCATED", [2] = "BAD_VERSION", [3] = "BAD_OPCODE", [4] = "RESERVED_BITS",
    [5] = "BAD_EXTENSION_LENGTH", [6] = "PAYLOAD_TOO_LONG", [7] = "MESSAGE_TOO_LONG", [8] = "BAD_SEGMENT",
    [9] = "BAD_FLAGS", [10] = "RESERVED_FIELD", [11] = "MSN_OUT_OF_WINDOW", [12] = "ICRC_MISMATCH",
    [13] = "INCONSISTENT_MESSAGE", [14] = "REMOTE_ACCESS", [15] = "LOCAL_LENGTH", [16] = "RECEIVER_NOT_READY",
    [17] = "BAD_ACKNOWLEDGE", [18] = "QUEUE_PAIR_IN_ERROR", [19] = "UNEXPECTED_READ_RESPONSE",
    [20] = "LOCAL_PROTECTION", [21] = "BAD_RECEIVE_SEQUENCE", [22] = "TERMINATED_BY_PEER",
}

local HS_MAGIC = 0x5A515031 -- "ZQP1"
local HS_LENGTH = 96
local HS_TYPES = { [1] = "OPEN", [2] = "JOIN", [3] = "CHALLENGE", [4] = "PROOF", [5] = "REFUSE" }
local HS_REASONS = {
    [1] = "MALFORMED", [2] = "UNKNOWN_TOKEN", [3] = "BAD_PROOF", [4] = "SUBFLOW_LIMIT", [5] = "KEY_REQUIRED",
    [6] = "QUEUE_PAIR_GONE",
    [7] = "BUSY",
    [8] = "NOT_ADMITTED",
}
local MAX_MESSAGE = 16777215 -- 2^24 - 1
local NO_MESSAGE = 0xFFFFFFFF

-- ---------------------------------------------------------------- fields

local f = zcnet.fields
f.flags = ProtoField.uint8("zcnet.flags", "Flags", base.HEX)
f.ver = ProtoField.uint8("zcnet.ver", "Version", base.DEC, nil, 0xC0)
f.timestamp_present = ProtoField.bool("zcnet.timestamp_present", "Timestamp present", 8, nil, 0x20)
f.more_segments = ProtoField.bool("zcnet.more_segments", "More segments", 8, nil, 0x10)
f.rtr = ProtoField.bool("zcnet.rtr", "Ready to receive (RTR)", 8, nil, 0x08)
f.rtr_ack = ProtoField.bool("zcnet.rtr_ack", "RTR acknowledged (RTR_ACK)", 8, nil, 0x04)
f.ack_request = ProtoField.bool("zcnet.ack_request", "Acknowledgement requested", 8, nil, 0x02)
f.quiet = ProtoField.bool("zcnet.quiet", "Quiet (no heartbeats until work)", 8, nil, 0x01)
f.opcode = ProtoField.uint8("zcnet.opcode", "Opcode", base.HEX, OPCODES)
f.msn = ProtoField.uint16("zcnet.msn", "MSN", base.DEC)
f.mbo_seg = ProtoField.uint32("zcnet.mbo_seg", "Message offset and segment", base.HEX)
f.offset = ProtoField.uint32("zcnet.offset", "Message byte offset", base.DEC, nil, 0xFFFFFF00)
f.seg = ProtoField.uint32("zcnet.seg", "Segment number", base.DEC, nil, 0x000000FF)
f.icrc = ProtoField.uint32("zcnet.icrc", "ICRC", base.HEX)
f.icrc_ok = ProtoField.bool("zcnet.icrc_ok", "ICRC correct")
f.icrc_computed = ProtoField.uint32("zcnet.icrc_computed", "ICRC computed", base.HEX)
f.timestamp = ProtoField.uint32("zcnet.timestamp", "Timestamp (us)", base.DEC)
f.timestamp_echo = ProtoField.uint32("zcnet.timestamp_echo", "Timestamp echo (us)", base.DEC)
f.imm_data = ProtoField.uint32("zcnet.imm_data", "Immediate data", base.DEC)
f.length = ProtoField.uint32("zcnet.length", "Payload length", base.DEC)
f.ext_length = ProtoField.uint16("zcnet.ext_length", "Extension length", base.DEC)
f.subflow = ProtoField.uint16("zcnet.subflow", "Subflow", base.DEC)
f.rkey = ProtoField.uint32("zcnet.rkey", "Remote key", base.HEX)
f.region_offset = ProtoField.uint64("zcnet.region_offset", "Region offset", base.DEC)
f.rsn = ProtoField.uint32("zcnet.rsn", "Receive sequence number (RSN)", base.DEC)
f.read_length = ProtoField.uint32("zcnet.read_length", "Read length", base.DEC)
f.sink_rkey = ProtoField.uint32("zcnet.sink_rkey", "Sink remote key", base.HEX)
f.sink_offset = ProtoField.uint64("zcnet.sink_offset", "Sink offset", base.DEC)
f.credit_limit = ProtoField.uint32("zcnet.credit_limit", "Cumulative credit limit", base.DEC)
f.nak_syndrome = ProtoField.uint8("zcnet.nak.syndrome", "NAK syndrome", base.DEC, ERRORS)
f.nak_failed_msn = ProtoField.uint32("zcnet.nak.failed_msn", "NAK failed MSN", base.DEC, { [NO_MESSAGE] = "none" })
f.error = ProtoField.string("zcnet.error", "Validation error")
f.payload = ProtoField.bytes("zcnet.payload", "Payload")
f.records = ProtoField.uint16("zcnet.records", "Records", base.DEC)
f.record = ProtoField.none("zcnet.record", "Record")
f.record_descriptor = ProtoField.uint32("zcnet.record.descriptor", "Descriptor", base.HEX)
f.record_immediate_present = ProtoField.bool("zcnet.record.immediate_present", "Immediate present", 32, nil, 0x80000000)
f.record_reserved = ProtoField.uint32("zcnet.record.reserved", "Reserved", base.HEX, nil, 0x7F000000)
f.record_message_length = ProtoField.uint32("zcnet.record.message_length", "Message length", base.DEC, nil, 0x00FFFFFF)
f.record_imm_data = ProtoField.uint32("zcnet.record.imm_data", "Immediate data", base.DEC)
f.record_payload = ProtoField.bytes("zcnet.record.payload", "Message")
f.record_msn = ProtoField.uint16("zcnet.record.msn", "MSN", base.DEC)
f.record_rsn = ProtoField.uint32("zcnet.record.rsn", "Receive sequence number (RSN)", base.DEC)

-- NACA: the header of an aggregation message at the start of a SEND's or WRITE with immediate's payload (section 20)
local NACA_TYPES = { [1] = "CHALLENGE", [2] = "JOIN", [3] = "ACCEPT", [4] = "REFUSE", [5] = "CHUNK", [6] = "RESULT" }
local NACA_DTYPES = { [0] = "none", [1] = "FLOAT", [2] = "DOUBLE", [3] = "INT", [4] = "LONG", [5] = "BFLOAT16", [6] = "FLOAT16" }
local NACA_DTYPE_BYTES = { [1] = 4, [2] = 8, [3] = 4, [4] = 8, [5] = 2, [6] = 2 }
local NACA_REDOPS = { [0] = "none", [1] = "SUM", [2] = "PROD", [3] = "MIN", [4] = "MAX" }
f.naca = ProtoField.none("zcnet.naca", "NACA header")
f.naca_magic = ProtoField.uint8("zcnet.naca.magic", "Magic", base.HEX)
f.naca_version = ProtoField.uint8("zcnet.naca.version", "Version", base.DEC)
f.naca_type = ProtoField.uint8("zcnet.naca.type", "Type", base.DEC, NACA_TYPES)
f.naca_flags = ProtoField.uint8("zcnet.naca.flags", "Flags", base.HEX)
f.naca_resend = ProtoField.bool("zcnet.naca.resend", "Resend", 8, nil, 0x01)
f.naca_fallback = ProtoField.bool("zcnet.naca.fallback", "Fallback to the hosts", 8, nil, 0x02)
f.naca_job = ProtoField.uint16("zcnet.naca.job", "Job", base.DEC)
f.naca_collective = ProtoField.uint8("zcnet.naca.collective", "Collective", base.DEC, { [0] = "none", [1] = "ALLREDUCE" })
f.naca_dtype_redop = ProtoField.uint8("zcnet.naca.dtype_redop", "Data type and reduction", base.HEX)
f.naca_dtype = ProtoField.uint8("zcnet.naca.dtype", "Data type", base.DEC, NACA_DTYPES, 0xF0)
f.naca_redop = ProtoField.uint8("zcnet.naca.redop", "Reduction", base.DEC, NACA_REDOPS, 0x0F)
f.naca_ranks = ProtoField.uint16("zcnet.naca.ranks", "Ranks", base.DEC)
f.naca_rank = ProtoField.uint16("zcnet.naca.rank", "Rank", base.DEC)
f.naca_slot = ProtoField.uint16("zcnet.naca.slot", "Slot", base.DEC)
f.naca_reserved = ProtoField.bytes("zcnet.naca.reserved", "Reserved")
f.naca_sequence = ProtoField.uint32("zcnet.naca.sequence", "Chunk sequence", base.DEC)
f.naca_length = ProtoField.uint32("zcnet.naca.length", "Body length", base.DEC)
f.naca_operation = ProtoField.uint32("zcnet.naca.operation", "Operation", base.DEC)
f.naca_error = ProtoField.string("zcnet.naca.error", "NACA validation error")

f.hs_magic = ProtoField.uint32("zcnet.hs.magic", "Magic", base.HEX)
f.hs_type = ProtoField.uint8("zcnet.hs.type", "Type", base.DEC, HS_TYPES)
f.hs_version = ProtoField.uint8("zcnet.hs.version", "Version", base.DEC)
f.hs_flags = ProtoField.uint16("zcnet.hs.flags", "Flags", base.HEX)
f.hs_flag_icrc = ProtoField.bool("zcnet.hs.flags.icrc", "ICRC", 16, nil, 0x0001)
f.hs_flag_psk = ProtoField.bool("zcnet.hs.flags.psk", "Pre-shared key", 16, nil, 0x0002)
f.hs_segment_size = ProtoField.uint32("zcnet.hs.segment_size", "Segment size", base.DEC)
f.hs_message_window = ProtoField.uint32("zcnet.hs.message_window", "Message window", base.DEC)
f.hs_max_subflows = ProtoField.uint16("zcnet.hs.max_subflows", "Max subflows", base.DEC)
f.hs_subflow = ProtoField.uint16("zcnet.hs.subflow", "Subflow", base.DEC)
f.hs_reason = ProtoField.uint32("zcnet.hs.reason", "Reason", base.DEC, HS_REASONS)
f.hs_token = ProtoField.uint64("zcnet.hs.token", "Token", base.HEX)
f.hs_nonce = ProtoField.bytes("zcnet.hs.nonce", "Nonce")
f.hs_mac = ProtoField.bytes("zcnet.hs.mac", "MAC")
f.hs_silence_ms = ProtoField.uint32("zcnet.hs.silence_ms", "Silence timeout (ms)", base.DEC)
f.hs_reserved = ProtoField.bytes("zcnet.hs.reserved", "Reserved")

local expert_icrc = ProtoExpert.new("zcnet.icrc_bad", "ICRC does not match the frame", expert.group.CHECKSUM,
    expert.severity.ERROR)
local expert_invalid = ProtoExpert.new("zcnet.invalid", "Frame breaks a validation rule", expert.group.MALFORMED,
    expert.severity.ERROR)
local expert_naca = ProtoExpert.new("zcnet.naca.invalid", "NACA header breaks a rule of section 20.2",
    expert.group.MALFORMED, expert.severity.ERROR)
local expert_nak = ProtoExpert.new("zcnet.nak", "Negative acknowledge: the queue pair ended", expert.group.RESPONSE_CODE,
    expert.severity.WARN)
zcnet.experts = { expert_icrc, expert_invalid, expert_naca, expert_nak }

-- ---------------------------------------------------------------- layouts: {field, offset, size, {fields of its bits}}

local HEADER_LAYOUT = {
    { f.flags, 0, 1, { f.ver, f.timestamp_present, f.more_segments, f.rtr, f.rtr_ack, f.ack_request, f.quiet } },
    { f.opcode, 1, 1 }, { f.msn, 2, 2 }, { f.mbo_seg, 4, 4, { f.offset, f.seg } }, { f.icrc, 8, 4 },
    { f.timestamp, 12, 4 }, { f.timestamp_echo, 16, 4 }, { f.imm_data, 20, 4 }, { f.length, 24, 4 },
    { f.ext_length, 28, 2 }, { f.subflow, 30, 2 },
}
local TAGGED_LAYOUT = { { f.rkey, 32, 4 }, { f.region_offset, 36, 8 } }
local READ_REQUEST_LAYOUT = {
    { f.rkey, 32, 4 }, { f.region_offset, 36, 8 }, { f.read_length, 44, 4 }, { f.sink_rkey, 48, 4 },
    { f.sink_offset, 52, 8 },
}
local RECORD_DESCRIPTOR = {
    f.record_descriptor, 0, 4, { f.record_immediate_present, f.record_reserved, f.record_message_length },
}
local RECORD_LAYOUT = { RECORD_DESCRIPTOR }
local RECORD_LAYOUT_IMMEDIATE = { RECORD_DESCRIPTOR, { f.record_imm_data, 4, 4 } }
local NACA_LAYOUT = {
    { f.naca_magic, 0, 1 }, { f.naca_version, 1, 1 }, { f.naca_type, 2, 1 },
    { f.naca_flags, 3, 1, { f.naca_resend, f.naca_fallback } }, { f.naca_job, 4, 2 }, { f.naca_collective, 6, 1 },
    { f.naca_dtype_redop, 7, 1, { f.naca_dtype, f.naca_redop } }, { f.naca_ranks, 8, 2 }, { f.naca_rank, 10, 2 },
    { f.naca_slot, 12, 2 }, { f.naca_reserved, 14, 2 }, { f.naca_sequence, 16, 4 }, { f.naca_length, 20, 4 },
    { f.naca_operation, 24, 4 }, { f.naca_reserved, 28, 4 },
}
local HANDSHAKE_LAYOUT = {
    { f.hs_magic, 0, 4 }, { f.hs_type, 4, 1 }, { f.hs_version, 5, 1 },
    { f.hs_flags, 6, 2, { f.hs_flag_icrc, f.hs_flag_psk } }, { f.hs_segment_size, 8, 4 },
    { f.hs_message_window, 12, 4 }, { f.hs_max_subflows, 16, 2 }, { f.hs_subflow, 18, 2 }, { f.hs_reason, 20, 4 },
    { f.hs_token, 24, 8 }, { f.hs_nonce, 32, 16 }, { f.hs_mac, 48, 32 }, { f.hs_silence_ms, 80, 4 },
    { f.hs_reserved, 84, 12 },
}

-- Adds every field of a layout under tree; returns the items by field.
local function add_layout(tree, tvb, layout)
    local items = {}
    for _, e in ipairs(layout) do
        local range = tvb(e[2], e[3])
        local item = tree:add(e[1], range)
        for _, bits in ipairs(e[4] or {}) do
            item:add(bits, range)
        end
        items[e[1]] = item
    end
    return items
end

-- ---------------------------------------------------------------- preferences

local DEFAULT_PORT = 7000
zcnet.prefs.tcp_port = Pref.uint("TCP port", DEFAULT_PORT, "TCP port decoded as zcnet (0: none; the heuristic still finds connections)")
zcnet.prefs.check_icrc = Pref.bool("Check ICRC", true, "Recompute the CRC32C of frames that carry one")
zcnet.prefs.segment_size = Pref.uint("Segment size", 65536,
    "Segment size for the validation rules when the connection's handshake was not captured")

local tcp_port_table = DissectorTable.get("tcp.port")
local registered_port = 0

local function register_port()
    if registered_port ~= zcnet.prefs.tcp_port then
        if registered_port ~= 0 then
            tcp_port_table:remove(registered_port, zcnet)
        end
        registered_port = zcnet.prefs.tcp_port
        if registered_port ~= 0 then
            tcp_port_table:add(registered_port, zcnet)
        end
    end
end
zcnet.prefs_changed = register_port

-- ---------------------------------------------------------------- per-connection state

-- The segment size agreed on each TCP stream, learnt from CHALLENGEs (a JOIN's by the token of its OPEN).
local tcp_stream = Field.new("tcp.stream")
local segment_by_stream = {}
local segment_by_token = {}

function zcnet.init()
    segment_by_stream = {}
    segment_by_token = {}
end

local function stream_of()
    local s = tcp_stream()
    return s and s.value
end

-- ---------------------------------------------------------------- SEND_PACKED records (section 6.1)

-- The records of the SEND_PACKED payload of length bytes at byte 36 of tvb, up to the first that breaks the
-- rules: a list of { at, head (descriptor and immediate data bytes), imm (or nil), length }, and the FrameError
-- code (negated) of that first bad record, or 0 when they fill the payload exactly (PackedSends.count).
local function packed_records(tvb, length)
    local records = {}
    local at = 36
    local stop = 36 + math.min(length, tvb:len() - 36)
    while at < stop do
        if stop - at < RECORD_HEADER then return records, 13 end
        local descriptor = tvb(at, 4):uint()
        if band(descriptor, 0x7F000000) ~= 0 then return records, 4 end
        local immediate = band(descriptor, 0x80000000) ~= 0
        local head = immediate and 8 or 4
        local message = band(descriptor, 0x00FFFFFF)
        if at + head + message > stop then return records, 13 end
        records[#records + 1] = { at = at, head = head, imm = immediate and tvb(at + 4, 4):uint() or nil, length = message }
        at = at + head + message
    end
    if #records == 0 then return records, 13 end
    return records, 0
end

-- ---------------------------------------------------------------- validation (section 14.1, 14.2)

-- The FrameError code (negated) of the first rule the frame header at the start of tvb breaks, or 0.
local function validate(tvb, segment_size)
    local flags = tvb(0, 1):uint()
    local opcode = tvb(1, 1):uint()
    if rshift(flags, 6) ~= 1 then return 2 end
    local p = OP[opcode]
    if not p then return 3 end
    if tvb(28, 2):uint() ~= p.ext then return 5 end
    local more = band(flags, 0x10) ~= 0
    if more == p.last then return 9 end
    local rtr_bits = band(flags, 0x0C)
    if rtr_bits ~= 0 and (opcode ~= ACKNOWLEDGE or rtr_bits == 0x0C) then return 9 end
    if band(flags, 0x02) ~= 0 and (more or opcode == ACKNOWLEDGE or opcode == READ_REQUEST) then return 9 end
    if band(flags, 0x01) ~= 0 and (opcode ~= ACKNOWLEDGE or rtr_bits ~= 0 or band(tvb(4, 4):uint(), 0xFF) ~= 0) then
        return 9
    end
    if band(flags, 0x20) == 0 and tvb(12, 4):uint() ~= 0 then return 10 end
    local imm = tvb(20, 4):uint()
    if imm ~= 0 and not p.imm and opcode ~= ACKNOWLEDGE then return 10 end
    local length = tvb(24, 4):uint()
    local mbo = tvb(4, 4):uint()
    local offset = rshift(mbo, 8)
    local seg = band(mbo, 0xFF)
    if opcode == ACKNOWLEDGE and seg ~= 0 then
        if rtr_bits ~= 0 then return 9 end
        local syndrome_ok = seg >= 2 and seg <= 21
        local msn_ok = imm == NO_MESSAGE or imm <= 0xFFFF
        if syndrome_ok and msn_ok and length == 0 and offset == 0 then return 0 end
        return 10
    end
    if opcode == ACKNOWLEDGE or opcode == READ_REQUEST then
        if length ~= 0 or mbo ~= 0 then return 10 end
        if opcode == READ_REQUEST and tvb:len() >= 60 and tvb(44, 4):uint() > MAX_MESSAGE then return 7 end
        return 0
    end
    if length > segment_size then return 6 end
    if opcode == SEND_PACKED and length > PACKED_MAX then return 6 end
    if opcode == SEND_PACKED and length < RECORD_HEADER then return 8 end
    if offset + length > MAX_MESSAGE then return 7 end
    local index = math.floor(offset / segment_size)
    if offset ~= index * segment_size or seg ~= index % 256 then return 8 end
    if p.first ~= (offset == 0) then return 8 end
    if not p.last and length ~= segment_size then return 8 end
    if p.last and not p.first and length == 0 then return 8 end
    if opcode == SEND_PACKED and tvb:len() >= 36 + length then
        local _, error = packed_records(tvb, length)
        return error
    end
    return 0
end

-- Whether the frame header at the start of tvb is one a zcnet sender could have written: for the heuristic.
local function plausible_frame(tvb)
    if tvb:len() < 32 then return false end
    local flags = tvb(0, 1):uint()
    local p = OP[tvb(1, 1):uint()]
    return rshift(flags, 6) == 1 and p ~= nil and tvb(28, 2):uint() == p.ext
        and (band(flags, 0x01) == 0 or tvb(1, 1):uint() == ACKNOWLEDGE)
        and (band(flags, 0x10) ~= 0) ~= p.last and tvb(24, 4):uint() <= MAX_MESSAGE
end

local function is_handshake(tvb, offset)
    return tvb:len() - offset >= 4 and tvb(offset, 4):uint() == HS_MAGIC
end

-- ---------------------------------------------------------------- one handshake message

local function dissect_handshake(tvb, pinfo, tree)
    local t = tree:add(zcnet, tvb(0, HS_LENGTH), "zcnet handshake")
    local typ = tvb(4, 1):uint()
    add_layout(t, tvb, HANDSHAKE_LAYOUT)
    local name = HS_TYPES[typ] or ("type " .. typ)
    local token = tvb(24, 8):uint64()
    local info = name
    if typ == 1 or typ == 3 then
        info = string.format("%s segment_size=%d window=%d max_subflows=%d silence_ms=%d", name, tvb(8, 4):uint(),
            tvb(12, 4):uint(), tvb(16, 2):uint(), tvb(80, 4):uint())
    end
    if typ == 3 then
        info = info .. " subflow=" .. tvb(18, 2):uint()
        -- An OPEN's CHALLENGE carries the agreed segment size; a JOIN's names the queue pair by its token.
        local size = tvb(8, 4):uint()
        local key = tostring(token)
        if size ~= 0 then
            segment_by_token[key] = size
        else
            size = segment_by_token[key]
        end
        local stream = stream_of()
        if size and stream then
            segment_by_stream[stream] = size
        end
    elseif typ == 5 then
        info = info .. " reason=" .. (HS_REASONS[tvb(20, 4):uint()] or tvb(20, 4):uint())
    end
    t:append_text(": " .. info)
    return info
end

-- ---------------------------------------------------------------- NACA (section 20)

-- Why the NACA header at the start of tvb breaks a rule of section 20.2 for a message of message_bytes, or nil
-- (NacaHeader.validate, in the same order and words).
local function naca_problem(tvb, message_bytes)
    local typ, flags = tvb(2, 1):uint(), tvb(3, 1):uint()
    local name = NACA_TYPES[typ]
    if band(flags, 0xFC) ~= 0 or (band(flags, 1) ~= 0 and typ ~= 5) or (band(flags, 2) ~= 0 and typ ~= 4) then
        return string.format("flags 0x%x are not allowed on %s", flags, name)
    end
    if tvb(14, 2):uint() ~= 0 or tvb(28, 4):uint() ~= 0 then return "a reserved field is not zero" end
    local length = tvb(20, 4):uint()
    if message_bytes ~= 32 + length then
        return string.format("length %d does not match the %d-byte message", length, message_bytes)
    end
    local collective, dtype, redop = tvb(6, 1):uint(), rshift(tvb(7, 1):uint(), 4), band(tvb(7, 1):uint(), 0x0F)
    if typ == 5 or typ == 6 then
        if collective ~= 1 then return string.format("collective %d is not ALLREDUCE (1)", collective) end
        if not NACA_DTYPE_BYTES[dtype] then return string.format("dtype %d is unknown", dtype) end
        if redop < 1 or redop > 4 then return string.format("redop %d is unknown", redop) end
        if length == 0 or length > 8388608 or length % NACA_DTYPE_BYTES[dtype] ~= 0 then
            return string.format("length %d is not 1..8388608 bytes of whole %s elements", length, NACA_DTYPES[dtype])
        end
    elseif collective ~= 0 or tvb(7, 1):uint() ~= 0 or tvb(12, 2):uint() ~= 0 or tvb(16, 4):uint() ~= 0
        or tvb(24, 4):uint() ~= 0 then
        return name .. " carries a collective, dtype, redop, slot, sequence or operation"
    end
    local job, ranks, rank = tvb(4, 2):uint(), tvb(8, 2):uint(), tvb(10, 2):uint()
    if typ == 1 then
        if job ~= 0 or ranks ~= 0 or rank ~= 0 then return "CHALLENGE names a job, ranks or rank" end
    elseif ranks < 1 or ranks > 64 or rank >= ranks then
        return string.format("rank %d of %d ranks is outside 1..64 ranks", rank, ranks)
    end
    if typ == 1 and length ~= 16 then return "CHALLENGE body is not 16 bytes" end
    if typ == 2 and length ~= 48 then return "JOIN body is not 48 bytes" end
    if typ == 3 and length ~= 16 then return "ACCEPT body is not 16 bytes" end
    if typ == 4 and (length < 1 or length > 200) then return "REFUSE reason is not 1..200 bytes" end
    return nil
end

-- Shows the NACA header at the start of the payload (payload_at) of the first frame of a SEND or WRITE with
-- immediate, when it starts with the magic and version and names a known type; a single-frame message is also
-- validated. Returns the text for the info column, or nil.
local function dissect_naca(tvb, t, opcode, payload_at, length, offset)
    local carrier = opcode == 0x04 or opcode == 0x00 or opcode == 0x06 or opcode == 0x0B
    if not carrier or offset ~= 0 or length < 32 or tvb:len() < payload_at + 32 then return nil end
    local h = tvb(payload_at, 32):tvb()
    local typ = h(2, 1):uint()
    if h(0, 1):uint() ~= 0x4e or h(1, 1):uint() ~= 1 or not NACA_TYPES[typ] then return nil end
    local nt = t:add(f.naca, tvb(payload_at, 32))
    add_layout(nt, h, NACA_LAYOUT)
    local info = string.format(" NACA %s job=%d rank=%d/%d", NACA_TYPES[typ], h(4, 2):uint(), h(10, 2):uint(),
        h(8, 2):uint())
    if typ == 5 or typ == 6 then
        info = info .. string.format(" slot=%d seq=%d op=%d", h(12, 2):uint(), h(16, 4):uint(), h(24, 4):uint())
    end
    nt:set_text("NACA header:" .. info)
    local single = OP[opcode] and OP[opcode].last
    local problem = single and naca_problem(h, length) or nil
    if problem then
        nt:add(f.naca_error, problem):set_generated()
        nt:add_proto_expert_info(expert_naca, problem)
        info = info .. " [" .. problem .. "]"
    end
    return info
end

-- ---------------------------------------------------------------- one frame

local function dissect_frame(tvb, pinfo, tree)
    local opcode = tvb(1, 1):uint()
    local ext_length = tvb(28, 2):uint()
    local length = tvb(24, 4):uint()
    local total = 32 + ext_length + length
    local t = tree:add(zcnet, tvb(0, total), "zcnet frame")
    local items = add_layout(t, tvb, HEADER_LAYOUT)
    local icrc_item, imm_item = items[f.icrc], items[f.imm_data]

    local p = OP[opcode]
    local msn = tvb(2, 2):uint()
    local offset = rshift(tvb(4, 4):uint(), 8)
    local seg = tvb(7, 1):uint()
    local name = OPCODES[opcode] or string.format("UNKNOWN(0x%02x)", opcode)
    local info = string.format("%s msn=%d off=%d sf=%d", name, msn, offset, tvb(30, 2):uint())

    if p and ext_length == p.ext then
        if opcode == READ_REQUEST then
            add_layout(t, tvb, READ_REQUEST_LAYOUT)
        elseif p.tagged then
            add_layout(t, tvb, TAGGED_LAYOUT)
        end
        if p.rsn_at then
            t:add(f.rsn, tvb(32 + p.rsn_at, 4))
        end
    end
    if opcode == ACKNOWLEDGE then
        local imm = tvb(20, 4):uint()
        if seg ~= 0 then
            t:add(f.nak_syndrome, tvb(7, 1))
            t:add(f.nak_failed_msn, tvb(20, 4))
            t:add_proto_expert_info(expert_nak, "NAK " .. (ERRORS[seg] or seg))
            info = string.format("%s NAK=%s failed_msn=%s", info, ERRORS[seg] or tostring(seg),
                imm == NO_MESSAGE and "none" or tostring(imm))
        else
            imm_item:add(f.credit_limit, tvb(20, 4))
            info = info .. " credit=" .. imm
        end
        if tvb(0, 1):bitfield(4, 1) == 1 then info = info .. " RTR" end
        if tvb(0, 1):bitfield(5, 1) == 1 then info = info .. " RTR_ACK" end
    end
    if length > 0 then
        t:add(f.payload, tvb(32 + ext_length, length))
        info = info .. (dissect_naca(tvb, t, opcode, 32 + ext_length, length, offset) or "")
    end
    if opcode == SEND_PACKED and ext_length == 4 then
        local records = packed_records(tvb, length)
        local rsn = tvb(32, 4):uint()
        t:add(f.records, #records):set_generated()
        for k, r in ipairs(records) do
            local record_msn = (msn + k - 1) % 65536
            local record_rsn = (rsn + k - 1) % 4294967296
            local rt = t:add(f.record, tvb(r.at, r.head + r.length))
            rt:set_text(string.format("Record %d: msn=%d rsn=%d length=%d%s", k - 1, record_msn, record_rsn, r.length,
                r.imm and (" imm=" .. r.imm) or ""))
            add_layout(rt, tvb(r.at, r.head):tvb(), r.imm and RECORD_LAYOUT_IMMEDIATE or RECORD_LAYOUT)
            if r.length > 0 then
                rt:add(f.record_payload, tvb(r.at + r.head, r.length))
            end
            rt:add(f.record_msn, record_msn):set_generated()
            rt:add(f.record_rsn, record_rsn):set_generated()
        end
        info = info .. " records=" .. #records
    end

    local icrc = tvb(8, 4):uint()
    if icrc ~= 0 and zcnet.prefs.check_icrc then
        local computed = icrc_of(tvb, ext_length, length)
        icrc_item:add(f.icrc_computed, computed):set_generated()
        icrc_item:add(f.icrc_ok, computed == icrc):set_generated()
        if computed ~= icrc then
            icrc_item:add_proto_expert_info(expert_icrc, string.format("ICRC 0x%08x, computed 0x%08x", icrc, computed))
            info = info .. " [BAD ICRC]"
        end
    end

    local stream = stream_of()
    local error = validate(tvb, (stream and segment_by_stream[stream]) or zcnet.prefs.segment_size)
    if error ~= 0 then
        t:add(f.error, ERRORS[error]):set_generated()
        t:add_proto_expert_info(expert_invalid, ERRORS[error])
        info = info .. " [" .. ERRORS[error] .. "]"
    end
    t:append_text(": " .. info)
    return info
end

-- ---------------------------------------------------------------- the stream: reassembly, several PDUs a segment

-- Bytes the PDU at offset occupies, or nil while fewer bytes than its fixed part are there.
local function pdu_length(tvb, offset)
    local available = tvb:len() - offset
    if is_handshake(tvb, offset) then
        return HS_LENGTH
    end
    if available < 32 then
        return nil
    end
    return 32 + tvb(offset + 28, 2):uint() + tvb(offset + 24, 4):uint()
end

function zcnet.dissector(tvb, pinfo, tree)
    local offset = 0
    local infos = {}
    while offset < tvb:len() do
        local need = pdu_length(tvb, offset)
        if need == nil or tvb:len() - offset < need then
            pinfo.desegment_offset = offset
            pinfo.desegment_len = need and (need - (tvb:len() - offset)) or DESEGMENT_ONE_MORE_SEGMENT
            break
        end
        local pdu = tvb(offset, need):tvb()
        if need == HS_LENGTH and is_handshake(tvb, offset) then
            infos[#infos + 1] = dissect_handshake(pdu, pinfo, tree)
        else
            infos[#infos + 1] = dissect_frame(pdu, pinfo, tree)
        end
        offset = offset + need
    end
    if #infos > 0 then
        pinfo.cols.protocol = "zcnet"
        pinfo.cols.info = table.concat(infos, ", ")
    end
    return tvb:len()
end

-- ---------------------------------------------------------------- heuristic: any TCP connection

local function heuristic(tvb, pinfo, tree)
    local handshake = tvb:len() >= 8 and tvb(0, 4):uint() == HS_MAGIC and tvb(5, 1):uint() == 1
        and HS_TYPES[tvb(4, 1):uint()] ~= nil
    if not handshake and not plausible_frame(tvb) then
        return false
    end
    pinfo.conversation = zcnet
    zcnet.dissector(tvb, pinfo, tree)
    return true
end

zcnet:register_heuristic("tcp", heuristic)
register_port()
