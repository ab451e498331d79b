#!/usr/bin/env bash
# Bulk transfer, one TCP connection on loopback: zcnet moving 1 MiB messages against iperf3 -P 1, and
# Netty 4.2 (epoll, io_uring) moving 1 MiB length-prefixed messages, measured in the same run.
#   bench/bulk.sh [seconds]     default 5 s measured per run, after the Java programs' 2 s warm-up
#                               (about 1.5 minutes in all at the defaults)
# Environment: ROUNDS (default 3; each round runs zcnet, iperf3, Netty epoll, Netty io_uring in turn, so
# drift in the machine spreads over all of them; the figures are the medians), SKIP_ZCNET=1 (leave zcnet
# out: its figures and the ratio print n/a).
# Figures: Gbit/s of payload delivered (10^9 bits), and CPU seconds per GB (10^9 bytes) delivered: user +
# system time of both ends (for the Java programs the whole JVM, which holds both ends).
# Last line: zcnet X Gbit/s, iperf3 Y Gbit/s, ratio R; CPU s/GB zcnet A, iperf3 B   (R = X / Y)
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=rx-lib.sh
source "$root/bench/rx-lib.sh"
rx_perf=0 # no syscall figure here: the bulk runs leave perf out

seconds="${1:-5}"
rounds="${ROUNDS:-3}"
size=1048576
impls=(iperf3 netty-epoll netty-io_uring)
[ "${SKIP_ZCNET:-0}" = 1 ] || impls=(zcnet "${impls[@]}")

rx_require_iperf3

build_benchmarks >&2 # Maven's terminal resets stay off the report
rx_header "bench/bulk.sh: $size-byte messages (iperf3: its own 128 KiB writes), one TCP connection on 127.0.0.1; ${seconds} s measured per run, $rounds rounds, medians; $(iperf3 --version | head -n 1)"

declare -A gbits cpus
for round in $(seq 1 "$rounds"); do
  for impl in "${impls[@]}"; do
    case "$impl" in
      iperf3) iperf3_run "$impl-$round" 1 ;;
      zcnet)
        rx_run "$impl-$round" "$seconds" "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$bench_jar" \
          io.zcnet.jmh.rx.ZcnetBulk --engine uring --seconds "$seconds" --size "$size" ;;
      netty-*)
        rx_run "$impl-$round" "$seconds" "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED "${rx_netty_flags[@]}" \
          -cp "$bench_jar" io.zcnet.jmh.rx.NettyBulk --transport "${impl#netty-}" --seconds "$seconds" --size "$size" ;;
    esac
    gbit="$(rx_field "$rx_result" gbit_per_s)"
    cpu="$(rx_field "$rx_result" cpu_seconds)"
    gigabytes="$(rx_divide "$(rx_field "$rx_result" bytes)" 1e9 %.3f)"
    per_gb="$(rx_divide "$cpu" "$gigabytes" %.3f)"
    gbits[$impl]+="$gbit "
    cpus[$impl]+="$per_gb "
    printf '%-15s round %d: %7.3f Gbit/s  %6s CPU s/GB  (%s CPU s, %s GB in %s s; other load %s)\n' \
      "$impl" "$round" "$gbit" "$per_gb" "$cpu" "$gigabytes" "$(rx_field "$rx_result" seconds)" "$rx_other"
  done
done

for impl in netty-epoll netty-io_uring; do
  echo "$impl $(rx_format "$(rx_median_of "$impl" gbits)" %.3f) Gbit/s, CPU s/GB $(rx_format "$(rx_median_of "$impl" cpus)" %.3f)"
done
zcnet_gbit="$(rx_median_of zcnet gbits)"
iperf_gbit="$(rx_median_of iperf3 gbits)"
echo "zcnet $(rx_format "$zcnet_gbit" %.3f) Gbit/s, iperf3 $(rx_format "$iperf_gbit" %.3f) Gbit/s," \
  "ratio $(rx_divide "$zcnet_gbit" "$iperf_gbit"); CPU s/GB zcnet $(rx_format "$(rx_median_of zcnet cpus)" %.3f)," \
  "iperf3 $(rx_format "$(rx_median_of iperf3 cpus)" %.3f)"
