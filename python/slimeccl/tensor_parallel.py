"""Tensor-parallel GEMMs fused with their collectives, as torch ops (slimeccl.torch re-exports them).

    a_gathered, [c] = all_gather_matmul(a_shard, [b], gather_dim=0, group_name=group)
    c = matmul_reduce_scatter(a, b, "sum", scatter_dim=0, group_name=group)

They take the arguments of torch.ops.symm_mem.fused_all_gather_matmul and
fused_matmul_reduce_scatter and give the same results, with slimecclAllGatherGemm and
slimecclGemmReduceScatter underneath: the GEMM of each landed block runs while the rest is in
flight, or each block is reduced while the next is multiplied. `group_name` is a process group's
name, the group itself, or None for the default group; the group's backend may be any ("nccl",
"slimeccl", "gloo"): the first call on a group makes a slimeccl communicator of its ranks through
one broadcast on the group, so make it before any CUDA graph capture. CUDA tensors run on the
current CUDA stream (bfloat16, float16, float32, float64); CPU tensors in float32 or float64.
"""
import torch
import torch.distributed as dist

import slimeccl

_comms = {}


def _group_of(group_name):
    if group_name is None or isinstance(group_name, dist.ProcessGroup):
        return group_name or dist.group.WORLD
    from torch.distributed.distributed_c10d import _resolve_process_group

    return _resolve_process_group(group_name)


def _global_rank(group, rank):
    if group is dist.group.WORLD:
        return rank
    # get_global_rank is torch 2's name; torch 1.13 has only the private one.
    lookup = getattr(dist, "get_global_rank", None) or dist.distributed_c10d._get_global_rank
    return lookup(group, rank)


def comm_of(group_name=None):
    """The slimeccl communicator of a process group's ranks, made on its first use (collective
    over the group)."""
    group = _group_of(group_name)
    comm = _comms.get(group)
    if comm is None:
        rank, size = dist.get_rank(group), dist.get_world_size(group)
        holder = [slimeccl.get_unique_id() if rank == 0 else None]
        dist.broadcast_object_list(holder, src=_global_rank(group, 0), group=group)
        comm = _comms[group] = slimeccl.Comm(size, holder[0], rank, name="tensor-parallel")
    return comm


def _stream_of(t):
    return torch.cuda.current_stream(t.device) if t.is_cuda else None


def _rows_first(t, dim):
    """t with dim moved first and every dim but the last folded into rows: (rows, t.shape[-1])."""
    moved = t.movedim(dim, 0)
    return moved.reshape(-1, t.shape[-1]).contiguous(), moved.shape


def all_gather_matmul(a_shard, bs, gather_dim, group_name=None, *, return_A=True):
    """(A gathered along gather_dim, or None without return_A; [A @ b for b in bs]), A being every
    rank's a_shard concatenated along gather_dim (a leading dim of a_shard)."""
    comm = comm_of(group_name)
    size = comm.size
    dim = gather_dim % a_shard.dim()
    if dim == a_shard.dim() - 1:
        raise ValueError("all_gather_matmul: gather_dim must not be the last dim (the GEMM's K)")
    a_rows, moved_shape = _rows_first(a_shard, dim)
    gathered_shape = (size * moved_shape[0],) + tuple(moved_shape[1:])
    a_gathered = torch.empty((size * a_rows.shape[0], a_rows.shape[1]), dtype=a_shard.dtype, device=a_shard.device)
    outs = []
    for i, b in enumerate(bs):
        c = torch.empty((a_gathered.shape[0], b.shape[1]), dtype=a_shard.dtype, device=a_shard.device)
        if i == 0:
            comm.all_gather_gemm(a_rows, b.contiguous(), c, a_gathered=a_gathered, stream=_stream_of(a_shard))
        else:
            torch.matmul(a_gathered, b, out=c)
        outs.append(c.reshape(gathered_shape[:-1] + (b.shape[1],)).movedim(0, dim))
    a_out = a_gathered.reshape(gathered_shape).movedim(0, dim) if return_A else None
    return a_out, outs


_REDUCE_OPS = {"sum": slimeccl.SUM, "avg": slimeccl.AVG}


def matmul_reduce_scatter(a, b, reduce_op, scatter_dim, group_name=None):
    """reduce_op ("sum" or "avg") over the group of a @ b, scattered along scatter_dim (a leading
    dim of a, split into group-size equal parts): this rank's part."""
    comm = comm_of(group_name)
    size = comm.size
    if reduce_op not in _REDUCE_OPS:
        raise ValueError(f"matmul_reduce_scatter: reduce_op {reduce_op!r} is not one of {sorted(_REDUCE_OPS)}")
    dim = scatter_dim % a.dim()
    if dim == a.dim() - 1:
        raise ValueError("matmul_reduce_scatter: scatter_dim must not be the last dim (the GEMM's K)")
    if a.shape[dim] % size != 0:
        raise ValueError(f"matmul_reduce_scatter: dim {dim} of a ({a.shape[dim]}) does not split into {size} parts")
    a_rows, moved_shape = _rows_first(a, dim)
    c = torch.empty((a_rows.shape[0] // size, b.shape[1]), dtype=a.dtype, device=a.device)
    comm.gemm_reduce_scatter(a_rows, b.contiguous(), c, _REDUCE_OPS[reduce_op], stream=_stream_of(a))
    out_shape = (moved_shape[0] // size,) + tuple(moved_shape[1:-1]) + (b.shape[1],)
    return c.reshape(out_shape).movedim(0, dim)
