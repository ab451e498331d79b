# Sourced by bench/collectives.sh after lib.sh and rx-lib.sh: four ranks (RANKS, 2 to 8, when set), each in a
# network namespace of its own, joined by a switch (a Linux bridge in a fifth namespace), every link shaped with tc tbf so that the
# network is the bottleneck; the Gloo and Open MPI peer programs (bench/collectives/) built for it; and how
# each peer's ranks are started in their namespaces.
# Defines: coll_ranks, coll_ns (rank k's namespace), coll_addr (rank k's address), coll_switch, coll_hub,
#   coll_subnet, coll_build_dir, coll_shaping, coll_bytes, coll_bucket, coll_queue_ms, coll_loss, coll_subflows,
#   coll_conditions, coll_probe_start, coll_probe_stop, coll_loss_dropped, coll_require_root, coll_require,
#   coll_build, coll_build_mpi, coll_setup, coll_cleanup, coll_spawn, coll_mpirun, coll_arguments.
#
# The network's conditions, from the environment (each checked before anything is created):
#   BUCKET    tbf's burst on every shaped end, bytes (K, M: powers of 1024), 64K to 1M; default lib.sh's
#             tbf_shape: the larger of 64 KiB and 4 ms of the rate. A shallow bucket is a switch with little
#             buffer for bursts: a sender whose packets come in bunches gets them queued or dropped.
#   QUEUE_MS  tbf's latency, the queue in front of the bucket, ms, 5 to 50; default 50. A short queue
#             drops what a window larger than the path holds puts in it.
#   LOSS      percent of the rank links' TCP packets the switch drops at random, 0.05 to 0.5 (up to two
#             decimals); default none. An nft rule in the bridge family on the switch: on frames
#             forwarded from one port rk to another, `numgen random mod 10000 < LOSS*100` drops.
#   SUBFLOWS  zcnet's TCP connections per queue pair (./zcnet allreduce --subflows), 1 or 2; default 1.
# coll_conditions says them in one line (the header's and the matrix's).
#
# Topology (the "star"): namespace coll_switch holds bridge cb0; rank k's namespace holds one veth, eth0,
# address 10.79.0.(k+1)/24, whose peer rk is a port of the bridge. tbf at rate R shapes both directions of
# every rank's link: eth0's egress (what rank k sends) and rk's egress (what the switch delivers to rank k).
# So each rank can send at R and receive at R at once, whatever the pattern, and the bridge itself is not
# shaped. B, the per-rank bandwidth of the bounds, is R, one way. An allreduce of S bytes must send and
# receive 2(n-1)/n * S bytes at some rank whatever the algorithm, so it takes at least 2(n-1)/n * S / B (the
# ring bound: the ring sends exactly that much from every rank); allgather and reduce-scatter of S bytes
# (nccl-tests' sizes) at least (n-1)/n * S / B. With busbw as nccl-tests defines it (algbw * 2(n-1)/n,
# resp. * (n-1)/n), every bound is busbw <= B. tbf counts Ethernet, IP and TCP headers (66 of every 1514
# bytes with TCP timestamps at MTU 1500), so TCP payload tops out at 1448/1514 = 0.956 R: a peer at 0.95 of
# the bound is at the wire's limit. The bounds are strict only for operations that send well over tbf's
# burst per rank (500 KB at 1000 Mbit/s, 4 ms of R: lib.sh's tbf_shape): a rank that waits between small
# operations gets its bucket back and sends the next burst faster than R, so sizes below a few MiB can
# show more than B.
# The bridge has an address too, coll_hub = 10.79.0.254, for Open MPI's launcher (mpirun runs in the switch
# namespace and its daemons call back to it there); the collectives' own traffic only goes rank to rank.
# Addresses: only 10.79.0.0/24, only inside these namespaces; every namespace is new and its name carries a
# random id, so concurrent runs do not meet; coll_cleanup deletes them all (the caller's EXIT trap calls it).

coll_ranks="${RANKS:-4}"
[[ "$coll_ranks" =~ ^[2-8]$ ]] || die "RANKS must be 2 to 8, not $coll_ranks"
coll_id="$(printf '%04x' "$RANDOM")"
coll_switch="zcco-$coll_id-sw"
coll_ns=()
coll_addr=()
for _k in $(seq 0 $((coll_ranks - 1))); do
  coll_ns+=("zcco-$coll_id-r$_k")
  coll_addr+=("10.79.0.$((_k + 1))")
