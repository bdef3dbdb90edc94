"""torch.distributed collectives on CPU tensors through the "slimeccl" backend and through "gloo",
in one torchrun job over the same ranks: per op and size, the mean over ranks of each rank's
average time per op (as the perf tools report it), and gloo's time over slimeccl's.

    torchrun --nproc_per_node 4 perf/torch_backend_perf.py [--sizes 64K,256K,1M,4M] [--iters 100]

Sizes are bytes of float32: the tensor of all_reduce, the output of all_gather_into_tensor (as
allgather_perf counts them). Gloo before torch 2 has no all_gather_into_tensor: there its figure
is all_gather into views of the same output tensor. Lines start with "torch"; perf/compare_torch.sh sets them beside
the perf tools' figures.
"""
import argparse
import time

import torch
import torch.distributed as dist

import slimeccl.torch  # noqa: F401


def parse_bytes(text):
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    return int(text[:-1]) * scale[text[-1]] if text[-1] in scale else int(text)


def seconds_per_op(call, group, iters, warmup, timer_group):
    for _ in range(warmup):
        call(group)
    dist.barrier(group=group)
    start = time.perf_counter()
    for _ in range(iters):
        call(group)
    mine = torch.tensor([(time.perf_counter() - start) / iters], dtype=torch.float64)
    dist.all_reduce(mine, group=timer_group)
    return mine.item() / dist.get_world_size()


def gather_call(part, out):
    """all_gather_into_tensor, or, on gloo before torch 2 (which lacks it), all_gather into views
    of the same output tensor: the same bytes land in the same place."""
    views = list(out.chunk(dist.get_world_size()))
    old_torch = int(torch.__version__.split(".")[0]) < 2

    def call(group):
        if old_torch and dist.get_backend(group) == "gloo":
            dist.all_gather(views, part, group=group)
        else:
            dist.all_gather_into_tensor(out, part, group=group)
    return call


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="64K,256K,1M,4M")
    parser.add_argument("--iters", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--ops", default="all_reduce,all_gather_into_tensor")
    args = parser.parse_args()
    dist.init_process_group("slimeccl")
    rank, n = dist.get_rank(), dist.get_world_size()
    gloo = dist.new_group(list(range(n)), backend="gloo")
    groups = {"slimeccl": dist.group.WORLD, "gloo": gloo}
    for op in args.ops.split(","):
        for size in [parse_bytes(s) for s in args.sizes.split(",")]:
            count = size // 4
            if op == "all_reduce":
                x = torch.ones(count)
                call = lambda g: dist.all_reduce(x, group=g)  # noqa: E731
            else:
                part, out = torch.ones(count // n), torch.empty(count // n * n)
                call = gather_call(part, out)
            us = {name: 1e6 * seconds_per_op(call, g, args.iters, args.warmup, gloo) for name, g in groups.items()}
            if rank == 0:
                print(f"torch {op} {size} B: slimeccl {us['slimeccl']:.1f} us, gloo {us['gloo']:.1f} us, "
                      f"gloo/slimeccl {us['gloo'] / us['slimeccl']:.2f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
