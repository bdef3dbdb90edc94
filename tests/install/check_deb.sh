#!/usr/bin/env bash
# Makes the Debian packages of a build (cpack), installs them with apt-get as a user would, and
# checks what they give: a project built against /usr by find_package and by pkg-config runs, the
# tools answer --version, the Python package runs an op and the torch backend initializes; then
# removes them. It changes the system, so CI runs it (.ci/run, as root), not the test suite.
#   check_deb.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "${1:?usage: check_deb.sh BUILD_DIR SOURCE_DIR}" && pwd)
source=$(cd "${2:?usage: check_deb.sh BUILD_DIR SOURCE_DIR}" && pwd)
tmp=$(mktemp -d)
packages=(slimeccl)
cleanup() {
  apt-get purge -y -qq "${packages[@]}" > /dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

rm -f "$build"/slimeccl*.deb
(cd "$build" && cpack > "$tmp/cpack.log" 2>&1) || { tail -20 "$tmp/cpack.log"; echo "cpack failed"; exit 1; }
debs=("$build"/slimeccl*.deb)
compgen -G "$build/slimeccl-torch_*.deb" > /dev/null && packages+=(slimeccl-torch)
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${debs[@]}" > "$tmp/apt.log" 2>&1 ||
  { tail -20 "$tmp/apt.log"; echo "apt-get install of ${debs[*]} failed"; exit 1; }
echo "installed: $(dpkg-query -W -f='${Package} ${Version}, ' "${packages[@]}")"

for how in package pkg-config; do
  cmake -S "$source/tests/install/consumer" -B "$tmp/$how" -DSLIMECCL_CONSUMER=$how > "$tmp/$how.log" 2>&1 &&
    cmake --build "$tmp/$how" >> "$tmp/$how.log" 2>&1 || { tail -20 "$tmp/$how.log"; echo "$how: build failed"; exit 1; }
  out=$("$tmp/$how/consumer")
  [[ $out == "consumer: slimeccl "*", AllReduce gave 10" ]] || { echo "$how: $out"; exit 1; }
  echo "$how: $out"
done
slimeccl-info --version | grep -q "slimeccl-info" || { echo "slimeccl-info --version failed"; exit 1; }
slimeccl-run -n 2 -- true || { echo "slimeccl-run failed"; exit 1; }

torch=
if [[ " ${packages[*]} " == *" slimeccl-torch "* ]]; then torch=torch; fi
"$source/tests/install/use_python_package.sh" /usr/bin/python3 /usr/lib/python3/dist-packages/ $torch
echo "the Debian packages installed, and used"
