#!/usr/bin/env bash
# Open MPI's plm_rsh_agent for bench/collectives.sh (coll_mpirun in bench/collectives-lib.sh): it stands in
# for ssh. mpirun calls it as
#   netns-agent.sh [OPTIONS...] HOST WORDS...
# with HOST one of the rank addresses and WORDS the daemon's command line, quoted for a remote shell. It
# runs WORDS, joined by spaces as ssh would hand them to the remote shell, in the network namespace that
# COLL_NETNS_MAP ("ADDR=NS ADDR=NS ...", set by coll_mpirun) names for HOST, and in a new UTS namespace
# whose host name is HOST: the namespaces share the machine's host name otherwise, and Open MPI would take
# the four ranks for one node.
set -euo pipefail
while [ $# -gt 0 ] && [[ "$1" == -* ]]; do shift; done
[ $# -ge 2 ] || { echo "netns-agent: usage: netns-agent.sh [OPTIONS...] HOST COMMAND..." >&2; exit 255; }
host="$1"
shift
ns=""
for pair in ${COLL_NETNS_MAP:-}; do
  [ "${pair%%=*}" != "$host" ] || ns="${pair#*=}"
done
[ -n "$ns" ] || { echo "netns-agent: no namespace for host $host (COLL_NETNS_MAP: ${COLL_NETNS_MAP:-unset})" >&2; exit 255; }
[[ "$host" =~ ^[0-9.]+$ ]] || { echo "netns-agent: host $host is not an IPv4 address" >&2; exit 255; }
exec ip netns exec "$ns" unshare --uts /bin/sh -c "hostname $host && $*"
