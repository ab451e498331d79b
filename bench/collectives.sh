#!/usr/bin/env bash
# Collectives over a shaped network: four ranks (RANKS), each in a network namespace of its own, joined by a bridge
# with every rank's link shaped to RATE in both directions (bench/collectives-lib.sh: the topology and why
# B = RATE). Measured, in the same run and on the same topology:
#   gloo  Gloo's own TCP transport (Debian's libgloo-dev): allreduce with its ring, ring_chunked and
#         halving_doubling algorithms, allgather (ring), reduce-scatter (halving_doubling, its only one);
#         bench/collectives/gloo_bench.cc, one process per rank, rendezvous in a FileStore directory.
#   mpi   Open MPI's MPI_Allreduce, MPI_Allgather, MPI_Reduce_scatter_block over its TCP transport
#         (Debian's openmpi-bin and libopenmpi-dev), algorithm as Open MPI picks it;
#         bench/collectives/mpi_bench.c, started by mpirun through bench/collectives/netns-agent.sh.
#   zcnet ./zcnet allreduce, when ZCNET=1 (the hook below); its 8-byte latency twice: as it runs by default
#         (threads sleep while they wait) and with --busy-poll (zcnet+busy-poll: threads poll and yield, as
#         Open MPI's ranks here do).
#   bench/collectives.sh [rate-mbit] [max-size]   default 1000 Mbit/s and 256M (K, M, G: powers of 1024);
#                                                 about 7 minutes at the defaults on a quiet machine,
#                                                 under 10 with other load on the cores
# Prints one table per operation (allreduce, allgather, reduce_scatter): per size (1K doubling to max-size),
# each implementation's bus bandwidth and its ratio to the bound B, then the 8-byte allreduce latency of
# each (mean, median, fastest: on a machine with fewer cores than ranks the median is the one to read), then
# the last lines: per implementation its busbw at the largest size and its ratio to B.
# Figures: busbw in Gbit/s (10^9 bits) as nccl-tests defines it, from the mean time per operation of the
# slowest rank (see gloo_bench.cc's header): allreduce algbw * 2(n-1)/n, allgather and reduce-scatter
# algbw * (n-1)/n, algbw = size / mean time; every bound is then busbw <= B (bench/collectives-lib.sh).
# tbf counts Ethernet, IP and TCP headers: TCP payload tops out at 1448/1514 = 0.956 of B. Below a few
# MiB, tbf's burst (4 ms of the rate) lets a rank that waited send faster than B for a moment: figures
# over B there are that, not a broken bound. Gloo's "ring" sends the
# whole vector n-1 times (gloo/allreduce_ring.h), so it cannot pass 2/n of B = 0.5 B; ring_chunked is
# its reduce-scatter-then-allgather ring. Every result is checked (check=FAILED in a RESULT line and "!"
# after a figure say otherwise). Latency: of an 8-byte allreduce (2 floats), in microseconds; no delay is
# added to the links, so it is the software's and tbf's.
# Needs root, ip, tc, unshare, ping, g++, Gloo and Open MPI (Debian packages iproute2, util-linux,
# iputils-ping, g++, libgloo-dev, openmpi-bin, libopenmpi-dev: installed when missing). The peers are
# built into bench/target/collectives/ when their sources change.
# Environment: MIN_SIZE (default 1K), BUDGET (seconds of timed operations per size and operation, default
#   0.5; at least MIN_ITERS, default 1, at most MAX_ITERS, default 1000), WARMUP (seconds of warm-up per size,
#   default 0.2; the first operation, checked, always runs), LAT_SECONDS (per latency figure, default 2),
#   LAT_WARMUP (its warm-up, default 20 s: four JVMs on two cores
#   compile that long; with 3 s zcnet's 8-byte median was 298 us, with 30 s 169 us), IMPLS (default "gloo mpi"; "zcnet" is added when ZCNET=1), GLOO_OPS (gloo_bench's --ops; default its
#   five; allreduce:ring_api and allgather:api, Gloo's newer allreduce()/allgather() entry points, can be
#   added), RANKS (default 4, 2 to 8: with as many ranks as cores, no rank waits for a core, so the latency
#   is the software's and the links' alone), ONLY_LATENCY (1: the 8-byte latency runs only), MPI_OPS (default "allreduce,allgather,reduce_scatter"), MPI_FORCED (default 1: each MPI
#   operation runs a second time with the algorithm forced, see below; 0: only Open MPI's own choice),
#   ZCNET_OPS (the hook's --ops, default "allreduce,allgather,reduce_scatter"), ZCNET_JIT_WARMUP (seconds of
#   untimed operations of every kind at sizes up to 1 MiB before zcnet's first timed size, default 30: four
#   JVMs on two cores compile that long, and the per-size warm-up is too short for it), QUIET_WAIT (seconds to
#   wait, before each implementation's runs, for 3 s in which under 15% of the CPUs were busy; default 0:
#   not at all), KEEP_LOGS (a directory to copy every program's output into), NO_LATENCY (1: the bandwidth
#   runs only), ZCNET_ARGS (more options for every zcnet rank, e.g. "--slots 8"), PROBE_DIR (a directory:
#   during each implementation's runs, rank 0's sockets every PROBE_INTERVAL s, every rank's TCP counters
#   and every qdisc's, bench/collectives-lib.sh's coll_probe_start), and the network's
#   conditions BUCKET, QUEUE_MS, LOSS and SUBFLOWS (bench/collectives-lib.sh's header; the defaults are the
#   shaping above, no loss, one subflow). bench/collectives-matrix.sh runs this once per cell of such
#   conditions and compares the 64 MiB operations.
#
# Open MPI here: mpirun runs in the switch namespace and treats each rank's address as a host; its
# plm_rsh_agent, netns-agent.sh, starts Open MPI's daemon for a host in that host's namespace (and in a UTS
# namespace named after it, so Open MPI sees four nodes); pml ob1, btl tcp,self (no shared memory, which
# would cross namespaces and bypass the links), btl_tcp_if_include and oob_tcp_if_include 10.79.0.0/24.
# mpi_yield_when_idle=1: four ranks share this machine's cores; Open MPI turns it on by itself when it
# knows a node is oversubscribed, but here each "node" has one rank on one slot, and without it the
# spinning ranks keep each other off the cores (8-9 ms per 1 KiB allreduce on 2 cores instead of ~0.1 ms).
# Gloo's ranks block in the kernel while they wait and need no such setting. Two MPI columns per operation:
# mpi:default, the algorithm Open MPI's tuned component picks by itself (for large sizes here it picks
# algorithms far from the bound in the runs here: its reduce_scatter stayed near 0.18 B), and, with MPI_FORCED=1, the
# bandwidth-optimal one forced (coll_tuned_use_dynamic_rules): mpi:ring for allreduce and allgather,
# mpi:recursive_halving for reduce-scatter (it has no ring for MPI_Reduce_scatter_block).
#
# The zcnet hook (ZCNET=1), the interface this script expects of `./zcnet allreduce`:
#   ip netns exec NS_k ./zcnet allreduce --rank k --ranks 4 --peers 10.79.0.1,10.79.0.2,10.79.0.3,10.79.0.4
#       --port 7100 --ops allreduce,allgather,reduce_scatter --min-bytes B --max-bytes B --budget S
#       --warmup S --min-iters N --max-iters N
# started for all four ranks at once (coll_spawn), rank k in namespace NS_k, listening on its own address
# (the k-th of --peers) at --port; --ops, sizes, warm-up, batching, checks and figures exactly as
# gloo_bench.cc's header defines them (float32 sum; agree on counts after each batch), and rank 0 printing
# one line per operation and size:
#   RESULT impl=zcnet op=OP algo=ALGO ranks=4 bytes=B warmup=N iters=N avg_us=T min_us=T p50_us=T
#          max_us=T cpu_us=T algbw_gbps=X busbw_gbps=X check=ok|FAILED
# The latency run is the same command with --ops allreduce --min-bytes 8 --max-bytes 8. zcnet_cmd below
# builds that command line; the rest (tables, last lines) takes impl=zcnet like the others.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=rx-lib.sh
source "$root/bench/rx-lib.sh"
# shellcheck source=collectives-lib.sh
source "$root/bench/collectives-lib.sh"

