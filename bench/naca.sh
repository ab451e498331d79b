#!/usr/bin/env bash
# Allreduce through an aggregation node (network-assisted collectives, docs/wire-format.md section 20) against
# the hosts' own ring and Gloo's, on the star of bench/collectives.sh: four ranks (RANKS), each in a network
# namespace of its own, on a bridge in a switch namespace, every rank's link shaped to RATE both ways with tc tbf
# (bench/collectives-lib.sh: the topology, why B = RATE). The aggregator (./zcnet aggregator) runs in the switch
# namespace, on the bridge's own address (10.79.0.254), so its traffic to and from each rank crosses that rank's
# shaped link and nothing else: it stands where a switch's aggregation engine would.
# Measured, float32 sum, per size (MIN_SIZE doubling to max-size), each an entry of IMPLS:
#   ring        zcnet:ring, ./zcnet allreduce --ops allreduce:ring, the hosts alone
#   aggregator  zcnet+aggregator, ./zcnet allreduce --aggregator 10.79.0.254:7300: every chunk to the aggregator and back
#   gloo        gloo:ring_chunked, Gloo's reduce-scatter-then-allgather ring over its TCP transport (bench/collectives/gloo_bench.cc)
#   fallback    zcnet+fallback, ./zcnet allreduce --aggregator 10.79.0.254:7301, where nothing listens: the ranks
#               give it up at their first allreduce and run on the hosts (AUTO); its cost against zcnet:ring
# and of one size or none:
#   latency     the 8-byte allreduce (2 floats): zcnet on the hosts (AUTO, and the ring), through the aggregator,
#               with the unreachable aggregator (when fallback is in IMPLS too), then busy-polling as Open MPI's
#               ranks do (--busy-poll: on the hosts, and through a second aggregator that polls too), and Open
#               MPI's MPI_Allreduce (bench/collectives/mpi_bench.c under mpirun, as bench/collectives.sh runs
#               it); the ratios of the aggregated ones to the hosts' and to Open MPI's
#   shared      two jobs (1 and 2), each of RANKS ranks in the same namespaces, through the one aggregator at
#               max-size: each alone, then both at once; each job's busbw together over its busbw alone. They
#               share the links too, so a fair share is 0.5 of alone.
# busbw as nccl-tests defines it, algbw * 2(n-1)/n, so the hosts' bound is busbw <= B: a ring must send and receive
# 2(n-1)/n of the data at every rank. Through an aggregator each rank sends the data once and receives it once, so
# its bound is algbw <= B, busbw <= 2(n-1)/n B (1.5 B for four ranks): the figure that shows what the network's
# help is worth.
#   bench/naca.sh [rate-mbit] [max-size]   default 1000 Mbit/s and 64M (K, M, G: powers of 1024)
# Prints a table (busbw in Gbit/s and its ratio to B, per size and implementation) and writes a plot of busbw
# against size, bench/target/naca/busbw.svg (gnuplot; its data beside it, busbw.dat), then one line per
# implementation: its busbw at the largest size; then the latencies, the shared jobs and the fallback's ratio.
# Needs root, ip, tc, ping, g++, Gloo, Open MPI (for latency), gnuplot (installed when missing, as
# bench/collectives.sh does).
# Environment: MIN_SIZE (default 64K), BUDGET (seconds of timed operations per size, default 0.5), WARMUP
#   (default 0.2), MIN_ITERS (1), MAX_ITERS (1000), RANKS (default 4, 2 to 8), ZCNET_JIT_WARMUP (seconds of
#   untimed operations before zcnet's first size, default 20), IMPLS (default "ring aggregator gloo latency
#   fallback shared"), LAT_SECONDS (timed seconds of each latency figure, default 2), LAT_WARMUP (its warm-up,
#   default 20: four JVMs on two cores compile that long), SHARED_ITERS (operations each job times in shared,
#   default 5), KEEP_LOGS (a directory to copy every program's output into).
# A small run to see that it works: RANKS=4 MIN_SIZE=64K BUDGET=0.05 WARMUP=0.02 ZCNET_JIT_WARMUP=0 bench/naca.sh 200 1M
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=rx-lib.sh
source "$root/bench/rx-lib.sh"
# shellcheck source=collectives-lib.sh
source "$root/bench/collectives-lib.sh"

