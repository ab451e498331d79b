# Sourced by bench/messages.sh and bench/bulk.sh, after lib.sh: runs the programs of io.zcnet.jmh.rx
# (zcnet's and the Netty peers'), each of which runs both ends in one JVM, prints "MEASURING pid=N" as its
# measured interval starts and one "RESULT key=value ..." line as it ends (see MeasuredInterval).
# Defines: rx_work (scratch directory, removed on exit), rx_pids (killed on exit), rx_netty_flags,
# rx_header, rx_busy_ticks, rx_wait_quiet, rx_other_load, rx_run, rx_seconds, rx_field, rx_median_of, rx_format,
# rx_divide, free_port, rx_wait_listening. Every run is bounded by `timeout`.

rx_work="$(mktemp -d)"
rx_pids=()
rx_cleanup() {
  local p
  for p in "${rx_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${rx_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$rx_work"
}
trap rx_cleanup EXIT
trap 'exit 130' INT TERM

# The JVM flags the Netty peer gets, as EchoBenchmark forks it: Netty's Unsafe and direct-buffer fast
# paths on JDK 25, and no leak detector, as its users run it for speed. zcnet's programs need none.
rx_netty_flags=(--sun-misc-unsafe-memory-access=allow --add-opens=java.base/java.nio=ALL-UNNAMED
  -Dio.netty.tryReflectionSetAccessible=true -Dio.netty.leakDetection.level=disabled)

# perf counts system calls in the kernel at little cost; strace would slow the run it counts, so
# without perf the syscall figures are n/a.
if perf stat -e raw_syscalls:sys_enter -- true >/dev/null 2>&1; then rx_perf=1; else rx_perf=0; fi

# Prints the header lines: what is measured ($1), and on what, including how busy the machine already
# is, since other load on these few CPUs moves every figure.
rx_header() {
  local busy
  # /proc/stat's first line: cpu user nice system idle iowait irq softirq steal ... in ticks (proc(5)).
  busy="$({ head -n 1 /proc/stat; sleep 1; head -n 1 /proc/stat; } | awk '{
      idle = $5 + $6; all = 0
      for (i = 2; i <= 9; i++) all += $i
      if (NR == 1) { idle0 = idle; all0 = all } else printf "%.0f", (all > all0 ? 100 * (1 - (idle - idle0) / (all - all0)) : 0) }')"
  echo "# $1"
  echo "# on: Linux $(uname -r), $(nproc) CPUs, $("$JAVA_HOME/bin/java" -version 2>&1 | head -n 1) ($JAVA_HOME)"
  echo "# CPU busy in the second before the first run: ${busy}% of all CPUs$([ "$busy" -ge 10 ] && echo " (other load: expect noisy figures)")"
}

