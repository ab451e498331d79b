#!/usr/bin/env bash
# One queue pair striped over four shaped paths against Linux MPTCP with four subflows, measured in the
# same run, between two network namespaces of its own joined by four veth pairs:
#   a) equal paths, 4 x 200 Mbit/s: goodput of each, and of plain iperf3 over one path (the sanity figure of
#      what one path carries);
#   b) unequal paths, 100/200/300/400 Mbit/s: goodput of each;
#   c) failover, 4 x 200 Mbit/s: DROP_AT s into the transfer the client's end of path 4 goes down
#      (ip link set down); how long until the three survivors carry 90% of their 600 Mbit/s again, and
#      what zcnet sent twice.
#   bench/qp-multipath.sh [seconds]   default 10 s per throughput run; a round takes about 2 minutes
# zcnet: `./zcnet bulk --listen` in one namespace, `./zcnet bulk --connect --path LOCAL=REMOTE` x 4 in the
# other, RDMA WRITEs of 1 MiB, window 32 (bulk's defaults). MPTCP: iperf3 under mptcpize (one MPTCP socket
# each side), the client with an `ip mptcp endpoint ... subflow` on paths 2-4, limits of 8 on both sides.
# Needs root, ip, tc, iperf3, mptcpize (Debian packages iperf3 and mptcpd, installed when missing).
# Environment: ROUNDS (default 3; each round runs every measurement once, the figures are medians),
#   FAILOVER_SECONDS (default 15), DROP_AT (default 5), SILENCE_MS (default "2000 500": one zcnet failover
#   run per value of its --silence-ms, both ends; 2000 is the queue pair's default), ENGINE (zcnet's
#   --engine, default auto), SCENARIOS (default "equal unequal failover": which to run; failover takes the
#   survivors' rate from equal's plain run, or 3 x 191 Mbit/s without it), KEEP_LOGS (a directory to copy
#   every program's output and series into).
# Shaping, on the egress of both ends of every path (so both directions): tc tbf, rate R, burst the larger
#   of 64 KiB and 4 ms of R (a whole GSO packet that veth hands over at once, and what tbf's watchdog may
#   sleep, one jiffy at HZ=250: a smaller bucket would hold the link below R), latency 50 ms (the queue: about
#   a bandwidth-delay product of the queueing delay it allows). tbf counts Ethernet and IP/TCP headers, so
#   TCP goodput peaks near 95% of R. No delay is added: the RTT is what the queues make it.
# Figures: goodput in Gbit/s (10^9 bits), from each receiver's payload bytes over the run (zcnet: its
#   acknowledged WRITEs; iperf3: the receiver's sum); each path's share of the client's egress bytes (tc).
#   Recovery: from the drop until the transfer keeps pace with 90% of the survivors' rate to the end (see
#   recovery below; the survivors' rate: 3 x plain iperf3's goodput over one path in the same round, about
#   573 of the nominal 600 Mbit/s); "lost": how many seconds longer the rest of the run took than at the
#   survivors' full rate; "stalled": the longest stretch of 100 ms intervals that each carried less than
#   a tenth of it. zcnet's
#   from its --interval-ms 100 progress lines (acknowledged WRITEs), MPTCP's from iperf3's -i 0.1 reports
#   on the receiving side.
# Last lines: one per comparison, "A X, B Y, ratio R" with R = A / B.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=rx-lib.sh
source "$root/bench/rx-lib.sh"

seconds="${1:-10}"
rounds="${ROUNDS:-3}"
failover_seconds="${FAILOVER_SECONDS:-15}"
drop_at="${DROP_AT:-5}"
silences="${SILENCE_MS:-2000 500}"
engine="${ENGINE:-auto}"
scenarios="${SCENARIOS:-equal unequal failover}"
equal=(200 200 200 200)
unequal=(100 200 300 400)
zcnet_port=7000

