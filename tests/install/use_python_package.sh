#!/usr/bin/env bash
# Uses an installed Python package as a user would, from an empty folder: imports slimeccl from
# under DIR, runs an AllReduce, and, with "torch", initializes the torch backend and runs one
# through torch.distributed. Shared by check_install.sh and check_deb.sh.
#   use_python_package.sh PYTHON DIR [torch]
set -euo pipefail
python=${1:?usage: use_python_package.sh PYTHON DIR [torch]} dir=${2:?usage: use_python_package.sh PYTHON DIR [torch]}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$python" -c '
import sys, numpy as np, slimeccl, slimeccl._core as core
assert core.__file__.startswith(sys.argv[1]), core.__file__
with slimeccl.Comm(1, slimeccl.get_unique_id(), 0) as comm:
    x = np.arange(4, dtype=np.float32)
    comm.all_reduce(x, x)
print("python:", x.tolist())' "$dir" || { echo "the Python package under $dir failed"; exit 1; }
[[ ${3:-} == torch ]] || exit 0
"$python" -c '
import sys, torch, torch.distributed as dist, slimeccl.torch
dist.init_process_group("slimeccl", init_method="file://" + sys.argv[1] + "/store", rank=0, world_size=1)
x = torch.ones(4)
dist.all_reduce(x)
print("torch backend:", dist.get_backend(), x.tolist())
dist.destroy_process_group()' "$work" || { echo "the torch backend under $dir failed"; exit 1; }