coll_arguments 64M 64K "$@"
impls="${IMPLS:-ring aggregator gloo latency fallback shared}"
jit_warmup="${ZCNET_JIT_WARMUP:-20}"
zcnet_port=7100
aggregator="$coll_hub:7300"
nobody="$coll_hub:7301" # where no aggregator listens: the fallback's
busy_aggregator="$coll_hub:7302" # the latency's busy-polling aggregator
out_dir="$root/bench/target/naca"
b_gbps="$(rx_divide "$rate" 1000 %.3f)"
common=(--min-bytes "$min_bytes" --max-bytes "$max_bytes" --budget "${BUDGET:-0.5}" --warmup "${WARMUP:-0.2}"
  --min-iters "${MIN_ITERS:-1}" --max-iters "${MAX_ITERS:-1000}")
# As bench/collectives.sh's latency runs: a warm-up long enough for four JVMs on two cores to compile the path
# (with 3 s, the 8-byte median was 559 us on the hosts; with 30 s, 169 us).
latency=(--min-bytes 8 --max-bytes 8 --budget "${LAT_SECONDS:-2}" --warmup "${LAT_WARMUP:-20}" --min-iters 100
  --max-iters 1000000)
shared_iters="${SHARED_ITERS:-5}"
# As bench/collectives.sh: generous for the sizes' warm-ups and batches, and the largest at a quarter of the rate.
run_limit="$(awk -v m="$max_bytes" -v r="$rate" -v j="$jit_warmup" 'BEGIN { printf "%.0f", 120 + 2 * j + 40 * 3 * m * 8 / (r * 1e6) }')"

coll_require_root
coll_require
require_package gnuplot gnuplot-nox
coll_build
on_exit() {
  if [ -n "${KEEP_LOGS:-}" ]; then mkdir -p "$KEEP_LOGS" && cp -r "$rx_work"/. "$KEEP_LOGS"/ || true; fi
  coll_cleanup # the aggregator and any rank left in the namespaces, then the namespaces
  rx_cleanup
}
trap on_exit EXIT
echo "bench: building zcnet ..." >&2
"$root/zcnet" build >"$rx_work/zcnet-build.log" 2>&1 || { cat "$rx_work/zcnet-build.log" >&2; die "zcnet build failed"; }
coll_setup "$rate"
results="$rx_work/results"
latencies="$rx_work/latencies"
shared="$rx_work/shared"
: >"$results"
: >"$latencies"
: >"$shared"

# zcnet_cmd K: rank K's ./zcnet allreduce (bench/collectives.sh's hook), with zcnet_args (sizes and timing too).
zcnet_args=()
zcnet_cmd() {
  local peers
  peers="$(IFS=,; echo "${coll_addr[*]}")"
  coll_cmd=(env ZCNET_NO_BUILD=1 "$root/zcnet" allreduce --rank "$1" --ranks "$coll_ranks" --peers "$peers"
    --port "$zcnet_port" "${zcnet_args[@]}")
}
# gloo_cmd K: rank K's gloo_bench.
gloo_cmd() {
  coll_cmd=("$coll_build_dir/gloo_bench" --rank "$1" --ranks "$coll_ranks" --addr "${coll_addr[$1]}"
    --store "$rx_work/gloo-store" --prefix naca --ops allreduce:ring_chunked "${common[@]}")
}
# collect IMPL NAME FN [FILE]: the ranks of FN, their RESULT lines into FILE (default $results) as implementation IMPL.
collect() {
  local status=0
  coll_spawn "$2" "$run_limit" "$3" || status=$?
  relabel "$1" <"$coll_out" >>"${4:-$results}"
  return "$status"
}
# relabel IMPL: the RESULT lines of the input, as implementation IMPL.
relabel() {
  sed -n 's/^RESULT //p' | sed "s/^impl=[^ ]* /impl=$1 /; s/ impl=[^ ]* / impl=$1 /"
}
# on_hosts_said NAME: shows what the ranks of run NAME said when allreduces ran on the hosts.
on_hosts_said() {
  if grep -q 'on the hosts' "$rx_work"/"$1".*.err; then
    echo "# $1: some allreduces ran on the hosts, the ranks said:"; grep -h 'on the hosts' "$rx_work"/"$1".*.err | head -n 4
  fi
}

