#!/usr/bin/env bash
# SLIMECCL_SOCKET_IFNAME steers the traffic: two "hosts" (network namespaces) joined by two veth
# pairs on separate subnets, one rank each. Each case names one pair (exact names, '='); the data
# of hosts_allgather_check must cross that pair while the other one stays quiet.
#
# Usage: ifname_steering.sh SLIMECCL_RUN HOSTS_ALLGATHER_CHECK
# Exit status: 0 pass, 1 fail, 77 skip (not root, or no network namespaces).
set -uo pipefail

if (($# != 2)); then
  echo "usage: $0 SLIMECCL_RUN HOSTS_ALLGATHER_CHECK" >&2
  exit 2
fi
RUN=$(realpath "$1")
CHECK=$(realpath "$2")
source "$(dirname "$0")/netns_lib.sh"
start_netns_session

MIB=$((1 << 20))
BLOCK_BYTES_PER_RANK=$((1 + 4099 + MIB + 13 + 16 * MIB))
# Counted at both ends, the chosen pair carries each host's blocks to the other one; the other
# pair carries only stray packets.
MIN_STEERED_RX=$((2 * BLOCK_BYTES_PER_RANK))
MAX_IDLE_RX=$((256 * 1024))

NS_A=slimeccl-st-a-$$
NS_B=slimeccl-st-b-$$
set -e
add_namespace "$NS_A"
add_namespace "$NS_B"
for pair in 1 2; do
  ip link add "sta$pair$$" netns "$NS_A" type veth peer name "stb$pair$$" netns "$NS_B"
  ip -n "$NS_A" addr add "10.203.$pair.1/24" dev "sta$pair$$"
  ip -n "$NS_B" addr add "10.203.$pair.2/24" dev "stb$pair$$"
  ip -n "$NS_A" link set "sta$pair$$" up
  ip -n "$NS_B" link set "stb$pair$$" up
done
set +e

# Both pairs' receive counters, summed over the two ends.
pair_rx() {
  echo $(($(rx_bytes "$NS_A" "sta$1$$") + $(rx_bytes "$NS_B" "stb$1$$")))
}

# run_case PAIR PORT: both hosts use only the interfaces of PAIR.
run_case() {
  local pair=$1 port=$2 other=$((3 - $1)) failed=0 before_used before_other used other_rx
  SECRET=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
  before_used=$(pair_rx "$pair")
  before_other=$(pair_rx "$other")
  echo "== SLIMECCL_SOCKET_IFNAME names pair $pair (=sta$pair$$ / =stb$pair$$)"
  run_node "$WORK/node0.log" "$NS_A" 0 2 1 "10.203.$pair.1:$port" "=sta$pair$$" "$RUN" "$CHECK" SLIMECCL_HOSTID=hostA
  run_node "$WORK/node1.log" "$NS_B" 1 2 1 "10.203.$pair.1:$port" "=stb$pair$$" "$RUN" "$CHECK" SLIMECCL_HOSTID=hostB
  wait_nodes || failed=1
  for rank in 0 1; do
    grep -q "hosts_allgather_check rank $rank of 2: OK" "$WORK"/node*.log || {
      echo "  FAILED: rank $rank did not report OK"
      failed=1
    }
  done
  used=$(($(pair_rx "$pair") - before_used))
  other_rx=$(($(pair_rx "$other") - before_other))
  expect_bytes "pair $pair (named) received" "$used" at-least "$MIN_STEERED_RX" || failed=1
  expect_bytes "pair $other (not named) received" "$other_rx" at-most "$MAX_IDLE_RX" || failed=1
  return "$failed"
}

result=0
run_case 1 29620 || result=1
run_case 2 29621 || result=1
if ((result)); then echo "== FAILED"; else echo "== both cases passed"; fi
exit "$result"
