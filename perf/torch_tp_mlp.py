#!/usr/bin/env python3
"""A tensor-parallel Llama-style MLP block, forward and backward, three ways, under torchrun.

Sequence-parallel TP as PyTorch's async TP runs it: each rank holds S/n tokens of X (S x H) and its
shards W13 (H x 2I/n, gate and up) and W2 (I/n x H). Forward: X = AllGather(X_local);
GU = X @ W13; Hd = silu(G) * U; Y_local = ReduceScatter(Hd @ W2). Backward, from dY_local:
dY = AllGather(dY_local); dHd = dY @ W2^T; dW2 = Hd^T @ dY; dGU from the activation;
dX_local = ReduceScatter(dGU @ W13^T); dW13 = X^T @ dGU. The weights' transposes are kept, as a
layer keeps them, so no way pays for them in the step.

The AllGather-GEMMs and GEMM-ReduceScatters run three ways, taking turns in every iteration:
  sequential: NCCL's all_gather_into_tensor / reduce_scatter_tensor and torch.matmul one after the other;
  PyTorch:    torch.ops.symm_mem.fused_all_gather_matmul / fused_matmul_reduce_scatter;
  slimeccl:   slimecclAllGatherGemm / slimecclGemmReduceScatter (ctypes, on PyTorch's stream).
Every way's Y_local, dX_local, dW13 and dW2 are compared with the sequential way's.

  torchrun --nproc-per-node N perf/torch_tp_mlp.py --slimeccl .../libslimeccl.so.0
      [--seqs 2048,4096,8192,16384] [--hidden 4096] [--intermediate 14336] [--iters 10]
"""
import os

os.environ["NCCL_NVLS_ENABLE"] = "0"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"

import argparse
import warnings

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem
import torch.nn.functional as F

from torch_allgather_gemm import reduce_over_ranks, time_in_turn
from torch_matmul_reduce_scatter import SlimecclRs


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seqs", default="2048,4096,8192,16384", help="comma-separated sequence lengths S")
    p.add_argument("--hidden", type=int, default=4096)
    p.add_argument("--intermediate", type=int, default=14336)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--slimeccl", required=True, help="libslimeccl.so.0")
    args = p.parse_args()
    args.seqs = [int(s) for s in args.seqs.split(",") if s]
    return args


# Each way returns (gathered A, A @ B) and ReduceScatter(A @ B); the buffers passed are the block's,
# which a way may use or (PyTorch's ops, which allocate their outputs) leave alone.
class Sequential:
    def all_gather_matmul(self, a_local, b, gathered, out):
        dist.all_gather_into_tensor(gathered, a_local)
        return gathered, torch.matmul(gathered, b, out=out)

    def matmul_reduce_scatter(self, a, b, partial, out):
        torch.matmul(a, b, out=partial)
        dist.reduce_scatter_tensor(out, partial)
        return out


class PyTorchFused:
    def __init__(self, group_name):
        self.group = group_name

    def all_gather_matmul(self, a_local, b, gathered, out):
        a, (c,) = torch.ops.symm_mem.fused_all_gather_matmul(a_local, [b], gather_dim=0, group_name=self.group)
        return a, c

    def matmul_reduce_scatter(self, a, b, partial, out):
        return torch.ops.symm_mem.fused_matmul_reduce_scatter(a, b, "sum", scatter_dim=0, group_name=self.group)


class Ours:
    def __init__(self, lib):
        self.lib = lib

    def all_gather_matmul(self, a_local, b, gathered, out):
        self.lib.all_gather_gemm(a_local, gathered, b, out)
        return gathered, out

    def matmul_reduce_scatter(self, a, b, partial, out):
        self.lib.gemm_reduce_scatter(a, b, out)
        return out


