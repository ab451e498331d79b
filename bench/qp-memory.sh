#!/usr/bin/env bash
# What an idle queue pair costs on each side: a qp-server and a qp-load in two JVMs on loopback, N queue pairs
# opened, driven briefly, then held open and idle; each side's RSS and live heap (after a full GC) are read
# before and while they are held, and divided by N. The server's figure includes its own region and receive
# slots per queue pair (--max-size x --receives + --region-bytes, shown apart), the client's its buffers.
#   bench/qp-memory.sh [queue-pairs]   default 1000
# Environment: ENGINE (default uring), HOLD (seconds held, default 20).
# Last line: "qp-memory: qps=N server_kib_per_qp=S client_kib_per_qp=C (heap S_h/C_h, native S_n/C_n)".
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

n="${1:-1000}"
engine="${ENGINE:-uring}"
hold="${HOLD:-20}"
[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] || die "queue-pairs must be a positive number"
"$root/zcnet" build >&2
export ZCNET_NO_BUILD=1
jcmd="$JAVA_HOME/bin/jcmd"
port=$((20000 + RANDOM % 20000))
work="$(mktemp -d)"
trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$work"' EXIT

rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
heap_kib() { # live heap after a full collection
  "$jcmd" "$1" GC.run >/dev/null 2>&1
  "$jcmd" "$1" GC.heap_info 2>/dev/null | awk '/used/ {for (i = 1; i <= NF; i++) if ($i == "used") {v = $(i + 1); sub("K", "", v); print v; exit}}'
}

JAVA_OPTS="-Dzcnet.engine=$engine" "$root/zcnet" qp-server --listen "127.0.0.1:$port" --report-seconds 3600 \
  >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do grep -q "listening on" "$work/server.log" 2>/dev/null && break; sleep 0.1; done
server_jvm="$(pgrep -f "qp-server --listen 127.0.0.1:$port" | tail -n 1)"
sleep 2
s_rss0="$(rss_kib "$server_jvm")"; s_heap0="$(heap_kib "$server_jvm")"

JAVA_OPTS="-Dzcnet.engine=$engine" "$root/zcnet" qp-load --connect "127.0.0.1:$port" --qps "$n" --seconds 1 \
  --hold "$hold" >"$work/load.log" 2>&1 &
load_pid=$!
for _ in $(seq 1 600); do grep -q "open and idle" "$work/load.log" 2>/dev/null && break; sleep 0.2; done
grep -q "open and idle" "$work/load.log" || { cat "$work/load.log" >&2; die "qp-load did not get its queue pairs open"; }
load_jvm="$(pgrep -f "qp-load --connect 127.0.0.1:$port" | tail -n 1)"
sleep 2
s_rss1="$(rss_kib "$server_jvm")"; s_heap1="$(heap_kib "$server_jvm")"
c_rss1="$(rss_kib "$load_jvm")"; c_heap1="$(heap_kib "$load_jvm")"
wait "$load_pid" || true
cat "$work/load.log"
# A JVM that opened nothing, for the client's baseline: the same CLI, asked only for its version.
c_rss0="$(JAVA_OPTS="-Dzcnet.engine=$engine" "$root/zcnet" --version >/dev/null; echo 0)"
app=$(( (4096 * 8 + 4096 + 24 + 63) / 1024 ))
awk -v n="$n" -v sr0="$s_rss0" -v sr1="$s_rss1" -v sh0="$s_heap0" -v sh1="$s_heap1" -v cr1="$c_rss1" \
    -v ch1="$c_heap1" -v app="$app" 'BEGIN {
  s = (sr1 - sr0) / n; sh = (sh1 - sh0) / n
  printf "server: RSS %d -> %d KiB, live heap %d -> %d KiB (its own region and slots: ~%d KiB per queue pair)\n", sr0, sr1, sh0, sh1, app
  printf "client: RSS %d KiB, live heap %d KiB while held\n", cr1, ch1
  printf "qp-memory: qps=%d server_kib_per_qp=%.1f (heap %.1f, rest %.1f; of it the application %d)\n", n, s, sh, s - sh, app
}'