# The aggregator, in the switch namespace, once (open to every job); ended by coll_cleanup with everything else there.
aggregator_started=0
start_aggregator() {
  [ "$aggregator_started" = 0 ] || return 0
  aggregator_started=1
  ip netns exec "$coll_switch" env ZCNET_NO_BUILD=1 "$root/zcnet" aggregator --listen "$aggregator" --report 0 \
    >"$rx_work/aggregator" 2>"$rx_work/aggregator.err" &
  rx_pids+=($!)
  await_listening "$rx_work/aggregator"
}
# await_listening FILE: waits until the aggregator whose output is FILE says it listens (FILE.err beside it).
await_listening() {
  local i
  for i in $(seq 1 100); do
    grep -q 'listening on' "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  cat "$1" "$1.err" >&2
  die "the aggregator did not start"
}

rx_header "bench/naca.sh: allreduce through an aggregator, the hosts' ring and Gloo's, $coll_ranks ranks in network namespaces, every link shaped to $rate Mbit/s both ways; sizes $min_bytes..$max_bytes bytes, float32 sum"
echo "# topology: bridge cb0 in $coll_switch, the aggregator there at $aggregator; rank k in ${coll_ns[0]%0}k at 10.79.0.(k+1)/24; $coll_shaping on both ends of every rank's link; B = $b_gbps Gbit/s"
echo "# load before: $(uptime)"
# run_latency: the 8-byte allreduce of zcnet on the hosts, through the aggregator, with the unreachable one (when
# fallback is in IMPLS), and Open MPI's, into $latencies.
run_latency() {
  local status=0
  start_aggregator
  zcnet_args=(--ops allreduce "${latency[@]}"); collect zcnet:hosts lat-hosts zcnet_cmd "$latencies" || status=1
  zcnet_args=(--ops allreduce:ring "${latency[@]}"); collect zcnet:ring lat-ring zcnet_cmd "$latencies" || status=1
  zcnet_args=(--ops allreduce --aggregator "$aggregator" --job 1 "${latency[@]}")
  collect zcnet+aggregator lat-aggregator zcnet_cmd "$latencies" || status=1
  on_hosts_said lat-aggregator
  if [[ " $impls " == *" fallback "* ]]; then
    zcnet_args=(--ops allreduce --aggregator "$nobody" --job 1 "${latency[@]}")
    collect zcnet+fallback lat-fallback zcnet_cmd "$latencies" || status=1
  fi
  # Busy-polling, as Open MPI's ranks here do: the ranks, and an aggregator of its own that polls too (stopped
  # after, since it takes a core while idle).
  zcnet_args=(--ops allreduce --busy-poll "${latency[@]}")
  collect zcnet:hosts+busy-poll lat-hosts-busy zcnet_cmd "$latencies" || status=1
  local busy_pid
  ip netns exec "$coll_switch" env ZCNET_NO_BUILD=1 "$root/zcnet" aggregator --busy-poll --listen "$busy_aggregator" \
    --report 0 >"$rx_work/aggregator-busy" 2>"$rx_work/aggregator-busy.err" &
  busy_pid=$!
  rx_pids+=("$busy_pid")
  await_listening "$rx_work/aggregator-busy"
  zcnet_args=(--ops allreduce --busy-poll --aggregator "$busy_aggregator" --job 1 "${latency[@]}")
  collect zcnet+aggregator+busy-poll lat-aggregator-busy zcnet_cmd "$latencies" || status=1
  on_hosts_said lat-aggregator-busy
  kill "$busy_pid" 2>/dev/null || true
  wait "$busy_pid" 2>/dev/null || true
  if coll_mpirun lat-mpi 300 "$coll_build_dir/mpi_bench" --ops allreduce "${latency[@]}"; then
    relabel mpi <"$coll_out" >>"$latencies"
  else
    status=1
  fi
  return "$status"
}

