# Sourced by bench/sockperf.sh and bench/qp-latency.sh: sockperf itself (Debian's package, installed when
# missing) and what they read from its logs.
# Defines: sockperf_require, sockperf_run, sockperf_field, sockperf_average_rtt, sockperf_reply_rate,
# sockperf_version.

# Installs sockperf with apt-get when it is not on the PATH.
sockperf_require() {
  command -v sockperf >/dev/null 2>&1 && return 0
  echo "installing sockperf ..." >&2
  apt-get install -y sockperf >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y sockperf >/dev/null; }
}

# sockperf_run TEST HOST PORT LOG SECONDS [ARGS...]: one sockperf TEST (ping-pong, throughput) of 64-byte
# TCP messages against HOST:PORT for SECONDS, bounded, into LOG; ARGS go to sockperf. A failure is noted
# in the log, not fatal: the caller finds no figures there and says so.
sockperf_run() {
  local test="$1" host="$2" port="$3" log="$4" secs="$5"
  shift 5
  timeout $((secs + 30)) sockperf "$test" --tcp -i "$host" -p "$port" -m 64 -t "$secs" "$@" >"$log" 2>&1 \
    || echo "sockperf $test exited with $? (see below)" >>"$log"
}

# sockperf_field KEY LOG: the value after "<KEY> =" in a sockperf log, e.g. "---> percentile 50.000 =    5.405".
sockperf_field() {
  awk -v k="$1" 'index($0, k) {for (i = 1; i <= NF; i++) if ($i == "=") {print $(i + 1); exit}}' "$2"
}

# sockperf_average_rtt LOG: the average round trip in microseconds of a ping-pong run with --full-rtt.
sockperf_average_rtt() {
  grep -ao 'avg-rtt=[0-9.]*' "$1" | head -n 1 | cut -d= -f2 || true
}

# sockperf_reply_rate LOG: replies received per second over a ping-pong run's valid duration.
sockperf_reply_rate() {
  awk '/\[Valid Duration\]/ {split($0, a, "RunTime="); split(a[2], b, " ");
      split($0, c, "ReceivedMessages="); if (b[1] > 0) printf "%.0f", c[2] / b[1]}' "$1"
}

sockperf_version() {
  sockperf --version 2>&1 | awk 'NR == 1 {print $3}'
}
