#!/usr/bin/env python3
"""Summarizes the socket samples bench/collectives.sh's PROBE_DIR writes (NAME.ss: `ss -tin` of rank 0, one
block per sample): for the socket that sent the most (rank 0's data to its ring neighbour), what the kernel
held for it. Prints one line per file:

  NAME cc=bbr samples=N sendq_med=B inflight_med=B inflight_p90=B idle=F cwnd_med=N rtt_med=MS retrans=N

sendq: bytes the application handed over that TCP has not sent (ss's Send-Q minus in flight is not
separated by ss: Send-Q counts both, so sendq here is Send-Q less unacked * mss); inflight: unacked * mss,
bytes sent and not acknowledged; idle: the share of samples in which nothing was queued or in flight,
so the link had nothing of this socket's to carry. Usage: collectives-ss.py DIR/NAME.ss ...
"""
import re
import statistics
import sys


def samples(path):
    """Yields (send_q, fields) of every sample of every socket, keyed by the socket's local:peer."""
    socket = None
    send_q = 0
    with open(path) as f:
        for line in f:
            if line.startswith("=="):
                socket = None
                continue
            if not line.startswith("\t"):
                parts = line.split()
                if len(parts) >= 4 and parts[1].isdigit():
                    socket = parts[2] + ">" + parts[3]
                    send_q = int(parts[1])
                else:
                    socket = None
                continue
            if socket is not None:
                yield socket, send_q, line


def field(line, name, default=0.0):
    m = re.search(r"\b" + name + r":([0-9.]+)", line)
    return float(m.group(1)) if m else default


def summarize(path):
    by_socket = {}
    for socket, send_q, line in samples(path):
        by_socket.setdefault(socket, []).append((send_q, line))
    if not by_socket:
        return f"{path}: no samples"
    # The data socket: the one whose last sample sent the most bytes.
    data = max(by_socket.values(), key=lambda rows: field(rows[-1][1], "bytes_sent"))
    # Only samples while it carried data: from its first to its last change of bytes_sent.
    sent = [field(line, "bytes_sent") for _, line in data]
    first = next(i for i, s in enumerate(sent) if s != sent[0]) if len(set(sent)) > 1 else 0
    last = max(i for i, s in enumerate(sent) if s != sent[-1]) + 1 if len(set(sent)) > 1 else len(sent)
    rows = data[first:last + 1] or data
    inflight = []
    queued = []
    cwnd = []
    rtt = []
    idle = 0
    for send_q, line in rows:
        mss = field(line, "mss", 1448)
        unacked = field(line, "unacked") * mss
        inflight.append(unacked)
        queued.append(max(0.0, send_q - unacked))
        cwnd.append(field(line, "cwnd"))
        rtt.append(field(line, "rtt"))
        if send_q == 0 and unacked == 0:
            idle += 1
    cc = re.match(r"\s*(\w+)", rows[-1][1]).group(1)
    inflight.sort()
    return (f"{path}: cc={cc} samples={len(rows)} sendq_med={statistics.median(queued):.0f}"
            f" inflight_med={statistics.median(inflight):.0f} inflight_p90={inflight[int(0.9 * (len(inflight) - 1))]:.0f}"
            f" idle={idle / len(rows):.2f} cwnd_med={statistics.median(cwnd):.0f} rtt_med={statistics.median(rtt):.2f}"
            f" retrans={field(rows[-1][1], 'bytes_retrans'):.0f}B")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        print(summarize(p))
