#!/usr/bin/env bash
# Establishing queue pairs against plain TCP connects, in the same run: N queue pairs opened by qp-load (8
# threads) to a qp-server, and N plain TCP connects and accepts (ConnectBaseline, 8 threads); each ROUNDS times,
# alternating, medians. Each of those is a fresh JVM's first N, so the queue pairs' side pays for its JIT warming up
# the handshake and the queue pairs' set-up; then once more warm: each side's JVM opens N WARM_ROUNDS times over
# and the last round counts (WarmEstablish on one context, ConnectBaseline's rounds).
#   bench/qp-establish.sh [N]   default 1000
# Environment: ENGINE (default uring), ROUNDS (default 3), WARM_ROUNDS (default 8).
# Last lines: "qp-establish: qps=N zcnet_ms=Z tcp_ms=T ratio=R" (fresh JVMs, R = Z / T; the target is <= 2), then
# "qp-establish-warm: qps=N zcnet_ms=Z tcp_ms=T ratio=R".
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

n="${1:-1000}"
engine="${ENGINE:-uring}"
rounds="${ROUNDS:-3}"
warm_rounds="${WARM_ROUNDS:-8}"
"$root/zcnet" build >&2
build_benchmarks >&2
export ZCNET_NO_BUILD=1 JAVA_OPTS="-Dzcnet.engine=$engine"
port=$((20000 + RANDOM % 20000))
work="$(mktemp -d)"
trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
start_qp_server "$port" "$work/server.log"
"$root/zcnet" qp-load --connect "127.0.0.1:$port" --qps 100 --seconds 1 >/dev/null 2>&1 # warm the server's JIT
zcnet=() tcp=()
for round in $(seq 1 "$rounds"); do
  "$root/zcnet" qp-load --connect "127.0.0.1:$port" --qps "$n" --seconds 0.1 >/dev/null 2>"$work/load.log" || true
  zcnet+=("$(awk '/established .* queue pairs in/ {print $(NF - 1)}' "$work/load.log")")
  tcp+=("$("$JAVA_HOME/bin/java" -cp "$bench_jar" io.zcnet.jmh.rx.ConnectBaseline "$n" 8 | awk -F'ms=' '{print $2}')")
  echo "round $round: zcnet ${zcnet[-1]} ms, tcp ${tcp[-1]} ms"
  sleep 1
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
z="$(median "${zcnet[@]}")"; t="$(median "${tcp[@]}")"
awk -v n="$n" -v z="$z" -v t="$t" 'BEGIN { printf "qp-establish: qps=%d zcnet_ms=%.1f tcp_ms=%.1f ratio=%.2f\n", n, z, t, z / t }'
wz="$("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -Dzcnet.engine="$engine" -cp "$bench_jar" io.zcnet.jmh.qp.WarmEstablish \
  "127.0.0.1:$port" "$n" 8 "$warm_rounds" 2>&1 | awk -F'ms=' '/warm-establish: qps=/ {print $2}')"
wt="$("$JAVA_HOME/bin/java" -cp "$bench_jar" io.zcnet.jmh.rx.ConnectBaseline "$n" 8 "$warm_rounds" | awk -F'ms=' '{print $2}')"
awk -v n="$n" -v z="$wz" -v t="$wt" 'BEGIN { printf "qp-establish-warm: qps=%d zcnet_ms=%.1f tcp_ms=%.1f ratio=%.2f\n", n, z, t, z / t }'