[ "$(id -u)" = 0 ] || die "needs root: it creates network namespaces and shapes their links"
for tool in ip tc awk python3; do command -v "$tool" >/dev/null 2>&1 || die "$tool is missing"; done
rx_require_iperf3
require_package mptcpize mptcpd
[ "$(sysctl -n net.mptcp.enabled 2>/dev/null || echo 0)" = 1 ] || die "MPTCP is off or missing: sysctl net.mptcp.enabled=1"

# The launcher builds when sources changed; every run below then takes the same jar as it is.
"$root/zcnet" bulk --help >/dev/null
zcnet=(env ZCNET_NO_BUILD=1 "$root/zcnet" bulk --engine "$engine")

# ---------------------------------------------------------------- the two namespaces and four paths

id="$(printf '%04x' "$RANDOM")"
ns_c="zcmp-$id-c"
ns_s="zcmp-$id-s"
mp_cleanup() {
  if [ -n "${KEEP_LOGS:-}" ]; then mkdir -p "$KEEP_LOGS" && cp -r "$rx_work"/. "$KEEP_LOGS"/ || true; fi
  rx_cleanup # the programs still running (rx_pids), then the scratch directory
  ip netns del "$ns_c" 2>/dev/null || true # takes its veth ends, and so their peers, with it
  ip netns del "$ns_s" 2>/dev/null || true
}
trap mp_cleanup EXIT

dev_c() { echo "zm${id}c$1"; }
dev_s() { echo "zm${id}s$1"; }
addr_c() { echo "10.77.$1.1"; }
addr_s() { echo "10.77.$1.2"; }

mp_setup() {
  local ns i
  for ns in "$ns_c" "$ns_s"; do
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    # Replies to MPTCP's extra subflows come from the first path's address over the other paths.
    ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 net.mptcp.enabled=1
    ip -n "$ns" mptcp limits set subflow 8 add_addr_accepted 8
  done
  for i in 1 2 3 4; do
    ip link add name "$(dev_c "$i")" netns "$ns_c" type veth peer name "$(dev_s "$i")" netns "$ns_s"
    ip -n "$ns_c" addr add "$(addr_c "$i")/24" dev "$(dev_c "$i")"
    ip -n "$ns_s" addr add "$(addr_s "$i")/24" dev "$(dev_s "$i")"
    ip -n "$ns_c" link set "$(dev_c "$i")" up
    ip -n "$ns_s" link set "$(dev_s "$i")" up
    [ "$i" = 1 ] || ip -n "$ns_c" mptcp endpoint add "$(addr_c "$i")" dev "$(dev_c "$i")" subflow
  done
}

# mp_shape R1 R2 R3 R4: path i's both ends to Ri Mbit/s (see the header for burst and latency).
tbf_settings=""
mp_shape() {
  local i
  tbf_settings=""
  for i in 1 2 3 4; do
    tbf_shape "$ns_c" "$(dev_c "$i")" "${!i}" >/dev/null
    tbf_settings+="path $i: $(tbf_shape "$ns_s" "$(dev_s "$i")" "${!i}"); "
  done
}

# The client's egress bytes per path so far (tc's Sent counter of each tbf), space-separated.
mp_sent() {
  local i
  for i in 1 2 3 4; do
    tc -s -n "$ns_c" qdisc show dev "$(dev_c "$i")" | awk '/Sent/ { print $2; exit }'
  done | tr '\n' ' '
}

# mp_shares BEFORE AFTER: each path's percent of the bytes sent between two mp_sent readings.
mp_shares() {
  awk -v a="$1" -v b="$2" 'BEGIN {
    n = split(a, x, " "); split(b, y, " "); total = 0
    for (i = 1; i <= n; i++) { d[i] = y[i] - x[i]; total += d[i] }
    for (i = 1; i <= n; i++) printf "%s%d%%", (i > 1 ? " " : ""), (total > 0 ? 100 * d[i] / total + 0.5 : 0) }'
}

