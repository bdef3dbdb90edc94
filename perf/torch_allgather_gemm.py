#!/usr/bin/env python3
"""Anchor figures for AllGather-GEMM overlap: C = AllGather(A) x B with PyTorch on GPUs.

Each rank holds A_local (mLocal x K, row-major) and B (K x N); M = nranks * mLocal. Per shape it
times, on every rank: the NCCL AllGather alone, the GEMM alone, the two one after the other, and
PyTorch's fused op torch.ops.symm_mem.fused_all_gather_matmul (symmetric-memory pipelined
AllGather + per-block GEMM), checks the fused C against the sequential C and prints a markdown row.

With --slimeccl LIBRARY (libslimeccl.so.0), slimecclAllGatherGemm runs in the same processes on
the same tensors and streams, timed in turn with PyTorch's fused op in every iteration, so that
both see the same clocks; its C is compared with the sequential C too.

  torchrun --nproc-per-node N perf/torch_allgather_gemm.py [--shapes 4096x8192x14336,...]
      [--iters 20] [--warmup 5] [--dtype bf16] [--return-a 1] [--slimeccl LIBRARY]
"""
import os

# Before anything can initialize NCCL or symmetric memory: never use NVLink multicast (NVLS).
# NCCL_NVLS_ENABLE=0 keeps NCCL off it; TORCH_SYMM_MEM_DISABLE_MULTICAST=1 makes PyTorch's CUDA
# symmetric-memory allocator report no multicast support, so it binds no multicast object either.
os.environ["NCCL_NVLS_ENABLE"] = "0"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"

import argparse
import ctypes
import statistics
import warnings

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem

DEFAULT_SHAPES = "4096x8192x14336,8192x8192x14336,4096x8192x5120,16384x8192x3584"
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes", default=DEFAULT_SHAPES, help="comma-separated mLocal x K x N, e.g. 4096x8192x14336")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    p.add_argument("--return-a", type=int, default=1, choices=(0, 1),
                   help="the fused op's return_A: 1 keeps the gathered A (its default), 0 does not; "
                        "slimeccl's call then gets aGathered or NULL")
    p.add_argument("--slimeccl", help="libslimeccl.so.0 to time slimecclAllGatherGemm beside the fused op")
    args = p.parse_args()
    args.shapes = [tuple(int(v) for v in s.lower().split("x")) for s in args.shapes.split(",") if s]
    return args


def time_in_turn(fns, iters, warmup):
    """Median over iterations of each call's GPU time on this rank, in ms (CUDA events); the calls
    take turns in every iteration, so a drift of the clocks over the run weighs on all alike.

    Every timed call starts right after a barrier, so the rank skew each call absorbs is only
    the host's launch skew, not whatever the previous call left behind."""
    for _ in range(warmup):
        for fn in fns:
            fn()
    times = [[] for _ in fns]
    for _ in range(iters):
        for fn, t in zip(fns, times):
            torch.cuda.synchronize()
            dist.barrier()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            t.append(start.elapsed_time(end))
    return [statistics.median(t) for t in times]


