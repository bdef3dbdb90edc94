#!/usr/bin/env bash
# Three "hosts" (network namespaces on one bridge) with two ranks each: AllGather over all six
# ranks, every byte checked by hosts_allgather_check, with the algorithm the tuner picks, then
# with the ring and the hierarchical AllGather forced (SLIMECCL_ALGO). The byte counters show
# that ranks of one host exchange blocks through shared memory, not loopback, and how much each
# algorithm sends between hosts: the ring brings each host N-1 = 5 blocks over its link, the
# hierarchical AllGather only the 4 blocks of the other hosts' ranks.
#
# Usage: three_hosts.sh SLIMECCL_RUN HOSTS_ALLGATHER_CHECK
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

HOSTS=3
RANKS_PER_HOST=2
NRANKS=$((HOSTS * RANKS_PER_HOST))
MIB=$((1 << 20))
# hosts_allgather_check gathers blocks of about 17 MiB in all per rank. Whatever the algorithm,
# each host must receive the blocks of the 4 ranks elsewhere; loopback carries only bootstrap
# messages when same-host blocks go through shared memory.
BLOCK_BYTES_PER_RANK=$((1 + 4099 + MIB + 13 + 16 * MIB))
OTHER_HOSTS_BLOCKS=$(((NRANKS - RANKS_PER_HOST) * BLOCK_BYTES_PER_RANK))
RING_BLOCKS=$(((NRANKS - 1) * BLOCK_BYTES_PER_RANK))
HEADERS_AND_BOOTSTRAP=$((4 * MIB))
MAX_LOOPBACK_PER_HOST=$((4 * MIB))
NO_BOUND=$((1 << 62))

add_bridged_hosts slimeccl-3h "$HOSTS" 10.202.0 || skip "cannot create the namespaces and bridge"
NS=("${HOST_NS[@]}")
IFS_IN_NS=("${HOST_IFS[@]}")

# run_case NAME PORT SLIMECCL_ALGO MIN_RX_PER_HOST MAX_RX_PER_HOST
run_case() {
  local name=$1 port=$2 algo=$3 min_rx=$4 max_rx=$5 failed=0 h rank rx lo start_s=$SECONDS
  local -a rx_before lo_before
  SECRET=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
  for ((h = 0; h < HOSTS; h++)); do
    rx_before[h]=$(rx_bytes "${NS[h]}" "${IFS_IN_NS[h]}")
    lo_before[h]=$(rx_bytes "${NS[h]}" lo)
  done
  echo "== $name: $HOSTS hosts x $RANKS_PER_HOST ranks, SLIMECCL_ALGO=${algo:-unset}"
  for ((h = 0; h < HOSTS; h++)); do
    run_node "$WORK/node$h.log" "${NS[h]}" "$h" "$HOSTS" "$RANKS_PER_HOST" "10.202.0.1:$port" "${IFS_IN_NS[h]}" \
      "$RUN" "$CHECK" SLIMECCL_HOSTID="host$h" ${algo:+SLIMECCL_ALGO=$algo}
  done
  wait_nodes || failed=1
  for ((rank = 0; rank < NRANKS; rank++)); do
    if ! grep -q "hosts_allgather_check rank $rank of $NRANKS: OK" "$WORK"/node*.log; then
      echo "  FAILED: rank $rank did not report OK"
      failed=1
    fi
  done
  for ((h = 0; h < HOSTS; h++)); do
    rx=$(($(rx_bytes "${NS[h]}" "${IFS_IN_NS[h]}") - rx_before[h]))
    lo=$(($(rx_bytes "${NS[h]}" lo) - lo_before[h]))
    expect_bytes "host$h received over its link" "$rx" at-least "$min_rx" || failed=1
    if ((max_rx != NO_BOUND)); then
      expect_bytes "host$h received over its link" "$rx" at-most "$max_rx" || failed=1
    fi
    expect_bytes "host$h loopback (shm between its ranks)" "$lo" at-most "$MAX_LOOPBACK_PER_HOST" || failed=1
  done
  if ((failed)); then
    echo "== $name: FAILED after $((SECONDS - start_s)) s"
  else
    echo "== $name: passed in $((SECONDS - start_s)) s"
  fi
  return "$failed"
}

result=0
run_case tuned 29610 "" "$OTHER_HOSTS_BLOCKS" "$NO_BOUND" || result=1
run_case ring 29611 allgather:ring "$RING_BLOCKS" "$NO_BOUND" || result=1
run_case hierarchical 29612 allgather:hier "$OTHER_HOSTS_BLOCKS" $((OTHER_HOSTS_BLOCKS + HEADERS_AND_BOOTSTRAP)) || result=1
exit "$result"
