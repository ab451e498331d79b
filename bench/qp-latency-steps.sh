#!/usr/bin/env bash
# Where one queue pair's round trip goes, step by step: runs io.zcnet.jmh.rx.QueuePairLatency (64 B, one
# outstanding, both ends in one JVM) under `perf record` (cpu-clock samples of every thread, JIT frames named
# through the JVM's perf map) for SEND ping-pong and READ, sleeping and busy-polling loops, on io_uring and
# NIO, and splits the loop threads' samples into steps (bench/latency_steps.py): post, framing and staging,
# the kernel's sendmsg, its receive, placement, completion, acknowledgement, loop plumbing, wake-up and
# idling. Nanoseconds of CPU per round trip, both ends together; the round trip minus their sum is time no
# loop thread ran for it (the wake-up of a sleeping thread).
#   bench/qp-latency-steps.sh [seconds]   default 4 s recorded per run (about 2 minutes in all)
# Environment: RUNS (default "send-uring read-uring send-nio read-nio send-uring-busy read-uring-busy"),
# HZ (perf's sampling rate, default 4000).
# A JIT frame counts for the compiled method the JIT inlined its callees into, so a step's figure is that of
# the code the JIT made of it; the busy runs' idle polls count as loop plumbing and idling.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

seconds="${1:-4}"
hz="${HZ:-4000}"
runs="${RUNS:-send-uring read-uring send-nio read-nio send-uring-busy read-uring-busy}"
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -ge 1 ] && [ "$seconds" -le 120 ] || die "seconds must be 1..120"
[[ "$hz" =~ ^[0-9]+$ ]] && [ "$hz" -ge 100 ] && [ "$hz" -le 20000 ] || die "HZ must be 100..20000"
require_package perf linux-perf
perf record -F "$hz" -o /dev/null -- true >/dev/null 2>&1 \
  || die "perf record does not work here (kernel.perf_event_paranoid is $(cat /proc/sys/kernel/perf_event_paranoid); run as root)"
build_benchmarks >&2
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
warmup=6
echo "# bench/qp-latency-steps.sh: ${seconds} s recorded per run at $hz Hz; $(date -u +%FT%TZ); load $(cut -d ' ' -f 1-3 /proc/loadavg)"
for run in $runs; do
  [[ "$run" =~ ^(send|read)-(uring|nio)(-busy)?$ ]] || die "run '$run' is not (send|read)-(uring|nio)[-busy]"
  op="${BASH_REMATCH[1]}" engine="${BASH_REMATCH[2]}" busy=false
  [ -n "${BASH_REMATCH[3]}" ] && busy=true
  "$JAVA_HOME/bin/java" -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit --enable-native-access=ALL-UNNAMED \
    -cp "$bench_jar" io.zcnet.jmh.rx.QueuePairLatency --engine "$engine" --op "$op" --busy-poll "$busy" \
    --warmup "$warmup" --seconds "$((seconds + 2))" >"$work/$run.out" 2>&1 &
  pid=$!
  # Recorded inside the measured interval: after the warm-up, a second in, a second before its end.
  sleep "$((warmup + 1))"
  perf record -F "$hz" -p "$pid" -o "$work/$run.data" -- sleep "$seconds" >/dev/null 2>&1 || true
  wait "$pid" || true
  result="$(grep '^RESULT' "$work/$run.out" || true)"
  rate="$(sed -n 's/.* msg_per_s=\([0-9.]*\).*/\1/p' <<<"$result")"
  mean="$(sed -n 's/.* mean_us=\([0-9.]*\).*/\1/p' <<<"$result")"
  p50="$(sed -n 's/.* p50_us=\([0-9.]*\).*/\1/p' <<<"$result")"
  if [ -z "$rate" ] || [ -z "$mean" ]; then
    echo "bench: $run printed no RESULT; its output ends:" >&2
    tail -n 5 "$work/$run.out" >&2
    continue
  fi
  echo
  echo "## $run: p50 $p50 us, mean $mean us, $rate round trips/s"
  perf script -i "$work/$run.data" -F comm,ip,sym,dso 2>/dev/null \
    | python3 "$root/bench/latency_steps.py" "$hz" "$(awk -v r="$rate" -v s="$seconds" 'BEGIN { print r * s }')" "$mean"
  rm -f "/tmp/perf-$pid.map"
done
