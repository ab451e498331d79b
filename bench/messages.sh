#!/usr/bin/env bash
# Small messages, one TCP connection on loopback: zcnet against Netty 4.2 (io_uring and epoll), measured
# in the same run. 64-byte length-prefixed messages, a window of up to 1024 in flight; the receiver
# decodes each message and hands it to a handler, one call per message.
#   bench/messages.sh [seconds]     default 5 s measured per run, after each program's 6 s warm-up
#                                   (about 2 minutes in all at the defaults)
# Environment: ROUNDS (default 3; each round runs every implementation once, the figures are the
# medians), SKIP_ZCNET=1 (leave zcnet out: its figures and the ratio print n/a).
# System calls per message: perf's raw_syscalls:sys_enter over each measured interval, the whole JVM
# (both ends, GC and JIT threads too), per delivered message; n/a without a working perf.
# Last line: zcnet X msg/s, netty-io_uring Y msg/s, netty-epoll Z msg/s, ratio R   (R = X / Y)
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=rx-lib.sh
source "$root/bench/rx-lib.sh"

seconds="${1:-5}"
rounds="${ROUNDS:-3}"
size=64
window=1024
impls=(netty-io_uring netty-epoll)
[ "${SKIP_ZCNET:-0}" = 1 ] || impls=(zcnet "${impls[@]}")

build_benchmarks >&2 # Maven's terminal resets stay off the report
rx_header "bench/messages.sh: ${size}-byte messages with a 4-byte length, window $window, one TCP connection on 127.0.0.1, both ends in one JVM; ${seconds} s measured per run, $rounds rounds, medians"
echo "# syscalls/msg: $([ "$rx_perf" = 1 ] && echo "perf raw_syscalls:sys_enter, whole JVM, over the measured interval" || echo "n/a (perf with tracepoints is not available)")"

declare -A rates syscalls
for round in $(seq 1 "$rounds"); do
  for impl in "${impls[@]}"; do
    case "$impl" in
      zcnet) command=(io.zcnet.jmh.rx.ZcnetMessages --engine uring) ;;
      netty-*) command=("${rx_netty_flags[@]}" io.zcnet.jmh.rx.NettyMessages --transport "${impl#netty-}") ;;
    esac
    rx_run "$impl-$round" "$seconds" "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$bench_jar" \
      "${command[@]}" --seconds "$seconds" --size "$size" --window "$window"
    rate="$(rx_field "$rx_result" msg_per_s)"
    rates[$impl]+="$rate "
    syscalls[$impl]+="$rx_syscalls "
    printf '%-15s round %d: %10.0f msg/s  %6s syscalls/msg  %5.2f CPU s  (%s messages in %s s; other load %s)\n' \
      "$impl" "$round" "$rate" "$rx_syscalls" "$(rx_field "$rx_result" cpu_seconds)" \
      "$(rx_field "$rx_result" messages)" "$(rx_field "$rx_result" seconds)" "$rx_other"
  done
done

zcnet_rate="$(rx_median_of zcnet rates)"
uring_rate="$(rx_median_of netty-io_uring rates)"
epoll_rate="$(rx_median_of netty-epoll rates)"
echo "syscalls/msg (medians): zcnet $(rx_format "$(rx_median_of zcnet syscalls)" %.4f)," \
  "netty-io_uring $(rx_format "$(rx_median_of netty-io_uring syscalls)" %.4f)," \
  "netty-epoll $(rx_format "$(rx_median_of netty-epoll syscalls)" %.4f)"
echo "zcnet $(rx_format "$zcnet_rate" %.0f) msg/s, netty-io_uring $(rx_format "$uring_rate" %.0f) msg/s," \
  "netty-epoll $(rx_format "$epoll_rate" %.0f) msg/s, ratio $(rx_divide "$zcnet_rate" "$uring_rate")"
