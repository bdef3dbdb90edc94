#!/usr/bin/env bash
# `pip install .` as PyTorch users install packages: into a fresh virtual environment that sees the
# interpreter's own packages (numpy, and torch where installed), with --no-build-isolation, from a
# copy of the source tree. Then, outside the tree: the package imports from the environment, the
# libraries are inside it and find each other, an op runs, and where torch imports, the backend
# "slimeccl" is registered and runs an all_reduce and the tensor-parallel ops.
#   check_pip.sh SOURCE_DIR PYTHON
# Built without CUDA, unoptimized (SLIMECCL_CMAKE_ARGS: -O0 in place of the wheel's -O3) and with the
# floors compiled in batches (SLIMECCL_UNITY_FLOORS), which the install layout does not depend on, to
# keep it short.
set -euo pipefail
source=$(cd "${1:?usage: check_pip.sh SOURCE_DIR PYTHON}" && pwd) python=${2:?usage: check_pip.sh SOURCE_DIR PYTHON}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The tree without its build folders, as a clean checkout has it.
mkdir "$tmp/src"
tar -C "$source" --exclude='./build*' --exclude='./.git' --exclude='./.device' -cf - . | tar -C "$tmp/src" -xf -
"$python" -m venv --system-site-packages "$tmp/venv"
SLIMECCL_CMAKE_ARGS="-DSLIMECCL_WITH_CUDA=OFF -DSLIMECCL_WITH_IB=OFF -DCMAKE_C_FLAGS_RELEASE=-O0 \
  -DCMAKE_CXX_FLAGS_RELEASE=-O0 -DSLIMECCL_UNITY_FLOORS=ON" SLIMECCL_BUILD_JOBS=2 \
  "$tmp/venv/bin/pip" install --no-build-isolation --no-deps --quiet "$tmp/src" > "$tmp/pip.log" 2>&1 ||
  { tail -40 "$tmp/pip.log"; exit 1; }
rm -rf "$tmp/src"
cd "$tmp"
"$tmp/venv/bin/python" - "$tmp/venv" <<'PY'
import os
import subprocess
import sys

import numpy as np

import slimeccl

venv = sys.argv[1]
package = os.path.dirname(slimeccl.__file__)
assert package.startswith(venv), f"slimeccl imported from {package}, not from the environment {venv}"
nccl = os.path.join(package, "lib", "slimeccl", "nccl", "lib", "libnccl.so.2")
for library in (os.path.join(package, "lib", "libslimeccl.so.0"), nccl):
    assert os.path.isfile(library), f"not in the package: {library}"
ldd = subprocess.run(["ldd", nccl], capture_output=True, text=True, env={}).stdout
found = [line.split("=>")[1].split("(")[0].strip() for line in ldd.splitlines() if "libslimeccl.so.0 =>" in line]
assert found and os.path.realpath(found[0]) == os.path.realpath(os.path.join(package, "lib", "libslimeccl.so.0")), \
    f"libnccl.so.2 does not find the package's libslimeccl.so.0:\n{ldd}"
with slimeccl.Comm(1, slimeccl.get_unique_id(), 0) as comm:
    x = np.arange(8, dtype=np.float32)
    comm.all_reduce(x, x)
    assert np.array_equal(x, np.arange(8, dtype=np.float32))
try:
    import torch
except ImportError:
    torch = None
if torch is not None:
    import torch.distributed as dist

    import slimeccl.torch as st
    dist.init_process_group("slimeccl", rank=0, world_size=1, init_method=f"file://{venv}/rendezvous")
    t = torch.ones(4)
    dist.all_reduce(t)
    assert torch.equal(t, torch.ones(4))
    a, b = torch.randn(6, 5, dtype=torch.float64), torch.randn(5, 3, dtype=torch.float64)
    _, (c,) = st.all_gather_matmul(a, [b], gather_dim=0)
    assert torch.allclose(c, a @ b)
    assert torch.allclose(st.matmul_reduce_scatter(a, b, "sum", 0), a @ b)
    dist.destroy_process_group()
print(f"pip: installed into a virtual environment and used{' with torch' if torch is not None else ''}")
PY
