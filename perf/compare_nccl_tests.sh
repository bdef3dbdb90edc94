#!/usr/bin/env bash
# One harness, two libraries: each nccl-tests binary, built once against the machine's NCCL, runs
# with NCCL and then with slimeccl's libnccl.so.2 first on LD_LIBRARY_PATH, in the same layout,
# RUNS times interleaved; per op and size the median time of each (out of place and in place) and
# NCCL's time / slimeccl's (above 1: slimeccl is faster). Every run must pass nccl-tests' own check.
#
#   perf/compare_nccl_tests.sh LIB_DIR
#
# LIB_DIR holds slimeccl's libnccl.so.2 and what it loads (a build tree's lib/). Environment: GPUS
# (2), OPS ("all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv"), MINBYTES (8),
# MAXBYTES (4M), ITERS (20), WARMUP (5), RUNS (3), GRAPHS (0; N: nccl-tests -G N, each size as a CUDA
# graph of N ops), LAYOUT (threads: one process drives every GPU, -g GPUS; processes: mpirun -np GPUS,
# -g 1, nccl-tests built with MPI=1), NCCL_TESTS (.nccl-tests, staged by
# ../shared/gpu/stage-nccl-tests; built here when not yet), NCCL_HOME (/usr), OUT_DIR (where each
# run's log goes; none when empty), NCCL_LIBRARY_PATH (the LD_LIBRARY_PATH of NCCL's runs, default
# empty: the caller's may hold slimeccl's library; slimeccl's runs get LIB_DIR alone). Both
# libraries run with NCCL_NVLS_ENABLE=0. Exits 1 when a run failed or reported wrong values.
set -euo pipefail

lib_dir=$(cd "${1:?usage: perf/compare_nccl_tests.sh LIB_DIR}" && pwd)
gpus=${GPUS:-2}
ops=${OPS:-"all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv"}
layout=${LAYOUT:-threads}
runs=${RUNS:-3}
nccl_tests=${NCCL_TESTS:-.nccl-tests}
out_dir=${OUT_DIR:-}
export NCCL_NVLS_ENABLE=0
args=(-b "${MINBYTES:-8}" -e "${MAXBYTES:-4M}" -f 2 -n "${ITERS:-20}" -w "${WARMUP:-5}" -G "${GRAPHS:-0}")

if [[ $layout == processes ]]; then
  build=build-mpi
  make_args=(MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi)
  launch=(mpirun --allow-run-as-root --oversubscribe -np "$gpus" -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH)
  per_process=(-g 1)
else
  build=build
  make_args=(MPI=0)
  launch=()
  per_process=(-g "$gpus")
fi
if [[ ! -x $nccl_tests/$build/all_reduce_perf ]]; then
  make -C "$nccl_tests" -j"$(nproc)" BUILDDIR="$build" "${make_args[@]}" CUDA_HOME=/usr/local/cuda \
    NCCL_HOME="${NCCL_HOME:-/usr}" NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > /dev/null
fi

# "size oop_time ip_time" for each row of a table; rows with a #wrong neither 0 nor N/A fail.
rows() { awk '/^ *[0-9]+ +[0-9]+ +[a-z0-9]+ / { print $1, $6, $10 }'; }
wrong_rows() { awk '/^ *[0-9]+ +[0-9]+ +[a-z0-9]+ / && (($9 != "0" && $9 != "N/A") || ($13 != "0" && $13 != "N/A")) { print $1 }'; }
# The median of each size's times in the files given, one "size oop ip" line per size.
medians() {
  cat "$@" | sort -n -k1,1 | awk '
    function median(list,   n, a, i, j, t) {
      n = split(list, a, " ")
      for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { oop[$1] = oop[$1] " " $2; ip[$1] = ip[$1] " " $3; if (!($1 in seen)) { seen[$1] = 1; order[++count] = $1 } }
    END { for (k = 1; k <= count; ++k) print order[k], median(oop[order[k]]), median(ip[order[k]]) }'
}

status=0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for op in $ops; do
  binary="$nccl_tests/$build/${op}_perf"
  [[ -x $binary ]] || { echo "compare_nccl_tests.sh: no $binary" >&2; exit 2; }
  for run in $(seq "$runs"); do
    for side in nccl ours; do
      log="$scratch/$op.$side.$run.log"
      path=${NCCL_LIBRARY_PATH:-}
      [[ $side == ours ]] && path=$lib_dir
      if ! LD_LIBRARY_PATH=$path "${launch[@]}" "$binary" "${args[@]}" "${per_process[@]}" -c 1 > "$log" 2>&1; then
        echo "compare_nccl_tests.sh: $op ($side, run $run) failed:" >&2
        tail -5 "$log" >&2
        status=1
      fi
      bad=$(wrong_rows < "$log" | tr '\n' ' ')
      [[ -z $bad ]] || { echo "compare_nccl_tests.sh: $op ($side, run $run): wrong values at sizes $bad" >&2; status=1; }
      rows < "$log" > "$log.rows"
      [[ -n $out_dir ]] && cp "$log" "$out_dir/${op}_${layout}_G${GRAPHS:-0}_${side}_${run}.log"
    done
  done
  version() { awk -F'nccl-library=' 'NF > 1 { split($2, v, " "); print v[1]; exit }' "$scratch/$op.$1.1.log"; }
  graphs=""
  [[ ${GRAPHS:-0} != 0 ]] && graphs=", CUDA graphs of $GRAPHS"
  echo "== $op, $gpus GPUs ($layout$graphs), medians of $runs interleaved runs; nccl-library" \
    "$(version nccl) vs $(version ours)"
  printf '%12s %10s %10s %8s %10s %10s %8s\n' bytes nccl_us ours_us x nccl_ip ours_ip x_ip
  join <(medians "$scratch"/"$op".nccl.*.log.rows | sort -k1,1) <(medians "$scratch"/"$op".ours.*.log.rows | sort -k1,1) |
    sort -n -k1,1 |
    awk '{ printf "%12s %10.2f %10.2f %8.2f %10.2f %10.2f %8.2f\n", $1, $2, $4, ($4 > 0 ? $2 / $4 : 0), $3, $5, ($5 > 0 ? $3 / $5 : 0) }'
done
exit $status
