#!/usr/bin/env bash
# slimeccl against NCCL on the GPUs of one machine, side by side in one run: per op and size, the
# out-of-place time and busbw of slimeccl's perf tool (device buffers, a CUDA-ordered stream) and
# of nccl-tests, and NCCL's time / ours (above 1: slimeccl is faster). Builds nccl-tests from
# NCCL_TESTS (default .nccl-tests, staged by ../shared/gpu/stage-nccl-tests) when not built yet.
#
#   perf/compare_gpu.sh BUILD_DIR
#
# HARNESS=nccl-tests compares like with like instead: one nccl-tests binary run with NCCL and with
# BUILD_DIR/lib's libnccl.so.2, in one layout, medians of interleaved runs (perf/compare_nccl_tests.sh,
# whose settings apply).
#
# Environment: GPUS (2), OPS ("all_gather sendrecv broadcast alltoall"; also all_reduce,
# reduce_scatter, reduce), MINBYTES (8),
# MAXBYTES (1G), ITERS (20), WARMUP (5), LAYOUT (threads: slimeccl's tool drives all GPUs from one
# process, as nccl-tests -g; processes: one process per GPU under slimeccl-run),
# NCCL_TESTS, NCCL_HOME (/usr). NCCL runs with NCCL_NVLS_ENABLE=0 and with LD_LIBRARY_PATH set to
# NCCL_LIBRARY_PATH (default empty), since the caller's path may hold slimeccl's NCCL-compatible
# libnccl.so.2; each table names the libnccl.so.2 that nccl-tests loaded. Exits 1 when a tool
# failed or either side reported wrong values.
set -euo pipefail

build=${1:?usage: perf/compare_gpu.sh BUILD_DIR}
if [[ ${HARNESS:-} == nccl-tests ]]; then exec "$(dirname "$0")/compare_nccl_tests.sh" "$build/lib"; fi
bin="$build/bin"
gpus=${GPUS:-2}
ops=${OPS:-"all_gather sendrecv broadcast alltoall"}
layout=${LAYOUT:-threads}
nccl_tests=${NCCL_TESTS:-.nccl-tests}
sweep=(-b "${MINBYTES:-8}" -e "${MAXBYTES:-1G}" -f 2 -n "${ITERS:-20}" -w "${WARMUP:-5}")
export NCCL_NVLS_ENABLE=0

if [[ ! -x $nccl_tests/build/all_gather_perf ]]; then
  make -C "$nccl_tests" -j"$(nproc)" MPI=0 CUDA_HOME=/usr/local/cuda NCCL_HOME="${NCCL_HOME:-/usr}" \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > /dev/null
fi

# "size time_us busbw" for each out-of-place row of an nccl-tests-style table.
rows() { awk '/^ *[0-9]+ +[0-9]+ +[a-z0-9]+ / { print $1, $6, $8 }'; }
# Out-of-place rows whose #wrong is neither 0 nor N/A.
wrong_rows() { awk '/^ *[0-9]+ +[0-9]+ +[a-z0-9]+ / && $9 != "0" && $9 != "N/A" { print $1 }'; }
status=0

# nccl-tests' names without the underscores: all_reduce_perf is allreduce_perf here.
slimeccl_tool() {
  echo "$bin/${1//_/}_perf"
}

for op in $ops; do
  tool=$(slimeccl_tool "$op")
  [[ -x $tool ]] || { echo "compare_gpu.sh: no $tool" >&2; exit 2; }
  ours_log=$(mktemp) theirs_log=$(mktemp)
  if [[ $layout == processes ]]; then
    "$bin/slimeccl-run" -n "$gpus" "$tool" "${sweep[@]}" -D 1 -c 1 > "$ours_log" 2>&1 || { echo "compare_gpu.sh: $tool failed" >&2; status=1; }
  else
    "$tool" "${sweep[@]}" -D 1 -c 1 -g "$gpus" > "$ours_log" 2>&1 || { echo "compare_gpu.sh: $tool failed" >&2; status=1; }
  fi
  nccl_tool="$nccl_tests/build/${op}_perf"
  nccl_lib=$(LD_LIBRARY_PATH=${NCCL_LIBRARY_PATH:-} ldd "$nccl_tool" | awk '/libnccl/ { print $3 }')
  LD_LIBRARY_PATH=${NCCL_LIBRARY_PATH:-} "$nccl_tool" "${sweep[@]}" -c 1 -g "$gpus" > "$theirs_log" 2>&1 || { echo "compare_gpu.sh: NCCL's ${op}_perf failed" >&2; status=1; }
  grep -iE "error|wrong|fail" "$ours_log" | grep -v "#wrong" | head -5 >&2 || true
  for side in ours theirs; do
    log_var=${side}_log
    bad=$(wrong_rows < "${!log_var}" | tr '\n' ' ')
    [[ -z $bad ]] || { echo "compare_gpu.sh: $op ($side): wrong values at sizes $bad" >&2; status=1; }
  done
  ours=$(rows < "$ours_log") theirs=$(rows < "$theirs_log")
  rm -f "$ours_log" "$theirs_log"
  echo "== $op, $gpus GPUs ($layout), out of place; NCCL from $nccl_lib"
  printf '%12s %12s %10s %12s %10s %10s\n' bytes slimeccl_us busbw nccl_us busbw nccl/ours
  join <(sort -k1,1 <<< "$ours") <(sort -k1,1 <<< "$theirs") | sort -n -k1,1 |
    awk '{ printf "%12s %12s %10s %12s %10s %10.2f\n", $1, $2, $3, $4, $5, ($2 > 0 ? $4 / $2 : 0) }'
done
exit $status