done
unset _k
coll_hub=10.79.0.254
coll_subnet=10.79.0.0/24
coll_build_dir="$root/bench/target/collectives"
coll_shaping=""

# coll_bytes NAME 64K: 65536 (K, M, G: powers of 1024); dies naming NAME when the value is not a size.
coll_bytes() {
  local name="$1" v="$2" n="${2%[KkMmGg]}"
  [[ "$n" =~ ^[0-9]+$ ]] || die "$name must be a number of bytes, K, M or G after it (e.g. 64K), not '$v'"
  case "${v: -1}" in
    [Kk]) echo $((n << 10)) ;;
    [Mm]) echo $((n << 20)) ;;
    [Gg]) echo $((n << 30)) ;;
    *) echo "$n" ;;
  esac
}
coll_bucket=""
if [ -n "${BUCKET:-}" ]; then
  coll_bucket="$(coll_bytes BUCKET "$BUCKET")" || exit 1
  [ "$coll_bucket" -ge 65536 ] && [ "$coll_bucket" -le 1048576 ] \
    || die "BUCKET must be 64K to 1M (65536 to 1048576 bytes), not $BUCKET"
fi
coll_queue_ms="${QUEUE_MS:-50}"
[[ "$coll_queue_ms" =~ ^[0-9]+$ ]] && [ "$coll_queue_ms" -ge 5 ] && [ "$coll_queue_ms" -le 50 ] \
  || die "QUEUE_MS must be a whole number of milliseconds, 5 to 50, not '$coll_queue_ms'"
coll_loss="${LOSS:-}"
# In ten-thousandths: nft's numgen draws a whole number.
coll_loss_per_10k=0
if [ -n "$coll_loss" ]; then
  [[ "$coll_loss" =~ ^0?\.[0-9]{1,2}$ ]] || die "LOSS must be a percentage, 0.05 to 0.5 with up to two decimals, not '$coll_loss'"
  coll_loss_per_10k="$(awk -v p="$coll_loss" 'BEGIN { printf "%d", p * 100 + 0.5 }')"
  [ "$coll_loss_per_10k" -ge 5 ] && [ "$coll_loss_per_10k" -le 50 ] || die "LOSS must be 0.05 to 0.5 (percent), not $coll_loss"
fi
coll_subflows="${SUBFLOWS:-1}"
[[ "$coll_subflows" =~ ^[12]$ ]] || die "SUBFLOWS must be 1 or 2, not '$coll_subflows'"

coll_conditions() {
  echo "bucket ${coll_bucket:-default} B, queue ${coll_queue_ms} ms, loss ${coll_loss:-0}%, zcnet subflows $coll_subflows"
}

# Stops before anything is created when this is not root: namespaces and qdiscs need it.
coll_require_root() {
  [ "$(id -u)" = 0 ] || die "needs root: it creates network namespaces, a bridge and tbf qdiscs (nothing was created)"
}

# The Debian packages the peers and the topology need, installed when missing.
coll_require() {
  require_package ip iproute2
  require_package tc iproute2
  require_package unshare util-linux
  require_package ping iputils-ping
  [ -z "$coll_loss" ] || require_package nft nftables
  require_package g++ g++
  require_package /usr/include/gloo/config.h libgloo-dev
  require_package mpirun openmpi-bin
  # Not mpicc: openmpi-bin already puts that wrapper on the PATH, without the headers it compiles against.
  require_package "/usr/lib/$(gcc -dumpmachine)/openmpi/include/mpi.h" libopenmpi-dev
}

# Builds gloo_bench and mpi_bench (coll_build_mpi) into coll_build_dir when a source is newer than its binary.
coll_build() {
  local src="$root/bench/collectives"
  mkdir -p "$coll_build_dir"
  if [ ! -x "$coll_build_dir/gloo_bench" ] || [ "$src/gloo_bench.cc" -nt "$coll_build_dir/gloo_bench" ]; then
    echo "bench: building $coll_build_dir/gloo_bench ..." >&2
    g++ -O2 -std=c++17 -Wall -Wextra -o "$coll_build_dir/gloo_bench" "$src/gloo_bench.cc" -lgloo -pthread \
      || die "could not build gloo_bench"
  fi
  coll_build_mpi
}

