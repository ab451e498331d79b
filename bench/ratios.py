#!/usr/bin/env python3
"""Prints JMH JSON results (-rf json) as tables: each transport's score side by side and the ratio
zcnet-uring / each Netty transport, plus the secondary results (syscalls per message, B/op)."""
import json
import sys

TRANSPORTS = ["zcnet-uring", "zcnet-nio", "netty-io_uring", "netty-epoll", "netty-nio"]
NETTY = [t for t in TRANSPORTS if t.startswith("netty")]


def headline(result):
    """(value, unit, higher_is_better) of a result; sample-time results report their median."""
    metric = result["primaryMetric"]
    unit = metric["scoreUnit"]
    if result["mode"] == "sample":
        return metric["scorePercentiles"]["50.0"], unit + " p50", False
    return metric["score"], unit, result["mode"] in ("thrpt",)


def secondary(result, name):
    for key, metric in result.get("secondaryMetrics", {}).items():
        if key.lstrip("\u00b7") == name:
            return metric["score"]
    return None


def short(benchmark):
    return ".".join(benchmark.split(".")[-2:])


def echo_table(results):
    rows = {}
    for r in results:
        params = dict(r.get("params", {}))
        transport = params.pop("transport", None)
        if transport is None:
            continue
        key = (short(r["benchmark"]), tuple(sorted(params.items())))
        rows.setdefault(key, {})[transport] = r
    if not rows:
        return
    print("End to end (loopback, one connection); ratio = zcnet-uring / peer")
    head = f"{'benchmark':<28} {'unit':<14}" + "".join(f"{t:>16}" for t in TRANSPORTS)
    head += "".join(f"{'uring/' + t[6:]:>16}" for t in NETTY) + "  better"
    print(head)
    for (name, params), by_transport in sorted(rows.items()):
        label = name + "".join(f" {k}={v}" for k, v in params)
        any_result = next(iter(by_transport.values()))
        _, unit, higher = headline(any_result)
        line = f"{label:<28} {unit:<14}"
        values = {t: headline(r)[0] for t, r in by_transport.items()}
        for t in TRANSPORTS:
            line += f"{values[t]:>16.3f}" if t in values else f"{'-':>16}"
        for t in NETTY:
            if "zcnet-uring" in values and t in values and values[t]:
                line += f"{values['zcnet-uring'] / values[t]:>16.3f}"
            else:
                line += f"{'-':>16}"
        line += "  " + ("higher" if higher else "lower")
        print(line)
        # JMH sums event counters over every iteration and fork: only their ratio is per message.
        for side in ("client", "server"):
            counts = {}
            for t, r in by_transport.items():
                calls, messages = secondary(r, side + "Syscalls"), secondary(r, "messages")
                if t.startswith("zcnet") and calls is not None and messages:
                    counts[t] = calls / messages
            if counts:
                print(f"  {side} system calls per message: " + ", ".join(f"{t}={v:.4f}" for t, v in sorted(counts.items())))
    print()


def micro_table(results):
    micro = [r for r in results if "transport" not in r.get("params", {})]
    if not micro:
        return
    print("Micro benchmarks")
    print(f"{'benchmark':<40} {'params':<16} {'score':>12} {'unit':<10} {'B/op':>10}")
    for r in sorted(micro, key=lambda r: (r["benchmark"], sorted(r.get("params", {}).items()))):
        value, unit, _ = headline(r)
        alloc = secondary(r, "gc.alloc.rate.norm")
        params = ",".join(f"{k}={v}" for k, v in sorted(r.get("params", {}).items()))
        alloc_text = f"{alloc:>10.3f}" if alloc is not None else f"{'-':>10}"
        print(f"{short(r['benchmark']):<40} {params:<16} {value:>12.3f} {unit:<10} {alloc_text}")
    print()


def main(paths):
    if not paths:
        sys.exit("usage: ratios.py result.json [more.json ...]")
    results = []
    for path in paths:
        with open(path) as f:
            results.extend(json.load(f))
    micro_table(results)
    echo_table(results)


if __name__ == "__main__":
    main(sys.argv[1:])
