#!/usr/bin/env bash
# Collectives on networks that are not kind: bench/collectives.sh once per cell of conditions (tbf bucket,
# tbf queue, random TCP loss on the switch, ranks, zcnet's subflows: bench/collectives-lib.sh's BUCKET,
# QUEUE_MS, LOSS, RANKS and SUBFLOWS), the 64 MiB operations only, zcnet against Gloo's ring_chunked and Open
# MPI (the better of its own choice and its ring), every link at RATE both ways. Per cell one line:
#   cell  op  zcnet gloo mpi (busbw / B)  zcnet/peer (zcnet over the better of Gloo and MPI)
#         spread of each (the slowest rank's slowest of the timed operations over its median)
# then a TSV of every cell and a gnuplot plot of busbw / B against the cell.
#   bench/collectives-matrix.sh [out-dir]   default bench/target/collectives-matrix
# Environment:
#   CELLS   the cells, "bucket/queue-ms/loss/ranks/subflows ..." (bucket: bytes, K or M, or "default" for
#           lib.sh's; loss: percent, 0 for none). Default, the small set, three cells of the issue's:
#           "default/50/0/4/1 64K/20/0/4/1 default/50/0.2/4/1"; MATRIX=full: every combination of buckets
#           64K 250K 1M, queues 5 20 50 ms, loss 0 0.2 0.5 %, 4 and 8 ranks, 1 and 2 subflows (108 cells,
#           some 4 hours).
#   RATE    Mbit/s per link each way (default 500); SIZE (default 64M); ITERS timed operations per cell and
#           implementation (default 10; the first, checked, one comes on top); OPS (default allreduce; also
#           allgather, reduce_scatter: "allreduce,allgather,reduce_scatter"); IMPLS (default "gloo mpi zcnet").
# Needs what bench/collectives.sh needs, and gnuplot (Debian package gnuplot-nox, installed when missing).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

out="${1:-$root/bench/target/collectives-matrix}"
rate="${RATE:-500}"
[[ "$rate" =~ ^[0-9]+$ ]] && [ "$rate" -ge 1 ] || die "RATE must be a whole number of Mbit/s, not '$rate'"
size="${SIZE:-64M}"
iters="${ITERS:-10}"
[[ "$iters" =~ ^[0-9]+$ ]] && [ "$iters" -ge 2 ] || die "ITERS must be 2 or more, not '$iters'"
ops="${OPS:-allreduce}"
impls="${IMPLS:-gloo mpi zcnet}"
for op in ${ops//,/ }; do
  case "$op" in allreduce | allgather | reduce_scatter) ;; *) die "OPS takes allreduce, allgather, reduce_scatter, not $op" ;; esac
done
if [ "${MATRIX:-}" = full ]; then
  cells=""
  for b in 64K 250K 1M; do for q in 5 20 50; do for l in 0 0.2 0.5; do for n in 4 8; do for s in 1 2; do
    cells+="$b/$q/$l/$n/$s "
  done; done; done; done; done
else
  [ -z "${MATRIX:-}" ] || die "MATRIX takes 'full' or nothing, not '$MATRIX'"
  cells="${CELLS:-default/50/0/4/1 64K/20/0/4/1 default/50/0.2/4/1}"
fi
# Every cell is checked before the first runs: a typo found after an hour of runs costs the hour.
for cell in $cells; do
  [[ "$cell" =~ ^[^/]+/[^/]+/[^/]+/[^/]+/[^/]+$ ]] || die "a cell is bucket/queue-ms/loss/ranks/subflows, not '$cell'"
