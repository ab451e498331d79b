#!/usr/bin/env bash
# One 64 MiB allreduce (float32 sum) among four ranks on this machine, over loopback, three ways in one run:
#   mpi            Open MPI's MPI_Allreduce over its TCP BTL (bench/collectives/mpi_bench.c; pml ob1, btl
#                  tcp,self on lo: no shared memory), started by mpirun;
#   zcnet:mpirun   ./zcnet allreduce --from-env, the same mpirun starting the ranks, ZCNET_STORE naming the store
#                  (docs/collectives.md, "Launching ranks");
#   zcnet:local    ./zcnet allreduce starting its ranks itself (child JVMs on 127.0.0.1).
# Every mpirun gets --bind-to none (the local ranks are not bound either) and mpi_yield_when_idle (four ranks on
# this machine's cores; see bench/collectives.sh). Prints each one's RESULT figures, then a ratio line each: its
# bus bandwidth (nccl-tests' busbw, algbw * 2(n-1)/n, from the mean time per operation of the slowest rank)
# over Open MPI's, and zcnet under mpirun over zcnet's own launch.
#   bench/launchers.sh
# Environment: BUDGET (seconds of timed operations per run, default 3; at most MAX_ITERS, default 30),
#   WARMUP (seconds of warm-up, default 1; zcnet's first operation, checked, always runs), JIT_WARMUP (zcnet's
#   --jit-warmup, default 5: four JVMs on two cores compile that long).
# Needs Open MPI (Debian's openmpi-bin and libopenmpi-dev, installed when missing, which takes root).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=rx-lib.sh
source "$root/bench/rx-lib.sh"
# shellcheck source=collectives-lib.sh
RANKS=4 source "$root/bench/collectives-lib.sh"

budget="${BUDGET:-3}"
warmup="${WARMUP:-1}"
max_iters="${MAX_ITERS:-30}"
jit_warmup="${JIT_WARMUP:-5}"
bytes=$((64 << 20))

require_package mpirun openmpi-bin
require_package "/usr/lib/$(gcc -dumpmachine)/openmpi/include/mpi.h" libopenmpi-dev
coll_build_mpi
"$root/zcnet" build
work="$rx_work"

mpirun_cmd=(mpirun -np 4 --oversubscribe --bind-to none --mca mpi_yield_when_idle 1)
[ "$(id -u)" = 0 ] && mpirun_cmd+=(--allow-run-as-root)
zcnet_opts=(--ops allreduce --min-bytes "$bytes" --max-bytes "$bytes" --budget "$budget" --warmup "$warmup"
  --jit-warmup "$jit_warmup" --max-iters "$max_iters")

echo "bench: mpi: ${mpirun_cmd[*]} --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo mpi_bench ..." >&2
timeout 300 "${mpirun_cmd[@]}" --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo \
  "$coll_build_dir/mpi_bench" --ops allreduce --min-bytes "$bytes" --max-bytes "$bytes" --budget "$budget" \
  --warmup "$warmup" --max-iters "$max_iters" >"$work/mpi" 2>"$work/mpi.err" || { cat "$work/mpi.err" >&2; die "mpi_bench failed"; }
mpi="$(grep '^RESULT ' "$work/mpi")"

echo "bench: zcnet:mpirun: ZCNET_STORE=127.0.0.1:PORT ${mpirun_cmd[*]} -x ZCNET_STORE ./zcnet allreduce --from-env ${zcnet_opts[*]}" >&2
ZCNET_STORE="127.0.0.1:$(free_port)" ZCNET_NO_BUILD=1 timeout 300 "${mpirun_cmd[@]}" -x ZCNET_STORE -x ZCNET_NO_BUILD \
  "$root/zcnet" allreduce --from-env "${zcnet_opts[@]}" >"$work/zm" 2>"$work/zm.err" || { tail "$work/zm" "$work/zm.err" >&2; die "zcnet under mpirun failed"; }
zm="$(grep '^RESULT ' "$work/zm")"

echo "bench: zcnet:local: ./zcnet allreduce --ranks 4 ${zcnet_opts[*]}" >&2
ZCNET_NO_BUILD=1 timeout 300 "$root/zcnet" allreduce --ranks 4 "${zcnet_opts[@]}" >"$work/zl" 2>"$work/zl.err" \
  || { tail "$work/zl" "$work/zl.err" >&2; die "zcnet's local ranks failed"; }
# Its table row: op algo size iters avg_us p50_us algbw busbw check.
read -r _ _ _ zl_iters zl_avg _ _ zl_busbw zl_check < <(grep '^ *allreduce ' "$work/zl")

printf '%-13s %6s %10s %12s %s\n' impl iters avg_us busbw_gbps check
for impl in mpi zm; do
  line="${!impl}"
  [ -n "$line" ] || die "$impl printed no RESULT line"
  printf '%-13s %6s %10s %12s %s\n' "$([ "$impl" = mpi ] && echo mpi || echo zcnet:mpirun)" "$(rx_field "$line" iters)" \
    "$(rx_field "$line" avg_us)" "$(rx_field "$line" busbw_gbps)" "$(rx_field "$line" check)"
done
printf '%-13s %6s %10s %12s %s\n' zcnet:local "$zl_iters" "$zl_avg" "$zl_busbw" "$zl_check"
mpi_bw="$(rx_field "$mpi" busbw_gbps)"
zm_bw="$(rx_field "$zm" busbw_gbps)"
echo "ratio zcnet:mpirun / mpi busbw = $(rx_divide "$zm_bw" "$mpi_bw")"
echo "ratio zcnet:local / mpi busbw = $(rx_divide "$zl_busbw" "$mpi_bw")"
echo "ratio zcnet:mpirun / zcnet:local busbw = $(rx_divide "$zm_bw" "$zl_busbw")"
