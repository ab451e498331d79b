# Sourced by bench/sockperf.sh, bench/qp-latency.sh and bench/qp-latency-sweep.sh: sockperf itself (Debian's
# package, installed when missing) and what they read from its logs.
# Defines: sockperf_require, sockperf_run, sockperf_field, sockperf_average_rtt, sockperf_reply_rate,
# sockperf_version, and (for scripts that source rx-lib.sh first) sockperf_ping_pong with its helpers
# children_cpu and cpu_between.
# sockperf_msg_size: the message size sockperf_run asks for, 64 bytes unless the script sets it (sockperf 3.7
# takes 14..1048575 on TCP and refuses anything else with "Invalid message size", before it connects).

# Installs sockperf with apt-get when it is not on the PATH.
sockperf_require() {
  command -v sockperf >/dev/null 2>&1 && return 0
  echo "installing sockperf ..." >&2
  apt-get install -y sockperf >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y sockperf >/dev/null; }
}

# sockperf_run TEST HOST PORT LOG SECONDS [ARGS...]: one sockperf TEST (ping-pong, throughput) of
# sockperf_msg_size-byte TCP messages against HOST:PORT for SECONDS, bounded, into LOG; ARGS go to sockperf. A
# failure is noted in the log, not fatal: the caller finds no figures there and says so.
sockperf_run() {
  local test="$1" host="$2" port="$3" log="$4" secs="$5"
  shift 5
  timeout $((secs + 30)) sockperf "$test" --tcp -i "$host" -p "$port" -m "${sockperf_msg_size:-64}" -t "$secs" "$@" >"$log" 2>&1 \
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

# children_cpu FILE: writes this shell's `times` to FILE. It must run in this shell, never in $(...): a
# subshell's `times` counts the subshell's own children, none.
children_cpu() {
  times >"$1"
}

# cpu_between FILE0 FILE1: the user + system CPU seconds of waited-for children between two children_cpu.
cpu_between() {
  awk 'FNR == 2 { for (i = 1; i <= 2; i++) { split($i, t, "m"); s += (FILENAME == ARGV[2] ? 1 : -1) * (t[1] * 60 + t[2]) } }
       END { printf "%.2f", s }' "$1" "$2"
}

# sockperf_ping_pong NAME [FLAGS...]: sockperf's ping-pong client against a one-off sockperf server, both with
# FLAGS, for the script's $seconds after a 1 s untimed warm-up; sets rx_result to a RESULT line with the keys
# the zcnet programs print (n/a where sockperf's log has no figure), and rx_other to the other load over the
# warm-up and the measurement (the client's and the server's CPU taken out). The client's log stays in
# $rx_work/NAME.log.
sockperf_ping_pong() {
  local name="$1" port server log="$rx_work/$1.log" key value fields="" busy0 busy1 start
  shift
  local flags=("$@")
  port="$(free_port)"
  busy0="$(rx_busy_ticks)"
  children_cpu "$rx_work/times0"
  start="$(date +%s.%N)"
  # sockperf's server refuses a message over 65507 bytes ("larger than expected") unless its -m says more.
  timeout -k 5 "$((seconds + 60))" sockperf server --tcp -i 127.0.0.1 -p "$port" \
    -m "$((${sockperf_msg_size:-64} > 65507 ? sockperf_msg_size : 65507))" "${flags[@]}" >"$rx_work/$name.server" 2>&1 &
  server=$!
  rx_pids+=("$server")
  rx_wait_listening "$port" || echo "sockperf server did not listen on $port" >"$log"
  sockperf_run ping-pong 127.0.0.1 "$port" "$rx_work/$name.warmup" 1 --full-rtt "${flags[@]}"
  sockperf_run ping-pong 127.0.0.1 "$port" "$log" "$seconds" --full-rtt "${flags[@]}"
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  busy1="$(rx_busy_ticks)"
  children_cpu "$rx_work/times1"
  if ! grep -q '# dropped messages = 0; # duplicated messages = 0; # out-of-order messages = 0' "$log"; then
    echo "bench: sockperf reported a problem; its log ends:" >&2
    tail -n 5 "$log" >&2
  fi
  for key in "p50_us=percentile 50.000" "p99_us=percentile 99.000" "p999_us=percentile 99.900" \
      "max_us=<MAX> observation"; do
    value="$(sockperf_field "${key#*=}" "$log")"
    fields+=" ${key%%=*}=${value:-n/a}"
  done
  value="$(sockperf_average_rtt "$log")"
  fields+=" mean_us=${value:-n/a}"
  value="$(sockperf_reply_rate "$log")"
  rx_result="RESULT impl=sockperf msg_per_s=${value:-n/a}$fields"
  rx_other="$(rx_other_load "$busy0" "$busy1" "$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')" \
    "$(cpu_between "$rx_work/times0" "$rx_work/times1")")"
}
