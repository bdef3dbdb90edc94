#!/usr/bin/env bash
# The ib module beside perftest on the same two devices, in one boot of the soft-RoCE VM (or
# directly where verbs devices exist): ib_write_lat / ib_write_bw (rxe_b serves, rxe_a connects
# to 10.77.0.2, GID index 1), then slimeccl's ib_module_perf (the module alone),
# rdma_pingpong_perf (one-way over the public API), sendrecv_perf and allgather_perf with
# SLIMECCL_NET=ib and the ranks alternating between the devices.
#
# slimeccl runs with SLIMECCL_IB_TIMEOUT=14, perftest's default ACK timeout.
#
# Usage: ib_perf_compare.sh BUILD_DIR [ROUNDS]   (ROUNDS repeats the whole set; default 1)
set -uo pipefail

BUILD=$(realpath "${1:?usage: $0 BUILD_DIR [ROUNDS]}")
ROUNDS=${2:-1}
if [[ ! -d /sys/class/infiniband/rxe_a && -z ${RXE_VM:-} ]]; then
  vm=${SLIMECCL_RXE_VM:-$(dirname "$(realpath "$0")")/../../../shared/rxe-vm/run}
  [[ -x $vm ]] || { echo "no rxe_a device and no rxe-vm tool at $vm" >&2; exit 77; }
  exec "$vm" -t 1800 -- bash "$(realpath "$0")" "$BUILD" "$ROUNDS"
fi
SERVER=10.77.0.2
PORT=18700
export SLIMECCL_NET=ib
# perftest's ACK timeout, so that both sides retransmit alike.
export SLIMECCL_IB_TIMEOUT=14

# A perftest pair: the server on rxe_b, the client on rxe_a; prints the client's result row.
perftest() {
  local tool=$1
  shift
  PORT=$((PORT + 1))
  "$tool" -d rxe_b -x 1 -F -p "$PORT" "$@" >/dev/null 2>&1 &
  local server=$! i
  for ((i = 0; i < 100; i++)); do
    ss -Hltn "sport = :$PORT" | grep -q . && break
    sleep 0.1
  done
  echo "\$ $tool -d rxe_a -x 1 -F $* $SERVER"
  "$tool" -d rxe_a -x 1 -F -p "$PORT" "$@" "$SERVER" | grep -A1 "#bytes" | tail -2
  wait "$server"
}

HERE=$(dirname "$(realpath "$0")")

# slimeccl-run with the ranks alternating between rxe_a and rxe_b.
ranks() {
  local n=$1
  shift
  echo "\$ SLIMECCL_NET=ib SLIMECCL_IB_TIMEOUT=14 slimeccl-run -n $n by_rank.sh SLIMECCL_IB_HCA rxe_a,rxe_b $*"
  "$BUILD/bin/slimeccl-run" -n "$n" -- "$HERE/by_rank.sh" SLIMECCL_IB_HCA rxe_a,rxe_b "$@" 2>&1 |
    grep -v "^#  Rank\|^# Using\|^#$\|^# nThread\|^#  *(B)\|^# Avg\|^# Out of"
}

for ((round = 1; round <= ROUNDS; round++)); do
  echo "=== round $round, load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "--- 8-byte latency"
  perftest ib_write_lat -s 8 -n 5000
  echo "\$ ib_module_perf lat --devices rxe_a,rxe_b -s 8 -n 5000"
  "$BUILD/bin/ib_module_perf" lat --devices rxe_a,rxe_b -s 8 -n 5000 -w 500
  ranks 2 "$BUILD/bin/rdma_pingpong_perf" lat -b 8 -e 8 -n 2000 -w 200
  echo "--- one-way bandwidth"
  for size in 65536 1048576 4194304; do
    perftest ib_write_bw -s "$size" -n $((size > 1048576 ? 100 : size == 1048576 ? 200 : 2000))
  done
  echo "\$ ib_module_perf bw --devices rxe_a,rxe_b -s 65536 -n 1000 -d 16; ... -s 1048576 -n 200 -d 16"
  "$BUILD/bin/ib_module_perf" bw --devices rxe_a,rxe_b -s 65536 -n 1000 -w 50 -d 16
  "$BUILD/bin/ib_module_perf" bw --devices rxe_a,rxe_b -s 1048576 -n 200 -w 10 -d 16
  ranks 2 "$BUILD/bin/rdma_pingpong_perf" bw -b 65536 -e 65536 -n 400 -w 16 -d 16
  ranks 2 "$BUILD/bin/rdma_pingpong_perf" bw -b 1048576 -e 4194304 -f 4 -n 60 -w 4 -d 16
  echo "--- both ways at once"
  perftest ib_write_bw -b -s 1048576 -n 200
  ranks 2 "$BUILD/bin/sendrecv_perf" -b 8 -e 4M -f 8 -n 20 -w 5
  echo "--- AllGather"
  ranks 2 "$BUILD/bin/allgather_perf" -b 1K -e 4M -f 8 -n 10 -w 2
  ranks 4 "$BUILD/bin/allgather_perf" -b 1K -e 4M -f 8 -n 10 -w 2
done
