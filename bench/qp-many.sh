#!/usr/bin/env bash
# Many queue pairs against one, and against Netty 4.2 io_uring with as many connections, in the same run; two JVMs
# on loopback each time (a server and its load), 64 B messages, every reply checked.
#   rate:      one queue pair with T in flight (--queue-depth T on both ends) against N queue pairs with K each
#              (T = N x K); the target is N's rate >= 0.8 of the one's, and no queue pair below half the mean;
#              Netty's echo server with N connections, K in flight each, beside it as the yardstick
#   ping-pong: one outstanding per queue pair: N queue pairs against one (target >= 4x), and against Netty's echo
#              server with N connections driven the same way, length-prefixed (target >= 1x)
#   bench/qp-many.sh [N] [K] [seconds]   defaults 1000 4 10
# Environment: ENGINE (default uring); LOOPS (default 1): loop threads of each end's context (--loops).
# Last lines: "qp-many: rate qps=N inflight=K one=X many=Y ratio=R min_over_mean=M netty=Z many_over_netty=Q" and
#             "qp-many: ping-pong qps=N one=X many=Y ratio=R netty=Z many_over_netty=Q"
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

n="${1:-1000}"
k="${2:-4}"
seconds="${3:-10}"
engine="${ENGINE:-uring}"
loops="${LOOPS:-1}"
[[ "$loops" =~ ^[0-9]+$ && "$loops" -ge 1 ]] || die "LOOPS must be a positive number"
[[ "$n" =~ ^[0-9]+$ && "$k" =~ ^[0-9]+$ && "$n" -ge 1 && "$k" -ge 1 ]] || die "N and K must be positive numbers"
total=$((n * k))
depth=1; while [ "$depth" -le "$total" ]; do depth=$((depth * 2)); done # one more than in flight: a receive spare
[ "$depth" -le 32768 ] || die "N x K = $total: one queue pair holds at most 32767 in flight"
"$root/zcnet" build >&2
build_benchmarks >&2
export ZCNET_NO_BUILD=1 JAVA_OPTS="-Dzcnet.engine=$engine"
work="$(mktemp -d)"
netty_pid=""
trap 'kill "$server_pid" $netty_pid 2>/dev/null || true; rm -rf "$work"' EXIT

# load PORT QPS INFLIGHT [qp-load options]: one qp-load run; prints its rt_per_s, its fairness line to the log
load() {
  local port="$1" qps="$2" inflight="$3"
  shift 3
  "$root/zcnet" qp-load --connect "127.0.0.1:$port" --qps "$qps" --inflight "$inflight" --seconds "$seconds" \
    --loops "$loops" "$@" \
    >"$work/out" 2>"$work/err" || { cat "$work/err" "$work/out" >&2; die "qp-load failed"; }
  grep -q "verify=ok" "$work/out" || { cat "$work/out" >&2; die "qp-load did not verify"; }
  cat "$work/out" >&2
  grep "min/mean" "$work/err" >&2 || true
  awk '{for (i = 1; i <= NF; i++) if ($i ~ /^rt_per_s=/) {sub(/rt_per_s=/, "", $i); print $i}}' "$work/out"
}
share() { awk '/min\/mean/ {print $NF}' "$work/err"; }
stop_server() { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }

echo "# bench/qp-many.sh: N=$n queue pairs, K=$k in flight each, ${seconds} s per run, engine $engine, loops $loops, $(date -u +%F)"
port=$((20000 + RANDOM % 20000))
# The one queue pair takes T in flight: deeper queues and receives for them on both ends.
QP_SERVER_ARGS="--queue-depth $depth --receives $total --max-size 64 --loops $loops" start_qp_server "$port" "$work/one.log"
one_rate="$(load "$port" 1 "$total" --queue-depth "$depth")"
one_pp="$(load "$port" 1 1 --queue-depth "$depth")"
stop_server

port=$((port + 1))
QP_SERVER_ARGS="--receives $k --max-size 64 --loops $loops" start_qp_server "$port" "$work/many.log"
many_rate="$(load "$port" "$n" "$k")"; many_share="$(share)"
many_pp="$(load "$port" "$n" 1)"
stop_server

port=$((port + 1))
"$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$bench_jar" io.zcnet.jmh.echo.NettyManyEcho server "$port" \
  >"$work/netty.log" 2>&1 &
netty_pid=$!
for _ in $(seq 1 100); do grep -q "listening on" "$work/netty.log" 2>/dev/null && break; sleep 0.1; done
# netty_load INFLIGHT: Netty's echo driven as the queue pairs were; prints its rt_per_s
netty_load() {
  "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$bench_jar" io.zcnet.jmh.echo.NettyManyEcho load \
    "127.0.0.1:$port" "$n" "$seconds" "$1" 64 >"$work/netty.out" 2>/dev/null \
    || { cat "$work/netty.out" >&2; die "the Netty load failed"; }
  cat "$work/netty.out" >&2
  awk '/^netty-echo:/ {for (i = 1; i <= NF; i++) if ($i ~ /^rt_per_s=/) {sub(/rt_per_s=/, "", $i); print $i}}' "$work/netty.out"
}
netty_rate="$(netty_load "$k")"
netty_pp="$(netty_load 1)"
kill "$netty_pid" 2>/dev/null || true

awk -v n="$n" -v k="$k" -v a="$one_rate" -v b="$many_rate" -v m="$many_share" -v c="$netty_rate" \
  'BEGIN { printf "qp-many: rate qps=%d inflight=%d one=%.0f many=%.0f ratio=%.2f min_over_mean=%s netty=%.0f many_over_netty=%.2f\n", n, k, a, b, b / a, m, c, b / c }'
awk -v n="$n" -v a="$one_pp" -v b="$many_pp" -v c="$netty_pp" \
  'BEGIN { printf "qp-many: ping-pong qps=%d one=%.0f many=%.0f ratio=%.2f netty=%.0f many_over_netty=%.2f\n", n, a, b, b / a, c, b / c }'