class Slimeccl:
    """slimecclAllGatherGemm through ctypes, on a communicator of the same ranks and on the CUDA
    stream PyTorch uses."""

    DATATYPES = {torch.bfloat16: 9, torch.float16: 6, torch.float32: 7}

    class UniqueId(ctypes.Structure):
        _fields_ = [("internal", ctypes.c_char * 128)]

    def __init__(self, path, rank, nranks):
        self.lib = ctypes.CDLL(path)
        self.lib.slimecclGetLastError.restype = ctypes.c_char_p
        uid = self.UniqueId()
        if rank == 0:
            self.check(self.lib.slimecclGetUniqueId(ctypes.byref(uid)), "slimecclGetUniqueId")
        # bytes(uid): all 128 bytes (uid.internal would stop at the first zero byte).
        shared = torch.frombuffer(bytearray(bytes(uid)), dtype=torch.uint8).cuda()
        dist.broadcast(shared, 0)
        ctypes.memmove(ctypes.byref(uid), bytes(shared.cpu().tolist()), 128)
        self.comm, self.stream = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(self.lib.slimecclCommInitRank(ctypes.byref(self.comm), nranks, uid, rank), "slimecclCommInitRank")
        cuda_stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        self.check(self.lib.slimecclStreamCreateFromCuda(ctypes.byref(self.stream), cuda_stream),
                   "slimecclStreamCreateFromCuda")
        self.lib.slimecclAllGatherGemm.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_size_t] * 3 + [
            ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]

    def check(self, rc, what):
        if rc != 0:
            comm = getattr(self, "comm", None)
            raise RuntimeError(f"{what}: {self.lib.slimecclGetLastError(comm).decode()}")

    def all_gather_gemm(self, a_local, a_gathered, b, c):
        m_local, k = a_local.shape
        rc = self.lib.slimecclAllGatherGemm(a_local.data_ptr(), a_gathered.data_ptr() if a_gathered is not None else None,
                                            b.data_ptr(), c.data_ptr(), m_local, b.shape[1], k,
                                            self.DATATYPES[a_local.dtype], self.comm, self.stream)
        self.check(rc, "slimecclAllGatherGemm")

    def close(self):
        self.lib.slimecclStreamDestroy(self.stream)
        self.lib.slimecclCommDestroy(self.comm)


def time_ms(fn, iters, warmup):
    """time_in_turn of one call."""
    return time_in_turn([fn], iters, warmup)[0]


def reduce_over_ranks(values, op=dist.ReduceOp.SUM):
    """Each value reduced over ranks with one all_reduce (SUM for means, MAX for worst cases)."""
    t = torch.tensor(values, dtype=torch.float64, device="cuda")
    dist.all_reduce(t, op=op)
    return t.tolist()