# ---------------------------------------------------------------- runs

work="$rx_work"

# wait_for FILE PATTERN SECONDS: until a line of FILE matches.
wait_for() {
  local i
  for i in $(seq 1 $(($3 * 10))); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "bench: no '$2' in $1 within $3 s; it says:" >&2
  cat "$1" >&2 || true
  return 1
}

# After a failover run: path 4 back up, its connected route back with it.
restore_path4() {
  ip -n "$ns_c" link set "$(dev_c 4)" up
  sleep 1
}

# zcnet_run NAME SECONDS [SILENCE_MS]: one bulk run of 1 MiB WRITEs over the four paths. Without SILENCE_MS a
# throughput run; with it a failover run (progress every 100 ms, path 4 down at DROP_AT). Sets result
# (the client's result line), series (file of "seconds bytes" lines), dropped (progress seconds of the drop).
zcnet_run() {
  local name="$1" run_seconds="$2" silence="${3:-}" out="$work/$1" fifo="$work/$1.fifo" server client line i t b
  local extra=() paths=() status=0
  [ -z "$silence" ] || extra=(--silence-ms "$silence")
  for i in 1 2 3 4; do paths+=(--path "$(addr_c "$i")=$(addr_s "$i")"); done
  ip netns exec "$ns_s" timeout -k 5 $((run_seconds + 90)) "${zcnet[@]}" --listen "$zcnet_port" "${extra[@]}" \
    >"$out.server" 2>&1 &
  server=$!
  rx_pids+=("$server")
  wait_for "$out.server" "listening on" 60
  rm -f "$fifo"
  mkfifo "$fifo"
  [ -z "$silence" ] || extra+=(--interval-ms 100)
  ip netns exec "$ns_c" timeout -k 5 $((run_seconds + 60)) "${zcnet[@]}" --connect "$(addr_s 1):$zcnet_port" \
    "${paths[@]}" --op write --message 1M --seconds "$run_seconds" "${extra[@]}" >"$fifo" 2>"$out.err" &
  client=$!
  rx_pids+=("$client")
  result=""
  dropped=""
  : >"$out.series"
  while IFS= read -r line; do
    echo "$line" >>"$out"
    case "$line" in
      "progress: "*)
        read -r t b < <(sed -n 's/^progress: seconds=\([0-9.]*\) gbit\/s=[0-9.]* bytes=\([0-9]*\)$/\1 \2/p' <<<"$line")
        echo "$t $b" >>"$out.series"
        if [ -n "$silence" ] && [ -z "$dropped" ] && awk -v t="$t" -v d="$drop_at" 'BEGIN { exit !(t >= d) }'; then
          ip -n "$ns_c" link set "$(dev_c 4)" down
          dropped="$t"
        fi ;;
      "bulk: "*) result="$line" ;;
    esac
  done <"$fifo"
  wait "$client" || status=$?
  wait "$server" || true
  rx_pids=() # both waited for: their ids are no longer ours to signal
  series="$out.series"
  [ -z "$silence" ] || restore_path4
  if [ -z "$result" ]; then
    echo "bench: $name printed no result (exit status $status); client and server said:" >&2
    tail -n 20 "$out" "$out.err" "$out.server" >&2 2>/dev/null || true
    return 1
  fi
}