# Builds mpi_bench alone into coll_build_dir when its source is newer than its binary.
coll_build_mpi() {
  local src="$root/bench/collectives"
  mkdir -p "$coll_build_dir"
  if [ ! -x "$coll_build_dir/mpi_bench" ] || [ "$src/mpi_bench.c" -nt "$coll_build_dir/mpi_bench" ]; then
    echo "bench: building $coll_build_dir/mpi_bench ..." >&2
    mpicc -O2 -std=c11 -Wall -Wextra -D_POSIX_C_SOURCE=200809L -o "$coll_build_dir/mpi_bench" "$src/mpi_bench.c" \
      || die "could not build mpi_bench"
  fi
}

# coll_setup RATE_MBIT: the namespaces, the bridge, the links and their shaping (see the header).
coll_setup() {
  local k rate="$1"
  ip netns add "$coll_switch"
  ip -n "$coll_switch" link set lo up
  ip -n "$coll_switch" link add cb0 type bridge forward_delay 0 stp_state 0
  ip -n "$coll_switch" addr add "$coll_hub/24" dev cb0
  ip -n "$coll_switch" link set cb0 up
  for k in $(seq 0 $((coll_ranks - 1))); do
    ip netns add "${coll_ns[$k]}"
    ip -n "${coll_ns[$k]}" link set lo up
    # No IPv6 in the rank namespaces: no router solicitations or neighbour discovery on the shaped links.
    ip netns exec "${coll_ns[$k]}" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip link add name eth0 netns "${coll_ns[$k]}" type veth peer name "r$k" netns "$coll_switch"
    ip -n "$coll_switch" link set "r$k" master cb0
    ip -n "${coll_ns[$k]}" addr add "${coll_addr[$k]}/24" dev eth0
    ip -n "${coll_ns[$k]}" link set eth0 up
    ip -n "$coll_switch" link set "r$k" up
    coll_shape "${coll_ns[$k]}" eth0 "$rate" >/dev/null
    coll_shaping="$(coll_shape "$coll_switch" "r$k" "$rate")"
  done
  [ -z "$coll_loss" ] || coll_drop_at_random
  ip netns exec "$coll_switch" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  # Every rank reaches every other before anything is measured.
  for k in $(seq 1 $((coll_ranks - 1))); do
    ip netns exec "${coll_ns[0]}" ping -c 1 -W 2 "${coll_addr[$k]}" >/dev/null \
      || die "rank 0 cannot reach rank $k (${coll_addr[$k]})"
  done
}

# coll_shape NS DEV RATE_MBIT: lib.sh's tbf_shape, unless BUCKET or QUEUE_MS is set: then tbf with those.
coll_shape() {
  if [ -z "$coll_bucket" ] && [ "$coll_queue_ms" = 50 ]; then tbf_shape "$@"; return; fi
  local burst="$coll_bucket"
  if [ -z "$burst" ]; then
    burst=$(($3 * 1000000 / 8 / 250))
    [ "$burst" -ge 65536 ] || burst=65536
  fi
  tc -n "$1" qdisc replace dev "$2" root tbf rate "${3}mbit" burst "$burst" latency "${coll_queue_ms}ms"
  echo "tbf rate ${3}mbit burst $burst latency ${coll_queue_ms}ms"
}

# coll_drop_at_random: the switch drops LOSS percent of the TCP packets it forwards between rank ports, at
# random (a bridge-family rule, so it sees the frames the bridge forwards; the hub's own traffic, Open
# MPI's launcher, goes to cb0 and is not dropped). Counted: nft list ruleset -a in the switch namespace.
coll_drop_at_random() {
  ip netns exec "$coll_switch" nft -f - <<NFT || die "could not add the loss rule (nft, table bridge zcco_loss)"
table bridge zcco_loss {
  chain forward {
    type filter hook forward priority 0; policy accept;
    iifname "r*" oifname "r*" ip protocol tcp numgen random mod 10000 < $coll_loss_per_10k counter drop
  }
}
NFT
}

# coll_loss_dropped: how many packets the loss rule dropped so far ("" without one).
coll_loss_dropped() {
  [ -n "$coll_loss" ] || return 0
  ip netns exec "$coll_switch" nft list table bridge zcco_loss | sed -n 's/.*counter packets \([0-9]*\).*/\1/p'
}