# run_shared: jobs 1 and 2 through the aggregator at max-size, each alone, then both at once (the second on
# ports of its own), SHARED_ITERS timed operations each, into $shared as alone:JOB and together:JOB.
run_shared() {
  local status=0 job pids=()
  start_aggregator
  shared_job() { # JOB MODE: job JOB's ranks, their store on port 7100 + 100 JOB
    zcnet_port=$((7100 + 100 * $1))
    zcnet_args=(--ops allreduce --aggregator "$aggregator" --job "$1" --jit-warmup "$jit_warmup"
      --min-bytes "$max_bytes" --max-bytes "$max_bytes" --budget 0.001 --warmup 0 --min-iters "$shared_iters"
      --max-iters "$shared_iters")
    collect "$2:$1" "shared-$2-$1" zcnet_cmd "$shared"
    on_hosts_said "shared-$2-$1"
  }
  for job in 1 2; do (shared_job "$job" alone) || status=1; done
  for job in 1 2; do (shared_job "$job" together) & pids+=($!); done
  for job in "${pids[@]}"; do wait "$job" || status=1; done
  zcnet_port=7100
  return "$status"
}

for impl in $impls; do
  start=$SECONDS
  case "$impl" in
    ring) zcnet_args=(--ops allreduce:ring --jit-warmup "$jit_warmup" "${common[@]}"); collect zcnet:ring zcnet-ring zcnet_cmd ;;
    aggregator)
      start_aggregator
      zcnet_args=(--ops allreduce --aggregator "$aggregator" --job 1 --jit-warmup "$jit_warmup" "${common[@]}")
      collect zcnet+aggregator zcnet-aggregator zcnet_cmd
      on_hosts_said zcnet-aggregator ;;
    fallback)
      zcnet_args=(--ops allreduce --aggregator "$nobody" --job 1 --jit-warmup "$jit_warmup" "${common[@]}")
      collect zcnet+fallback zcnet-fallback zcnet_cmd ;;
    gloo) mkdir -p "$rx_work/gloo-store"; collect gloo:ring_chunked gloo gloo_cmd ;;
    latency) run_latency ;;
    shared) run_shared ;;
    *) die "unknown implementation $impl (IMPLS takes ring, aggregator, gloo, fallback, latency, shared)" ;;
  esac || echo "# $impl: FAILED (see above); some of its figures are missing"
  echo "# $impl: $((SECONDS - start)) s (load $(cut -d ' ' -f 1 /proc/loadavg))"
done
echo "# load after: $(uptime)"

