#!/usr/bin/env bash
# torch.distributed on CPU tensors through the slimeccl backend, beside gloo (same torchrun job)
# and beside slimeccl's own perf tools on the same ranks and sizes (same script run): per op and
# size, the tool's time, the backend's, the backend's overhead over the tool, gloo's time and the
# backend's speed-up over gloo. The tools run unbound (--bind none), as torchrun leaves its ranks.
# Builds nothing; needs the Python package in BUILD_DIR/python.
#
#   perf/compare_torch.sh BUILD_DIR
#
# Environment: RANKS (4), SIZES (64K,256K,1M,4M), ITERS (100), WARMUP (5), PYTHON (python3 that
# has torch; default /usr/bin/python3), PORT (29691).
set -euo pipefail
build=$(cd "${1:?usage: perf/compare_torch.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
ranks=${RANKS:-4} sizes=${SIZES:-64K,256K,1M,4M} iters=${ITERS:-100} warmup=${WARMUP:-5}
python=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

first=${sizes%%,*} last=${sizes##*,}
for tool in allreduce allgather; do
  "$build/bin/slimeccl-run" -n "$ranks" --bind none "$build/bin/${tool}_perf" -b "$first" -e "$last" -f 4 -n "$iters" \
    -w "$warmup" -c 0 > "$tmp/$tool.txt"
done
PYTHONPATH=$build/python OMP_NUM_THREADS=1 "$here/../tests/python/torchrun.sh" "$python" "${PORT:-29691}" "$ranks" \
  "$here/torch_backend_perf.py" --sizes "$sizes" --iters "$iters" --warmup "$warmup" 2>/dev/null |
  sed -n 's/^\(\[[^]]*\]:\)\{0,1\}\(torch .*\)/\2/p' > "$tmp/torch.txt"

echo "# $ranks ranks, float32, $iters iterations per size; times in us (mean over ranks of each rank's average)"
printf '%-24s %10s %10s %10s %9s %10s %12s\n' op bytes tool backend overhead gloo "gloo/backend"
for op in all_reduce all_gather_into_tensor; do
  tool=allreduce
  [[ $op == all_reduce ]] || tool=allgather
  grep "^torch $op " "$tmp/torch.txt" | while read -r _ _ bytes _ _ ours _ _ gloo _; do
    tool_us=$(awk -v b="$bytes" '$1 == b { print $6; exit }' "$tmp/$tool.txt")
    awk -v op="$op" -v b="$bytes" -v t="$tool_us" -v o="$ours" -v g="$gloo" 'BEGIN {
      printf "%-24s %10d %10.1f %10.1f %8.1f%% %10.1f %11.1fx\n", op, b, t, o, 100 * (o - t) / t, g, g / o }'
  done
done