coll_arguments 256M 1K "$@"
budget="${BUDGET:-0.5}"
warmup="${WARMUP:-0.2}"
min_iters="${MIN_ITERS:-1}"
max_iters="${MAX_ITERS:-1000}"
lat_seconds="${LAT_SECONDS:-2}"
impls="${IMPLS:-gloo mpi}"
[ "${ZCNET:-0}" != 1 ] || [[ " $impls " == *" zcnet "* ]] || impls+=" zcnet"
gloo_ops="${GLOO_OPS:-allreduce:ring,allreduce:ring_chunked,allreduce:halving_doubling,allgather:ring,reduce_scatter:halving_doubling}"
mpi_ops="${MPI_OPS:-allreduce,allgather,reduce_scatter}"
mpi_forced="${MPI_FORCED:-1}"
zcnet_ops="${ZCNET_OPS:-allreduce,allgather,reduce_scatter}"
zcnet_port=7100
zcnet_jit_warmup="${ZCNET_JIT_WARMUP:-30}"
b_gbps="$(rx_divide "$rate" 1000 %.3f)"

coll_require_root
coll_require
coll_build
on_exit() {
  if [ -n "${KEEP_LOGS:-}" ]; then mkdir -p "$KEEP_LOGS" && cp -r "$rx_work"/. "$KEEP_LOGS"/ || true; fi
  coll_cleanup
  rx_cleanup # the programs still running (rx_pids), then the scratch directory
}
trap on_exit EXIT
if [[ " $impls " == *" zcnet "* ]]; then
  echo "bench: building zcnet ..." >&2
  "$root/zcnet" build >"$rx_work/zcnet-build.log" 2>&1 || { cat "$rx_work/zcnet-build.log" >&2; die "zcnet build failed"; }
