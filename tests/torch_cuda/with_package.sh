#!/usr/bin/env bash
# Runs a script on CUDA tensors under torchrun with the slimeccl package (PYTHONPATH must reach it:
# a build tree's python/ folder, or an environment it is installed in): NPROC ranks, 0 for one per
# GPU (more ranks than GPUs share them, and their ops go through host staging). Exits 77 (skipped)
# where PyTorch has no CUDA or the torch backend was built without its CUDA half (Debian's libtorch
# is CPU-only).
#   with_package.sh PYTHON NPROC SCRIPT [ARG...]
set -euo pipefail
python=${1:?usage: with_package.sh PYTHON NPROC SCRIPT [ARG...]} nproc=${2:?} script=${3:?}
shift 3
gpus=$("$python" -c 'import torch; from slimeccl import _torch_backend as b
print(torch.cuda.device_count() if torch.cuda.is_available() and b.built_with_cuda else 0)' 2> /dev/null || echo 0)
if ((gpus == 0)); then
  echo "skipped: no CUDA in PyTorch here, or the backend has no CUDA half"
  exit 77
fi
((nproc > 0)) || nproc=$gpus
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
exec "$(dirname "$0")/../python/torchrun.sh" "$python" "${PORT:-$((29500 + RANDOM % 1000))}" "$nproc" "$script" "$@"
