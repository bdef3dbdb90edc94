"""torch.distributed's backend "slimeccl". Importing this module registers it:

    import torch.distributed as dist
    import slimeccl.torch  # noqa: F401
    dist.init_process_group("slimeccl")   # under torchrun, or with rank/world_size/init_method

Every op of a process group runs on one slimeccl communicator, in issue order: on CPU tensors on a
thread of the group, Work objects and their futures completing when it is done; on CUDA tensors
(where the backend was built against a libtorch with CUDA) on torch's current stream, as NCCL's
are, Work.wait() making the caller's current stream wait. The group's timeout bounds init
and every op. Send/Recv wait in a batch until one of them is waited on, a collective is issued, or
batch_isend_irecv ends, then run as one slimeccl group. new_group makes a communicator of its
ranks (docs/python.md). comm_from_env gives a plain slimeccl.Comm of torchrun's ranks.

all_gather_matmul and matmul_reduce_scatter are torch.ops.symm_mem's fused_all_gather_matmul and
fused_matmul_reduce_scatter on slimeccl (slimeccl/tensor_parallel.py), with any backend.
"""
import inspect

import torch
import torch.distributed as dist

from slimeccl import _torch_backend
from slimeccl._torch_backend import create_process_group
from slimeccl.tensor_parallel import all_gather_matmul, matmul_reduce_scatter

__all__ = ["all_gather_matmul", "comm_from_env", "last_op_route", "matmul_reduce_scatter"]

if not hasattr(dist.Backend, "SLIMECCL"):
    # PyTorch 2 asks which devices a backend serves; PyTorch 1 takes no such argument.
    if "devices" in inspect.signature(dist.Backend.register_backend).parameters:
        dist.Backend.register_backend("slimeccl", create_process_group, devices=["cpu", "cuda"])
    else:
        dist.Backend.register_backend("slimeccl", create_process_group)


def last_op_route(group=None):
    """How this rank's last started op of a "slimeccl" process group ran (the default group when
    None): {'op', 'route' (net, shared_slots, eager, gpu_to_gpu, host_tiers), 'algorithm', 'seq'}."""
    pg = group if group is not None else dist.distributed_c10d._get_default_group()
    backend = pg._get_backend(torch.device("cpu")) if hasattr(pg, "_get_backend") else pg
    return _torch_backend.last_op_route(backend)


def comm_from_env(timeout_ms=None, name=None):
    """A slimeccl.Comm of the ranks torchrun started (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT):
    rank 0 puts a new unique id in torchrun's store; the others read it there."""
    import slimeccl

    store, rank, size = next(dist.rendezvous("env://"))
    key = "slimeccl/unique_id"
    if rank == 0:
        store.set(key, slimeccl.get_unique_id())
    uid = store.get(key)
    return slimeccl.Comm(size, uid, rank, timeout_ms=timeout_ms, name=name)