# mptcp_run NAME SECONDS [failover]: iperf3 under mptcpize over the four paths. Throughput run: sets result
# to a RESULT line (gbit_per_s) from the client's JSON. Failover run: the server's 100 ms reports, path 4
# down at DROP_AT; sets series and dropped as zcnet_run does.
mptcp_run() {
  local name="$1" run_seconds="$2" failover="${3:-}" out="$work/$1" fifo="$work/$1.fifo" server client line
  local status=0 total=0
  rm -f "$fifo"
  mkfifo "$fifo"
  ip netns exec "$ns_s" timeout -k 5 $((run_seconds + 30)) mptcpize run iperf3 -s -1 -B "$(addr_s 1)" -i 0.1 -f k \
    --forceflush >"$fifo" 2>"$out.server.err" &
  server=$!
  rx_pids+=("$server")
  ( # the client, once the server listens
    for _ in $(seq 1 100); do
      ip netns exec "$ns_s" ss -Hltn "sport = :5201" | grep -q . && break
      sleep 0.1
    done
    exec ip netns exec "$ns_c" timeout -k 5 $((run_seconds + 30)) mptcpize run iperf3 -c "$(addr_s 1)" \
      -B "$(addr_c 1)" -t "$run_seconds" -J >"$out.json" 2>"$out.err"
  ) &
  client=$!
  rx_pids+=("$client")
  dropped=""
  : >"$out.series"
  # Server reports: "[  5]   5.00-5.10   sec  7.12 MBytes  597688 Kbits/sec"; the bytes column has three
  # digits, so the bytes of an interval are its rate times its length. The closing sum ("receiver") is left out.
  while IFS= read -r line; do
    echo "$line" >>"$out"
    if [[ "$line" =~ ^\[\ *[0-9]+\]\ +([0-9.]+)-([0-9.]+)\ +sec\ +[0-9.]+\ [KMG]?Bytes\ +([0-9.]+)\ Kbits/sec\ *$ ]]; then
      total="$(awk -v a="$total" -v s="${BASH_REMATCH[1]}" -v e="${BASH_REMATCH[2]}" -v k="${BASH_REMATCH[3]}" \
        'BEGIN { printf "%.0f", a + k * 1000 / 8 * (e - s) }')"
      echo "${BASH_REMATCH[2]} $total" >>"$out.series"
      if [ -n "$failover" ] && [ -z "$dropped" ] && awk -v t="${BASH_REMATCH[2]}" -v d="$drop_at" 'BEGIN { exit !(t >= d) }'; then
        ip -n "$ns_c" link set "$(dev_c 4)" down
        dropped="${BASH_REMATCH[2]}"
      fi
    fi
  done <"$fifo"
  wait "$client" || status=$?
  wait "$server" || true
  rx_pids=()
  series="$out.series"
  [ -z "$failover" ] || restore_path4
  result="$(python3 - "$out.json" <<'PY'
import json, sys
try:
    report = json.load(open(sys.argv[1]))
except ValueError as e:
    sys.exit("iperf3 wrote no JSON: %s" % e)
if "error" in report:
    sys.exit("iperf3: " + report["error"])
received = report["end"]["sum_received"]
print("RESULT bytes=%d seconds=%.3f gbit_per_s=%.3f" % (received["bytes"], received["seconds"],
      received["bits_per_second"] / 1e9))
PY
)" || { echo "bench: $name failed (exit status $status):" >&2; tail -n 20 "$out" "$out.err" "$out.server.err" >&2; return 1; }
}

# plain_run NAME SECONDS: plain iperf3 (TCP) over path 1 alone; sets result as mptcp_run does.
plain_run() {
  local out="$work/$1" server
  ip netns exec "$ns_s" timeout -k 5 $(($2 + 30)) iperf3 -s -1 -B "$(addr_s 1)" >"$out.server" 2>&1 &
  server=$!
  rx_pids+=("$server")
  for _ in $(seq 1 100); do
    ip netns exec "$ns_s" ss -Hltn "sport = :5201" | grep -q . && break
    sleep 0.1
  done
  ip netns exec "$ns_c" timeout -k 5 $(($2 + 30)) iperf3 -c "$(addr_s 1)" -B "$(addr_c 1)" -t "$2" -J >"$out.json" || true
  wait "$server" || true
  rx_pids=()
  result="$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["end"]["sum_received"]
print("RESULT gbit_per_s=%.3f" % (r["bits_per_second"] / 1e9))' "$out.json")"
}

