#!/usr/bin/env bash
# Runs an nccl-tests tool (built with MPI=1) on several "hosts", as perf/netns_hosts.sh runs
# slimeccl's tools: network namespaces on a bridge, one veth each, RANKS_PER_HOST processes per
# namespace under one mpirun. MPI itself talks through shared memory, which namespaces do not split;
# its launcher's PMIx server, reached over TCP, listens on a veth of this namespace on the same
# bridge. Each process gets its namespace's NCCL_HOSTID, so NCCL takes its net transport between
# namespaces (sockets over the veths) and not shared memory or NVLink, and a hostname of its own
# (a UTS namespace), so nccl-tests numbers the GPUs of each host from 0. nccl-tests prints its
# table from the first rank. Needs root, mpirun and unshare.
#
# Usage: perf/nccl_netns_hosts.sh HOSTS RANKS_PER_HOST -- TOOL [ARGS...]
#   e.g. perf/nccl_netns_hosts.sh 2 1 -- .nccl_build/all_gather_perf -b 4M -e 256M -f 4 -g 1
# Environment: NCCL_* variables pass through (NCCL_NVLS_ENABLE=0 and NCCL_IB_DISABLE=1 are set).
set -uo pipefail

if (($# < 4)) || [[ $3 != -- ]]; then
  echo "usage: $0 HOSTS RANKS_PER_HOST -- TOOL [ARGS...]" >&2
  exit 2
fi
HOSTS=$1
RANKS_PER_HOST=$2
shift 3
TOOL=$(realpath "$1")
shift
source "$(dirname "$(realpath "$0")")/../tests/topo/netns_lib.sh"
start_netns_session

SUBNET=10.204.0
add_bridged_hosts nccl-perf "$HOSTS" "$SUBNET" || { echo "cannot create the namespaces and bridge" >&2; exit 1; }
# The launcher's end on the bridge (removed with the bridge's namespace).
LAUNCHER_IF=nl-$$
ip link add "$LAUNCHER_IF" type veth peer name "b$LAUNCHER_IF" netns "nccl-perf-hub-$$" &&
  ip -n "nccl-perf-hub-$$" link set "b$LAUNCHER_IF" master br0 up &&
  ip addr add "$SUBNET.254/24" dev "$LAUNCHER_IF" &&
  ip link set "$LAUNCHER_IF" up || { echo "cannot connect the launcher to the bridge" >&2; exit 1; }
export PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include=$LAUNCHER_IF

# One MPMD part per host: its ranks enter the host's namespace, take its hostname and NCCL_HOSTID.
parts=()
for ((h = 0; h < HOSTS; h++)); do
  ((h > 0)) && parts+=(:)
  parts+=(-np "$RANKS_PER_HOST" ip netns exec "${HOST_NS[h]}" unshare --uts
    sh -c "echo ncclhost$h > /proc/sys/kernel/hostname && exec env NCCL_HOSTID=ncclhost$h NCCL_SOCKET_IFNAME=${HOST_IFS[h]} \"\$@\"" sh
    "$TOOL" "$@")
done
export NCCL_NVLS_ENABLE=0 NCCL_IB_DISABLE=1
passed=(-x PATH)
for name in LD_LIBRARY_PATH $(compgen -e | grep '^NCCL_'); do [[ -v $name ]] && passed+=(-x "$name"); done
mpirun --allow-run-as-root --oversubscribe "${passed[@]}" "${parts[@]}"
