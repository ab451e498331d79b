#!/usr/bin/env bash
# Round-trip latency against message size, 8 B to 1 MiB, on loopback, one round trip outstanding, the server
# and the client of each peer on 127.0.0.1, in one run:
#   - zcnet, one queue pair on io_uring, both loop threads busy-polling (io.zcnet.jmh.rx.QueuePairLatency
#     --busy-poll true): SEND ping-pong, WRITE_WITH_IMM ping-pong, RDMA READ;
#   - UCX over TCP (ucx_perftest, Debian's ucx-utils, UCX_TLS=tcp UCX_NET_DEVICES=lo on both ends, polling as
#     is its default): ucp_am_lat (active-message ping-pong: the SEND), ucp_put_lat (put ping-pong, each side
#     polling the last bytes of its buffer for the peer's put: a WRITE, with no immediate), ucp_get (one get
#     outstanding: the READ);
#   - sockperf ping-pong, TCP, --nonblocked (both ends spinning on recvfrom), --full-rtt, at the sizes
#     sockperf takes (3.7: 14..1048575 B; a size it refuses is a row of n/a saying so).
#   bench/qp-latency-sweep.sh [seconds]   default 2 s measured per run
# Environment: SIZES (default "8 64 512 4096 65536 1048576": bytes, each 1..1048576); BLOCKING=1 also runs
# zcnet and sockperf with sleeping loops and blocking sockets; QUIET_WAIT as in bench/qp-latency.sh.
# Each zcnet run warms up for MeasuredInterval's 6 s first, sockperf for 1 s untimed, ucx_perftest for its
# own -w iterations (it stops them at 100 ms).
# Output, in microseconds of a whole round trip: bench/target/qp-latency-sweep.tsv (size_bytes, system, op,
# p50_us, p99_us, note), printed at the end, and bench/target/qp-latency-sweep.png, drawn by gnuplot: p50 and
# p99 against size, log-log, one line per system and operation (bench/target/qp-latency-sweep.gp redraws it).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=rx-lib.sh
source "$root/bench/rx-lib.sh"
# shellcheck source=sockperf-lib.sh
source "$root/bench/sockperf-lib.sh"

seconds="$(rx_seconds "${1:-2}")"
sizes="${SIZES:-8 64 512 4096 65536 1048576}"
max_size=1048576 # QueuePairLatency.MAX_SIZE
rx_perf=0 # latency only: no system-call count attached to the runs
[ -n "${sizes// /}" ] || die "SIZES is empty: give sizes in bytes, e.g. SIZES=\"8 64 4096\""
for size in $sizes; do
  [[ "$size" =~ ^[0-9]+$ ]] && [ "${#size}" -le 7 ] && [ "$size" -ge 1 ] && [ "$size" -le "$max_size" ] \
    || die "SIZES wants whole numbers of bytes from 1 to $max_size (1 MiB), e.g. SIZES=\"8 64 4096\"; not '$size'"
done
out="$root/bench/target"
tsv="$out/qp-latency-sweep.tsv"
java_run=("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$bench_jar")
sockperf_require
require_package ucx_perftest ucx-utils
require_package gnuplot gnuplot-nox
build_benchmarks >&2
mkdir -p "$out"
rx_header "bench/qp-latency-sweep.sh: round trips on 127.0.0.1 against size, one outstanding; ${seconds} s measured per run; sockperf $(sockperf_version), $(ucx_info -v | awk 'NR == 1 { print "UCX", $3 }')"
echo "# load average (1, 5, 15 min) before: $(cut -d ' ' -f 1-3 /proc/loadavg)"

# What ucx_perftest 1.13's figures are, read in its source (src/tools/perf/lib/libperf.c, ucx_perf_calc_result
# and ucx_perf_update; ucp_tests.cc) and checked against `ucx_perftest -h` and real runs:
#   - each iteration's time is the time between two of the client's successive iterations; for ucp_get (a
#     one-sided "stream" test with a window of one) an iteration posts a get once the last one completed,
#     so it is a whole round trip; for the ping-pong tests (*_lat) it is one ping and its pong, and every
#     latency column is divided by 2: half a round trip. ucx_factor gives what turns a column into a whole
#     round trip;
#   - the percentile column (-R RANK, one rank a run) is taken over the last 2048 iterations only (its timing
#     queue), however many ran, so p50 and p99 come from two runs and a longer run does not sharpen them;
#   - -f -v prints a CSV header and one final line: iterations, RANK_percentile_lat, avg_lat (since the last
#     report: inf when none came between), overall_lat (the mean over the run), then bandwidth and rate;
#   - ucp_get over TCP has no hardware to answer it: the server's worker must progress for each get. But the
#     server's side of the test (run_stream_uni, index 0) counts its iterations without waiting for the gets,
#     one progress call each, then sits in the end-of-test barrier, which polls its control socket 1 ms at a
#     time and progresses the worker once per poll (perftest.c sock_io; strace of a 2048-get run: 311 1-ms
#     poll timeouts). So nearly every get waits up to a millisecond: its READ row is the tool's, not UCX's.
ucx_factor() {
  case "$1" in *_lat) echo 2 ;; *) echo 1 ;; esac
}