# coll_probe_start DIR NAME: until coll_probe_stop, every PROBE_INTERVAL seconds (default 0.5), rank 0's
# sockets as the kernel sees them (ss -tin: congestion control, cwnd, rtt, retransmissions, bytes in flight,
# pacing rate) into DIR/NAME.ss (bench/collectives-ss.py sums them up); at the stop, what changed since the
# start in every rank's TCP counters (nstat: DIR/NAME.nstat) and in every qdisc's (DIR/NAME.tc: per shaped
# end, packets sent, dropped and overlimits). bench/collectives.sh's PROBE_DIR.
coll_probe_pid=""
coll_probe_name=""
coll_probe_start() {
  local dir="$1" k
  coll_probe_name="$dir/$2"
  mkdir -p "$dir"
  # nstat keeps its last counts per user, not per namespace: a history file per rank.
  for k in $(seq 0 $((coll_ranks - 1))); do NSTAT_HISTORY="$rx_work/nstat.$k" ip netns exec "${coll_ns[$k]}" nstat -n; done
  coll_qdisc_counters >"$coll_probe_name.tc.start"
  # One loop inside the namespace: an `ip netns exec` per sample would cost more than the sample.
  ip netns exec "${coll_ns[0]}" bash -c 'while :; do echo "== $(date +%s.%N)"; ss -tin state established; sleep "$1"; done' \
    probe "${PROBE_INTERVAL:-0.5}" >"$coll_probe_name.ss" 2>&1 &
  coll_probe_pid=$!
  rx_pids+=("$coll_probe_pid")
}
coll_probe_stop() {
  local k
  [ -n "$coll_probe_pid" ] || return 0
  kill "$coll_probe_pid" 2>/dev/null || true
  wait "$coll_probe_pid" 2>/dev/null || true
  coll_probe_pid=""
  for k in $(seq 0 $((coll_ranks - 1))); do
    echo "== rank $k"
    NSTAT_HISTORY="$rx_work/nstat.$k" ip netns exec "${coll_ns[$k]}" nstat | grep -E 'TcpOutSegs|TcpRetransSegs|TCPLossProbes|TCPTimeouts|TCPLostRetransmit|TCPFastRetrans|TCPSpuriousRTOs|TCPDSACKRecv |TCPSACKReorder|TCPSlowStartRetrans' || true
  done >"$coll_probe_name.nstat"
  coll_qdisc_counters | awk 'NR == FNR { p[$1] = $2; d[$1] = $3; o[$1] = $4; next }
    { printf "%-10s sent %d pkt, dropped %d, overlimits %d\n", $1, $2 - p[$1], $3 - d[$1], $4 - o[$1] }' \
    "$coll_probe_name.tc.start" - >"$coll_probe_name.tc"
  rm -f "$coll_probe_name.tc.start"
}
# coll_qdisc_counters: one line per shaped end: its name, packets sent, dropped, overlimits (tc -s).
coll_qdisc_counters() {
  local k
  for k in $(seq 0 $((coll_ranks - 1))); do
    tc -n "${coll_ns[$k]}" -s qdisc show dev eth0 | coll_qdisc_line "rank$k"
    tc -n "$coll_switch" -s qdisc show dev "r$k" | coll_qdisc_line "switch-r$k"
  done
}
coll_qdisc_line() {
  sed -n "s/.*Sent [0-9]* bytes \([0-9]*\) pkt (dropped \([0-9]*\), overlimits \([0-9]*\).*/$1 \1 \2 \3/p" | head -n 1
}

# Ends what still runs in the namespaces (all of it started by this run: a rank or an Open MPI daemon left
# behind by a failure), then deletes them (their veth ends, and so the peers, and the bridge go with them).
# Safe to call twice.
coll_cleanup() {
  local ns pids
  for ns in "${coll_ns[@]}" "$coll_switch"; do
    pids="$(ip netns pids "$ns" 2>/dev/null || true)"
    # shellcheck disable=SC2086 # one pid a line
    [ -z "$pids" ] || kill $pids 2>/dev/null || true
  done
  for ns in "${coll_ns[@]}" "$coll_switch"; do ip netns del "$ns" 2>/dev/null || true; done
}

