#!/usr/bin/env bash
# System calls per echoed message of './zcnet echo-server' under a pipelined echo-client load, per engine,
# counted by the kernel (perf's raw_syscalls tracepoint, or strace -c -f where perf cannot).
#   bench/syscalls.sh [seconds] [window]       defaults: 5 s, 64 messages of 64 B in flight
# The count covers the whole server JVM (GC, JIT and other threads too) and, with perf, the server's
# loop thread alone; the client's own count is its LoopCounters figure (sys/msg column). Loopback only.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-5}"
window="${2:-64}"
port=17788
work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

if perf stat -e raw_syscalls:sys_enter -- true >/dev/null 2>&1; then tool=perf
elif command -v strace >/dev/null 2>&1; then tool=strace
else echo "need perf (with tracepoints) or strace" >&2; exit 1; fi

wait_port() {
  for _ in $(seq 1 300); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing listens on port $1" >&2; return 1
}

"$root/zcnet" build >/dev/null
export ZCNET_NO_BUILD=1 # one build for the whole run, even if sources change meanwhile
printf '%-6s %-7s %12s %14s %16s %16s %16s\n' engine counter messages "server sys" "server sys/msg" "loop-thread/msg" "client sys/msg"
for engine in uring nio; do
  "$root/zcnet" echo-server --engine "$engine" --port "$port" >"$work/server.log" 2>&1 &
  server=$!   # ./zcnet execs java: this is the server JVM itself
  pids+=("$server")
  wait_port "$port"
  if [ "$tool" = perf ]; then
    perf stat -e raw_syscalls:sys_enter --per-thread -p "$server" -x, -o "$work/count.txt" &
  else
    strace -c -f -p "$server" -o "$work/count.txt" 2>/dev/null &
  fi
  counter=$!
  pids+=("$counter")
  sleep 0.5
  "$root/zcnet" echo-client --engine "$engine" --port "$port" --mode pipelined --window "$window" --size 64 \
      --seconds "$seconds" --warmup 0 >"$work/client.log" 2>&1 || true
  kill -INT "$counter" 2>/dev/null || true
  wait "$counter" 2>/dev/null || true
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  row="$(tail -n 1 "$work/client.log")"
  read -r _ _ _ _ rate _ _ _ _ _ client_per_msg _ <<<"$row" || true
  messages="$(awk -v r="${rate:-0}" -v s="$seconds" 'BEGIN { printf "%.0f", r * s }')"
  if [ "$tool" = perf ]; then
    # -x, lines: thread-tid,count,unit,event,...; the loop thread's name starts with zcnet-echo-serv
    total="$(awk -F, '/raw_syscalls/ {s += $2} END {print s + 0}' "$work/count.txt")"
    loop="$(awk -F, '/raw_syscalls/ && $1 ~ /^zcnet-echo-ser/ {s += $2} END {print s + 0}' "$work/count.txt")"
  else
    total="$(awk '$NF == "total" {print $(NF - 2)}' "$work/count.txt")"
    loop="-"
  fi
  per() { awk -v a="$1" -v m="$messages" 'BEGIN { if (m > 0 && a != "-") printf "%.4f", a / m; else printf "-" }'; }
  printf '%-6s %-7s %12s %14s %16s %16s %16s\n' "$engine" "$tool" "$messages" "${total:-?}" "$(per "${total:-0}")" \
    "$(per "$loop")" "${client_per_msg:-?}"
done
echo "messages = the client's echoed msgs/s x ${seconds} s; the server also saw the few in flight at the edges."
