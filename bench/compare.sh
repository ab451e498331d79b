#!/usr/bin/env bash
# zcnet against Netty 4.2 (io_uring, epoll, NIO) in one JMH session on this machine, then a ratio table.
#   bench/compare.sh              short settings for a 2-core machine (about 5 transports x 3 workloads)
#   bench/compare.sh --quick      smoke run (1 s iterations): proves the set runs, numbers are noise
# Results: jmh/target/compare-<timestamp>/{micro,echo}.json and table.txt. Extra arguments go to both JMH runs.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

settings=(-f 1 -wi 2 -i 3 -w 2s -r 3s)
extra=()
for a in "$@"; do
  if [ "$a" = "--quick" ]; then settings=(-f 1 -wi 1 -i 1 -w 1s -r 1s); else extra+=("$a"); fi
done

out="$root/jmh/target/compare-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
build_benchmarks

echo "== micro benchmarks with -prof gc ==" >&2
run_jmh 'io.zcnet.jmh.(NopRoundTripBenchmark|BufferPoolBenchmark)' "${settings[@]}" -prof gc \
  -rf json -rff "$out/micro.json" "${extra[@]}" | tee "$out/micro.log"

echo "== end to end: zcnet and Netty on loopback ==" >&2
run_jmh 'io.zcnet.jmh.echo.EchoBenchmark' "${settings[@]}" \
  -rf json -rff "$out/echo.json" "${extra[@]}" | tee "$out/echo.log"

python3 "$root/bench/ratios.py" "$out/micro.json" "$out/echo.json" | tee "$out/table.txt"
echo "results in $out" >&2
