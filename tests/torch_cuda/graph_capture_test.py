"""PyTorch's collectives on CUDA tensors, through the "nccl" backend with this project's
libnccl.so.2 standing in for NCCL, captured in a CUDA graph in each capture mode and replayed with
data checked after every replay.

Each op warms up on a side stream, as PyTorch's documentation does it; the capture then runs on
the graph's own stream, one the library has not seen before. Before each replay the inputs are
refilled outside the graph, so a replay that moved nothing, or moved the capture's data again,
fails. Run by tests/torch_cuda/run.sh under torchrun, one process per GPU, or two processes on one
GPU, where the ops that reduce are left out (--ops): a reduction's kernels do not run GPU to GPU
between ranks that share a GPU, and host staging cannot be captured.
"""

import argparse
import os
import sys

import torch
import torch.distributed as dist

MODES = ("global", "thread_local", "relaxed")


def value(tag, rank, replay):
    """A distinct small integer per tag, rank and replay (exact in bfloat16 and float32 sums)."""
    return float((tag * 7 + rank * 3 + replay) % 32)


class Op:
    """One collective on static tensors: refill(replay) writes the inputs, run() issues the op,
    check(replay) compares the outputs with what they must hold."""

    name = ""  # PyTorch's name of the op

    def __init__(self, world, rank, count, dtype):
        self.world, self.rank, self.count = world, rank, count
        dev = torch.device("cuda", torch.cuda.current_device())
        self.full = lambda n: torch.empty(n, dtype=dtype, device=dev)
        self.dtype = dtype

    def expect(self, tensor, wanted, what):
        if not torch.equal(tensor, wanted):
            bad = (tensor != wanted).nonzero()[0].item()
            raise AssertionError(
                f"rank {self.rank}: {self.name} of {self.count} elements: {what}: element {bad} is "
                f"{tensor[bad].item()}, expected {wanted[bad].item()}"
            )


class AllReduce(Op):
    name = "all_reduce"

    def __init__(self, *a):
        super().__init__(*a)
        self.x = self.full(self.count)

    def refill(self, i):
        self.x.fill_(value(1, self.rank, i))

    def run(self):
        dist.all_reduce(self.x)

    def check(self, i):
        total = sum(value(1, r, i) for r in range(self.world))
        self.expect(self.x, torch.full_like(self.x, total), "the sum")


class AllGather(Op):
    name = "all_gather_into_tensor"

    def __init__(self, *a):
        super().__init__(*a)
        self.x, self.out = self.full(self.count), self.full(self.count * self.world)

    def refill(self, i):
        self.x.fill_(value(2, self.rank, i))
        self.out.fill_(-1)

    def run(self):
        dist.all_gather_into_tensor(self.out, self.x)

    def check(self, i):
        for r, part in enumerate(self.out.chunk(self.world)):
            self.expect(part, torch.full_like(part, value(2, r, i)), f"the part of rank {r}")


class ReduceScatter(Op):
    name = "reduce_scatter_tensor"

    def __init__(self, *a):
        super().__init__(*a)
        self.x, self.out = self.full(self.count * self.world), self.full(self.count)

    def refill(self, i):
        for c, part in enumerate(self.x.chunk(self.world)):
            part.fill_(value(3 + c, self.rank, i))
        self.out.fill_(-1)

    def run(self):
        dist.reduce_scatter_tensor(self.out, self.x)

    def check(self, i):
        total = sum(value(3 + self.rank, r, i) for r in range(self.world))
        self.expect(self.out, torch.full_like(self.out, total), "this rank's block of the sum")


class Broadcast(Op):
    name = "broadcast"

    def __init__(self, *a):
        super().__init__(*a)
        self.x = self.full(self.count)
        self.root = self.world - 1

    def refill(self, i):
        self.x.fill_(value(4, self.rank, i))

    def run(self):
        dist.broadcast(self.x, src=self.root)

    def check(self, i):
        self.expect(self.x, torch.full_like(self.x, value(4, self.root, i)), f"root {self.root}'s data")


class AllToAll(Op):
    name = "all_to_all_single"

    def __init__(self, *a):
        super().__init__(*a)
        self.x, self.out = self.full(self.count * self.world), self.full(self.count * self.world)

    def refill(self, i):
        for dst, part in enumerate(self.x.chunk(self.world)):
            part.fill_(value(8 + dst, self.rank, i))
        self.out.fill_(-1)

    def run(self):
        dist.all_to_all_single(self.out, self.x)

    def check(self, i):
        for src, part in enumerate(self.out.chunk(self.world)):
            self.expect(part, torch.full_like(part, value(8 + self.rank, src, i)), f"the block from rank {src}")


class SendRecvRing(Op):
    name = "batch_isend_irecv"

    def __init__(self, *a):
        super().__init__(*a)
        self.x, self.out = self.full(self.count), self.full(self.count)
        self.next, self.prev = (self.rank + 1) % self.world, (self.rank - 1) % self.world

    def refill(self, i):
        self.x.fill_(value(5, self.rank, i))
        self.out.fill_(-1)

    def run(self):
        ops = [dist.P2POp(dist.isend, self.x, self.next), dist.P2POp(dist.irecv, self.out, self.prev)]
        for work in dist.batch_isend_irecv(ops):
            work.wait()

    def check(self, i):
        self.expect(self.out, torch.full_like(self.out, value(5, self.prev, i)), f"the message from rank {self.prev}")


OPS = (AllReduce, AllGather, ReduceScatter, Broadcast, AllToAll, SendRecvRing)


def capture_and_replay(op, mode, replays):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for i in range(3):
            op.refill(i)
            op.run()
            op.check(i)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    op.refill(0)
    torch.cuda.synchronize()
    with torch.cuda.graph(graph, capture_error_mode=mode):
        op.run()
    for i in range(replays):
        op.refill(i)
        graph.replay()
        op.check(i)
    torch.cuda.synchronize()
    graph.reset()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--replays", type=int, default=1000)
    parser.add_argument("--counts", default="2,16384,1048576", help="elements per rank, comma-separated")
    parser.add_argument("--ops", default="", help="the ops to run by name, comma-separated (default: all)")
    args = parser.parse_args()
    names = args.ops.split(",") if args.ops else [make.name for make in OPS]
    unknown = set(names) - {make.name for make in OPS}
    if unknown:
        sys.exit(f"--ops names no such op: {', '.join(sorted(unknown))}")
    chosen = [make for make in OPS if make.name in names]
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count())
    dist.init_process_group("nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
    with open("/proc/self/maps") as maps:
        if os.environ.get("EXPECT_SLIMECCL") == "1" and "libslimeccl" not in maps.read():
            sys.exit(f"rank {rank}: libslimeccl is not loaded: the collectives went to another NCCL")
    counts = [int(c) for c in args.counts.split(",")]
    for mode in MODES:
        for make in chosen:
            for count in counts:
                for dtype in (torch.float32, torch.bfloat16):
                    op = make(world, rank, count, dtype)
                    try:
                        capture_and_replay(op, mode, args.replays)
                    except Exception as error:  # noqa: BLE001 - the sentence names the case
                        sys.exit(f"rank {rank}: {op.name}, {count} x {dtype}, capture mode {mode}: {error}")
        if rank == 0:
            print(f"capture mode {mode}: {len(chosen)} ops x {len(counts)} sizes x 2 types, {args.replays} replays each",
                  flush=True)
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        print("every op captured and replayed with checked data", flush=True)


if __name__ == "__main__":
    main()
