#!/usr/bin/env bash
# DDP and FSDP2 on CUDA tensors with the "slimeccl" backend against the same steps with PyTorch's
# own NCCL: every rank's losses within 1e-4 of NCCL's. PYTHONPATH must reach the package (a build
# tree's python/ folder, or an environment it is installed in). One rank per GPU (NCCL takes no two
# ranks on one GPU), or NPROC. Exits 77 (skipped) where PyTorch has no CUDA or the backend was built
# without its CUDA half.
#   compare_training.sh PYTHON [NPROC]
set -euo pipefail
python=${1:?usage: compare_training.sh PYTHON [NPROC]}
here=$(dirname "$0")
gpus=$("$python" -c 'import torch; from slimeccl import _torch_backend as b
print(torch.cuda.device_count() if torch.cuda.is_available() and b.built_with_cuda else 0)' 2> /dev/null || echo 0)
if ((gpus == 0)); then
  echo "skipped: no CUDA in PyTorch here, or the backend has no CUDA half"
  exit 77
fi
nproc=${2:-$gpus}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for backend in nccl slimeccl; do
  "$here/../python/torchrun.sh" "$python" "$((29500 + RANDOM % 1000))" "$nproc" "$here/training_test.py" \
    --backend "$backend" > "$out/$backend.log" 2>&1 || { tail -40 "$out/$backend.log"; exit 1; }
done
"$python" "$here/same_losses.py" "$out/nccl.log" NCCL "$out/slimeccl.log" slimeccl