fi

coll_setup "$rate"
results="$rx_work/results"
: >"$results"

# The options every peer takes alike (gloo_bench, mpi_bench, and zcnet by the hook's interface).
common=(--min-bytes "$min_bytes" --max-bytes "$max_bytes" --budget "$budget" --warmup "$warmup"
  --min-iters "$min_iters" --max-iters "$max_iters")
# Warm-up long enough for a JVM's JIT to compile the path (2-3 s measured for zcnet); the C peers lose nothing.
latency=(--min-bytes 8 --max-bytes 8 --budget "$lat_seconds" --warmup "${LAT_WARMUP:-20}" --min-iters 100 --max-iters 1000000)
# A run is cut off after run_limit seconds: generous for 6 operations x 20 sizes, each size's first operation,
# warm-up and timed batches (which may overshoot their time by up to twice), and at the largest sizes
# operations that take twice as long as Gloo's ring would at the full rate (it sends 3 S from every rank).
run_limit="$(awk -v b="$budget" -v w="$warmup" -v m="$max_bytes" -v r="$rate" 'BEGIN {
  slowest = 3 * m * 8 / (r * 1e6)
  printf "%.0f", 120 + 6 * 20 * 3 * (b + w) + 6 * 4 * 2 * slowest }')"

# gloo_cmd K: rank K's gloo_bench (coll_spawn's COMMAND_FN); gloo_args holds the run's own options.
gloo_args=()
gloo_run=""
gloo_cmd() {
  coll_cmd=("$coll_build_dir/gloo_bench" --rank "$1" --ranks "$coll_ranks" --addr "${coll_addr[$1]}"
    --store "$rx_work/gloo-store" --prefix "$gloo_run" "${gloo_args[@]}")
}

# ---------------------------------------------------------------- the zcnet hook
# zcnet_cmd K: rank K's ./zcnet allreduce, by the interface in the header. ZCNET_NO_BUILD: the jar built
# above, as it is, for every rank and run.
zcnet_args=()
zcnet_cmd() {
  local peers
  peers="$(IFS=,; echo "${coll_addr[*]}")"
  coll_cmd=(env ZCNET_NO_BUILD=1 "$root/zcnet" allreduce --rank "$1" --ranks "$coll_ranks" --peers "$peers"
    --port "$zcnet_port" --subflows "$coll_subflows" ${ZCNET_ARGS:-} "${zcnet_args[@]}")
}
# ---------------------------------------------------------------- (end of the hook)

# mpi_forced_algo OP: the bandwidth-optimal algorithm of Open MPI's tuned component for OP on a power-of-two
# number of ranks, forced with MCA parameters: sets algo (its name), param and value.
mpi_forced_algo() {
  case "$1" in
    allreduce) algo=ring param=coll_tuned_allreduce_algorithm value=4 ;;
    allgather) algo=ring param=coll_tuned_allgather_algorithm value=4 ;;
    reduce_scatter) algo=recursive_halving param=coll_tuned_reduce_scatter_block_algorithm value=3 ;;
    *) die "no forced MPI algorithm for $1" ;;
  esac
}

# collect KIND COMMAND...: runs COMMAND (coll_spawn or coll_mpirun), then adds the RESULT lines of its
# output to $results as KIND lines (RESULT: bandwidth, LATENCY: the 8-byte runs), also those of a run that
# failed part way; fails as COMMAND did. With collect_impl set, its lines name that implementation instead.
collect_impl=""
collect() {
  local kind="$1" status=0
  shift
  "$@" || status=$?
  sed -n "s/^RESULT /$kind /p" "$coll_out" | sed "${collect_impl:+s/ impl=[^ ]* / impl=$collect_impl /}" >>"$results"
  return "$status"
}

