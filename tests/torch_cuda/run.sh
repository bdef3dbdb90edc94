#!/usr/bin/env bash
# Runs a PyTorch script on this machine's GPUs under torchrun, one process per GPU, with this
# project's libnccl.so.2 preloaded in place of the NCCL that PyTorch loads; EXPECT_SLIMECCL=1 tells
# the script to check that it is. RANKS=n runs n processes instead, rank r on GPU r mod the GPUs
# (ranks that share a GPU, as NCCL refuses and this library serves). Exits 77 (skipped) where
# PyTorch has no CUDA, or fewer than two GPUs and no RANKS.
#   [RANKS=n] run.sh LIBDIR PYTHON SCRIPT [ARG...]
set -euo pipefail
libdir=$(cd "${1:?usage: run.sh LIBDIR PYTHON SCRIPT [ARG...]}" && pwd) python=${2:?} script=${3:?}
shift 3
gpus=$("$python" -c 'import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)' 2>/dev/null ||
  echo 0)
ranks=${RANKS:-$gpus}
if ((gpus < 1 || ranks < 2)); then
  echo "skipped: PyTorch here sees $gpus GPUs"
  exit 77
fi
[[ -e $libdir/libnccl.so.2 ]] || { echo "no libnccl.so.2 in $libdir"; exit 1; }
export LD_PRELOAD=$libdir/libnccl.so.2 LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export EXPECT_SLIMECCL=1 NCCL_NVLS_ENABLE=0
exec "$(dirname "$0")/../python/torchrun.sh" "$python" "${PORT:-$((29500 + RANDOM % 1000))}" "$ranks" "$script" "$@"
