#!/usr/bin/env bash
# Installs a build into a temporary prefix and checks what a user gets from it: the library
# exports only the C API (versioned), and a small project builds and runs against it by
# find_package, by pkg-config, and by add_subdirectory of the source tree.
# With PYTHON, the Python package too: imported from the prefix, an op run, the torch backend
# registered and used where it was built.
#   check_install.sh BUILD_DIR SOURCE_DIR [PYTHON]
set -euo pipefail
build=${1:?usage: check_install.sh BUILD_DIR SOURCE_DIR} source=${2:?usage: check_install.sh BUILD_DIR SOURCE_DIR}
source=$(cd "$source" && pwd)
consumer=$source/tests/install/consumer
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" > /dev/null
lib=$(find "$prefix" -name libslimeccl.so -print -quit)
[[ -n $lib ]] || { echo "no libslimeccl.so under the prefix"; exit 1; }
libdir=$(dirname "$lib")
for file in include/slimeccl.h include/slimeccl_net.h bin/slimeccl-run bin/slimeccl-info; do
  [[ -e $prefix/$file ]] || { echo "not installed: $file"; exit 1; }
done
[[ -e $libdir/slimeccl/nccl/lib/libnccl.so.2 && -e $libdir/slimeccl/nccl/include/nccl.h ]] ||
  { echo "the NCCL-compatible library is not installed as an NCCL_HOME"; exit 1; }
# The installed libnccl.so.2 finds the installed libslimeccl.so.0. (grep reads all of ldd's output:
# with -q it would stop at the match, and ldd, writing on, would die of SIGPIPE and fail the pipe.)
LD_LIBRARY_PATH= ldd "$libdir/slimeccl/nccl/lib/libnccl.so.2" | grep "libslimeccl.so.0 => $libdir/" > /dev/null ||
  { echo "the installed libnccl.so.2 does not find libslimeccl.so.0 in $libdir"; exit 1; }

# cuBLASLt is loaded when a device GEMM-overlap call first needs it, never at load time: it costs every
# process about 0.15 s and 200 MB of mappings.
needed=$(readelf -d "$lib" | awk '/NEEDED/ { print $NF }')
[[ $needed != *libcublas* ]] || { echo "libslimeccl.so needs cuBLAS at load time: $needed"; exit 1; }

others=$(nm -D --defined-only "$lib" | awk '{ print $NF }' | grep -v -e '^slimeccl' -e '^SLIMECCL_0$' || true)
[[ -z $others ]] || { echo "exported beside the C API: $others"; exit 1; }
unversioned=$(nm -D --defined-only --with-symbol-versions "$lib" | awk '$NF ~ /^slimeccl/ && $NF !~ /@@SLIMECCL_0$/' || true)
[[ -z $unversioned ]] || { echo "not at version SLIMECCL_0: $unversioned"; exit 1; }

consume() {
  local how=$1
  shift
  cmake -S "$consumer" -B "$tmp/$how" -DSLIMECCL_CONSUMER="$how" "$@" > "$tmp/$how.log" 2>&1 &&
    cmake --build "$tmp/$how" -j2 >> "$tmp/$how.log" 2>&1 || { tail -30 "$tmp/$how.log"; echo "$how: build failed"; exit 1; }
  local out
  out=$(LD_LIBRARY_PATH=$libdir "$tmp/$how/consumer") || { echo "$how: consumer failed: $out"; exit 1; }
  [[ $out == "consumer: slimeccl "*", AllReduce gave 10" ]] || { echo "$how: $out"; exit 1; }
  echo "$how: $out"
}
consume package -DCMAKE_PREFIX_PATH="$prefix"
PKG_CONFIG_PATH=$libdir/pkgconfig consume pkg-config
# The source tree as a subproject: only the library and its tools build (no tests, no perf tools),
# unoptimized (-O0, no debug info) and the floors in batches (SLIMECCL_UNITY_FLOORS): the consumer
# runs one small op, and this build is about a third of the suite's compile time at the default flags.
consume subdirectory -DSLIMECCL_SOURCE_DIR="$source" -DSLIMECCL_WITH_CUDA=OFF -DSLIMECCL_WITH_BLAS=OFF \
  -DSLIMECCL_UNITY_FLOORS=ON -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG=-O0 -DCMAKE_CXX_FLAGS_DEBUG=-O0
python=${3:-}
if [[ -n $python ]]; then
  site=$(dirname "$(find "$prefix" -path '*/slimeccl/__init__.py' -print -quit)")
  [[ $site != . ]] || { echo "the Python package is not installed"; exit 1; }
  site=$(dirname "$site")
  torch=
  if compgen -G "$build/python/slimeccl/_torch_backend*" > /dev/null; then torch=torch; fi
  LD_LIBRARY_PATH= PYTHONPATH=$site "$source/tests/install/use_python_package.sh" "$python" "$site" $torch
fi
echo "installed, and used three ways"
