#!/usr/bin/env bash
# The RDMA suite: ib_module_test (the module's side of the net-module contract), then ranks bound
# alternately to two verbs devices (rxe_a and rxe_b in the soft-RoCE VM: two "hosts") run
# rdma_check over the ib module with 1 to 4 ranks, with several module settings, with the module
# chosen by topology, with every op cut into rounds through the chunk arena, and rdma_peer_exit
# (a rank killed mid-transfer, or cut off, must give its peer a clean error). The port counters of
# both devices must show the traffic.
#
# With no active verbs port here, the suite re-runs itself inside the VM of SLIMECCL_RXE_VM (one
# boot for all cases); without that tool, or with the tool not yet installed (it needs QEMU), it
# exits 77 (skip) and says why.
#
# Usage: run_rdma_suite.sh SLIMECCL_RUN RDMA_CHECK RDMA_PEER_EXIT IB_MODULE_TEST
# RDMA_SUITE_CASES (a comma list of case names) runs only those cases.
# Exit status: 0 when every case passes, 1 when one fails, 77 when it cannot run here.
set -uo pipefail

if (($# != 4)); then
  echo "usage: $0 SLIMECCL_RUN RDMA_CHECK RDMA_PEER_EXIT IB_MODULE_TEST" >&2
  exit 2
fi
RUN=$(realpath "$1")
CHECK=$(realpath "$2")
PEER_EXIT=$(realpath "$3")
MODULE_TEST=$(realpath "$4")
CASE_TIMEOUT_S=150

# Devices with at least one ACTIVE port, one per line.
active_devices() {
  local state dev
  for state in /sys/class/infiniband/*/ports/*/state; do
    [[ -r $state ]] || continue
    grep -q ACTIVE "$state" || continue
    dev=${state#/sys/class/infiniband/}
    echo "${dev%%/*}"
  done | sort -u
}

# (No process substitution: the VM has no /dev/fd.)
read -r -a DEVICES <<<"$(active_devices | tr '\n' ' ')"
if ((${#DEVICES[@]} == 0)); then
  if [[ -n ${RXE_VM:-} ]]; then
    echo "FAILED: inside the rxe VM, but no verbs port is ACTIVE"
    exit 1
  fi
  vm=${SLIMECCL_RXE_VM:-}
  if [[ -n $vm && -x $vm ]] && ! command -v qemu-system-x86_64 >/dev/null; then
    echo "SKIP: no active RDMA verbs port on this machine, and the soft-RoCE VM is not installed" \
      "(run $(dirname "$vm")/install once; .ci/run does)"
    exit 77
  fi
  if [[ -n $vm && -x $vm ]]; then
    echo "no active verbs port here: running the suite inside the soft-RoCE VM ($vm)"
    exec "$vm" -t 840 -- bash "$(realpath "$0")" "$RUN" "$CHECK" "$PEER_EXIT" "$MODULE_TEST"
  fi
  echo "SKIP: no active RDMA verbs port on this machine, and no rxe-vm tool at '${vm:-<SLIMECCL_RXE_VM unset>}'"
  exit 77
fi

# Two "hosts": rxe_a and rxe_b when present, else the first two devices (or one twice).
if [[ " ${DEVICES[*]} " == *" rxe_a "* && " ${DEVICES[*]} " == *" rxe_b "* ]]; then
  DEV_A=rxe_a DEV_B=rxe_b
else
  DEV_A=${DEVICES[0]} DEV_B=${DEVICES[1]:-${DEVICES[0]}}
fi
PAIR="$DEV_A,$DEV_B"
echo "devices: $DEV_A and $DEV_B"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failed=0

# Packets a device sent, from its port counters (soft-RoCE, then the InfiniBand ones).
sent_packets() {
  local dir=/sys/class/infiniband/$1/ports/1
  if [[ -r $dir/hw_counters/sent_pkts ]]; then
    cat "$dir/hw_counters/sent_pkts"
  elif [[ -r $dir/counters/port_xmit_packets ]]; then
    cat "$dir/counters/port_xmit_packets"
  else
    echo 0
  fi
}

# Checks that a device sent at least min packets since before; prints the verdict.
expect_packets() {
  local dev=$1 before=$2 min=$3 now
  now=$(sent_packets "$dev")
  if ((now - before >= min)); then
    echo "  $dev sent $((now - before)) packets (at least $min)"
  else
    echo "  FAILED: $dev sent $((now - before)) packets, expected at least $min (did the data go over RDMA?)"
    return 1
  fi
}

# Runs rdma_check under slimeccl-run. Arguments: case name, rank count, minimum packets per
# device, extra rdma_check arguments, then VAR=value settings for the ranks.
check_case() {
  local name=$1 nranks=$2 min=$3 extra=$4 start=$SECONDS status bad=0 a0 b0
  shift 4
  wanted "$name" || return 0
  echo "== $name: $nranks rank(s) $* $extra"
  a0=$(sent_packets "$DEV_A")
  b0=$(sent_packets "$DEV_B")
  env SLIMECCL_NET=ib SLIMECCL_TIMEOUT_MS=120000 "$@" \
    timeout -k 5 "$CASE_TIMEOUT_S" "$RUN" -n "$nranks" --tag-output -- "$CHECK" --devices "$PAIR" $extra \
    >"$WORK/$name.log" 2>&1
  status=$?
  sed 's/^/  | /' "$WORK/$name.log"
  if ((status != 0)); then
    echo "  FAILED: exit status $status$( ((status == 124)) && echo " (timed out after ${CASE_TIMEOUT_S} s)")"
    bad=1
  fi
  local oks
  oks=$(grep -c "rdma_check rank [0-9]*: OK" "$WORK/$name.log")
  if ((oks != nranks)); then
    echo "  FAILED: $oks of $nranks ranks reported OK"
    bad=1
  fi
  expect_packets "$DEV_A" "$a0" "$min" || bad=1
  [[ $DEV_B == "$DEV_A" ]] || expect_packets "$DEV_B" "$b0" "$min" || bad=1
  echo "== $name: $( ((bad)) && echo FAILED || echo passed) in $((SECONDS - start)) s"
  ((bad)) && failed=1
}

# The network device under a verbs device's port 1 (soft-RoCE and RoCE), or nothing.
netdev_of() {
  local ndev=/sys/class/infiniband/$1/ports/1/gid_attrs/ndevs/1
  [[ -r $ndev ]] && cat "$ndev" 2>/dev/null
}

# Waits until a device's port 1 is ACTIVE again (at most 30 s).
wait_active() {
  local i
  for ((i = 0; i < 300; i++)); do
    grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# Two ranks started by hand (a launcher would stop the survivor when rank 1 goes). Arguments:
# case name, what rank 1 does (receives or sends: it is killed meanwhile; stalls: its RoCE link
# is cut once its transfer is in flight, while the TCP side channels stay up on loopback).
peer_exit_case() {
  local name=$1 role=$2 start=$SECONDS port status pid0 pid1 bad=0 netdev="" i
  wanted "$name" || return 0
  if [[ $role == stalls ]]; then
    netdev=$(netdev_of "$DEV_B")
    if [[ -z $netdev || $EUID -ne 0 ]]; then
      echo "== $name: skipped (needs root and the network device under $DEV_B)"
      return
    fi
  fi
  port=$((20000 + RANDOM % 20000))
  echo "== $name: rank 1 $([[ $role == stalls ]] && echo "loses its link ($netdev) while it receives" ||
    echo "is killed while it $role")"
  # soft-RoCE reads a retry count of 7 as "retry forever": only a lower one lets a cut link end
  # in a failed work completion.
  local common=(SLIMECCL_NET=ib SLIMECCL_NRANKS=2 SLIMECCL_COMM_ID=127.0.0.1:$port SLIMECCL_SOCKET_IFNAME=lo
    SLIMECCL_TIMEOUT_MS=120000 SLIMECCL_IB_RETRY_CNT=6)
  env "${common[@]}" SLIMECCL_RANK=0 timeout -k 5 90 "$PEER_EXIT" --victim "$role" --devices "$PAIR" \
    >"$WORK/$name.0.log" 2>&1 &
  pid0=$!
  # In a subshell that stays (the ":" keeps bash from exec'ing the command in its place) and whose
  # stderr is dropped: it would report the signal that ends rank 1.
  (
    env "${common[@]}" SLIMECCL_RANK=1 timeout -k 5 90 "$PEER_EXIT" --victim "$role" --devices "$PAIR" \
      >"$WORK/$name.1.log" 2>&1
    :
  ) 2>/dev/null &
  pid1=$!
  if [[ -n $netdev ]]; then
    for ((i = 0; i < 600; i++)); do
      grep -q "transfer in flight" "$WORK/$name.1.log" && break
      sleep 0.1
    done
    ip link set dev "$netdev" down
  fi
  wait "$pid0"
  status=$?
  if [[ -n $netdev ]]; then
    ip link set dev "$netdev" up
    wait_active "$DEV_A" && wait_active "$DEV_B" || echo "  (the ports did not come back up)"
  fi
  # Rank 1 waits forever when only its link was cut: stop its timeout, which stops it.
  pkill -TERM -P "$pid1" 2>/dev/null
  wait "$pid1" 2>/dev/null
  sed 's/^/  | rank 0: /' "$WORK/$name.0.log"
  sed 's/^/  | rank 1: /' "$WORK/$name.1.log"
  if ((status != 0)) || ! grep -q "rdma_peer_exit rank 0: OK" "$WORK/$name.0.log"; then
    echo "  FAILED: the survivor exited with status $status$( ((status == 124)) && echo " (it hung)")"
    bad=1
  fi
  # A cut link ends in failed work requests on one side at least: their status must be told.
  if [[ -n $netdev ]] && ! grep -q "failed: .* (status [0-9]*, vendor error" "$WORK/$name".[01].log; then
    echo "  FAILED: neither rank reported the status of a failed work completion"
    bad=1
  fi
  echo "== $name: $( ((bad)) && echo FAILED || echo passed) in $((SECONDS - start)) s"
  ((bad)) && failed=1
}

# Whether the case named $1 is to run.
wanted() {
  [[ -z ${RDMA_SUITE_CASES:-} || ",$RDMA_SUITE_CASES," == *",$1,"* ]]
}

# The module alone, through the NetModule interface (one process, both devices).
module_case() {
  local start=$SECONDS status
  wanted module-contract || return 0
  echo "== module-contract: ib_module_test"
  SLIMECCL_IB_HCA="$DEV_A,$DEV_B" timeout -k 5 "$CASE_TIMEOUT_S" "$MODULE_TEST" >"$WORK/module.log" 2>&1
  status=$?
  grep -E "^\[ *(OK|FAILED|SKIPPED) \]|Failure|Expected|Which is|error" "$WORK/module.log" | sed 's/^/  | /'
  if ((status != 0)) || grep -q "SKIPPED \]" "$WORK/module.log"; then
    echo "== module-contract: FAILED (status $status) in $((SECONDS - start)) s"
    failed=1
  else
    echo "== module-contract: passed in $((SECONDS - start)) s"
  fi
}

suite_start=$SECONDS
module_case
check_case two-ranks 2 2000 ""
check_case four-ranks-ring 4 2000 "" SLIMECCL_ALGO=allgather:ring
check_case four-ranks-hd 4 2000 "" SLIMECCL_ALGO=allgather:hd
check_case three-ranks 3 2000 ""
check_case one-rank 1 0 ""
# Every message through the rendezvous, over four queue pairs, registering each buffer anew.
check_case rendezvous-only 2 2000 "" SLIMECCL_IB_EAGER_BYTES=0 SLIMECCL_IB_QPS_PER_CONN=4 SLIMECCL_IB_MR_CACHE=0
# Every op cut into 64 KiB rounds through the comm's chunk arena, as device buffers between hosts
# are: the rounds' copies beside the transfers, over ib. The comm's INFO line shows the route.
check_case staged-chunks 2 2000 "" SLIMECCL_STAGING_CHUNKS=all SLIMECCL_STAGING_CHUNK_BYTES=64K SLIMECCL_DEBUG=INFO \
  SLIMECCL_DEBUG_SUBSYS=INIT
if wanted staged-chunks && ! grep -q "staged ops run in chunks of 65536 bytes" "$WORK/staged-chunks.log"; then
  echo "  FAILED: the comm did not say it stages ops in chunks of 64 KiB"
  failed=1
fi
# No module forced (an empty SLIMECCL_NET): two hosts by SLIMECCL_HOSTID, shm inside each, ib
# between them.
check_case topology-choice 4 1000 "--hosts hostA,hostB" SLIMECCL_NET=
peer_exit_case peer-dies-receiving receives
peer_exit_case peer-dies-sending sends
peer_exit_case link-cut stalls
echo "RDMA suite: $( ((failed)) && echo FAILED || echo passed) in $((SECONDS - suite_start)) s"
exit "$failed"
