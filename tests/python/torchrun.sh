#!/usr/bin/env bash
# torchrun with the given interpreter, on a port of the caller's, so that tests run side by side:
#   torchrun.sh PYTHON PORT NPROC SCRIPT [ARG...]
# --redirects 1 --tee 1 (each rank's stdout to the console through a log file) because torch
# 1.13's torchrun cannot parse its own default "0" under Python 3.11 (its Std flag has no member
# for 0 there); newer torchruns take it alike.
set -euo pipefail
python=${1:?usage: torchrun.sh PYTHON PORT NPROC SCRIPT [ARG...]} port=${2:?} nproc=${3:?}
shift 3
exec "$python" -m torch.distributed.run --redirects 1 --tee 1 --master_port "$port" --nproc_per_node "$nproc" "$@"
