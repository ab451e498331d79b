#!/usr/bin/env bash
# What an idle queue pair costs on each side: a qp-server and a qp-load in two JVMs on loopback, N queue pairs
# opened, driven briefly, then held open and idle; each side's RSS and live heap (after a full GC) are read
# before and while they are held (the lowest of three samples, see below), and divided by N. RSS keeps what the allocator freed but did not hand back to
# the kernel (the high-water mark of the short drive), so the live heap and the native memory the JVM tracks
# (NMT's "Other": FFM's allocations) are printed too. The server's figure includes its own region and receive
# slots per queue pair (--max-size x --receives + --region-bytes, shown apart), the client's its buffers.
#   bench/qp-memory.sh [queue-pairs]   default 1000
# Environment: ENGINE (default uring), HOLD (seconds held, default 20).
# Last line: "qp-memory: qps=N server_kib_per_qp: live heap H + FFM native F (of it the application A) = T; RSS R".
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
heap_kib() { # live objects: the class histogram collects first, so only what is reachable counts
  "$jcmd" "$1" GC.class_histogram 2>/dev/null | awk '/^Total/ {printf "%d\n", $3 / 1024}'
}

JAVA_OPTS="-Dzcnet.engine=$engine" start_qp_server "$port" "$work/server.log" -XX:NativeMemoryTracking=summary
sleep 2
native_kib() { "$jcmd" "$1" VM.native_memory summary 2>/dev/null | awk '/^-[ ]+Other/ {sub(/.*committed=/, ""); sub(/KB.*/, ""); print; exit}'; }
s_rss0="$(rss_kib "$server_jvm")"; s_heap0="$(heap_kib "$server_jvm")"; s_nat0="$(native_kib "$server_jvm")"

JAVA_OPTS="-Dzcnet.engine=$engine" start_qp_hold "$port" "$n" "$hold" "$work/load.log"
sleep 2
# Every heartbeat tick lends each queue pair's sender a space until its ACKNOWLEDGE has left: of three samples
# half a second apart (a tick is 500 ms at the default 2 s silence timeout), the lowest is the idle cost.
s_heap1=""; s_nat1=""
for _ in 1 2 3; do
  h="$(heap_kib "$server_jvm")"; m="$(native_kib "$server_jvm")"
  { [ -z "$s_heap1" ] || [ "$h" -lt "$s_heap1" ]; } && s_heap1="$h"
  { [ -z "$s_nat1" ] || [ "$m" -lt "$s_nat1" ]; } && s_nat1="$m"
  sleep 0.5
done
s_rss1="$(rss_kib "$server_jvm")"
c_rss1="$(rss_kib "$load_jvm")"; c_heap1="$(heap_kib "$load_jvm")"
wait "$load_pid" || true
cat "$work/load.log"
# A JVM that opened nothing, for the client's baseline: the same CLI, asked only for its version.
c_rss0="$(JAVA_OPTS="-Dzcnet.engine=$engine" "$root/zcnet" --version >/dev/null; echo 0)"
app=$(( (4096 * 8 + 4096 + 24 + 63) / 1024 ))
awk -v n="$n" -v sr0="$s_rss0" -v sr1="$s_rss1" -v sh0="$s_heap0" -v sh1="$s_heap1" -v cr1="$c_rss1" \
    -v ch1="$c_heap1" -v app="$app" -v sn0="${s_nat0:-0}" -v sn1="${s_nat1:-0}" 'BEGIN {
  s = (sr1 - sr0) / n; sh = (sh1 - sh0) / n; sn = (sn1 - sn0) / n
  printf "server: RSS %d -> %d KiB, live heap %d -> %d KiB, FFM native %d -> %d KiB (its own region and slots: ~%d KiB per queue pair)\n", sr0, sr1, sh0, sh1, sn0, sn1, app
  printf "client: RSS %d KiB, live heap %d KiB while held\n", cr1, ch1
  printf "qp-memory: qps=%d server_kib_per_qp: live heap %.1f + FFM native %.1f (of it the application %d) = %.1f; RSS %.1f\n", n, sh, sn, app, sh + sn, s
}'
