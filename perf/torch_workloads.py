"""Two PyTorch workloads on the GPUs, each run with NCCL and with this project's libnccl.so.2 in
its place, interleaved, in one call; prints steps per second for both and their ratio.

- decode: a tensor-parallel decode loop, one process per GPU. Per layer two bf16 all-reduces of
  TOKENS x HIDDEN elements (8-32 KiB for 1-4 tokens at 4096), each after the two GEMMs of a column-
  then row-parallel block; the whole step (every layer) is one CUDA graph, replayed.
- fsdp2: a training step of a stack of Linear layers sharded with FSDP2 (fully_shard): forward,
  backward, SGD step, as PyTorch issues them (AllGather and ReduceScatter of each layer).

    perf/torch_workloads.py LIBDIR [--runs 3] [--nproc 2]

LIBDIR holds this project's libnccl.so.2 and libslimeccl.so.0 (a build's lib/, or a packed one).
PyTorch's own NCCL runs with LD_PRELOAD and LD_LIBRARY_PATH unset; ours with LD_PRELOAD of
LIBDIR/libnccl.so.2. Each figure is the median of the runs.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

DECODE_TOKENS = (1, 2, 4)


def worker(args):
    import torch
    import torch.distributed as dist

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    device = torch.device("cuda", torch.cuda.current_device())
    dist.init_process_group("nccl", device_id=device)
    if os.environ.get("EXPECT_SLIMECCL") == "1":
        with open("/proc/self/maps") as maps:
            if "libslimeccl" not in maps.read():
                sys.exit(f"rank {rank}: libslimeccl is not loaded")
    report = (lambda line: print(line, flush=True)) if rank == 0 else (lambda line: None)

    hidden, layers = args.hidden, args.layers
    shard = hidden // world
    torch.manual_seed(1 + rank)
    # Two blocks per layer, each a column-parallel then a row-parallel GEMM.
    weights = [
        (torch.randn(hidden, shard, device=device, dtype=torch.bfloat16) * 0.01,
         torch.randn(shard, hidden, device=device, dtype=torch.bfloat16) * 0.01)
        for _ in range(2 * layers)
    ]
    for tokens in DECODE_TOKENS:
        x = torch.randn(tokens, hidden, device=device, dtype=torch.bfloat16)
        dist.broadcast(x, 0)

        def step():
            h = x
            for up, down in weights:
                y = (h @ up) @ down
                dist.all_reduce(y)
                h = h + y
            return h

        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step()
        for _ in range(10):
            graph.replay()
        torch.cuda.synchronize()
        dist.barrier()
        start = time.perf_counter()
        for _ in range(args.decode_steps):
            graph.replay()
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        report(f"decode tokens={tokens} steps/s {args.decode_steps / elapsed:.1f}")
        del graph

    from torch.distributed.fsdp import fully_shard

    model = torch.nn.Sequential(*[torch.nn.Linear(args.fsdp_dim, args.fsdp_dim, device=device) for _ in range(8)])
    for layer in model:
        fully_shard(layer)
    fully_shard(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    batch = torch.randn(args.fsdp_batch, args.fsdp_dim, device=device)

    def train_step():
        loss = model(batch).square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss

    for _ in range(5):
        train_step()
    torch.cuda.synchronize()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(args.fsdp_steps):
        loss = train_step()
    loss.item()
    torch.cuda.synchronize()
    report(f"fsdp2 steps/s {args.fsdp_steps / (time.perf_counter() - start):.2f}")
    dist.destroy_process_group()


def run_once(args, library, port):
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "LD_LIBRARY_PATH", "EXPECT_SLIMECCL")}
    env["NCCL_NVLS_ENABLE"] = "0"
    if library == "slimeccl":
        env.update(LD_PRELOAD=os.path.join(args.libdir, "libnccl.so.2"), LD_LIBRARY_PATH=args.libdir,
                   EXPECT_SLIMECCL="1")
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(args.nproc),
               "--master_port", str(port), os.path.abspath(__file__), "--worker"] + args.passed
    out = subprocess.run(command, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{library}: the run failed ({out.returncode}):\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    figures = {}
    for line in out.stdout.splitlines():
        words = line.split()
        if "steps/s" in words:
            figures[" ".join(words[: words.index("steps/s")])] = float(words[-1])
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("libdir", nargs="?")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nproc", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--decode-steps", type=int, default=200)
    parser.add_argument("--fsdp-dim", type=int, default=2048)
    parser.add_argument("--fsdp-batch", type=int, default=64)
    parser.add_argument("--fsdp-steps", type=int, default=20)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    if args.libdir is None:
        parser.error("LIBDIR is needed")
    args.libdir = os.path.abspath(args.libdir)
    args.passed = [f"--hidden={args.hidden}", f"--layers={args.layers}", f"--decode-steps={args.decode_steps}",
                   f"--fsdp-dim={args.fsdp_dim}", f"--fsdp-batch={args.fsdp_batch}", f"--fsdp-steps={args.fsdp_steps}"]
    results = {"nccl": [], "slimeccl": []}
    port = 29700
    for _ in range(args.runs):
        for library in results:
            results[library].append(run_once(args, library, port))
            port += 1
    print(f"# {args.nproc} GPUs, median of {args.runs} interleaved runs; steps per second")
    print(f"{'workload':<20} {'NCCL':>10} {'slimeccl':>10} {'ratio':>7}")
    for name in results["nccl"][0]:
        nccl = statistics.median(r[name] for r in results["nccl"])
        ours = statistics.median(r[name] for r in results["slimeccl"])
        print(f"{name:<20} {nccl:>10.2f} {ours:>10.2f} {ours / nccl:>7.2f}")


if __name__ == "__main__":
    main()