# recovery SERIES DROPPED NEED_MBIT: seconds from the drop to the first sample t after it from which the
# transfer keeps pace with NEED_MBIT to the end of the run: every window from a sample t_j >= t to the
# first sample at least 1 s later carries NEED_MBIT over it, less 2 MiB of slack (two messages:
# completions come a message at a time and, at zcnet's steady rate, in lumps that leave some 0.5 s
# windows 20% short). A stall fails the windows that start in it (also when the reporter printed nothing
# during it: iperf3 then reports one long interval), so a later stall counts too; a burst of held-up
# completions at a stall's end can hide up to about half a second of it (see "stalled"). n/a if the
# transfer never keeps pace to the end.
recovery() {
  awk -v td="$2" -v need="$3" '{ t[NR] = $1; b[NR] = $2 }
    END {
      slack = 2 * 1048576
      bad = 0 # the last sample at which a window starts that falls short
      for (j = 1; j <= NR; j++) {
        if (t[j] < td) continue
        for (k = j + 1; k <= NR && t[k] < t[j] + 1; k++) {}
        if (k > NR) break
        if (b[k] - b[j] < need * 1e6 / 8 * (t[k] - t[j]) - slack) bad = j
      }
      for (i = bad + 1; i <= NR && t[i] < td; i++) {}
      if (i > NR || t[NR] < t[i] + 3) print "n/a" # recovered too close to the end to tell
      else printf "%.1f\n", t[i] - td
    }' "$1"
}

# lost SERIES DROPPED RATE_MBIT: how many seconds longer the transfer took from the drop to the end of the
# run than at RATE_MBIT (the survivors' full rate): (t_end - drop) - (B(t_end) - B(drop)) / RATE. Immune to
# bursts and to the sampling; negative if it beat RATE.
lost() {
  awk -v td="$2" -v rate="$3" '{ t[NR] = $1; b[NR] = $2 }
    END {
      for (i = 1; i <= NR && t[i] < td; i++) {}
      if (i >= NR) { print "n/a"; exit }
      printf "%.2f\n", (t[NR] - t[i]) - (b[NR] - b[i]) * 8 / (rate * 1e6)
    }' "$1"
}

# stall SERIES DROPPED RATE_MBIT: the longest run of consecutive sample intervals after the drop each of
# which carried less than a tenth of RATE_MBIT, in seconds: how long completions (zcnet) or delivered
# bytes (iperf3's receiver) all but stopped.
stall() {
  awk -v td="$2" -v rate="$3" '{ t[NR] = $1; b[NR] = $2 }
    END {
      longest = 0; run = 0
      for (i = 2; i <= NR; i++) {
        if (t[i - 1] < td || t[i] <= t[i - 1]) continue
        if ((b[i] - b[i - 1]) * 8 / (t[i] - t[i - 1]) / 1e6 < rate / 10) run += t[i] - t[i - 1]; else run = 0
        if (run > longest) longest = run
      }
      printf "%.1f\n", longest
    }' "$1"
}

# around SERIES DROPPED: goodput in Mbit/s per 0.5 s from 1 s before the drop to 5 s after it.
around() {
  awk -v td="$2" '{ t[NR] = $1; b[NR] = $2 }
    END {
      line = ""
      for (w = td - 1; w < td + 5; w += 0.5) {
        i = 0; j = 0
        for (k = 1; k <= NR; k++) { if (!i && t[k] >= w) i = k; if (!j && t[k] >= w + 0.5) j = k }
        if (!i || !j || j == i) break
        line = line sprintf("%s%.0f", (line == "" ? "" : " "), (b[j] - b[i]) * 8 / (t[j] - t[i]) / 1e6)
      }
      print line
    }' "$1"
}

field() { sed -n "s|.* $2=\([^ ]*\).*|\1|p" <<<"$1"; }

