#!/usr/bin/env bash
# AllGather and Send/Recv on 2, 4 and 8 local ranks, measured with slimeccl (shm), Open MPI
# (vader BTL with CMA single copy) and Gloo (TCP on the loopback, PyTorch's CPU path), side by
# side: per size, each library's out-of-place time and busbw, and slimeccl's speed-up over each
# (their time / ours; above 1 means slimeccl is faster). Send/Recv tables add the rate of the
# kernel's single copy measured in the same run (vm_readv_perf: every rank pulling from its left
# neighbour at once) and slimeccl's fraction of it. Builds nothing.
#
#   perf/compare.sh BUILD_DIR
#
# Environment: RANKS ("2 4 8"), OPS ("allgather sendrecv"), MINBYTES (8), MAXBYTES (128M),
# SPLIT (1M), SMALL_ITERS (100) for sizes up to SPLIT, ITERS (20) above it, WARMUP (2), RUNS (1:
# with more, each figure is the median time of that many runs), SLIMECCL_ARGS (more flags for
# slimeccl's tools, e.g. "-R 1" for buffers from slimecclMemAlloc). Small sizes need many iterations:
# with few, one late start (a rank still waking up) weighs on the average as much as the ops.
# A baseline whose tool was not built (MPI or Gloo not found) shows "-".
set -euo pipefail

build=${1:?usage: perf/compare.sh BUILD_DIR}
bin="$build/bin"
ranks=${RANKS:-"2 4 8"}
ops=${OPS:-"allgather sendrecv"}
runs=${RUNS:-1}
read -ra slimeccl_args <<< "${SLIMECCL_ARGS:-}"

# "64K" -> 65536 (suffixes K, M, G are powers of 1024, as the perf tools read them).
bytes() {
  local v=${1^^}
  case $v in
    *K) echo $((${v%K} << 10)) ;; *M) echo $((${v%M} << 20)) ;; *G) echo $((${v%G} << 30)) ;; *) echo "$v" ;;
  esac
}
min=$(bytes "${MINBYTES:-8}") max=$(bytes "${MAXBYTES:-128M}") split=$(bytes "${SPLIT:-1M}")
common=(-f 2 -w "${WARMUP:-2}" -c 1)
sweeps=()  # one perf-tool argument list per sweep, joined by spaces
((min <= split)) && sweeps+=("-b $min -e $((max < split ? max : split)) -n ${SMALL_ITERS:-100}")
((max > split)) && sweeps+=("-b $((min > split ? min : 2 * split)) -e $max -n ${ITERS:-20}")
[[ -x "$bin/slimeccl-run" && -x "$bin/allgather_perf" ]] || { echo "compare.sh: no perf tools in $bin" >&2; exit 2; }

mpi_launch=(mpirun --oversubscribe --bind-to none --mca btl self,vader --mca btl_vader_single_copy_mechanism cma)
[[ $(id -u) == 0 ]] && mpi_launch+=(--allow-run-as-root)

# Prints "size time_us" for each out-of-place row of a perf table on stdin (vm_readv_perf's rows
# have the time in the second column).
rows() { awk -v column="${1:-6}" '/^ *[0-9]/ { print $1, $column }'; }

