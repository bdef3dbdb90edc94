# Helpers shared by the multi-host scripts (tests and perf): skipping, network namespaces that stand
# for hosts, interface byte counters, and running one slimeccl-run per "host".
# Sourced, not run. start_netns_session sets WORK (a scratch directory), which run_node uses.

skip() {
  echo "SKIP: $*"
  exit 77
}

require_netns() {
  ((EUID == 0)) || skip "creating network namespaces needs root"
  command -v ip >/dev/null || skip "iproute2 (ip) is not installed"
  local probe=slimeccl-probe-$$
  if ! ip netns add "$probe" 2>"$WORK/netns.err"; then
    skip "ip netns add failed: $(cat "$WORK/netns.err")"
  fi
  ip netns del "$probe"
}

# Makes WORK, removes it and every namespace made here when the script exits, and skips (77)
# when namespaces cannot be made.
start_netns_session() {
  WORK=$(mktemp -d)
  trap 'cleanup_namespaces; rm -rf "$WORK"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  require_netns
}

NAMESPACES=()
LAUNCHERS=()

# Creates a namespace with loopback up and remembers it for cleanup.
add_namespace() {
  ip netns add "$1"
  NAMESPACES+=("$1")
  ip -n "$1" link set lo up
}

# add_bridged_hosts NAME COUNT SUBNET: COUNT "hosts" (namespaces NAME-0-PID...) on one bridge,
# which lives in a namespace of its own; host h has SUBNET.(h+1)/24 on its veth end. Fills
# HOST_NS and HOST_IFS (the host's interface name) by host index.
add_bridged_hosts() {
  local name=$1 count=$2 subnet=$3 hub=$1-hub-$$ h ns ifname
  add_namespace "$hub" &&
    ip -n "$hub" link add br0 type bridge &&
    ip -n "$hub" link set br0 up || return 1
  HOST_NS=()
  HOST_IFS=()
  for ((h = 0; h < count; h++)); do
    ns=$name-$h-$$
    ifname=h$h-$$ # at most 15 characters
    add_namespace "$ns" &&
      ip link add "$ifname" netns "$ns" type veth peer name "b$ifname" netns "$hub" &&
      ip -n "$hub" link set "b$ifname" master br0 up &&
      ip -n "$ns" addr add "$subnet.$((h + 1))/24" dev "$ifname" &&
      ip -n "$ns" link set "$ifname" up || return 1
    HOST_NS+=("$ns")
    HOST_IFS+=("$ifname")
  done
}

cleanup_namespaces() {
  local pid ns
  for pid in "${LAUNCHERS[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${LAUNCHERS[@]}"; do wait "$pid" 2>/dev/null; done
  for ns in "${NAMESPACES[@]}"; do ip netns del "$ns" 2>/dev/null; done
}

# rx_bytes NAMESPACE INTERFACE
rx_bytes() {
  ip netns exec "$1" cat "/sys/class/net/$2/statistics/rx_bytes"
}

# run_node LOG NAMESPACE NODE_RANK NODES RANKS_PER_NODE MASTER IFNAME RUN CHECK [VAR=VALUE...]
# Starts one launcher in the background; its pid goes to LAUNCHERS.
run_node() {
  local log=$1 ns=$2 node=$3 nodes=$4 ranks=$5 master=$6 ifname=$7 run=$8 check=$9
  shift 9
  ip netns exec "$ns" env -u SLIMECCL_NET -u SLIMECCL_TOPO_FILE SLIMECCL_SOCKET_IFNAME="$ifname" \
    SLIMECCL_TIMEOUT_MS=30000 SLIMECCL_COMM_SECRET="$SECRET" "$@" \
    timeout -k 5 120 "$run" -n "$ranks" --nnodes "$nodes" --node-rank "$node" --master "$master" \
    --tag-output -- "$check" >"$log" 2>&1 &
  LAUNCHERS+=($!)
}

# Waits for every launcher; prints their logs; returns non-zero when one failed.
wait_nodes() {
  local failed=0 i status
  for i in "${!LAUNCHERS[@]}"; do
    wait "${LAUNCHERS[i]}"
    status=$?
    sed "s/^/  node$i | /" "$WORK/node$i.log"
    if ((status != 0)); then
      echo "  FAILED: node $i launcher exited with status $status"
      failed=1
    fi
  done
  LAUNCHERS=()
  return "$failed"
}

# expect_bytes WHAT BYTES at-least|at-most BOUND
expect_bytes() {
  local what=$1 bytes=$2 relation=$3 bound=$4 ok=0
  if [[ $relation == at-least ]]; then ((bytes >= bound)) && ok=1; else ((bytes <= bound)) && ok=1; fi
  if ((ok)); then
    echo "  $what: $bytes bytes ($relation $bound)"
    return 0
  fi
  echo "  FAILED: $what: $bytes bytes, expected $relation $bound"
  return 1
}
