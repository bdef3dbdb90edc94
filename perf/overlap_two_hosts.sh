#!/usr/bin/env bash
# allgather_gemm_perf between two "hosts": two network namespaces on a bridge (a veth pair each), one
# rank in each, talking over sockets. With RATE set (a tc rate such as 10gbit), each veth is shaped to
# that rate with a token bucket, as a link between hosts would be, so that moving the bytes waits
# on the link instead of on the CPU copies of the local veth.
#
# Usage: [RATE=10gbit] overlap_two_hosts.sh SLIMECCL_RUN ALLGATHER_GEMM_PERF [perf arguments...]
# Needs root (ip netns). Prints rank 0's table; exits with the perf tool's status.
set -uo pipefail

if (($# < 2)); then
  echo "usage: [RATE=10gbit] $0 SLIMECCL_RUN ALLGATHER_GEMM_PERF [perf arguments...]" >&2
  exit 2
fi
RUN=$(realpath "$1")
PERF=$(realpath "$2")
shift 2

SUBNET=10.204.0
PORT=29517
source "$(dirname "$(realpath "$0")")/../tests/topo/netns_lib.sh"
start_netns_session

add_bridged_hosts slimeccl-ov 2 "$SUBNET" || { echo "cannot create the namespaces and bridge" >&2; exit 1; }
if [[ -n ${RATE:-} ]]; then
  for h in 0 1; do
    ip netns exec "${HOST_NS[h]}" tc qdisc add dev "${HOST_IFS[h]}" root tbf rate "$RATE" burst 1mb latency 50ms ||
      exit 1
  done
fi

secret=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
node() {
  local rank=$1
  shift
  ip netns exec "${HOST_NS[rank]}" env SLIMECCL_HOSTID="host$rank" SLIMECCL_SOCKET_IFNAME="${HOST_IFS[rank]}" \
    SLIMECCL_COMM_SECRET="$secret" \
    "$RUN" -n 1 --nnodes 2 --node-rank "$rank" --master "$SUBNET.1:$PORT" --timeout 1800 -- "$PERF" "$@"
}
node 1 "$@" >"$WORK/node1.log" 2>&1 &
peer=$!
node 0 "$@"
status=$?
wait "$peer" || { cat "$WORK/node1.log" >&2; ((status)) || status=1; }
exit "$status"
