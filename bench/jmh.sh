#!/usr/bin/env bash
# Builds the JMH benchmarks and runs them.
#   bench/jmh.sh                       every benchmark with its annotated settings (long)
#   bench/jmh.sh EchoBenchmark.pingPong -p transport=zcnet-uring      any JMH arguments
#   bench/jmh.sh --quick [pattern]     smoke run: 1 fork, 1 warm-up and 1 measured iteration of 1 s
#   bench/jmh.sh -l                    list the benchmarks
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

args=()
quick=0
for a in "$@"; do
  if [ "$a" = "--quick" ]; then quick=1; else args+=("$a"); fi
done
if [ "$quick" = 1 ]; then
  # JMH takes the last value of a repeated option, so the caller's own settings still win.
  args=(-f 1 -wi 1 -i 1 -w 1s -r 1s "${args[@]}")
fi

build_benchmarks
run_jmh "${args[@]}"
