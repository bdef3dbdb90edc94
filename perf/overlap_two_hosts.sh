#!/usr/bin/env bash
# allgather_gemm_perf between two "hosts": two network namespaces joined by a veth pair, one rank
# in each, talking over sockets. With RATE set (a tc rate such as 10gbit), the veth is shaped to
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

NS_A=slimeccl-ov-a-$$
NS_B=slimeccl-ov-b-$$
VETH_A=sova$$
VETH_B=sovb$$
ADDR_A=10.202.0.1
ADDR_B=10.202.0.2
PORT=29517
WORK=$(mktemp -d)

cleanup() {
  ip netns del "$NS_A" 2>/dev/null
  ip netns del "$NS_B" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ip netns add "$NS_A" && ip netns add "$NS_B" &&
  ip link add "$VETH_A" netns "$NS_A" type veth peer name "$VETH_B" netns "$NS_B" &&
  ip -n "$NS_A" addr add "$ADDR_A/24" dev "$VETH_A" && ip -n "$NS_B" addr add "$ADDR_B/24" dev "$VETH_B" &&
  ip -n "$NS_A" link set lo up && ip -n "$NS_A" link set "$VETH_A" up &&
  ip -n "$NS_B" link set lo up && ip -n "$NS_B" link set "$VETH_B" up || exit 1
if [[ -n ${RATE:-} ]]; then
  for end in "$NS_A $VETH_A" "$NS_B $VETH_B"; do
    read -r ns dev <<<"$end"
    ip netns exec "$ns" tc qdisc add dev "$dev" root tbf rate "$RATE" burst 1mb latency 50ms || exit 1
  done
fi

secret=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
node() {
  local rank=$1 ns=$2 dev=$3
  shift 3
  ip netns exec "$ns" env SLIMECCL_HOSTID="host$rank" SLIMECCL_SOCKET_IFNAME="$dev" SLIMECCL_COMM_SECRET="$secret" \
    "$RUN" -n 1 --nnodes 2 --node-rank "$rank" --master "$ADDR_A:$PORT" --timeout 1800 -- "$PERF" "$@"
}
node 1 "$NS_B" "$VETH_B" "$@" >"$WORK/node1.log" 2>&1 &
peer=$!
node 0 "$NS_A" "$VETH_A" "$@"
status=$?
wait "$peer" || { cat "$WORK/node1.log" >&2; ((status)) || status=1; }
exit "$status"