# coll_spawn NAME SECONDS COMMAND_FN: starts COMMAND_FN's command for every rank k in rank k's namespace, all
# at once, each bounded by SECONDS, and waits for all. COMMAND_FN K prints nothing: it sets the array
# coll_cmd to rank K's command line. Rank k's output goes to $rx_work/NAME.k (stderr to NAME.k.err).
# Sets coll_out to rank 0's output file. Fails, showing every rank's last lines, if any rank failed.
coll_spawn() {
  local name="$1" secs="$2" fn="$3" k status=0 pids=()
  for k in $(seq 0 $((coll_ranks - 1))); do
    "$fn" "$k"
    ip netns exec "${coll_ns[$k]}" timeout -k 5 "$secs" "${coll_cmd[@]}" \
      >"$rx_work/$name.$k" 2>"$rx_work/$name.$k.err" &
    pids+=($!)
    rx_pids+=($!)
  done
  for k in "${!pids[@]}"; do wait "${pids[$k]}" || status=$?; done
  rx_pids=()
  coll_out="$rx_work/$name.0"
  if [ "$status" != 0 ]; then
    echo "bench: $name: a rank exited with $status; the ranks said:" >&2
    for k in $(seq 0 $((coll_ranks - 1))); do tail -n 5 "$rx_work/$name.$k" "$rx_work/$name.$k.err" >&2 2>/dev/null || true; done
    return 1
  fi
}

# coll_mpirun NAME SECONDS PROGRAM [ARGS...]: Open MPI's mpirun, in the switch namespace, starts one rank of
# PROGRAM per rank namespace: each rank's "host" is its address, and mpirun reaches it through
# plm_rsh_agent = bench/collectives/netns-agent.sh, which runs the daemon (orted) that mpirun would have
# started over ssh in that address's namespace instead (and in a UTS namespace of its own whose host name
# is the address, so that Open MPI sees four nodes, not one). Data over TCP only (pml ob1, btl tcp and self:
# no shared memory, which would work across network namespaces and bypass the links), on 10.79.0.0/24
# only; the daemons' control traffic to mpirun (oob tcp) as well. mpi_yield_when_idle: the ranks share
# this machine's few cores, and Open MPI, which sets it itself on a node it knows is oversubscribed, sees one
# rank on one slot per node here; without it the ranks' busy polling keeps the others off the cores (some
# 9 ms per 1 KiB allreduce on 2 cores instead of 0.1 ms). Output to $rx_work/NAME (stderr NAME.err),
# coll_out set to it; fails, showing the last lines, if mpirun failed.
coll_mpirun() {
  local name="$1" secs="$2" hosts="" k status=0
  shift 2
  for k in $(seq 0 $((coll_ranks - 1))); do hosts+="${hosts:+,}${coll_addr[$k]}:1"; done
  coll_mpirun_cmd=(mpirun --allow-run-as-root --oversubscribe -np "$coll_ranks" --host "$hosts"
    --mca plm rsh --mca plm_rsh_agent "$root/bench/collectives/netns-agent.sh" --mca plm_rsh_no_tree_spawn 1
    --mca pml ob1 --mca btl "tcp,self" --mca btl_tcp_if_include "$coll_subnet" --mca oob_tcp_if_include "$coll_subnet"
    --mca mpi_yield_when_idle 1 "$@")
  COLL_NETNS_MAP="$(for k in $(seq 0 $((coll_ranks - 1))); do printf '%s=%s ' "${coll_addr[$k]}" "${coll_ns[$k]}"; done)" \
    ip netns exec "$coll_switch" timeout -k 5 "$secs" "${coll_mpirun_cmd[@]}" >"$rx_work/$name" 2>"$rx_work/$name.err" &
  rx_pids+=($!)
  wait $! || status=$?
  rx_pids=()
  coll_out="$rx_work/$name"
  if [ "$status" != 0 ]; then
    echo "bench: $name: mpirun exited with $status; it said:" >&2
    tail -n 20 "$rx_work/$name" "$rx_work/$name.err" >&2 2>/dev/null || true
    return 1
  fi
}

# coll_arguments MAX MIN [rate-mbit] [max-size]: a script's two arguments (defaults 1000 and MAX) and MIN_SIZE
# (default MIN) into rate, max_bytes and min_bytes, refused unless they make sense.
coll_arguments() {
  local default_max="$1" default_min="$2"
  shift 2
  rate="${1:-1000}"
  [[ "$rate" =~ ^[0-9]+$ ]] && [ "$rate" -ge 1 ] || die "rate-mbit must be a whole number of Mbit/s"
  max_bytes="$(coll_bytes max-size "${2:-$default_max}")" || exit 1
  min_bytes="$(coll_bytes MIN_SIZE "${MIN_SIZE:-$default_min}")" || exit 1
  [ "$min_bytes" -ge 16 ] && [ "$min_bytes" -le "$max_bytes" ] || die "need 16 <= MIN_SIZE <= max-size"
}
