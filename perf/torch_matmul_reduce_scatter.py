#!/usr/bin/env python3
"""Anchor figures for GEMM-ReduceScatter overlap: C = ReduceScatter(A x B) with PyTorch on GPUs.

Each rank holds A (M x K, M = nranks * mLocal) and B (K x N), its shards of a row-parallel layer;
rank r receives rows r * mLocal .. of the summed product. Per shape it times, on every rank:
torch.matmul alone, NCCL's reduce_scatter_tensor alone, the two one after the other, PyTorch's
torch.ops.symm_mem.fused_matmul_reduce_scatter, and slimecclGemmReduceScatter (through ctypes, on
a communicator of the same ranks and PyTorch's current CUDA stream); the fused calls take turns in
every iteration. Both fused results are compared with the sequential one. Shapes are mLocal x K x N;
the defaults are the AllGather-GEMM shapes of perf/torch_allgather_gemm.py transposed (the second
GEMM of a tensor-parallel MLP: K the first one's N, N its K).

  torchrun --nproc-per-node N perf/torch_matmul_reduce_scatter.py --slimeccl .../libslimeccl.so.0
      [--shapes 4096x14336x8192,...] [--iters 20] [--warmup 5] [--dtype bf16]
"""
import os

# Before anything can initialize NCCL or symmetric memory: never use NVLink multicast (NVLS).
os.environ["NCCL_NVLS_ENABLE"] = "0"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"

import argparse
import ctypes
import warnings

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem

from torch_allgather_gemm import DTYPES, Slimeccl, reduce_over_ranks, time_in_turn, time_ms

DEFAULT_SHAPES = "4096x14336x8192,8192x14336x8192,4096x5120x8192,16384x3584x8192"


class SlimecclRs(Slimeccl):
    """slimecclGemmReduceScatter beside the AllGather-GEMM entry point of the same communicator."""

    def __init__(self, path, rank, nranks):
        super().__init__(path, rank, nranks)
        self.lib.slimecclGemmReduceScatter.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_size_t] * 3 + [
            ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]

    def gemm_reduce_scatter(self, a, b, c):
        rc = self.lib.slimecclGemmReduceScatter(a.data_ptr(), b.data_ptr(), c.data_ptr(), c.shape[0], b.shape[1],
                                                a.shape[1], self.DATATYPES[a.dtype], 0, self.comm, self.stream)
        self.check(rc, "slimecclGemmReduceScatter")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes", default=DEFAULT_SHAPES, help="comma-separated mLocal x K x N")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    p.add_argument("--slimeccl", required=True, help="libslimeccl.so.0")
    args = p.parse_args()
    args.shapes = [tuple(int(v) for v in s.lower().split("x")) for s in args.shapes.split(",") if s]
    return args


def main():
    args = parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    rank, nranks = dist.get_rank(), dist.get_world_size()
    group_name = dist.group.WORLD.group_name
    dtype = DTYPES[args.dtype]
    if not symm_mem.is_symm_mem_enabled_for_group(group_name):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            symm_mem.enable_symm_mem_for_group(group_name)
    ours = SlimecclRs(args.slimeccl, rank, nranks)
    if rank == 0:
        print(f"# torch {torch.__version__}, {torch.cuda.get_device_name()}, {nranks} ranks, {args.dtype}, "
              f"{args.iters} iterations ({args.warmup} warmup); medians per rank, then the mean over ranks; ms",
              flush=True)
        print("| mLocal x K x N | GEMM | RS | NCCL GEMM + RS | PyTorch fused | slimeccl | PyTorch fused / slimeccl | "
              "sequential / slimeccl | max(GEMM,RS) / slimeccl | max abs diff PyTorch / slimeccl |")
        print("| --- " * 10 + "|", flush=True)
    for m_local, k, n in args.shapes:
        gen = torch.Generator(device="cuda")
        a = torch.randn(nranks * m_local, k, device="cuda", dtype=dtype, generator=gen.manual_seed(1000 + rank))
        b = (torch.randn(k, n, device="cuda", dtype=torch.float32, generator=gen.manual_seed(2000 + rank))
             / k**0.5).to(dtype)
        partial = torch.empty(nranks * m_local, n, device="cuda", dtype=dtype)
        c = torch.empty(m_local, n, device="cuda", dtype=dtype)
        c_ours = torch.empty_like(c)

        def gemm():
            torch.matmul(a, b, out=partial)

        def rs():
            dist.reduce_scatter_tensor(c, partial)

        def seq():
            gemm()
            rs()

        def fused():
            return torch.ops.symm_mem.fused_matmul_reduce_scatter(a, b, "sum", scatter_dim=0, group_name=group_name)

        def ours_fused():
            ours.gemm_reduce_scatter(a, b, c_ours)

        t_gemm, t_rs, t_seq = (time_ms(fn, args.iters, args.warmup) for fn in (gemm, rs, seq))
        seq()
        reference = c.clone()
        ours_fused()
        diff_ours = (c_ours.float() - reference.float()).abs().max().item()
        error, diff = None, 0.0
        try:
            diff = (fused().float() - reference.float()).abs().max().item()
        except Exception as e:  # noqa: BLE001 - any failure becomes an n/a column
            error = f"{type(e).__name__}: {e}".strip().splitlines()[0]
        failed = reduce_over_ranks([0.0 if error is None else 1.0], dist.ReduceOp.MAX)[0] > 0
        if failed:
            t_fused, t_ours = 0.0, time_ms(ours_fused, args.iters, args.warmup)
        else:
            t_fused, t_ours = time_in_turn([fused, ours_fused], args.iters, args.warmup)
        t_gemm, t_rs, t_seq, t_fused, t_ours = (t / nranks for t in reduce_over_ranks([t_gemm, t_rs, t_seq, t_fused,
                                                                                       t_ours]))
        diff, diff_ours = reduce_over_ranks([diff, diff_ours], dist.ReduceOp.MAX)
        if rank == 0:
            fused = "n/a" if failed else f"{t_fused:.3f}"
            ratio = "n/a" if failed else f"{t_fused / t_ours:.3f}"
            print(f"| {m_local}x{k}x{n} | {t_gemm:.3f} | {t_rs:.3f} | {t_seq:.3f} | {fused} | {t_ours:.3f} | {ratio} | "
                  f"{t_seq / t_ours:.3f} | {max(t_gemm, t_rs) / t_ours:.3f} | "
                  f"{'n/a' if failed else f'{diff:.4g}'} / {diff_ours:.4g} |", flush=True)
            if failed:
                print(f"# fused_matmul_reduce_scatter failed for {m_local}x{k}x{n}: {error or 'on another rank'}",
                      flush=True)
        del a, b, partial, c, c_ours, reference
        torch.cuda.empty_cache()
    dist.barrier()
    ours.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