# The table, and the plot's data: a column per implementation, busbw in Gbit/s per size.
mkdir -p "$out_dir"
awk -v b="$b_gbps" -v dat="$out_dir/busbw.dat" '
  function field(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
  { col = field("impl"); size = field("bytes") + 0
    if (!(col in seen)) { seen[col] = 1; cols[++ncol] = col }
    if (!(size in sizes)) { sizes[size] = 1; list[++nsize] = size }
    v[col, size] = field("busbw_gbps"); ok[col, size] = field("check") == "ok" }
  function human(n) { return n >= 1073741824 ? n / 1073741824 "G" : n >= 1048576 ? n / 1048576 "M" : n >= 1024 ? n / 1024 "K" : n }
  END {
    for (i = 1; i <= nsize; i++) for (j = i + 1; j <= nsize; j++) if (list[j] < list[i]) { t = list[i]; list[i] = list[j]; list[j] = t }
    printf "\nallreduce busbw in Gbit/s (ratio to B = %s Gbit/s; hosts: busbw <= B; through an aggregator: <= 2(n-1)/n B)\n%-6s", b, "size"
    printf "# size" > dat
    for (c = 1; c <= ncol; c++) { printf "  %-22s", cols[c]; printf " \"%s\"", cols[c] > dat }
    printf "\n"; printf "\n" > dat
    for (i = 1; i <= nsize; i++) {
      printf "%-6s", human(list[i]); printf "%d", list[i] > dat
      for (c = 1; c <= ncol; c++) {
        have = (cols[c], list[i]) in v
        printf "  %-22s", have ? sprintf("%.3f (%.2f)%s", v[cols[c], list[i]], v[cols[c], list[i]] / b, ok[cols[c], list[i]] ? "" : "!") : "n/a"
        printf " %s", have ? v[cols[c], list[i]] : "NaN" > dat
      }
      printf "\n"; printf "\n" > dat
    }
  }' "$results"
ncols="$(awk 'NR == 1 { print NF - 2 }' "$out_dir/busbw.dat")"
if [ "${ncols:-0}" -ge 1 ]; then
  gnuplot <<PLOT
set terminal svg size 900,540 dynamic
set output "$out_dir/busbw.svg"
set title "allreduce, $coll_ranks ranks, links shaped to $rate Mbit/s (B = $b_gbps Gbit/s)"
set xlabel "size (bytes)"
set ylabel "busbw (Gbit/s, nccl-tests)"
set logscale x 2
# A range of its own, so that a run of one size (MIN_SIZE = max-size) still has an axis.
set xrange [$((min_bytes / 2)):$((max_bytes * 2))]
set key left top
set grid
plot for [c=2:$((ncols + 1))] "$out_dir/busbw.dat" using 1:c with linespoints title columnheader(c), \
  $b_gbps title "B" with lines dashtype 2
PLOT
  echo "# plot: $out_dir/busbw.svg (data: $out_dir/busbw.dat)"
fi
echo
awk -v b="$b_gbps" -v max="$max_bytes" '
  function field(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
  field("bytes") == max { printf "allreduce-%s busbw %.3f Gbit/s at %d bytes, %.2f of B = %s Gbit/s%s\n", field("impl"),
    field("busbw_gbps"), max, field("busbw_gbps") / b, b, field("check") == "ok" ? "" : " (check FAILED)" }' "$results"
awk -v max="$max_bytes" '
  function field(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
  field("bytes") == max { v[field("impl")] = field("busbw_gbps") }
  END { if (("zcnet+fallback" in v) && ("zcnet:ring" in v) && v["zcnet:ring"] > 0)
    printf "fallback (no aggregator listening) / zcnet:ring busbw at %d bytes: %.3f\n", max, v["zcnet+fallback"] / v["zcnet:ring"] }' "$results"

if [ -s "$latencies" ]; then
  echo
  echo "8-byte allreduce latency, microseconds (the slowest rank's mean / median / fastest), and the ratio of the medians:"
  awk '
    function field(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
    { impl = field("impl"); p50[impl] = field("p50_us"); order[++n] = impl
      printf "  %-20s %8.1f / %8.1f / %8.1f  (%s ops%s)\n", impl, field("avg_us"), field("p50_us"), field("min_us"),
        field("iters"), field("check") == "ok" ? "" : ", check FAILED" }
    function ratio(a, b) { if ((a in p50) && (b in p50) && p50[b] > 0) printf "  %s / %s: %.2f\n", a, b, p50[a] / p50[b] }
    END { ratio("zcnet+aggregator", "zcnet:hosts"); ratio("zcnet+aggregator", "zcnet:ring"); ratio("zcnet+aggregator", "mpi")
      ratio("zcnet+fallback", "zcnet:hosts"); ratio("zcnet:hosts", "mpi")
      ratio("zcnet+aggregator+busy-poll", "zcnet:hosts+busy-poll"); ratio("zcnet+aggregator+busy-poll", "mpi")
      ratio("zcnet:hosts+busy-poll", "mpi") }' "$latencies"
fi

if [ -s "$shared" ]; then
  echo
  echo "two jobs through one aggregator at $max_bytes bytes, $shared_iters operations each: busbw in Gbit/s, together / alone"
  awk '
    function field(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
    { split(field("impl"), p, ":"); v[p[1], p[2]] = field("busbw_gbps"); ok[p[1], p[2]] = field("check") == "ok" }
    END { for (j = 1; j <= 2; j++) if ((("alone", j) in v) && (("together", j) in v))
      printf "  job %d: alone %.3f, together %.3f: %.2f%s\n", j, v["alone", j], v["together", j], v["together", j] / v["alone", j],
        ok["alone", j] && ok["together", j] ? "" : " (check FAILED)" }' "$shared"
fi
