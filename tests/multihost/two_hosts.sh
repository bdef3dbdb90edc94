#!/usr/bin/env bash
# Two "hosts" as network namespaces joined by a veth pair, two ranks on each. Runs multihost_check
# under one slimeccl-run per namespace, first with the transports chosen from topology (shared
# memory inside a host, sockets across the veth), then with SLIMECCL_NET=socket for every peer.
# Besides the data checks of multihost_check, the interface byte counters confirm which path the
# data took.
#
# Usage: two_hosts.sh SLIMECCL_RUN MULTIHOST_CHECK
# Exit status: 0 when both cases pass, 1 when one fails, 77 (skip) without root or netns support.
set -uo pipefail

if (($# != 2)); then
  echo "usage: $0 SLIMECCL_RUN MULTIHOST_CHECK" >&2
  exit 2
fi
RUN=$(realpath "$1")
CHECK=$(realpath "$2")

skip() {
  echo "SKIP: $*"
  exit 77
}

((EUID == 0)) || skip "creating network namespaces needs root"
command -v ip >/dev/null || skip "iproute2 (ip) is not installed"

NS_A=slimeccl-mh-a-$$
NS_B=slimeccl-mh-b-$$
VETH_A=smha$$ # interface names have at most 15 characters
VETH_B=smhb$$
ADDR_A=10.201.0.1
ADDR_B=10.201.0.2
RANKS_PER_HOST=2
NODES=2
LAUNCH_TIMEOUT_S=120 # two cases of at most 125 s stay under the ctest TIMEOUT of 300 s
MIB=$((1 << 20))
# multihost_check's AllGather sweep alone must bring each host the other host's blocks: about
# 108 MiB each way. 64 MiB leaves room and is far above what bootstrap exchanges.
MIN_CROSS_HOST_BYTES=$((64 * MIB))
# The same sweep moves about 54 MiB each way between the two ranks of a host. When that goes
# through shared memory, loopback carries only bootstrap messages; forced onto sockets, it
# carries the data.
MAX_LOOPBACK_BYTES_WITH_SHM=$((8 * MIB))
MIN_LOOPBACK_BYTES_WITH_SOCKETS=$((32 * MIB))

WORK=$(mktemp -d)
launcher_pids=()

# shellcheck disable=SC2317  # runs from the EXIT trap
cleanup() {
  local pid
  for pid in "${launcher_pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${launcher_pids[@]}"; do wait "$pid" 2>/dev/null; done
  ip netns del "$NS_A" 2>/dev/null
  ip netns del "$NS_B" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
# Turn signals into an exit so that the EXIT trap cleans up.
trap 'exit 130' INT
trap 'exit 143' TERM

# The two hosts: a namespace each, one end of the veth pair in each, lo and the veth up.
create_hosts() {
  ip netns add "$NS_A" &&
    ip netns add "$NS_B" &&
    ip link add "$VETH_A" netns "$NS_A" type veth peer name "$VETH_B" netns "$NS_B" &&
    ip -n "$NS_A" addr add "$ADDR_A/24" dev "$VETH_A" &&
    ip -n "$NS_B" addr add "$ADDR_B/24" dev "$VETH_B" &&
    ip -n "$NS_A" link set lo up && ip -n "$NS_A" link set "$VETH_A" up &&
    ip -n "$NS_B" link set lo up && ip -n "$NS_B" link set "$VETH_B" up
}
# Failing here means the machine cannot host the test (no netns or veth support), not a bug.
create_hosts 2>"$WORK/setup.err" || skip "cannot create the namespaces and veth pair: $(cat "$WORK/setup.err")"

# rx_bytes of an interface inside a namespace.
rx_bytes() {
  ip netns exec "$1" cat "/sys/class/net/$2/statistics/rx_bytes"
}

# Starts the launcher of one node in its namespace, in the background.
# Arguments: case name, node rank, namespace, interface, host id, master port, secret, SLIMECCL_NET.
start_node() {
  local name=$1 node=$2 ns=$3 ifname=$4 hostid=$5 port=$6 secret=$7 net=$8
  ip netns exec "$ns" env -u SLIMECCL_NET ${net:+SLIMECCL_NET=$net} \
    SLIMECCL_HOSTID="$hostid" SLIMECCL_SOCKET_IFNAME="$ifname" SLIMECCL_TIMEOUT_MS=20000 \
    SLIMECCL_COMM_SECRET="$secret" \
    timeout -k 5 "$LAUNCH_TIMEOUT_S" "$RUN" -n "$RANKS_PER_HOST" --nnodes "$NODES" --node-rank "$node" \
    --master "$ADDR_A:$port" --tag-output -- "$CHECK" >"$WORK/$name.node$node.log" 2>&1 &
  launcher_pids+=($!)
}

# Checks a byte count against a bound; prints the verdict and returns non-zero when it fails.
# Arguments: description, bytes, "at-least" or "at-most", bound.
expect_bytes() {
  local what=$1 bytes=$2 relation=$3 bound=$4 ok=0
  if [[ $relation == at-least ]]; then ((bytes >= bound)) && ok=1; else ((bytes <= bound)) && ok=1; fi
  if ((ok)); then
    echo "  $what: $((bytes / MIB)) MiB ($relation $((bound / MIB)) MiB)"
  else
    echo "  FAILED: $what: $bytes bytes, expected $relation $bound"
    return 1
  fi
}

# Runs one case: both launchers at once, then checks their status, the OK line of every rank and
# the traffic on the veth and on loopback. Arguments: case name, master port, SLIMECCL_NET value
# (empty: unset).
run_case() {
  local name=$1 port=$2 net=$3 failed=0 node rank pid status
  local secret veth_before lo_a_before lo_b_before start_s=$SECONDS
  secret=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
  veth_before=$(($(rx_bytes "$NS_A" "$VETH_A") + $(rx_bytes "$NS_B" "$VETH_B")))
  lo_a_before=$(rx_bytes "$NS_A" lo)
  lo_b_before=$(rx_bytes "$NS_B" lo)

  echo "== case $name (SLIMECCL_NET=${net:-unset})"
  launcher_pids=()
  start_node "$name" 0 "$NS_A" "$VETH_A" hostA "$port" "$secret" "$net"
  start_node "$name" 1 "$NS_B" "$VETH_B" hostB "$port" "$secret" "$net"
  for node in 0 1; do
    pid=${launcher_pids[node]}
    wait "$pid"
    status=$?
    sed "s/^/  node$node | /" "$WORK/$name.node$node.log"
    if ((status == 124)); then
      echo "  FAILED: node $node launcher timed out after ${LAUNCH_TIMEOUT_S} s"
      failed=1
    elif ((status != 0)); then
      echo "  FAILED: node $node launcher exited with status $status"
      failed=1
    fi
  done
  launcher_pids=()

  for ((rank = 0; rank < NODES * RANKS_PER_HOST; rank++)); do
    if ! grep -q "multihost_check rank $rank: OK" "$WORK/$name".node*.log; then
      echo "  FAILED: rank $rank did not report OK"
      failed=1
    fi
  done

  local veth_bytes lo_a_bytes lo_b_bytes
  veth_bytes=$(($(rx_bytes "$NS_A" "$VETH_A") + $(rx_bytes "$NS_B" "$VETH_B") - veth_before))
  lo_a_bytes=$(($(rx_bytes "$NS_A" lo) - lo_a_before))
  lo_b_bytes=$(($(rx_bytes "$NS_B" lo) - lo_b_before))
  expect_bytes "veth, both ways" "$veth_bytes" at-least $((2 * MIN_CROSS_HOST_BYTES)) || failed=1
  if [[ -z $net ]]; then
    expect_bytes "hostA loopback (shm inside)" "$lo_a_bytes" at-most "$MAX_LOOPBACK_BYTES_WITH_SHM" || failed=1
    expect_bytes "hostB loopback (shm inside)" "$lo_b_bytes" at-most "$MAX_LOOPBACK_BYTES_WITH_SHM" || failed=1
  else
    expect_bytes "hostA loopback" "$lo_a_bytes" at-least "$MIN_LOOPBACK_BYTES_WITH_SOCKETS" || failed=1
    expect_bytes "hostB loopback" "$lo_b_bytes" at-least "$MIN_LOOPBACK_BYTES_WITH_SOCKETS" || failed=1
  fi

  if ((failed)); then
    echo "== case $name: FAILED after $((SECONDS - start_s)) s"
  else
    echo "== case $name: passed in $((SECONDS - start_s)) s"
  fi
  return "$failed"
}

result=0
run_case topology 29500 "" || result=1
run_case socket 29501 socket || result=1
exit "$result"