# MP_JOINs the client's MPTCP connections got acknowledged so far (its namespace's counter).
mp_joins() {
  ip netns exec "$ns_c" nstat -saz MPTcpExtMPJoinSynAckRx | awk '$1 == "MPTcpExtMPJoinSynAckRx" { print $2; found = 1 }
    END { if (!found) print 0 }'
}

# ---------------------------------------------------------------- the run

mp_setup
rx_header "bench/qp-multipath.sh: one zcnet queue pair vs Linux MPTCP over 4 veth paths between two namespaces; ${seconds} s per throughput run, failover runs ${failover_seconds} s with path 4 down at ${drop_at} s; $rounds rounds, medians"
echo "# peers: zcnet $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?') (./zcnet bulk, engine $engine," \
  "RDMA WRITE, 1 MiB messages, window 32, 4 subflows: --path $(addr_c 1)=$(addr_s 1) .. $(addr_c 4)=$(addr_s 4));" \
  "$(iperf3 --version | head -n 1) under mptcpize (mptcpd $(dpkg-query -W -f '${Version}' mptcpd 2>/dev/null || echo '?'))," \
  "MPTCP scheduler $(ip netns exec "$ns_c" sysctl -n net.mptcp.scheduler 2>/dev/null || echo default)," \
  "path manager $(ip netns exec "$ns_c" sysctl -n net.mptcp.pm_type 2>/dev/null || echo '?') (0: in-kernel)"
echo "# MPTCP: client endpoints: $(ip -n "$ns_c" mptcp endpoint show | tr '\n' ';') limits (both sides): $(ip -n "$ns_s" mptcp limits show)"
echo "# zcnet: ip netns exec $ns_s ${zcnet[*]} --listen $zcnet_port; ip netns exec $ns_c ${zcnet[*]} --connect $(addr_s 1):$zcnet_port" \
  "--path $(addr_c 1)=$(addr_s 1) --path ... --path $(addr_c 4)=$(addr_s 4) --op write --message 1M --seconds S;" \
  "failover runs add --silence-ms M (both ends, M in: $silences; 2000 is the queue pair's default, heartbeat every M/4)" \
  "and --interval-ms 100 (client)"
echo "# MPTCP: ip netns exec $ns_s mptcpize run iperf3 -s -1 -B $(addr_s 1) [-i 0.1 -f k --forceflush];" \
  "ip netns exec $ns_c mptcpize run iperf3 -c $(addr_s 1) -B $(addr_c 1) -t S -J; plain: the same without mptcpize; $(ip -V)"
echo "# load before: $(uptime)"

