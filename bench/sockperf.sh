#!/usr/bin/env bash
# sockperf (C, blocking sockets) as the native baseline next to the zcnet echo server, loopback only.
#   bench/sockperf.sh [seconds]      default 5 s per measurement
#
# What sockperf 3.7 does against a plain echo server (checked on this machine):
#   - ping-pong: the client accepts only replies that sockperf's own server has marked as replies in
#     sockperf's message header; raw echoes are ignored and it ends with "No messages were received
#     from the server". So sockperf's client cannot measure ./zcnet echo-server.
#   - throughput: the client only sends and never reads; against an echo server the echoes fill its
#     receive buffer, the server stops, and the client blocks in send() past -t.
# Hence each server is driven by its own tool's client: sockperf server by sockperf ping-pong (with
# --full-rtt, so its figures are round trips like zcnet's) and sockperf throughput (one-way, no replies);
# the zcnet echo server by './zcnet echo-client' in pingpong and pipelined mode (two-way: every message
# is echoed). Both sockperf probes against zcnet are still run, bounded, and their outcome printed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-5}"
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -ge 1 ] && [ "$seconds" -le 600 ] || { echo "seconds must be 1..600" >&2; exit 2; }
sp_port=11111
zc_port=17777
work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

if ! command -v sockperf >/dev/null 2>&1; then
  echo "installing sockperf ..." >&2
  apt-get install -y sockperf >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y sockperf >/dev/null; }
fi

wait_port() { # waits until something listens on 127.0.0.1:$1
  for _ in $(seq 1 300); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing listens on port $1" >&2; return 1
}

num() { awk -v k="$1" '$0 ~ k {for (i = 1; i <= NF; i++) if ($i == "=") {print $(i + 1); exit}}' "$2"; }

# --- sockperf server, sockperf client
sockperf server --tcp -i 127.0.0.1 -p "$sp_port" >"$work/sp-server.log" 2>&1 &
pids+=($!)
wait_port "$sp_port"
sockperf ping-pong --tcp -i 127.0.0.1 -p "$sp_port" -m 64 -t "$seconds" --full-rtt >"$work/sp-pp.log" 2>&1
sockperf throughput --tcp -i 127.0.0.1 -p "$sp_port" -m 64 -t "$seconds" >"$work/sp-tp.log" 2>&1
sp_p50="$(num 'percentile 50.000' "$work/sp-pp.log")"
sp_p99="$(num 'percentile 99.000' "$work/sp-pp.log")"
sp_pp_rate="$(awk '/\[Valid Duration\]/ {split($0, a, "RunTime="); split(a[2], b, " "); split($0, c, "ReceivedMessages="); printf "%.0f", c[2] / b[1]}' "$work/sp-pp.log")"
sp_tp_rate="$(awk '/Message Rate is/ {for (i = 1; i <= NF; i++) if ($i == "is") {print $(i + 1); exit}}' "$work/sp-tp.log")"

# --- zcnet echo server per engine, zcnet client (same engine), plus the two sockperf probes
declare -A zc_p50 zc_p99 zc_pp_rate zc_pl_rate probe_pp probe_tp
"$root/zcnet" build >/dev/null
for engine in uring nio; do
  "$root/zcnet" echo-server --engine "$engine" --port "$zc_port" >"$work/zc-$engine-server.log" 2>&1 &
  server=$!
  pids+=("$server")
  wait_port "$zc_port"
  "$root/zcnet" echo-client --engine "$engine" --port "$zc_port" --mode pingpong --size 64 \
      --seconds "$seconds" --warmup 1 >"$work/zc-$engine-pp.log" 2>&1 || true
  "$root/zcnet" echo-client --engine "$engine" --port "$zc_port" --mode pipelined --window 64 --size 64 \
      --seconds "$seconds" --warmup 1 >"$work/zc-$engine-pl.log" 2>&1 || true
  # columns of the echo-client row: phase (3 words: "pingpong 64 B") engine msgs/s MB/s p50 p90 p99 ...
  read -r _ _ _ _ rate _ p50 _ p99 _ < <(tail -n 1 "$work/zc-$engine-pp.log") || true
  zc_pp_rate[$engine]="${rate:-?}"; zc_p50[$engine]="${p50:-?}"; zc_p99[$engine]="${p99:-?}"
  read -r _ _ _ _ rate _ < <(tail -n 1 "$work/zc-$engine-pl.log") || true
  zc_pl_rate[$engine]="${rate:-?}"
  if timeout 5 sockperf ping-pong --tcp -i 127.0.0.1 -p "$zc_port" -m 64 -t 1 >"$work/probe-pp.log" 2>&1 \
      && grep -q 'percentile 50' "$work/probe-pp.log"; then
    probe_pp[$engine]="works"
  else
    probe_pp[$engine]="$(grep -o 'No messages were received[^.]*' "$work/probe-pp.log" | head -1 || true)"
    probe_pp[$engine]="${probe_pp[$engine]:-failed}"
  fi
  if timeout 6 sockperf throughput --tcp -i 127.0.0.1 -p "$zc_port" -m 64 -t 2 >"$work/probe-tp.log" 2>&1; then
    probe_tp[$engine]="finished: $(grep -o 'Message Rate is [0-9]*' "$work/probe-tp.log" || echo '?') msg/s"
  else
    probe_tp[$engine]="did not finish (blocked in send: echoes are never read)"
  fi
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "-" }'; }
echo
echo "Loopback TCP, 64-byte messages, ${seconds} s each. Round trips in microseconds."
printf '%-22s %-34s %9s %9s %12s %14s\n' server client "p50 RTT" "p99 RTT" "pp msg/s" "stream msg/s"
printf '%-22s %-34s %9s %9s %12s %14s\n' "sockperf server" "sockperf pp / throughput (1-way)" \
  "$sp_p50" "$sp_p99" "$sp_pp_rate" "$sp_tp_rate"
for engine in uring nio; do
  printf '%-22s %-34s %9s %9s %12s %14s\n' "zcnet echo ($engine)" "zcnet echo-client ($engine), 2-way" \
    "${zc_p50[$engine]}" "${zc_p99[$engine]}" "${zc_pp_rate[$engine]}" "${zc_pl_rate[$engine]}"
done
echo
echo "Ratios zcnet / sockperf-server (latency: lower is better; rates: higher is better):"
for engine in uring nio; do
  echo "  $engine: p50 $(ratio "${zc_p50[$engine]}" "$sp_p50"), p99 $(ratio "${zc_p99[$engine]}" "$sp_p99")," \
       "ping-pong rate $(ratio "${zc_pp_rate[$engine]}" "$sp_pp_rate")," \
       "stream rate $(ratio "${zc_pl_rate[$engine]}" "$sp_tp_rate") (zcnet echoes every message, 64 in flight; sockperf's is one-way)"
done
echo
echo "sockperf's own client against the zcnet echo server:"
for engine in uring nio; do
  echo "  $engine: ping-pong: ${probe_pp[$engine]}; throughput: ${probe_tp[$engine]}"
done
