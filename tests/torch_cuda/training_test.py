"""A few training steps of a small model with DDP and then with FSDP2 (fully_shard), on CUDA
tensors, under the process group backend given; each rank prints its losses as one JSON line
("losses: {...}"), which compare_training.sh compares between two backends.

    torchrun --nproc_per_node 2 training_test.py --backend slimeccl
"""
import argparse
import json
import os

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.nn.parallel import DistributedDataParallel

STEPS = 8


def make_model():
    torch.manual_seed(0)  # the same weights on every rank and in every run
    return torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 1024),
                               torch.nn.GELU(), torch.nn.Linear(1024, 16)).cuda()


def batches(rank):
    gen = torch.Generator(device="cuda").manual_seed(1000 + rank)
    for _ in range(STEPS):
        x = torch.randn(64, 256, device="cuda", generator=gen)
        y = torch.randn(64, 16, device="cuda", generator=gen)
        yield x, y


def train(model, rank):
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for x, y in batches(rank):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        # The loss averaged over the ranks: it moves with every rank's gradients.
        mean = loss.detach().clone()
        dist.all_reduce(mean, op=dist.ReduceOp.AVG)
        losses.append(mean.item())
    return losses


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", required=True)
    backend = parser.parse_args().backend
    if backend == "slimeccl":
        import slimeccl.torch  # noqa: F401  (registers the backend)
    gpu = int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count()
    torch.cuda.set_device(gpu)
    dist.init_process_group(backend)
    rank = dist.get_rank()
    ddp = train(DistributedDataParallel(make_model(), device_ids=[gpu]), rank)
    from torch.distributed.fsdp import fully_shard

    model = make_model()
    mesh = init_device_mesh("cuda", (dist.get_world_size(),))
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    fsdp = train(model, rank)
    print("losses: " + json.dumps({"rank": rank, "backend": backend, "ddp": ddp, "fsdp2": fsdp}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