class Block:
    """One rank's shards, activations and gradients; step(way) runs forward and backward."""

    def __init__(self, seq, hidden, inter_local, nranks, rank, dtype=torch.bfloat16):
        g = torch.Generator(device="cuda")
        rows = seq // nranks

        def rand(seed, *shape, scale=1.0):
            return (torch.randn(*shape, device="cuda", generator=g.manual_seed(seed)) * scale).to(dtype)

        self.x_local = rand(10 + rank, rows, hidden)
        self.dy_local = rand(20 + rank, rows, hidden)
        self.w13 = rand(30 + rank, hidden, 2 * inter_local, scale=hidden**-0.5)
        self.w2 = rand(40 + rank, inter_local, hidden, scale=inter_local**-0.5)
        self.w13_t, self.w2_t = self.w13.t().contiguous(), self.w2.t().contiguous()
        empty = lambda *shape: torch.empty(*shape, device="cuda", dtype=dtype)  # noqa: E731
        self.x, self.dy = empty(seq, hidden), empty(seq, hidden)
        self.gu, self.hd, self.d_hd = empty(seq, 2 * inter_local), empty(seq, inter_local), empty(seq, inter_local)
        self.partial = empty(seq, hidden)
        self.y_buf, self.dx_buf = empty(rows, hidden), empty(rows, hidden)
        self.y_local, self.dx_local = self.y_buf, self.dx_buf
        self.dw13, self.dw2 = empty(hidden, 2 * inter_local), empty(inter_local, hidden)

    def step(self, way):
        x, gu = way.all_gather_matmul(self.x_local, self.w13, self.x, self.gu)
        gate, up = gu.chunk(2, dim=1)
        hd = torch.mul(F.silu(gate), up, out=self.hd)
        self.y_local = way.matmul_reduce_scatter(hd, self.w2, self.partial, self.y_buf)
        dy, d_hd = way.all_gather_matmul(self.dy_local, self.w2_t, self.dy, self.d_hd)
        torch.matmul(hd.t(), dy, out=self.dw2)
        sig = torch.sigmoid(gate.float())
        d_gate = (d_hd.float() * up.float() * sig * (1 + gate.float() * (1 - sig))).to(gu.dtype)
        d_up = (d_hd.float() * F.silu(gate.float())).to(gu.dtype)
        d_gu = torch.cat([d_gate, d_up], dim=1)
        self.dx_local = way.matmul_reduce_scatter(d_gu, self.w13_t, self.partial, self.dx_buf)
        torch.matmul(x.t(), d_gu, out=self.dw13)

    def results(self):
        return [t.clone() for t in (self.y_local, self.dx_local, self.dw13, self.dw2)]


def main():
    args = parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    rank, nranks = dist.get_rank(), dist.get_world_size()
    group_name = dist.group.WORLD.group_name
    if not symm_mem.is_symm_mem_enabled_for_group(group_name):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            symm_mem.enable_symm_mem_for_group(group_name)
    lib = SlimecclRs(args.slimeccl, rank, nranks)
    ways = {"sequential": Sequential(), "pytorch": PyTorchFused(group_name), "slimeccl": Ours(lib)}
    inter_local = args.intermediate // nranks
    if rank == 0:
        print(f"# torch {torch.__version__}, {torch.cuda.get_device_name()}, TP={nranks}, bf16, H={args.hidden}, "
              f"I={args.intermediate}; forward + backward of one MLP block, ms, medians of {args.iters} interleaved "
              f"iterations, mean over ranks; max abs diff of Y, dX, dW13, dW2 against the sequential way", flush=True)
        print("| S | sequential | PyTorch fused | slimeccl | PyTorch / slimeccl | sequential / slimeccl | "
              "max diff PyTorch | max diff slimeccl |")
        print("| --- " * 8 + "|", flush=True)
    for seq in args.seqs:
        block = Block(seq, args.hidden, inter_local, nranks, rank)
        reference, diffs, failed = None, {}, {}
        for name, way in ways.items():
            try:
                block.step(way)
                torch.cuda.synchronize()
                got = block.results()
                reference = reference or got
                diffs[name] = max((g.float() - r.float()).abs().max().item() for g, r in zip(got, reference))
                failed[name] = 0.0
            except Exception as e:  # noqa: BLE001 - a way that fails is reported, the others still run
                failed[name] = 1.0
                if rank == 0:
                    print(f"# {name} failed at S={seq}: {type(e).__name__}: {str(e).splitlines()[0]}", flush=True)
        names = list(ways)
        flags = reduce_over_ranks([failed[n] for n in names], dist.ReduceOp.MAX)
        running = [n for n, f in zip(names, flags) if f == 0]
        times = time_in_turn([lambda w=ways[n]: block.step(w) for n in running], args.iters, args.warmup)
        t = dict(zip(running, (v / nranks for v in reduce_over_ranks(times))))
        worst = dict(zip(running, reduce_over_ranks([diffs[n] for n in running], dist.ReduceOp.MAX)))
        if rank == 0:
            cell = lambda n: f"{t[n]:.3f}" if n in t else "n/a"  # noqa: E731
            ratio = lambda a, b: f"{t[a] / t[b]:.3f}" if a in t and b in t else "n/a"  # noqa: E731
            diff = lambda n: f"{worst[n]:.3g}" if n in worst else "n/a"  # noqa: E731
            print(f"| {seq} | {cell('sequential')} | {cell('pytorch')} | {cell('slimeccl')} | "
                  f"{ratio('pytorch', 'slimeccl')} | {ratio('sequential', 'slimeccl')} | {diff('pytorch')} | "
                  f"{diff('slimeccl')} |", flush=True)
        del block
        torch.cuda.empty_cache()
    dist.barrier()
    lib.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
