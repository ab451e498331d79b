#!/usr/bin/env bash
# What idle queue pairs cost in CPU: a qp-server and a qp-load in two JVMs on loopback, N queue pairs opened,
# driven for a second, then held open and idle; after a settling pause (SETTLE seconds: the queue pairs find
# themselves idle at their next heartbeat ticks), each JVM's user and system CPU time over MEASURE seconds is read
# from /proc/PID/stat. A JVM's own background threads (JIT, GC) cost a little with no queue pair at all, so the
# server's figure before any client came is printed beside it.
#   bench/qp-idle.sh [queue-pairs]   default 1000
# Environment: ENGINE (default uring), SETTLE (default 5), MEASURE (default 10).
# Last line: "qp-idle: qps=N measure_s=M server_cpu_s=S client_cpu_s=C server_alone_cpu_s=B".
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

n="${1:-1000}"
engine="${ENGINE:-uring}"
settle="${SETTLE:-5}"
measure="${MEASURE:-10}"
[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] || die "queue-pairs must be a positive number"
[[ "$settle" =~ ^[0-9]+$ ]] && [[ "$measure" =~ ^[0-9]+$ ]] && [ "$measure" -ge 1 ] \
  || die "SETTLE and MEASURE must be whole seconds (MEASURE >= 1)"
"$root/zcnet" build >&2
export ZCNET_NO_BUILD=1
port=$((20000 + RANDOM % 20000))
work="$(mktemp -d)"
trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
ticks="$(getconf CLK_TCK)"

# cpu_ticks PID: user + system time of the whole process so far, in clock ticks (proc(5): fields 14 and 15,
# counted after the command name, which may hold spaces).
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
# cpu_seconds PID... over MEASURE seconds, one figure per PID.
cpu_seconds() {
  local p before=()
  for p in "$@"; do before+=("$(cpu_ticks "$p")"); done
  sleep "$measure"
  local i=0
  for p in "$@"; do
    awk -v a="${before[$i]}" -v b="$(cpu_ticks "$p")" -v t="$ticks" 'BEGIN { printf "%.2f\n", (b - a) / t }'
    i=$((i + 1))
  done
}

JAVA_OPTS="-Dzcnet.engine=$engine" start_qp_server "$port" "$work/server.log"
sleep "$settle"
alone="$(cpu_seconds "$server_jvm")"

JAVA_OPTS="-Dzcnet.engine=$engine" start_qp_hold "$port" "$n" "$((settle + measure + 5))" "$work/load.log"
sleep "$settle"
read -r -d '' server client < <(cpu_seconds "$server_jvm" "$load_jvm"; printf '\0') || true
wait "$load_pid" || true
tail -n 2 "$work/load.log"
echo "qp-idle: qps=$n measure_s=$measure server_cpu_s=$server client_cpu_s=$client server_alone_cpu_s=$alone"
