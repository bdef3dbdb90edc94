#!/usr/bin/env bash
# Runs a perf tool on several "hosts": network namespaces on a bridge (a veth pair each), one
# slimeccl-run per namespace with its own SLIMECCL_HOSTID, so ranks of one host talk over shared
# memory and hosts over TCP (unless SLIMECCL_NET says otherwise). Prints the first host's output
# (rank 0's table). Needs root.
#
# Usage: perf/netns_hosts.sh BIN_DIR HOSTS RANKS_PER_HOST -- TOOL [ARGS...]
#   e.g. perf/netns_hosts.sh build/bin 4 2 -- build/bin/allgather_perf -b 8 -e 16M -f 4
set -uo pipefail

if (($# < 5)) || [[ $4 != -- ]]; then
  echo "usage: $0 BIN_DIR HOSTS RANKS_PER_HOST -- TOOL [ARGS...]" >&2
  exit 2
fi
RUN=$(realpath "$1/slimeccl-run")
HOSTS=$2
RANKS_PER_HOST=$3
shift 4
TOOL=$(realpath "$1")
shift
source "$(dirname "$(realpath "$0")")/../tests/topo/netns_lib.sh"
start_netns_session

SUBNET=10.203.0
add_bridged_hosts slimeccl-perf "$HOSTS" "$SUBNET" || { echo "cannot create the namespaces and bridge" >&2; exit 1; }
NS=("${HOST_NS[@]}")
IFNAMES=("${HOST_IFS[@]}")

PORT=$((20000 + RANDOM % 20000))
SECRET=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
for ((h = 0; h < HOSTS; h++)); do
  ip netns exec "${NS[h]}" env SLIMECCL_HOSTID="perfhost$h" SLIMECCL_SOCKET_IFNAME="${IFNAMES[h]}" \
    SLIMECCL_COMM_SECRET="$SECRET" \
    timeout -k 5 590 "$RUN" -n "$RANKS_PER_HOST" ${BIND:+--bind "$BIND"} --nnodes "$HOSTS" --node-rank "$h" --master "$SUBNET.1:$PORT" \
    -- "$TOOL" "$@" >"$WORK/node$h.log" 2>&1 &
  LAUNCHERS+=($!)
done
failed=0
for h in "${!LAUNCHERS[@]}"; do
  wait "${LAUNCHERS[h]}" || { failed=1; echo "host $h failed:" >&2; cat "$WORK/node$h.log" >&2; }
done
LAUNCHERS=()
cat "$WORK/node0.log"
exit "$failed"
