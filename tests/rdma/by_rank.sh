#!/bin/sh
# Usage: by_rank.sh VARIABLE A,B,... COMMAND [ARG...]
# Sets VARIABLE to entry (SLIMECCL_RANK mod n) of the list, then runs COMMAND: under slimeccl-run,
# "by_rank.sh SLIMECCL_IB_HCA rxe_a,rxe_b sendrecv_perf ..." puts the ranks on the devices in turn.
var=$1
list=$2
shift 2
n=$(echo "$list" | tr ',' '\n' | wc -l)
pick=$(echo "$list" | tr ',' '\n' | sed -n "$(( ${SLIMECCL_RANK:?run under slimeccl-run} % n + 1 ))p")
export "$var=$pick"
exec "$@"
