#!/usr/bin/env bash
# Round-trip latency of 64-byte messages on loopback, one round trip outstanding at a time, measured in
# the same run:
#   - sockperf's ping-pong: its client against its own server, TCP, --full-rtt (the whole round trip);
#   - one zcnet queue pair (io.zcnet.jmh.rx.QueuePairLatency, both ends in one JVM on two loop threads):
#     SEND ping-pong (a SEND answered by a SEND) and RDMA READ, each on the io_uring and NIO engines;
#   - the same busy-polling, against each other: sockperf-busy (server and client on non-blocking sockets,
#     spinning on recvfrom: --nonblocked) and qp-*-uring-busy (--busy-poll true: both loop threads
#     poll and yield, LoopIdle.yielding()), so that neither side's round trip waits for a wake-up.
#   bench/qp-latency.sh [seconds]   default 5 s measured per run (about 6 minutes in all at the defaults)
# Environment: ROUNDS (default 3; each round runs every program once, the figures are the medians);
# QUIET_WAIT (default 0): before each run, wait up to this many seconds for the machine to be quiet (on a
# machine shared with others; each run's line says how much other load it still had).
# Each run warms up first: sockperf for 1 s untimed (plus its own 400 ms stage), zcnet for
# MeasuredInterval's 6 s (the JIT). Figures in microseconds; round trips per second.
# Last lines: for each zcnet program, "A X, B Y, ratio R" for p50 and for p99, R = A / B (zcnet /
# sockperf, the busy-polling ones / sockperf-busy: below 1 means zcnet's round trip is shorter).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=rx-lib.sh
source "$root/bench/rx-lib.sh"
# shellcheck source=sockperf-lib.sh
source "$root/bench/sockperf-lib.sh"
rx_perf=0 # latency only: no system-call count attached to the runs

seconds="$(rx_seconds "${1:-5}")"
sockperf_busy=(--nonblocked)
rounds="${ROUNDS:-3}"
[[ "$rounds" =~ ^[0-9]+$ ]] && [ "$rounds" -ge 1 ] || die "ROUNDS must be a whole number >= 1"
java_run=("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$bench_jar")
sockperf_require
build_benchmarks >&2
rx_header "bench/qp-latency.sh: 64 B round trips on 127.0.0.1, one outstanding; ${seconds} s measured per run, $rounds rounds, medians; sockperf $(sockperf_version)"
echo "# load average (1, 5, 15 min) before: $(cut -d ' ' -f 1-3 /proc/loadavg)"

impls=(sockperf qp-send-uring qp-read-uring qp-send-nio qp-read-nio sockperf-busy qp-send-uring-busy qp-read-uring-busy)
keys=(p50_us p99_us p999_us mean_us msg_per_s)
declare -A latency
for round in $(seq 1 "$rounds"); do
  for impl in "${impls[@]}"; do
    rx_wait_quiet "${QUIET_WAIT:-0}"
    case "$impl" in
      sockperf) sockperf_ping_pong "$impl-$round" ;;
      sockperf-busy) sockperf_ping_pong "$impl-$round" "${sockperf_busy[@]}" ;;
      qp-*) IFS=- read -r _ op engine busy <<<"$impl"
            rx_run "$impl-$round" "$seconds" "${java_run[@]}" io.zcnet.jmh.rx.QueuePairLatency --op "$op" \
              --engine "$engine" --seconds "$seconds" --size 64 --busy-poll "$([ -n "$busy" ] && echo true || echo false)" ;;
    esac
    for key in "${keys[@]}"; do
      latency[$impl.$key]+="$(rx_field "$rx_result" "$key") "
    done
    printf '%-18s round %d: p50 %7s  p99 %7s  p99.9 %7s  mean %7s us  %9s round trips/s  (other load %s)\n' \
      "$impl" "$round" "$(rx_field "$rx_result" p50_us)" "$(rx_field "$rx_result" p99_us)" \
      "$(rx_field "$rx_result" p999_us)" "$(rx_field "$rx_result" mean_us)" \
      "$(rx_format "$(rx_field "$rx_result" msg_per_s)" %.0f)" "$rx_other"
  done
done
echo "# load average (1, 5, 15 min) after: $(cut -d ' ' -f 1-3 /proc/loadavg)"

median() { # IMPL KEY
  rx_median_of "$1.$2" latency
}
echo
echo "medians of $rounds rounds, microseconds:"
printf '%-18s %8s %8s %8s %8s %14s\n' program p50 p99 p99.9 mean "round trips/s"
for impl in "${impls[@]}"; do
  printf '%-18s %8s %8s %8s %8s %14s\n' "$impl" "$(rx_format "$(median "$impl" p50_us)" %.2f)" \
    "$(rx_format "$(median "$impl" p99_us)" %.2f)" "$(rx_format "$(median "$impl" p999_us)" %.2f)" \
    "$(rx_format "$(median "$impl" mean_us)" %.2f)" "$(rx_format "$(median "$impl" msg_per_s)" %.0f)"
done
echo
for impl in "${impls[@]}"; do
  case "$impl" in sockperf*) continue ;; *-busy) peer=sockperf-busy ;; *) peer=sockperf ;; esac
  for p in p50 p99; do
    a="$(median "$impl" "${p}_us")"
    b="$(median "$peer" "${p}_us")"
    echo "$impl $p $(rx_format "$a" %.2f) us, $peer $p $(rx_format "$b" %.2f) us, ratio $(rx_divide "$a" "$b")"
  done
done
