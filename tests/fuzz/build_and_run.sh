#!/usr/bin/env bash
# The libFuzzer targets: a clang build of this repository in a tree of its own, and bounded runs.
#   build_and_run.sh build TREE                  configure and build the fuzzers in TREE
#   build_and_run.sh run TREE TARGET SECONDS     fuzz TARGET for SECONDS from its seed corpus
#   build_and_run.sh all TREE [SECONDS]          both, for every target (default 20 s each)
#   build_and_run.sh corpus TREE                 rewrite the seeds that make_corpus generates
# Exits 77 (ctest's "skipped") with the reason when clang or its libFuzzer runtime is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
sanitizers="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"

skip() {
  echo "SKIPPED: $*"
  exit 77
}

check_toolchain() {
  command -v clang++ > /dev/null || skip "clang++ not found (Debian: apt-get install clang libclang-rt-14-dev)"
  local probe
  probe=$(mktemp -d)
  echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' > "$probe/p.cc"
  if ! clang++ -fsanitize=fuzzer $sanitizers "$probe/p.cc" -o "$probe/p" 2> "$probe/err"; then
    cat "$probe/err"
    rm -rf "$probe"
    skip "clang++ cannot link -fsanitize=fuzzer (Debian: apt-get install libclang-rt-14-dev)"
  fi
  rm -rf "$probe"
}

build() {
  local tree=$1
  check_toolchain
  mkdir -p "$tree"
  # -O1 with line tables: fast enough to fuzz, and every report says file:line. The library's floors
  # compile in batches (SLIMECCL_UNITY_FLOORS), as in CI's sanitizer trees.
  cmake -S "$repo" -B "$tree" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_FLAGS_DEBUG="-O1 -gline-tables-only" -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" \
    -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link $sanitizers" -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link $sanitizers" \
    -DSLIMECCL_WITH_IB=OFF -DSLIMECCL_WITH_CUDA=OFF -DSLIMECCL_BUILD_PERF=OFF -DSLIMECCL_FUZZ_TARGETS=ON \
    -DSLIMECCL_UNITY_FLOORS=ON > "$tree/configure.log" \
    || { cat "$tree/configure.log"; exit 1; }
  cmake --build "$tree" --target slimeccl-fuzzers -j "$(nproc)"
}

run() {
  local tree=$1 target=$2 seconds=$3
  local bin=$tree/bin/fuzz_$target
  if [[ ! -x $bin ]]; then
    check_toolchain
    echo "FAIL: $bin was not built (build_and_run.sh build $tree)"
    exit 1
  fi
  # New inputs go to a scratch corpus; the checked-in seeds are only read.
  local work=$tree/fuzz-work/$target
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/artifacts"
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  echo "fuzz_$target: $seconds s from $here/corpus/$target"
  if ! "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" "$work/corpus" "$here/corpus/$target" > "$work/log" 2>&1; then
    tail -n 80 "$work/log"
    echo "FAIL: fuzz_$target found a problem; the input is in $work/artifacts/ (replay: $bin FILE)"
    exit 1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$work/log" || true
  echo "fuzz_$target: no problem found"
}

case ${1:-} in
  build) build "$2" ;;
  run) run "$2" "$3" "$4" ;;
  all)
    build "$2"
    for source in "$here"/*_fuzzer.cc; do
      name=$(basename "$source" _fuzzer.cc)
      run "$2" "$name" "${3:-20}"
    done
    ;;
  corpus)
    build "$2"
    "$2/bin/fuzz_make_corpus" "$here/corpus"
    ;;
  *)
    sed -n '2,7p' "$0"
    exit 2
    ;;
esac