done
require_package gnuplot gnuplot-nox
mkdir -p "$out"
tsv="$out/matrix.tsv"
[ "${PLOT_ONLY:-0}" != 1 ] || [ -f "$tsv" ] || die "PLOT_ONLY=1 needs $tsv from an earlier run"
if [ "${PLOT_ONLY:-0}" != 1 ]; then
  printf 'cell\tbucket\tqueue_ms\tloss_pct\tranks\tsubflows\top\timpl\tbusbw_over_b\tp50_us\tmax_us\tspread\n' >"$tsv"

  # gloo_bench's, mpi_bench's and zcnet's names of each operation's bandwidth-optimal algorithm.
  gloo_op() { case "$1" in allreduce) echo allreduce:ring_chunked ;; allgather) echo allgather:ring ;; *) echo reduce_scatter:halving_doubling ;; esac; }
  gloo_ops=""
  for op in ${ops//,/ }; do gloo_ops+="${gloo_ops:+,}$(gloo_op "$op")"; done

  echo "# bench/collectives-matrix.sh: $size ${ops//,/ } at $rate Mbit/s per link each way, $iters timed operations per cell and implementation"
  echo "# load before: $(uptime)"
  printf '%-24s %-14s %7s %7s %7s %10s  %s\n' cell op zcnet gloo mpi zcnet/peer "spread (max/p50) zcnet gloo mpi"
  i=0
  for cell in $cells; do
    i=$((i + 1))
    IFS=/ read -r bucket queue loss ranks subflows <<<"$cell"
    logs="$out/cell-$i"
    rm -rf "$logs"
    env_cell=(QUEUE_MS="$queue" RANKS="$ranks" SUBFLOWS="$subflows")
    [ "$bucket" = default ] || env_cell+=(BUCKET="$bucket")
    [ "$loss" = 0 ] || env_cell+=(LOSS="$loss")
    if ! env "${env_cell[@]}" IMPLS="$impls" ZCNET=1 GLOO_OPS="$gloo_ops" MPI_OPS="$ops" ZCNET_OPS="$ops" \
        MIN_SIZE="$size" BUDGET=0.001 WARMUP=0 MIN_ITERS="$iters" MAX_ITERS="$iters" ZCNET_JIT_WARMUP="${ZCNET_JIT_WARMUP:-5}" \
        NO_LATENCY=1 KEEP_LOGS="$logs" "$root/bench/collectives.sh" "$rate" "$size" >"$out/cell-$i.out" 2>&1; then
      echo "# cell $cell: bench/collectives.sh failed, see $out/cell-$i.out"
      continue
    fi
    # Per operation: each implementation's best algorithm (MPI's own choice or its forced ring), its busbw / B
    # and spread, a TSV row each and one printed line.
    awk -v cell="$cell" -v b="$(awk -v r="$rate" 'BEGIN { print r / 1000 }')" -v tsv="$tsv" -v i="$i" \
        -v bucket="$bucket" -v queue="$queue" -v loss="$loss" -v ranks="$ranks" -v subflows="$subflows" '
      function field(k,   j) { for (j = 2; j <= NF; j++) if (index($j, k "=") == 1) return substr($j, length(k) + 2); return "" }
      $1 == "RESULT" {
        op = field("op"); impl = field("impl"); v = field("busbw_gbps") / b
        if (field("check") != "ok") v = 0
        if (!((op, impl) in best) || v > best[op, impl]) {
          best[op, impl] = v; p50[op, impl] = field("p50_us"); mx[op, impl] = field("max_us")
        }
        if (!(op in seen)) { seen[op] = 1; order[++nops] = op }
      }
      function ratio(op, impl) { return (op, impl) in best ? sprintf("%.2f", best[op, impl]) : "n/a" }
      function spread(op, impl) { return (op, impl) in best && p50[op, impl] > 0 ? sprintf("%.2f", mx[op, impl] / p50[op, impl]) : "n/a" }
      END {
        for (k = 1; k <= nops; k++) {
          op = order[k]; peer = 0
          if ((op, "gloo") in best) peer = best[op, "gloo"]
          if ((op, "mpi") in best && best[op, "mpi"] > peer) peer = best[op, "mpi"]
          rel = (op, "zcnet") in best && peer > 0 ? sprintf("%.2fx", best[op, "zcnet"] / peer) : "n/a"
          printf "%-24s %-14s %7s %7s %7s %10s  %s %s %s\n", cell, op, ratio(op, "zcnet"), ratio(op, "gloo"), ratio(op, "mpi"),
            rel, spread(op, "zcnet"), spread(op, "gloo"), spread(op, "mpi")
          split("zcnet gloo mpi", names, " ")
          for (n = 1; n <= 3; n++) if ((op, names[n]) in best)
            printf "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.4f\t%s\t%s\t%s\n", i, bucket, queue, loss, ranks, subflows, op, names[n],
              best[op, names[n]], p50[op, names[n]], mx[op, names[n]], spread(op, names[n]) >> tsv
        }
      }' "$logs/results"
  done
  echo "# load after: $(uptime)"
fi

# The plot: busbw / B per cell, one line per implementation and operation, the bound at 1 and the
# wire's limit (TCP payload of the frames tbf counts) at 0.956.
plot="$out/matrix.png"
labels="$(awk -F '\t' 'NR > 1 && !seen[$1]++ { printf "%s\"%s\" %d", n++ ? ", " : "", $2 "/" $3 "/" $4 "/" $5 "/" $6, $1 }' "$tsv")"
series=""
for op in ${ops//,/ }; do
  for impl in zcnet gloo mpi; do
    series+="${series:+, }'$tsv' every ::1 using (strcol(7) eq '$op' && strcol(8) eq '$impl' ? \$1 : 1/0):9 with points pointsize 2 title '$impl $op'"
  done
done
gnuplot <<GNUPLOT || echo "# gnuplot failed: no plot"
set terminal pngcairo size 1200,600
set output '$plot'
set datafile separator '\t'
set title 'busbw / B, $size, $rate Mbit/s per link (cells: bucket/queue ms/loss %/ranks/subflows); machine shared with other builds'
set ylabel 'busbw / B'
set yrange [0:1.1]
set offsets 0.5, 0.5, 0, 0
set xtics rotate by -30 (${labels:-"" 0})
set key bottom left
set grid ytics
plot $series, 1 with lines dashtype 2 lc 'black' title 'bound B', 0.956 with lines dashtype 3 lc 'grey' title 'TCP payload limit'
GNUPLOT
echo "# $tsv; $plot"
