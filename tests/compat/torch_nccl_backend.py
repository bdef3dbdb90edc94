# PyTorch's NCCL backend on whichever libnccl.so.2 the process loaded: every call users make,
# with checked data, then steps of DistributedDataParallel training whose losses rank 0 writes
# to LOSSES (one per line), so a run on slimeccl's library can be compared with one on NCCL.
# Needs one GPU per rank:
#   torchrun --nproc-per-node 2 tests/compat/torch_nccl_backend.py LOSSES
# Prints "<n> ranks: every check passed, loaded <path of libnccl.so.2>" on rank 0.
import faulthandler
import os
import sys

import torch
import torch.distributed as dist


def loaded_nccl():
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "libnccl.so" in line}
    return ", ".join(sorted(paths))


def check(what, got, want):
    if not torch.equal(got, want):
        raise AssertionError(f"rank {dist.get_rank()}: {what}: got {got.flatten()[:8].tolist()}, "
                             f"want {want.flatten()[:8].tolist()}")


def collectives(rank, n, dev):
    count = 1 << 16
    mine = torch.arange(count, device=dev, dtype=torch.float32) + 1000 * rank
    every = torch.stack([torch.arange(count, device=dev, dtype=torch.float32) + 1000 * r for r in range(n)])

    gathered = torch.empty(n * count, device=dev)
    dist.all_gather_into_tensor(gathered, mine)
    check("all_gather_into_tensor", gathered, every.flatten())

    parts = [torch.empty(count, device=dev) for _ in range(n)]
    dist.all_gather(parts, mine)
    check("all_gather", torch.stack(parts), every)

    for op, want in ((dist.ReduceOp.SUM, every.sum(0)), (dist.ReduceOp.MAX, every.max(0).values),
                     (dist.ReduceOp.MIN, every.min(0).values), (dist.ReduceOp.AVG, every.sum(0) / n)):
        reduced = mine.clone()
        dist.all_reduce(reduced, op=op)
        check(f"all_reduce {op}", reduced, want)

    ints = torch.arange(count, device=dev, dtype=torch.int64) * (rank + 1)
    dist.all_reduce(ints)
    check("all_reduce int64", ints, torch.arange(count, device=dev, dtype=torch.int64) * (n * (n + 1) // 2))

    halves = torch.arange(count, device=dev, dtype=torch.bfloat16) % 64
    dist.all_reduce(halves)
    check("all_reduce bf16", halves, (torch.arange(count, device=dev, dtype=torch.bfloat16) % 64) * n)

    block = torch.empty(count // n, device=dev)
    dist.reduce_scatter_tensor(block, mine.clone())
    check("reduce_scatter_tensor", block, every.sum(0)[rank * (count // n):(rank + 1) * (count // n)])

    root = n - 1
    cast = mine.clone()
    dist.broadcast(cast, src=root)
    check("broadcast", cast, every[root])

    total = mine.clone()
    dist.reduce(total, dst=0)
    if rank == 0:
        check("reduce", total, every.sum(0))

    sent = torch.arange(n * 4, device=dev, dtype=torch.float32) + 100 * rank
    got = torch.empty_like(sent)
    dist.all_to_all_single(got, sent)
    want = torch.cat([torch.arange(4, device=dev, dtype=torch.float32) + 4 * rank + 100 * r for r in range(n)])
    check("all_to_all_single", got, want)

    nxt, prev = (rank + 1) % n, (rank - 1) % n
    inbox = torch.empty(count, device=dev)
    if rank % 2 == 0:
        dist.send(mine, nxt)
        dist.recv(inbox, prev)
    else:
        dist.recv(inbox, prev)
        dist.send(mine, nxt)
    check("send/recv", inbox, every[prev])

    inbox.zero_()
    works = dist.batch_isend_irecv([dist.P2POp(dist.isend, mine, nxt), dist.P2POp(dist.irecv, inbox, prev)])
    for work in works:
        work.wait()
    check("batch_isend_irecv", inbox, every[prev])

    dist.barrier()
    torch.cuda.synchronize()


def training(rank, dev, steps=20):
    torch.manual_seed(1234)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)).to(dev)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[dev.index])
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)
    data = torch.Generator().manual_seed(rank)
    losses = []
    for _ in range(steps):
        x = torch.randn(16, 32, generator=data).to(dev)
        y = x.sum(1, keepdim=True)
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        mean = loss.detach().clone()
        dist.all_reduce(mean, op=dist.ReduceOp.AVG)
        losses.append(mean.item())
    return losses


def main():
    # TORCH_NCCL_CHECK_DEADLINE=S: print every thread's stack and exit when a rank is not done in S s.
    if "TORCH_NCCL_CHECK_DEADLINE" in os.environ:
        faulthandler.dump_traceback_later(float(os.environ["TORCH_NCCL_CHECK_DEADLINE"]), exit=True)
    rank = int(os.environ["RANK"])
    dev = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", device_id=dev)
    n = dist.get_world_size()
    collectives(rank, n, dev)
    losses = training(rank, dev)
    if rank == 0:
        with open(sys.argv[1], "w") as out:
            out.write("".join(f"{loss:.9e}\n" for loss in losses))
        print(f"{n} ranks: every check passed, loaded {loaded_nccl()}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