# Busy CPU ticks of the whole machine so far, all CPUs: /proc/stat's first line (cpu user nice system
# idle iowait irq softirq steal, proc(5)) without idle and iowait. Steal counts: the hypervisor ran
# someone else then.
rx_busy_ticks() {
  awk 'NR == 1 { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}
rx_clock_ticks="$(getconf CLK_TCK)"

# rx_wait_quiet SECONDS: on a machine shared with others, waits up to SECONDS (0: not at all) for a
# 3-second stretch in which under 15% of all CPUs were busy, so the next run starts on a quiet machine;
# says so on stderr when it gave up. Whatever others start during the run still shows as its other load.
rx_wait_quiet() {
  local waited=0 busy0 all0 busy1 all1
  while [ "$waited" -lt "$1" ]; do
    read -r busy0 all0 < <(awk 'NR == 1 { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat)
    sleep 3
    read -r busy1 all1 < <(awk 'NR == 1 { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat)
    [ $(((busy1 - busy0) * 100)) -lt $(((all1 - all0) * 15)) ] && return 0
    waited=$((waited + 3))
  done
  [ "$1" -le 0 ] || echo "bench: the machine was not quiet within $1 s; running anyway" >&2
}

# rx_other_load BUSY0 BUSY1 SECONDS CPU_SECONDS: the percent of all CPUs busy with something other than
# the measured run (which used CPU_SECONDS) over its SECONDS. Other sessions on a small shared machine
# move every figure; a run with more than a few percent is suspect.
rx_other_load() {
  awk -v b0="$1" -v b1="$2" -v s="$3" -v c="$4" -v hz="$rx_clock_ticks" -v n="$(nproc)" 'BEGIN {
    other = ((b1 - b0) / hz - c) / (s * n) * 100
    printf "%.0f%%", (other < 0 ? 0 : other) }'
}

# rx_run NAME SECONDS COMMAND...: runs COMMAND (bounded), attaching perf to the pid of its MEASURING line
# until its RESULT line when perf works. Sets rx_result (the RESULT line), rx_syscalls (system calls
# per delivered message over the measured interval, whole process, or n/a) and rx_other (rx_other_load
# of the interval). Fails, showing the program's last output, if it prints no RESULT.
rx_run() {
  local name="$1" seconds="$2"
  shift 2
  local out="$rx_work/$name.out" fifo="$rx_work/$name.fifo" perf_out="$rx_work/$name.perf"
  local runner perf_pid="" line status=0 busy_start=0 busy_end=0
  rm -f "$fifo" "$perf_out"
  mkfifo "$fifo"
  # Start-up, the program's warm-up and its teardown fit well inside 60 s.
  timeout -k 5 "$((seconds + 60))" "$@" >"$fifo" 2>"$out.err" &
  runner=$!
  rx_pids+=("$runner")
  rx_result=""
  while IFS= read -r line; do
    echo "$line" >>"$out"
    case "$line" in
      "MEASURING pid="*)
        busy_start="$(rx_busy_ticks)"
        if [ "$rx_perf" = 1 ]; then
          perf stat --no-big-num -e raw_syscalls:sys_enter -p "${line#MEASURING pid=}" -o "$perf_out" </dev/null &
          perf_pid=$!
          rx_pids+=("$perf_pid")
        fi ;;
      "RESULT "*)
        busy_end="$(rx_busy_ticks)"
        rx_result="$line"
        if [ -n "$perf_pid" ]; then kill -INT "$perf_pid" 2>/dev/null || true; wait "$perf_pid" || true; fi ;;
    esac
  done <"$fifo"
  wait "$runner" || status=$?
  if [ -z "$rx_result" ]; then
    echo "bench: $name printed no RESULT (exit status $status); its last output:" >&2
    tail -n 15 "$out" "$out.err" >&2 2>/dev/null || true
    return 1
  fi
  rx_other="$(rx_other_load "$busy_start" "$busy_end" "$(rx_field "$rx_result" seconds)" \
    "$(rx_field "$rx_result" cpu_seconds)")"
  rx_syscalls="n/a"
  if [ -s "$perf_out" ]; then
    # perf's own elapsed time, not the program's: it attached a little after MEASURING, so the count is
    # turned into a rate over perf's interval and divided by the program's message rate.
    rx_syscalls="$(awk -v rate="$(rx_field "$rx_result" msg_per_s)" '
        $2 == "raw_syscalls:sys_enter" && $1 ~ /^[0-9]+$/ { count = $1 }
        /seconds time elapsed/ { elapsed = $1 }
        END { if (count != "" && elapsed > 0 && rate > 0) printf "%.4f", count / elapsed / rate; else printf "n/a" }' "$perf_out")"
  fi
}

# rx_seconds VALUE: VALUE, the seconds a script measures each run for, once checked to be 1..600; stops the
# script otherwise (called as seconds="$(rx_seconds "${1:-DEFAULT}")" under set -e).
rx_seconds() {
  [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge 1 ] && [ "$1" -le 600 ] || die "seconds must be 1..600, not '$1'"
  echo "$1"
}

# rx_field LINE KEY: the value of KEY in a RESULT line.
rx_field() {
  local value
  value="$(sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1")"
  [ -n "$value" ] || { echo "bench: no $2= in: $1" >&2; return 1; }
  echo "$value"
}

