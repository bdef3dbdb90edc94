#!/usr/bin/env bash
# Runs the library with the CUDA toolkit out of reach: an empty folder mounted over it in a mount
# namespace of this script's own. libslimeccl.so and libnccl.so.2 carry the CUDA runtime inside
# (static), so they load, and host memory works: the unit tests, every collective with each of its
# algorithms forced on 2 and 3 ranks, more collectives and Send/Recv on forked and threaded ranks,
# the README's example, a program written for NCCL. (The perf tools and the CUDA tests link the
# shared CUDA runtime themselves, as programs that use CUDA do.)
#   without_cuda.sh BUILD_DIR CUDA_DIR
# Exits 77 (skipped) where it cannot make the namespace (not root, no unshare).
set -euo pipefail
build=$(cd "${1:?usage: without_cuda.sh BUILD_DIR CUDA_DIR}" && pwd) cuda=${2:?usage: without_cuda.sh BUILD_DIR CUDA_DIR}
cuda=$(readlink -f "$cuda")
if [[ $(id -u) != 0 ]] || ! command -v unshare > /dev/null; then
  echo "skipped: needs root and unshare to hide $cuda"
  exit 77
fi
export build cuda
exec unshare --mount --propagation private bash -euo pipefail -c '
  mount -t tmpfs none "$cuda" || { echo "skipped: cannot mount over $cuda"; exit 77; }
  [[ -z $(ls -A "$cuda") ]]
  for lib in "$build/lib/libslimeccl.so.0" "$build/lib/libnccl.so.2"; do
    missing=$(ldd "$lib" | grep "not found" || true)
    [[ -z $missing ]] || { echo "$lib does not load without CUDA: $missing"; exit 1; }
  done
  "$build/bin/slimeccl-unit-tests" --gtest_brief=1 > /tmp/without_cuda_unit.log 2>&1 ||
    { tail -30 /tmp/without_cuda_unit.log; echo "unit tests failed without CUDA"; exit 1; }
  "$build/bin/slimeccl_api_tests" --gtest_brief=1 --gtest_filter="*AllGather*2ranks*:*AllReduce*3ranks*:*SendRecv*:*CollectiveSweep*2ranks:*CollectiveSweep*3ranks" \
    > /tmp/without_cuda_api.log 2>&1 || { tail -30 /tmp/without_cuda_api.log; echo "api tests failed without CUDA"; exit 1; }
  out=$("$build/bin/slimeccl-run" -n 4 "$build/bin/allgather_example")
  [[ $(grep -c "blocks gathered, 0 wrong values" <<< "$out") == 4 ]] ||
    { echo "$out"; echo "the README example failed without CUDA"; exit 1; }
  if [[ -x $build/bin/nccl_host_program ]]; then
    "$build/bin/slimeccl-run" -n 2 "$build/bin/nccl_host_program" > /dev/null ||
      { echo "a program written for NCCL failed without CUDA"; exit 1; }
  fi
  echo "ran without CUDA: unit tests, api tests, the README example, a program written for NCCL"
'