# gloo_collect KIND NAME SECONDS OPS ARGS...: collect KIND of gloo_bench's run NAME of OPS with ARGS.
gloo_collect() {
  local kind="$1" name="$2" secs="$3" ops="$4"
  shift 4
  mkdir -p "$rx_work/gloo-store"
  gloo_run="$name"
  gloo_args=(--ops "$ops" "$@")
  collect "$kind" coll_spawn "$name" "$secs" gloo_cmd
}

# run_impl IMPL: its bandwidth runs (unless ONLY_LATENCY=1), then its latency runs.
run_impl() {
  if [ "${ONLY_LATENCY:-0}" != 1 ]; then run_bandwidth "$1" || return 1; fi
  [ "${NO_LATENCY:-0}" = 1 ] || run_latency "$1"
}

# run_bandwidth IMPL: every operation and size, by the interface in the header.
run_bandwidth() {
  case "$1" in
    gloo) gloo_collect RESULT gloo-bw "$run_limit" "$gloo_ops" "${common[@]}" ;;
    mpi)
      collect RESULT coll_mpirun mpi-bw "$run_limit" "$coll_build_dir/mpi_bench" --ops "$mpi_ops" "${common[@]}" || return 1
      if [ "$mpi_forced" = 1 ]; then
        for op in ${mpi_ops//,/ }; do
          mpi_forced_algo "$op"
          collect RESULT coll_mpirun "mpi-$op-$algo" "$run_limit" --mca coll_tuned_use_dynamic_rules 1 --mca "$param" "$value" \
            "$coll_build_dir/mpi_bench" --ops "$op" --algo "$algo" "${common[@]}" || return 1
        done
      fi ;;
    zcnet)
      zcnet_args=(--ops "$zcnet_ops" --jit-warmup "$zcnet_jit_warmup" "${common[@]}")
      collect RESULT coll_spawn zcnet-bw "$(awk -v l="$run_limit" -v j="$zcnet_jit_warmup" 'BEGIN { printf "%.0f", l + 2 * j }')" \
        zcnet_cmd ;;
    *) die "unknown implementation $1 (IMPLS takes gloo, mpi, zcnet)" ;;
  esac
}

# run_latency IMPL: the 8-byte allreduce.
run_latency() {
  case "$1" in
    gloo) gloo_collect LATENCY gloo-lat 300 "allreduce:ring,allreduce:ring_chunked,allreduce:halving_doubling" "${latency[@]}" ;;
    mpi)
      collect LATENCY coll_mpirun mpi-lat 300 "$coll_build_dir/mpi_bench" --ops allreduce "${latency[@]}" ;;
    zcnet)
      zcnet_args=(--ops allreduce "${latency[@]}")
      collect LATENCY coll_spawn zcnet-lat 300 zcnet_cmd || return 1
      # Again with every rank's threads polling, as Open MPI's ranks do (mpi_yield_when_idle above).
      zcnet_args=(--ops allreduce --busy-poll "${latency[@]}")
      collect_impl=zcnet+busy-poll
      if ! collect LATENCY coll_spawn zcnet-busy-lat 300 zcnet_cmd; then collect_impl=""; return 1; fi
      collect_impl="" ;;
    *) die "unknown implementation $1 (IMPLS takes gloo, mpi, zcnet)" ;;
  esac
}

rx_header "bench/collectives.sh: allreduce, allgather, reduce-scatter among $coll_ranks ranks in network namespaces, every link shaped to $rate Mbit/s both ways; sizes $min_bytes..$max_bytes bytes, float32 sum"
echo "# topology: bridge cb0 in $coll_switch; rank k in ${coll_ns[0]%0}k at 10.79.0.(k+1)/24 on a veth whose bridge port rk" \
  "is shaped too: $coll_shaping on both ends of every rank's link; B = $b_gbps Gbit/s per rank each way"
echo "# conditions: $(coll_conditions)"
echo "# peers: Gloo $(dpkg-query -W -f '${Version}' libgloo-dev 2>/dev/null || echo '?') (TCP transport, FileStore rendezvous)," \
  "Open MPI $(dpkg-query -W -f '${Version}' openmpi-bin 2>/dev/null || echo '?') (pml ob1, btl tcp,self, mpi_yield_when_idle 1," \
  "mpirun in the switch namespace, ranks started by netns-agent.sh), $(g++ --version | head -n 1)"