# rx_median_of IMPL FIGURES: the median of the figures that the associative array named FIGURES holds,
# space-separated, for IMPL, ignoring n/a; n/a if there are none (IMPL did not run).
rx_median_of() {
  local -n figures="$2"
  # shellcheck disable=SC2086 # the figures are space-separated numbers
  printf '%s\n' ${figures[$1]:-} | { grep -E '^[0-9.eE+-]+$' || true; } | sort -g | awk '{ v[NR] = $1 }
    END { if (NR == 0) print "n/a"; else printf "%.15g\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# rx_format VALUE FORMAT: VALUE in the printf FORMAT, or n/a if it is n/a.
rx_format() {
  awk -v v="$1" -v f="$2" 'BEGIN { if (v == "n/a") print "n/a"; else printf f "\n", v }'
}

# rx_divide A B [FORMAT]: A / B formatted (default %.2f), or n/a if either is n/a or B is 0.
rx_divide() {
  awk -v a="$1" -v b="$2" -v f="${3:-%.2f}" 'BEGIN {
    if (a == "n/a" || b == "n/a" || b + 0 == 0) print "n/a"; else printf f "\n", a / b }'
}

# rx_require_iperf3: installs iperf3 (Debian package) when missing and root, else stops with what to do.
rx_require_iperf3() {
  require_package iperf3 iperf3
}

# free_port: a TCP port that nothing holds on any address, so a server may bind it on 127.0.0.1 or on all
# addresses (ucx_perftest's server does, without SO_REUSEADDR): a port free on 127.0.0.1 alone may still be
# held on another address, or by a closed connection in TIME_WAIT, and fail that bind.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("0.0.0.0", 0)); print(s.getsockname()[1])'
}

# rx_wait_listening PORT: waits up to 10 s for a TCP listener on PORT; fails if none came.
rx_wait_listening() {
  for _ in $(seq 1 100); do
    ss -Hltn "sport = :$1" | grep -q . && return 0
    sleep 0.1
  done
  return 1
}

# iperf3_run NAME STREAMS: one iperf3 -P STREAMS test of $seconds against a one-off server; sets rx_result to a
# RESULT line with the keys read below (bytes, seconds, gbit_per_s, cpu_seconds), and rx_other.
iperf3_run() {
  local port server json="$rx_work/$1.json" busy_start busy_end streams="${2:-1}"
  port="$(free_port)"
  timeout -k 5 "$((seconds + 30))" iperf3 -s -1 -B 127.0.0.1 -p "$port" >"$rx_work/$1.server" 2>&1 &
  server=$!
  rx_pids+=("$server")
  rx_wait_listening "$port" || true # iperf3's client then fails and says why
  busy_start="$(rx_busy_ticks)"
  timeout -k 5 "$((seconds + 30))" iperf3 -c 127.0.0.1 -p "$port" -P "$streams" -t "$seconds" -J >"$json" || true
  busy_end="$(rx_busy_ticks)"
  wait "$server" || true
  # What iperf3 3.12's source says of cpu_utilization_percent (src/iperf_util.c cpu_util, and where
  # iperf_client_api.c / iperf_server_api.c call it; the man page does not define it): each end takes
  # clock() (its process's user + system CPU time) and the wall time when the test starts and again
  # when it ends, and reports 100 * CPU time / wall time, i.e. percent of one CPU over the test;
  # remote_total is the server's figure sent to the client. So CPU seconds of both ends =
  # (host_total + remote_total) / 100 * duration; checked against the shell's `time` of both processes
  # (3 s test: 2.95 and 2.11 CPU s from the JSON, 2.96 and 2.12 from `time`). The test starts at the
  # connection, with no warm-up to leave out: iperf3 is C, and loopback's slow start lasts milliseconds.
  rx_result="$(python3 - "$json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
if "error" in report:
    sys.exit("iperf3: " + report["error"])
received = report["end"]["sum_received"]
cpu = report["end"]["cpu_utilization_percent"]
cpu_seconds = (cpu["host_total"] + cpu["remote_total"]) / 100 * received["seconds"]
print("RESULT impl=iperf3 bytes=%d seconds=%.3f gbit_per_s=%.3f cpu_seconds=%.2f"
      % (received["bytes"], received["seconds"], received["bits_per_second"] / 1e9, cpu_seconds))
PY
)"
  rx_other="$(rx_other_load "$busy_start" "$busy_end" "$(rx_field "$rx_result" seconds)" \
    "$(rx_field "$rx_result" cpu_seconds)")"
}