# ucx_run NAME TEST SIZE ITERATIONS RANK: one ucx_perftest client TEST against a one-off server, over TCP on lo;
# sets ucx_percentile (its RANK percentile) and ucx_mean (its overall mean), each in microseconds of a whole
# round trip. Stops the script, showing ucx_perftest's output, when its CSV is not the one described above.
ucx_run() {
  local name="$1" test="$2" size="$3" iterations="$4" rank="$5" port server log="$rx_work/$1.log" figures
  port="$(free_port)"
  UCX_TLS=tcp UCX_NET_DEVICES=lo timeout -k 5 "$((seconds * 3 + 60))" ucx_perftest -p "$port" >"$log.server" 2>&1 &
  server=$!
  rx_pids+=("$server")
  rx_wait_listening "$port" || { cat "$log.server" >&2; die "ucx_perftest's server did not listen on $port"; }
  UCX_TLS=tcp UCX_NET_DEVICES=lo timeout -k 5 "$((seconds * 3 + 60))" ucx_perftest 127.0.0.1 -p "$port" \
    -t "$test" -s "$size" -n "$iterations" -w 1000 -R "$rank" -f -v >"$log" 2>&1 || true
  wait "$server" 2>/dev/null || true
  figures="$(awk -F, -v want="$(printf '%.1f_percentile_lat' "$rank")" -v f="$(ucx_factor "$test")" '
    NR == 1 && $1 == "iterations" && $2 == want && $4 == "overall_lat" { header = 1; next }
    header && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9.]+$/ && $4 ~ /^[0-9.]+$/ { printf "%.2f %.2f\n", $2 * f, $4 * f; found = 1; exit }
    END { exit !found }' "$log")" \
    || { cat "$log" "$log.server" >&2; die "ucx_perftest $test printed no CSV of the form iterations,${rank}_percentile_lat,avg_lat,overall_lat,..."; }
  read -r ucx_percentile ucx_mean <<<"$figures"
}

# ucx_latency TEST SIZE: sets ucx_p50 and ucx_p99, in microseconds of a whole round trip, each from a run of
# about $seconds (ucx_iterations, at least the 2048 its percentile is taken over), sized by a 1000-iteration
# probe run first, and ucx_note: the runs' means, which tell when one of the two runs was disturbed (on a
# loaded machine its p50 can even come out above the other's p99).
ucx_latency() {
  local test="$1" size="$2"
  ucx_run "ucx-$test-$size-probe" "$test" "$size" 1000 50
  ucx_iterations="$(awk -v s="$seconds" -v m="$ucx_mean" 'BEGIN { n = int(s * 1e6 / m); print (n < 2048 ? 2048 : n) }')"
  ucx_run "ucx-$test-$size-p50" "$test" "$size" "$ucx_iterations" 50
  ucx_p50="$ucx_percentile"
  ucx_note="$test, p50 and p99 from two runs of $ucx_iterations round trips (the last 2048 of each), means $ucx_mean"
  ucx_run "ucx-$test-$size-p99" "$test" "$size" "$ucx_iterations" 99
  ucx_p99="$ucx_percentile"
  ucx_note+=" and $ucx_mean us"
}

# sockperf_size_refused SIZE: sockperf's own words when it refuses messages of SIZE bytes, else nothing. It checks
# -m before it connects, so it is asked with a port nothing listens on.
sockperf_size_refused() {
  sockperf ping-pong --tcp -i 127.0.0.1 -p 1 -t 1 -m "$1" 2>&1 | grep -o "Invalid message size.*" || true
}

# row SIZE SYSTEM OP P50 P99 NOTE: one line of the table, also printed as it is measured.
row() {
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$tsv"
  printf '%8s B  %-18s %-15s p50 %9s  p99 %9s us  %s\n' "$@"
}

printf 'size_bytes\tsystem\top\tp50_us\tp99_us\tnote\n' >"$tsv"
zcnet_modes=(true)
sockperf_modes=(--nonblocked)
if [ "${BLOCKING:-0}" = 1 ]; then
  zcnet_modes+=(false)
  sockperf_modes+=(blocking)