def main():
    args = parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    rank, nranks = dist.get_rank(), dist.get_world_size()
    group_name = dist.group.WORLD.group_name
    dtype = DTYPES[args.dtype]

    # Symmetric-memory setup for the fused op, outside any timed region. PyTorch 2.11 marks
    # enable_symm_mem_for_group deprecated ("no need to call"), but it still registers the group's
    # store, and older releases need it; calling it once, silenced, suits both.
    if not symm_mem.is_symm_mem_enabled_for_group(group_name):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            symm_mem.enable_symm_mem_for_group(group_name)

    ours = Slimeccl(args.slimeccl, rank, nranks) if args.slimeccl else None

    if rank == 0:
        nccl = torch.cuda.nccl.version()
        nccl = ".".join(map(str, nccl)) if isinstance(nccl, tuple) else str(nccl)
        backend = symm_mem.get_backend(torch.device("cuda", local_rank))
        print(f"# torch {torch.__version__}, NCCL {nccl}, {torch.cuda.get_device_name()}, {nranks} ranks, "
              f"{args.dtype}, {args.iters} iterations ({args.warmup} warmup), symm-mem backend {backend}, "
              f"return_A={args.return_a}; "
              f"each time is the median over iterations on a rank, then the mean over ranks", flush=True)
        extra = " slimeccl fused ms | PyTorch fused / slimeccl | slimeccl max(AG,GEMM)/fused | slimeccl max abs diff |"
        print("| mLocal x K x N | AG ms | GEMM ms | NCCL AG + GEMM ms | PyTorch fused ms | max(AG,GEMM)/fused | max abs diff |"
              + (extra if ours else ""))
        print("| --- " * (11 if ours else 7) + "|", flush=True)

    for m_local, k, n in args.shapes:
        # A differs per rank so the gather matters; B is the same everywhere (same seed). B is scaled
        # by 1/sqrt(K) so C is of order 1 and a bf16 difference reads as a few units in the last place.
        gen = torch.Generator(device="cuda")
        a_local = torch.randn(m_local, k, device="cuda", dtype=dtype, generator=gen.manual_seed(1000 + rank))
        b = (torch.randn(k, n, device="cuda", dtype=torch.float32, generator=gen.manual_seed(7)) / k**0.5).to(dtype)
        a_gathered = torch.empty(nranks * m_local, k, device="cuda", dtype=dtype)
        c = torch.empty(nranks * m_local, n, device="cuda", dtype=dtype)

        def ag():
            dist.all_gather_into_tensor(a_gathered, a_local)

        def gemm():
            torch.matmul(a_gathered, b, out=c)

        def ag_gemm():
            ag()
            gemm()

        def fused():
            # Returns (gathered A or None, [A_gathered @ B for each B]); A_local needs no symmetric
            # memory: the op copies it into a symmetric workspace it allocates on the first call.
            return torch.ops.symm_mem.fused_all_gather_matmul(a_local, [b], gather_dim=0, group_name=group_name,
                                                              return_A=args.return_a == 1)

        t_ag = time_ms(ag, args.iters, args.warmup)
        t_gemm = time_ms(gemm, args.iters, args.warmup)
        t_seq = time_ms(ag_gemm, args.iters, args.warmup)
        ag_gemm()
        reference = c.clone()

        # The fused op's failure (missing op, no P2P, ...) must not lose the other columns. Ranks
        # agree on failure after the first call, so none goes on timing while another has stopped.
        error, t_fused, diff = None, 0.0, 0.0
        try:
            _, outs = fused()  # the untimed first call, which allocates the symmetric workspace
            diff = (outs[0].float() - reference.float()).abs().max().item()
            del outs
        except Exception as e:  # noqa: BLE001 - any failure becomes an n/a row
            error = f"{type(e).__name__}: {e}".strip().splitlines()[0]
        failed = reduce_over_ranks([0.0 if error is None else 1.0], dist.ReduceOp.MAX)[0] > 0
        t_ours, diff_ours = 0.0, 0.0
        if ours:
            a_gathered_ours = torch.empty_like(a_gathered) if args.return_a == 1 else None
            c_ours = torch.empty_like(c)

            def ours_fused():
                ours.all_gather_gemm(a_local, a_gathered_ours, b, c_ours)

            ours_fused()
            diff_ours = (c_ours.float() - reference.float()).abs().max().item()
        if not failed:
            if ours:
                t_fused, t_ours = time_in_turn([fused, ours_fused], args.iters, args.warmup)
            else:
                t_fused = time_ms(fused, args.iters, args.warmup)
        t_ag, t_gemm, t_seq, t_fused, t_ours = (
            t / nranks for t in reduce_over_ranks([t_ag, t_gemm, t_seq, t_fused, t_ours]))
        diff, diff_ours = reduce_over_ranks([diff, diff_ours], dist.ReduceOp.MAX)  # the worst any rank saw

        if rank == 0:
            if failed:
                fused_cols = "n/a | n/a | n/a"
            else:
                # Tolerance: 2 units in the last place of bf16 at C's largest magnitude.
                tol = 2 * 2.0 ** (torch.log2(reference.abs().max().float()).floor().item() - 7)
                flag = "" if diff <= tol or dtype != torch.bfloat16 else f" (over bf16 tolerance {tol:g})"
                fused_cols = f"{t_fused:.3f} | {max(t_ag, t_gemm) / t_fused:.3f} | {diff:.4g}{flag}"
            ours_cols = ""
            if ours:
                ratio = f"{t_fused / t_ours:.3f}" if not failed else "n/a"
                ours_cols = f" {t_ours:.3f} | {ratio} | {max(t_ag, t_gemm) / t_ours:.3f} | {diff_ours:.4g} |"
            print(f"| {m_local}x{k}x{n} | {t_ag:.3f} | {t_gemm:.3f} | {t_seq:.3f} | {fused_cols} |{ours_cols}", flush=True)
            if failed:
                print(f"# fused_all_gather_matmul failed for {m_local}x{k}x{n}: {error or 'on another rank'}", flush=True)
        del a_local, b, a_gathered, c, reference
        if ours:
            del a_gathered_ours, c_ours
        torch.cuda.empty_cache()

    dist.barrier()
    if ours:
        ours.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