echo "# per size: warm-up ${warmup} s (at least 1 op, checked), timed ${budget} s ($min_iters..$max_iters ops); latency: 8 B, ${lat_seconds} s, at least 100 ops"
if [[ " $impls " == *" zcnet "* ]] && [ "${ONLY_LATENCY:-0}" != 1 ]; then
  echo "# zcnet: before its first size, ${zcnet_jit_warmup} s of untimed operations up to 1 MiB for the JIT (--jit-warmup)"
fi
echo "# load before: $(uptime)"
for impl in $impls; do
  rx_wait_quiet "${QUIET_WAIT:-0}"
  start=$SECONDS
  [ -z "${PROBE_DIR:-}" ] || coll_probe_start "$PROBE_DIR" "$impl"
  if run_impl "$impl"; then
    [ -z "${PROBE_DIR:-}" ] || coll_probe_stop
    echo "# $impl: $((SECONDS - start)) s (load $(cut -d ' ' -f 1 /proc/loadavg))"
  else
    [ -z "${PROBE_DIR:-}" ] || coll_probe_stop
    echo "# $impl: FAILED after $((SECONDS - start)) s (see above); its figures are missing"
  fi
done
echo "# load after: $(uptime)"
[ -z "$coll_loss" ] || echo "# the switch dropped $(coll_loss_dropped) TCP packets at random (LOSS=$coll_loss%)"
if grep -q 'check=FAILED' "$results"; then echo "# some results were wrong: marked ! below"; fi

# The tables: one per operation; a column per impl:algo that ran it, "busbw (ratio to B)".
for op in allreduce allgather reduce_scatter; do
  awk -v op="$op" -v b="$b_gbps" '
    function field(k,   i) { for (i = 2; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
    $1 == "RESULT" && field("op") == op {
      col = field("impl") ":" field("algo"); size = field("bytes") + 0; n = field("ranks")
      if (!(col in seen)) { seen[col] = 1; cols[++ncol] = col }
      if (!(size in sizes)) { sizes[size] = 1; list[++nsize] = size }
      v[col, size] = sprintf("%.3f (%.2f)%s", field("busbw_gbps"), field("busbw_gbps") / b, field("check") == "ok" ? " " : "!")
    }
    function human(n) { return n >= 1073741824 ? n / 1073741824 "G" : n >= 1048576 ? n / 1048576 "M" : n >= 1024 ? n / 1024 "K" : n }
    END {
      if (ncol == 0) exit
      for (i = 1; i <= nsize; i++) for (j = i + 1; j <= nsize; j++) if (list[j] < list[i]) { t = list[i]; list[i] = list[j]; list[j] = t }
      # The bound as a time: the bytes every rank must send (and receive) at B.
      factor = op == "allreduce" ? 2 * (n - 1) / n : (n - 1) / n
      printf "\n%s: busbw in Gbit/s (ratio to the bound B = %s Gbit/s; bound: the least time, %s * size / B)\n%-6s", op, b,
        op == "allreduce" ? "2(n-1)/n" : "(n-1)/n", "size"
      for (c = 1; c <= ncol; c++) printf "  %-24s", cols[c]
      printf "  %s\n", "bound"
      for (i = 1; i <= nsize; i++) {
        printf "%-6s", human(list[i])
        for (c = 1; c <= ncol; c++) printf "  %-24s", ((cols[c], list[i]) in v ? v[cols[c], list[i]] : "n/a")
        us = factor * list[i] * 8 / (b * 1e3)
        printf "  %s\n", (us >= 1e6 ? sprintf("%.3f s", us / 1e6) : us >= 1e3 ? sprintf("%.2f ms", us / 1e3) : sprintf("%.1f us", us))
      }
    }' "$results"
done

echo
echo "8-byte allreduce latency, microseconds (the slowest rank's mean / median / fastest):"
awk '
  function field(k,   i) { for (i = 2; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
  $1 == "LATENCY" { printf "  %-28s %10.1f / %8.1f / %8.1f  (%s ops%s)\n", field("impl") ":" field("algo"), field("avg_us"),
    field("p50_us"), field("min_us"), field("iters"), field("check") == "ok" ? "" : ", check FAILED" }' "$results"

# Last lines: per impl:algo and operation, the busbw at the largest size and its ratio to B.
echo
awk -v b="$b_gbps" -v max="$max_bytes" '
  function field(k,   i) { for (i = 2; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
  $1 == "RESULT" && field("bytes") == max {
    printf "%s-%s:%s busbw %.3f Gbit/s at %d bytes, %.2f of B = %s Gbit/s%s\n", field("op"), field("impl"), field("algo"),
      field("busbw_gbps"), max, field("busbw_gbps") / b, b, field("check") == "ok" ? "" : " (check FAILED)" }' "$results"
