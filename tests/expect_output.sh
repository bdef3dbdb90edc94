#!/usr/bin/env bash
# Runs a test's command and passes only when it exits 0 and its output holds every pattern (grep
# -E), so that a launcher's failed rank fails the test even when another rank printed its line.
#   expect_output.sh PATTERN... -- COMMAND [ARG...]
set -uo pipefail
patterns=()
while [[ $# -gt 0 && $1 != "--" ]]; do
  patterns+=("$1")
  shift
done
[[ $# -gt 1 ]] || { echo "usage: expect_output.sh PATTERN... -- COMMAND [ARG...]"; exit 2; }
shift
out=$("$@" 2>&1)
status=$?
printf '%s\n' "$out"
# 77: the command skipped itself (ctest's SKIP_RETURN_CODE).
[[ $status == 77 ]] && exit 77
[[ $status == 0 ]] || { echo "expect_output.sh: the command exited with status $status"; exit 1; }
for pattern in "${patterns[@]}"; do
  grep -E -- "$pattern" <<< "$out" > /dev/null || { echo "expect_output.sh: no line matches '$pattern'"; exit 1; }
done
