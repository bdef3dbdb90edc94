#!/usr/bin/env bash
# Every tool answers --version with "TOOL (slimeccl X.Y.Z)" and exit status 0, and refuses an
# unknown option with exit status 2.
#   tool_conventions.sh VERSION TOOL...
set -uo pipefail
version=${1:?usage: tool_conventions.sh VERSION TOOL...}
shift
failed=0
for tool in "$@"; do
  name=$(basename "$tool")
  out=$("$tool" --version 2>&1)
  status=$?
  [[ $status == 0 && $out == "$name (slimeccl $version)" ]] ||
    { echo "$name --version: status $status, printed '$out'"; failed=1; }
  "$tool" --no-such-option > /dev/null 2>&1
  status=$?
  [[ $status == 2 ]] || { echo "$name --no-such-option: status $status, not 2"; failed=1; }
done
[[ $failed == 0 ]] && echo "$# tools follow the conventions"
exit $failed
