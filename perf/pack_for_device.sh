#!/usr/bin/env bash
# Packs what a GPU machine without this project's build needs to run it: the libraries of BUILD_DIR
# (slimeccl and the NCCL-compatible libnccl.so.2) and the shared libraries they load that are not
# CUDA's or the C library's, under lib/; the CUDA test programs, the GPU perf tools and the launcher
# (slimeccl-run), under bin/; all stripped, in one xz tarball (a lent machine takes a working tree
# of 64 MiB at most).
#
#   perf/pack_for_device.sh BUILD_DIR TARBALL
#
# There: tar xf TARBALL -C DIR, then LD_LIBRARY_PATH=DIR/lib for nccl-tests against slimeccl (as
# perf/compare_nccl_tests.sh DIR/lib does) and for DIR/bin's programs.
set -euo pipefail

build=${1:?usage: perf/pack_for_device.sh BUILD_DIR TARBALL}
tarball=$(realpath -m "${2:?usage: perf/pack_for_device.sh BUILD_DIR TARBALL}")
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib" "$stage/bin"

for lib in "$build"/lib/libslimeccl.so.0 "$build"/lib/libnccl.so.2; do
  strip --strip-debug -o "$stage/lib/$(basename "$lib")" "$(readlink -f "$lib")"
done
for program in slimeccl_cuda_tests slimeccl_overlap_cuda_tests slimeccl-run allreduce_perf allgather_perf alltoall_perf sendrecv_perf \
  allgather_gemm_perf; do
  [[ -x $build/bin/$program ]] && strip --strip-debug -o "$stage/bin/$program" "$build/bin/$program"
done
# What they load, but the C library's, the compiler's and CUDA's own, which the machine has.
ldd "$stage"/lib/* "$stage"/bin/* 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u |
  grep -Ev '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libcudart|libcuda|libcublas|libcublasLt)\.so' |
  grep -v -e "$(realpath "$build")" -e "$stage" | while read -r dep; do
    cp -L "$dep" "$stage/lib/"
  done
tar -C "$stage" -cJf "$tarball" lib bin
ls -la "$tarball"
