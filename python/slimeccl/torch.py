"""torch.distributed's backend "slimeccl". Importing this module registers it:

    import torch.distributed as dist
    import slimeccl.torch  # noqa: F401
    dist.init_process_group("slimeccl")   # under torchrun, or with rank/world_size/init_method

Every op of a process group runs on one slimeccl communicator, in issue order, on a thread of the
group; Work objects and their futures complete when it is done. The group's timeout bounds init
and every op. Send/Recv wait in a batch until one of them is waited on, a collective is issued, or
batch_isend_irecv ends, then run as one slimeccl group. new_group makes a communicator of its
ranks (docs/python.md). comm_from_env gives a plain slimeccl.Comm of torchrun's ranks.

all_gather_matmul and matmul_reduce_scatter are torch.ops.symm_mem's fused_all_gather_matmul and
fused_matmul_reduce_scatter on slimeccl (slimeccl/tensor_parallel.py), with any backend.
"""
import torch.distributed as dist

from slimeccl._torch_backend import create_process_group
from slimeccl.tensor_parallel import all_gather_matmul, matmul_reduce_scatter

__all__ = ["all_gather_matmul", "comm_from_env", "matmul_reduce_scatter"]

if not hasattr(dist.Backend, "SLIMECCL"):
    dist.Backend.register_backend("slimeccl", create_process_group)


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