declare -A gbits recov lose stalls resent
for round in $(seq 1 "$rounds"); do
  gbit_plain=0.191 # what one 200 Mbit/s path carried in earlier runs; equal's plain run measures it
  for scenario in equal unequal; do
    [[ " $scenarios " == *" $scenario "* ]] || continue
    if [ "$scenario" = equal ]; then mp_shape "${equal[@]}"; else mp_shape "${unequal[@]}"; fi
    [ "$round" -gt 1 ] || echo "# $scenario: $tbf_settings"
    for impl in zcnet mptcp plain; do
      [ "$impl" != plain ] || [ "$scenario" = equal ] || continue
      before="$(mp_sent)"
      case "$impl" in
        zcnet) zcnet_run "$impl-$scenario-$round" "$seconds"; gbit="$(field "$result" gbit/s)"
               extra="shares $(field "$result" shares) live $(field "$result" live) resent $(field "$result" resent)" ;;
        mptcp) joins="$(mp_joins)"; mptcp_run "$impl-$scenario-$round" "$seconds"; gbit="$(field "$result" gbit_per_s)"
               extra="MP_JOINs $(( $(mp_joins) - joins )): iperf3's control and data connections, 3 each" ;;
        plain) plain_run "$impl-$scenario-$round" "$seconds"; gbit="$(field "$result" gbit_per_s)"; extra="path 1 alone"
               gbit_plain="$gbit" ;;
      esac
      gbits[$impl-$scenario]+="$gbit "
      printf '%-14s %-8s round %d: %6.3f Gbit/s  paths %s  (%s; load %s)\n' "$impl" "$scenario" "$round" "$gbit" \
        "$(mp_shares "$before" "$(mp_sent)")" "$extra" "$(cut -d ' ' -f 1 /proc/loadavg)"
    done
  done
  [[ " $scenarios " == *" failover "* ]] || continue
  mp_shape "${equal[@]}"
  # The survivors' full rate: three paths, each carrying what plain iperf3 got over one in this round.
  full="$(awk -v g="$gbit_plain" 'BEGIN { printf "%.0f", 3 * g * 1000 }')"
  need="$(awk -v f="$full" 'BEGIN { printf "%.0f", 0.9 * f }')"
  echo "# failover round $round: the survivors' full rate $full Mbit/s (3 x plain iperf3's one path);" \
    "recovered once the goodput keeps pace with $need Mbit/s (90%) to the end"
  for impl in $(for s in $silences; do echo "zcnet-$s"; done) mptcp; do
    case "$impl" in
      zcnet-*) zcnet_run "failover-$impl-$round" "$failover_seconds" "${impl#zcnet-}"
               resent[$impl]+="$(field "$result" resent | cut -d / -f 2) "
               extra="resent $(field "$result" resent) (frames/bytes), $(field "$result" live) of 4 subflows alive at the end" ;;
      mptcp) mptcp_run "failover-$impl-$round" "$failover_seconds" failover; extra="" ;;
    esac
    r="$(recovery "$series" "$dropped" "$need")"
    l="$(lost "$series" "$dropped" "$full")"
    st="$(stall "$series" "$dropped" "$full")"
    recov[$impl]+="$r "
    lose[$impl]+="$l "
    stalls[$impl]+="$st "
    printf '%-14s failover round %d: recovered in %s s, stalled %s s, %s s lost; Mbit/s per 0.5 s from 1 s before the drop: %s  (%s; load %s)\n' \
      "$impl" "$round" "$r" "$st" "$l" "$(around "$series" "$dropped")" "${extra:-dropped at ${dropped} s}" "$(cut -d ' ' -f 1 /proc/loadavg)"
  done
done
echo "# load after: $(uptime)"

line() { # line A B AGGREGATE_MBIT
  local a b
  a="$(rx_median_of "$1" gbits)"
  b="$(rx_median_of "$2" gbits)"
  echo "$1 $(rx_format "$a" %.3f) Gbit/s ($(rx_divide "$a" "$(rx_divide "$3" 1000 %.3f)") of $3 Mbit/s)," \
    "$2 $(rx_format "$b" %.3f) Gbit/s ($(rx_divide "$b" "$(rx_divide "$3" 1000 %.3f)") of $3 Mbit/s), ratio $(rx_divide "$a" "$b")"
}
echo "plain-iperf3-one-path $(rx_format "$(rx_median_of plain-equal gbits)" %.3f) Gbit/s ($(rx_divide "$(rx_median_of plain-equal gbits)" 0.2) of 200 Mbit/s: what one path carries)"
line zcnet-equal mptcp-equal 800
line zcnet-unequal mptcp-unequal 1000
failover() { # failover IMPL: its medians
  echo "recovered in $(rx_format "$(rx_median_of "$1" recov)" %.1f) s (stalled $(rx_format "$(rx_median_of "$1" stalls)" %.1f) s," \
    "$(rx_format "$(rx_median_of "$1" lose)" %.2f) s lost${resent[$1]:+, $(rx_format "$(rx_median_of "$1" resent)" %.0f) bytes resent})"
}
for s in $silences; do
  echo "zcnet-failover-silence-${s}ms $(failover "zcnet-$s"), mptcp-failover $(failover mptcp)," \
    "ratio $(rx_divide "$(rx_median_of "zcnet-$s" recov)" "$(rx_median_of mptcp recov)") (lower is faster)"
done
