#!/usr/bin/env bash
# DDP and FSDP2 on CUDA tensors with PyTorch's nccl backend on this project's libnccl.so.2
# (run.sh), through each route device buffers take between ranks that share GPUs (RANKS
# processes, rank r on GPU r mod the GPUs, as NCCL refuses): the host relays
# (SLIMECCL_P2P_DISABLE=1), peer mappings (reductions through host staging) and host staging
# (SLIMECCL_GPU_DIRECT=0). Passes when every route's losses are within 1e-4 of staging's and the
# relays' run said at init that its comms took them; exits 77 (skipped) where run.sh skips.
#   RANKS=n compare_routes.sh LIBDIR PYTHON
set -euo pipefail
libdir=${1:?usage: compare_routes.sh LIBDIR PYTHON} python=${2:?usage: compare_routes.sh LIBDIR PYTHON}
here=$(dirname "$0")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 SLIMECCL_DEBUG=INFO SLIMECCL_DEBUG_SUBSYS=INIT
for route in staged relays peer; do
  case $route in
    staged) settings=(SLIMECCL_GPU_DIRECT=0) ;;
    relays) settings=(SLIMECCL_P2P_DISABLE=1) ;;
    peer) settings=(SLIMECCL_P2P_DISABLE=0) ;;
  esac
  status=0
  env "${settings[@]}" "$here/run.sh" "$libdir" "$python" "$here/training_test.py" --backend nccl \
    > "$out/$route.log" 2>&1 || status=$?
  ((status == 77)) && { cat "$out/$route.log"; exit 77; }
  ((status == 0)) || { tail -40 "$out/$route.log"; exit 1; }
done
took() { grep -q "$2" "$out/$1.log" || { echo "compare_routes.sh: the $1 run did not say '$2'"; grep "slimeccl INFO" "$out/$1.log"; exit 1; }; }
took relays "device buffers go GPU to GPU through host relays"
took peer "device buffers go GPU to GPU (GPU"
grep -q "through host relays" "$out/peer.log" && { echo "compare_routes.sh: the peer run took the host relays"; exit 1; }
for route in relays peer; do
  "$python" "$here/same_losses.py" "$out/staged.log" staging "$out/$route.log" "$route"
done
echo "every route's losses match"
