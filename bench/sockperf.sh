#!/usr/bin/env bash
# One sockperf client (C, blocking sockets) against three servers in one run, loopback only:
#   1. sockperf's own server                     (sockperf server --tcp)
#   2. the zcnet echo server on io_uring          (./zcnet echo-server --protocol sockperf --engine uring)
#   3. the zcnet echo server on NIO               (./zcnet echo-server --protocol sockperf --engine nio)
# For each: sockperf ping-pong (round trips: p50, p99, average, replies per second) and sockperf
# throughput (one-way: the client only sends, nothing is answered), 64-byte messages, then the ratios
# zcnet / sockperf-server.
#   bench/sockperf.sh [seconds]      default 5 s per measurement
#
# --protocol sockperf makes the zcnet server answer like sockperf's: it parses sockperf's 14-byte
# message header and sends back (CLIENT flag cleared) only the messages that request a reply, as the
# sockperf client requires; a raw echo server cannot be measured by sockperf's client at all.
# Every server gets the same flags and the same untimed 1 s warm-up of both tests first (the JVM
# compiles its hot path there; sockperf's own 400 ms warm-up stage runs inside every measurement too).
# Two cores are shared by client and server: treat single runs as noise, compare ratios across runs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-5}"
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -ge 1 ] && [ "$seconds" -le 600 ] || { echo "seconds must be 1..600" >&2; exit 2; }
host=127.0.0.1
work="$(mktemp -d)"
server_pid=""
stop_server() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
cleanup() {
  stop_server
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=sockperf-lib.sh
source "$root/bench/sockperf-lib.sh"
sockperf_require
echo "building zcnet ..." >&2
"$root/zcnet" build >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
export ZCNET_NO_BUILD=1 # one build for the whole run, even if sources change meanwhile

wait_port() { # waits (bounded: 120 s, ./zcnet rebuilds first if sources changed) for a listener on $host:$1
  for _ in $(seq 1 1200); do
    kill -0 "$2" 2>/dev/null || return 1
    (exec 3<>"/dev/tcp/$host/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

run_sockperf() { # TEST PORT LOG SECONDS [ARGS...]
  local test="$1" port="$2"
  shift 2
  sockperf_run "$test" "$host" "$port" "$@"
}

declare -A p50 p99 avg pp_rate tp_rate note started
names=(sockperf zcnet-uring zcnet-nio)
port_of() { case "$1" in sockperf) echo 11111 ;; zcnet-uring) echo 17777 ;; zcnet-nio) echo 17778 ;; esac; }

for name in "${names[@]}"; do
  port="$(port_of "$name")"
  case "$name" in
    sockperf) sockperf server --tcp -i "$host" -p "$port" >"$work/$name-server.log" 2>&1 & ;;
    zcnet-*) "$root/zcnet" echo-server --protocol sockperf --engine "${name#zcnet-}" --bind "$host" --port "$port" \
                 >"$work/$name-server.log" 2>&1 & ;;
  esac
  server_pid=$!
  p50[$name]="-"; p99[$name]="-"; avg[$name]="-"; pp_rate[$name]="-"; tp_rate[$name]="-"; note[$name]=""
  if ! wait_port "$port" "$server_pid"; then
    note[$name]="server did not start: $(tail -n 3 "$work/$name-server.log" | tr '\n' ' ')"
    stop_server
    continue
  fi
  echo "measuring $name ..." >&2
  run_sockperf ping-pong "$port" "$work/warmup.log" 1 --full-rtt
  run_sockperf throughput "$port" "$work/warmup.log" 1
  run_sockperf ping-pong "$port" "$work/$name-pp.log" "$seconds" --full-rtt
  run_sockperf throughput "$port" "$work/$name-tp.log" "$seconds"
  pp="$work/$name-pp.log"
  p50[$name]="$(sockperf_field 'percentile 50.000' "$pp")"
  p99[$name]="$(sockperf_field 'percentile 99.000' "$pp")"
  avg[$name]="$(sockperf_average_rtt "$pp")"
  pp_rate[$name]="$(sockperf_reply_rate "$pp")"
  tp_rate[$name]="$(grep -ao 'Message Rate is [0-9]*' "$work/$name-tp.log" | awk '{print $4}' || true)"
  if ! grep -q '# dropped messages = 0; # duplicated messages = 0; # out-of-order messages = 0' "$pp"; then
    note[$name]="ping-pong: $(grep -a -m 1 -o 'dropped messages.*\|No messages were received[^.]*\|exited with.*' "$pp" || echo 'no statistics')"
  fi
  started[$name]="$(grep -ao -m 1 'zcnet echo-server.*listening on.*' "$work/$name-server.log" || true)"
  stop_server
  for v in p50 p99 avg pp_rate tp_rate; do # an empty field means sockperf printed nothing usable
    declare -n ref="$v"
    [ -n "${ref[$name]}" ] || ref[$name]="?"
    unset -n ref
  done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "-" }'; }
echo
echo "sockperf $(sockperf_version) client, loopback TCP, 64-byte messages, ${seconds} s per test."
echo "ping-pong: round trips (--full-rtt) in microseconds, replies/s; throughput: messages/s sent one-way."
printf '%-13s %9s %9s %9s %12s %15s\n' server "p50 RTT" "p99 RTT" "avg RTT" "pp msg/s" "throughput msg/s"
for name in "${names[@]}"; do
  printf '%-13s %9s %9s %9s %12s %15s\n' "$name" "${p50[$name]}" "${p99[$name]}" "${avg[$name]}" \
    "${pp_rate[$name]}" "${tp_rate[$name]}"
done
echo
echo "Ratios zcnet / sockperf-server (latency: below 1 is better; rates: above 1 is better):"
for name in zcnet-uring zcnet-nio; do
  printf '  %-12s p50 %s  p99 %s  avg %s  ping-pong rate %s  throughput %s\n' "$name" \
    "$(ratio "${p50[$name]}" "${p50[sockperf]}")" "$(ratio "${p99[$name]}" "${p99[sockperf]}")" \
    "$(ratio "${avg[$name]}" "${avg[sockperf]}")" "$(ratio "${pp_rate[$name]}" "${pp_rate[sockperf]}")" \
    "$(ratio "${tp_rate[$name]}" "${tp_rate[sockperf]}")"
done
for name in "${names[@]}"; do
  [ -z "${note[$name]}" ] || echo "  problem with $name: ${note[$name]}"
done
echo
echo "zcnet servers as they reported themselves:"
for name in zcnet-uring zcnet-nio; do
  echo "  $name: ${started[$name]:-did not start}"
done
