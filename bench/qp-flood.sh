#!/usr/bin/env bash
# A queue-pair server meeting strangers: qp-server on loopback, a legitimate qp-load of 100 queue pairs running
# through a flood (qp-flood: OPENs that complete and hang up at once, and half-open connections, all from
# 127.0.0.2) and another after it; the server's RSS is sampled throughout.
#   bench/qp-flood.sh [opens] [half-open]   defaults 5000 and 2000
# Environment: ENGINE (default uring), LEGIT (queue pairs of each legitimate load, default 100), SERVER_OPTS (JVM
# options of the server alone, e.g. "-Xmx256m": a server's heap bounded as an operator would bound it).
# KEY (default 0; 1: a server with a pre-shared key, the flood without), FLOODS (default 1: floods one after
# another, the legitimate load running through all of them).
# Last line: "qp-flood: server_up=yes|no rss_growth_mib=G flood_growth_mib=F last_flood_growth_mib=L floods=N
# legit_during=ok|FAILED legit_after=ok|FAILED": G from the idle server (a fresh JVM's warming up included), F from
# the moment the first flood starts, the legitimate load running and warm, L from the start of the last flood (with
# FLOODS=2 or more: what one more flood costs a server that has met strangers before), each to the highest RSS
# sampled since.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

opens="${1:-5000}"
half="${2:-2000}"
engine="${ENGINE:-uring}"
legit="${LEGIT:-100}"
floods="${FLOODS:-1}"
# KEY=1: the server and the legitimate loads share a pre-shared key (ZCNET_QP_KEY); the flood has none, so each of
# its OPENs is refused in the handshake instead of becoming a queue pair.
if [ "${KEY:-0}" = 1 ]; then
  export ZCNET_QP_KEY="bench-qp-flood-$RANDOM-$RANDOM-key"
fi
[[ "$floods" =~ ^[1-9][0-9]?$ ]] || die "FLOODS must be 1..99"
"$root/zcnet" build >&2
export ZCNET_NO_BUILD=1 JAVA_OPTS="-Dzcnet.engine=$engine"
port=$((20000 + RANDOM % 20000))
work="$(mktemp -d)"
trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$work"' EXIT

start_qp_server "$port" "$work/server.log" ${SERVER_OPTS:-}
sleep 2
rss0="$(awk '/^VmRSS/ {print $2}' "/proc/$server_jvm/status")"
(while kill -0 "$server_jvm" 2>/dev/null; do awk '/^VmRSS/ {print $2}' "/proc/$server_jvm/status"; sleep 0.5; done) \
  >"$work/rss" 2>/dev/null &
sampler=$!

"$root/zcnet" qp-load --connect "127.0.0.1:$port" --qps "$legit" --seconds "$((8 + 30 * floods))" >"$work/during.log" 2>&1 &
during=$!
# The flood starts once the legitimate load is warm (its queue pairs established, the JIT done with their
# path), so that the growth it causes is told apart from a fresh server's own warming up.
sleep 8
rss_flood="$(awk '/^VmRSS/ {print $2}' "/proc/$server_jvm/status")"
for ((round = 1; round <= floods; round++)); do
  rss_last="$(awk '/^VmRSS/ {print $2}' "/proc/$server_jvm/status")"
  : >"$work/rss.last"
  (tail -f -n 0 "$work/rss" >"$work/rss.last" 2>/dev/null) &
  follower=$!
  env -u ZCNET_QP_KEY "$root/zcnet" qp-flood --connect "127.0.0.1:$port" --opens "$opens" --half-open "$half" \
    --source 127.0.0.2 --hold 10 | tee "$work/flood.log"
  kill "$follower" 2>/dev/null || true
done
wait "$during" || true
"$root/zcnet" qp-load --connect "127.0.0.1:$port" --qps "$legit" --seconds 5 >"$work/after.log" 2>&1 || true
up=no; kill -0 "$server_jvm" 2>/dev/null && up=yes
kill "$sampler" 2>/dev/null || true
tail -n 3 "$work/server.log"
echo "during: $(tail -n 1 "$work/during.log")"
echo "after:  $(tail -n 1 "$work/after.log")"
max="$(sort -n "$work/rss" | tail -n 1)"
max_last="$(sort -n "$work/rss.last" | tail -n 1)"
verdict() { grep -q "verify=ok" "$1" && grep -q "failed=0" "$1" && echo ok || echo FAILED; }
awk -v up="$up" -v r0="$rss0" -v rf="$rss_flood" -v r1="${max:-$rss0}" -v rl="$rss_last" -v r2="${max_last:-$rss_last}" \
  -v d="$(verdict "$work/during.log")" -v a="$(verdict "$work/after.log")" -v n="$floods" \
  'BEGIN { printf "qp-flood: server_up=%s rss_growth_mib=%.1f flood_growth_mib=%.1f last_flood_growth_mib=%.1f floods=%d legit_during=%s legit_after=%s\n",
    up, (r1 - r0) / 1024, (r1 - rf) / 1024, (r2 > rl ? r2 - rl : 0) / 1024, n, d, a }'
