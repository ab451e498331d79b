#!/usr/bin/env bash
# Queue pairs on loopback against their peers, measured in the same run:
#   - 1 MiB RDMA WRITEs (256 KiB segments, QueuePairBulk's default) over one subflow against iperf3 -P 1,
#     and over four subflows against iperf3 -P 4;
#   - 64-byte SENDs on one queue pair against Netty 4.2 io_uring with length-prefixed framing (the same
#     NettyMessages program bench/messages.sh runs), both with the same window of messages in flight.
#   bench/qp-loopback.sh [seconds]   default 5 s measured per run (about 4 minutes in all at the defaults)
# Environment: ROUNDS (default 3; each round runs every program once, the figures are the medians);
#   WINDOWS (default "1024"): the windows the 64-byte pair runs at, each a power of two, e.g. "1024 4096".
# Figures: payload Gbit/s (10^9 bits) with CPU seconds per GB of both ends; messages per second.
# Last lines: one per comparison, "A X, B Y, ratio R" with R = A / B.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=rx-lib.sh
source "$root/bench/rx-lib.sh"
rx_perf=0 # throughput and CPU only: no per-message syscall figure here

seconds="${1:-5}"
rounds="${ROUNDS:-3}"
windows="${WINDOWS:-1024}"
programs=(qp-write-1 iperf3-P1 qp-write-4 iperf3-P4)
for w in $windows; do
  [[ "$w" =~ ^[0-9]+$ ]] && (( w >= 4 && (w & (w - 1)) == 0 )) || die "WINDOWS: $w is not a power of two >= 4"
  programs+=("qp-send-64B-w$w" "netty-io_uring-64B-w$w")
done
java_run=("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$bench_jar")
rx_require_iperf3
build_benchmarks >&2
rx_header "bench/qp-loopback.sh: queue pairs on 127.0.0.1, both ends in one JVM (two loop threads); ${seconds} s measured per run, $rounds rounds, medians; $(iperf3 --version | head -n 1)"

declare -A values cpus
for round in $(seq 1 "$rounds"); do
  for impl in "${programs[@]}"; do
    case "$impl" in
      qp-write-*) rx_run "$impl-$round" "$seconds" "${java_run[@]}" io.zcnet.jmh.rx.QueuePairBulk --engine uring \
                    --seconds "$seconds" --size 1048576 --window 16 --subflows "${impl#qp-write-}" ;;
      iperf3-P*) iperf3_run "$impl-$round" "${impl#iperf3-P}" ;;
      qp-send-64B-w*) rx_run "$impl-$round" "$seconds" "${java_run[@]}" io.zcnet.jmh.rx.QueuePairMessages --engine uring \
                    --seconds "$seconds" --size 64 --window "${impl##*-w}" ;;
      netty-io_uring-64B-w*) rx_run "$impl-$round" "$seconds" "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED \
                    "${rx_netty_flags[@]}" -cp "$bench_jar" io.zcnet.jmh.rx.NettyMessages --transport io_uring \
                    --seconds "$seconds" --size 64 --window "${impl##*-w}" ;;
    esac
    case "$impl" in
      *-64B-w*) value="$(rx_field "$rx_result" msg_per_s)"; unit="msg/s"; per_gb=n/a ;;
      *) value="$(rx_field "$rx_result" gbit_per_s)"; unit="Gbit/s"
         per_gb="$(rx_divide "$(rx_field "$rx_result" cpu_seconds)" "$(rx_divide "$(rx_field "$rx_result" bytes)" 1e9 %.3f)" %.3f)" ;;
    esac
    values[$impl]+="$value "
    cpus[$impl]+="$per_gb "
    printf '%-25s round %d: %12s %-6s %6s CPU s/GB  (other load %s)\n' "$impl" "$round" "$value" "$unit" "$per_gb" "$rx_other"
  done
done

line() { # line A B UNIT FORMAT
  local a b
  a="$(rx_median_of "$1" values)"
  b="$(rx_median_of "$2" values)"
  echo "$1 $(rx_format "$a" "$4") $3 (CPU s/GB $(rx_format "$(rx_median_of "$1" cpus)" %.3f)), $2 $(rx_format "$b" "$4") $3" \
    "(CPU s/GB $(rx_format "$(rx_median_of "$2" cpus)" %.3f)), ratio $(rx_divide "$a" "$b")"
}
line qp-write-1 iperf3-P1 Gbit/s %.3f
line qp-write-4 iperf3-P4 Gbit/s %.3f
for w in $windows; do
  line "qp-send-64B-w$w" "netty-io_uring-64B-w$w" msg/s %.0f
done