# Runs one library's tool RUNS times; prints "size median_time_us" per size ("" when not built).
measure() {
  local lib=$1 op=$2 n=$3 tool out
  case $lib in
    slimeccl) tool="$bin/${op}_perf" ;;
    readv) tool="$bin/vm_readv_perf" ;;
    *) tool="$bin/${lib}_${op}_perf" ;;
  esac
  [[ -x $tool ]] || return 0
  out=$(mktemp)
  for ((r = 0; r < runs; ++r)); do
    for sweep in "${sweeps[@]}"; do
      read -ra flags <<< "$sweep"
      readv_flags=("${flags[@]}" -f 2 -w "${WARMUP:-2}")
      flags+=("${common[@]}")
      case $lib in
        # -z 1: each call returns when done, as MPI's and Gloo's calls do (not a stream's handoff).
        slimeccl) SLIMECCL_NET=shm "$bin/slimeccl-run" -n "$n" "$tool" "${flags[@]}" -z 1 "${slimeccl_args[@]}" ;;
        mpi) "${mpi_launch[@]}" -np "$n" "$tool" "${flags[@]}" ;;
        readv) "$tool" -p "$n" "${readv_flags[@]}" ;;
        # A fresh rendezvous directory per run: Gloo refuses keys a previous run left behind.
        gloo) store=$(mktemp -d) && GLOO_PERF_STORE=$store "$bin/slimeccl-run" -n "$n" "$tool" "${flags[@]}"
              rm -rf "$store" ;;
      esac | rows "$([[ $lib == readv ]] && echo 2)" >> "$out" || echo "compare.sh: $lib $op on $n ranks failed" >&2
    done
  done
  sort -k1,1n -k2,2g "$out" | awk '
    { t[$1] = t[$1] " " $2; c[$1]++ }
    END { for (s in t) { split(substr(t[s], 2), v, " "); print s, v[int((c[s] + 1) / 2)] } }' | sort -k1,1n
  rm -f "$out"
}

echo "# slimeccl vs Open MPI vs Gloo, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), medians of $runs run(s)"
echo "# sweeps: $(printf '[%s] ' "${sweeps[@]}")with ${common[*]}${SLIMECCL_ARGS:+ (slimeccl also ${SLIMECCL_ARGS})}"
for op in $ops; do
  for n in $ranks; do
    declare -A t_s=() t_m=() t_g=()
    while read -r s t; do t_s[$s]=$t; done < <(measure slimeccl "$op" "$n")
    while read -r s t; do t_m[$s]=$t; done < <(measure mpi "$op" "$n")
    while read -r s t; do t_g[$s]=$t; done < <(measure gloo "$op" "$n")
    # Send/Recv's reference: the kernel's single copy, every rank pulling from its left neighbour.
    declare -A t_r=()
    [[ $op == sendrecv ]] && while read -r s t; do t_r[$s]=$t; done < <(measure readv "$op" "$n")
    echo
    echo "## $op, $n ranks (out of place; time in us, busbw in GB/s; x = their time / ours)"
    printf "%12s %10s %10s %10s | %8s %8s %8s | %8s %8s" size slimeccl openmpi gloo slimeccl openmpi gloo x-mpi x-gloo
    [[ $op == sendrecv ]] && printf " | %8s %8s" readv x-readv
    printf "\n%12s %10s %10s %10s | %8s %8s %8s | %8s %8s" "(B)" "(us)" "(us)" "(us)" "busbw" "busbw" "busbw" "" ""
    [[ $op == sendrecv ]] && printf " | %8s %8s" "GB/s" ""
    printf "\n"
    for s in $(printf "%s\n" "${!t_s[@]}" | sort -n); do
      # busbw as nccl-tests computes it: AllGather (n-1)/n of the size per time, Send/Recv the size.
      awk -v s="$s" -v a="${t_s[$s]:-}" -v m="${t_m[$s]:-}" -v g="${t_g[$s]:-}" -v r="${t_r[$s]:-}" -v op="$op" -v n="$n" '
        function bw(t) { return t == "" || t <= 0 ? "-" : sprintf("%.2f", s / (t * 1e3) * f) }
        function us(t) { return t == "" ? "-" : t }
        function x(t) { return t == "" || a == "" || a <= 0 ? "-" : sprintf("%.2f", t / a) }
        BEGIN {
          f = op == "allgather" ? (n - 1) / n : 1
          printf "%12s %10s %10s %10s | %8s %8s %8s | %8s %8s", s, us(a), us(m), us(g), bw(a), bw(m), bw(g), x(m), x(g)
          if (op == "sendrecv") printf " | %8s %8s", bw(r), x(r)
          printf "\n"
        }'
    done
    unset t_s t_m t_g t_r
  done
done