fi
for size in $sizes; do
  for busy in "${zcnet_modes[@]}"; do
    system=zcnet-uring
    [ "$busy" = false ] || system+=-busy
    for op in send write-imm read; do
      rx_wait_quiet "${QUIET_WAIT:-0}"
      rx_run "$system-$op-$size" "$seconds" "${java_run[@]}" io.zcnet.jmh.rx.QueuePairLatency --op "$op" \
        --engine uring --seconds "$seconds" --size "$size" --busy-poll "$busy"
      case "$op" in send) name=SEND ;; write-imm) name=WRITE_WITH_IMM ;; read) name=READ ;; esac
      row "$size" "$system" "$name" "$(rx_field "$rx_result" p50_us)" "$(rx_field "$rx_result" p99_us)" \
        "other load $rx_other"
    done
  done
  for test in ucp_am_lat:SEND ucp_put_lat:WRITE ucp_get:READ; do
    rx_wait_quiet "${QUIET_WAIT:-0}"
    ucx_latency "${test%%:*}" "$size"
    [ "${test%%:*}" != ucp_get ] || ucx_note+="; its server progresses once per ms (see above)"
    row "$size" ucx-tcp "${test#*:}" "$ucx_p50" "$ucx_p99" "$ucx_note"
  done
  for mode in "${sockperf_modes[@]}"; do
    system=sockperf
    [ "$mode" = blocking ] || system+=-busy
    refused="$(sockperf_size_refused "$size")"
    if [ -n "$refused" ]; then
      row "$size" "$system" ping-pong n/a n/a "sockperf: $refused"
      continue
    fi
    rx_wait_quiet "${QUIET_WAIT:-0}"
    flags=()
    [ "$mode" = blocking ] || flags=("$mode")
    sockperf_msg_size="$size" sockperf_ping_pong "$system-$size" "${flags[@]}"
    note="other load $rx_other"
    [ "$(rx_field "$rx_result" p50_us)" != n/a ] || note="sockperf gave no figure: $(grep -m 1 -o 'ERROR.*' "$rx_work/$system-$size.log" || echo "see its log")"
    row "$size" "$system" ping-pong "$(rx_field "$rx_result" p50_us)" "$(rx_field "$rx_result" p99_us)" "$note"
  done
done
echo "# load average (1, 5, 15 min) after: $(cut -d ' ' -f 1-3 /proc/loadavg)"

# The picture: one data block per system and operation, sorted by size, so each is one line in both panels;
# a system keeps its dash pattern (zcnet solid, UCX dashed, sockperf dotted), an operation its colour.
human_size() {
  awk -v b="$1" 'BEGIN { if (b >= 1048576 && b % 1048576 == 0) printf "%d MiB", b / 1048576;
    else if (b >= 1024 && b % 1024 == 0) printf "%d KiB", b / 1024; else printf "%d B", b }'
}
gp="$out/qp-latency-sweep.gp"
png="$out/qp-latency-sweep.png"
xtics=""
for size in $sizes; do xtics+="${xtics:+, }\"$(human_size "$size")\" $size"; done
mapfile -t series < <(awk -F'\t' 'NR > 1 && !seen[$2 " " $3]++ { print $2 " " $3 }' "$tsv")
{
  echo "# Drawn by bench/qp-latency-sweep.sh from $tsv: gnuplot $gp"
  for i in "${!series[@]}"; do
    echo "\$s$i << EOD"
    awk -F'\t' -v s="${series[$i]}" 'NR > 1 && $2 " " $3 == s && $4 != "n/a" { print $1, $4, $5 }' "$tsv" | sort -n
    echo "EOD"
  done
  cat <<EOF
set terminal pngcairo size 1400,600 noenhanced font ",10"
set output "$png"
set multiplot layout 1,2 title "Round trips on loopback, one outstanding ($(date '+%Y-%m-%d %H:%M'), $(nproc) CPUs, ${seconds} s a run)"
set logscale xy
set xtics ($xtics)
set xrange [$(awk -v s="$sizes" 'BEGIN { n = split(s, v, " "); lo = hi = v[1]; for (i = 2; i <= n; i++) { if (v[i] < lo) lo = v[i]; if (v[i] > hi) hi = v[i] }; print lo / 2 ":" hi * 2 }')]
set xlabel "message size"
set ylabel "round trip, microseconds"
set grid
set key below
EOF
  for column in 2:p50 3:p99; do
    echo "set title \"${column#*:}\""
    plot=""
    for i in "${!series[@]}"; do
      case "${series[$i]}" in zcnet*) dash=1 ;; ucx*) dash=2 ;; *) dash=3 ;; esac
      case "${series[$i]}" in *SEND | *ping-pong) colour=1 ;; *WRITE*) colour=2 ;; *) colour=3 ;; esac
      case "${series[$i]}" in *-busy* | ucx*) point=7 ;; *) point=6 ;; esac
      plot+="${plot:+, }\$s$i using 1:${column%%:*} with linespoints linetype $colour dashtype $dash pointtype $point"
      plot+=" linewidth 2 title \"${series[$i]}\""
    done
    echo "plot $plot"
  done
  echo "unset multiplot"
} >"$gp"
gnuplot "$gp"

echo
echo "round trips, microseconds (whole round trip for every system), $tsv:"
awk -F'\t' '{ printf "%-10s %-18s %-15s %9s %9s  %s\n", $1, $2, $3, $4, $5, $6 }' "$tsv"
echo "plot: $png"
