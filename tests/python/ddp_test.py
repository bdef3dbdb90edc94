"""DistributedDataParallel on the "slimeccl" backend gives the losses and weights that "gloo" gives.
Each rank trains the same model twice from the same seed, 20 steps on its own batch: once with
the default group (slimeccl), once with a gloo group over the same ranks.

    torchrun --nproc_per_node 4 ddp_test.py
"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import slimeccl.torch  # noqa: F401

STEPS = 20
TOLERANCE = 1e-6


def train(group, rank):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Tanh(), torch.nn.Linear(64, 64), torch.nn.Tanh(),
                                torch.nn.Linear(64, 4))
    # Small buckets: several allreduces per step, overlapping the backward pass.
    ddp = DDP(model, process_group=group, bucket_cap_mb=0.01)
    backend = ddp._get_ddp_logging_data().get("backend_name")
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    data = torch.Generator().manual_seed(1000 + rank)
    x = torch.randn(16, 32, generator=data)
    y = torch.randn(16, 4, generator=data)
    losses = []
    for _ in range(STEPS):
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return backend, torch.tensor(losses, dtype=torch.float64), [p.detach().clone() for p in model.parameters()]


def main():
    dist.init_process_group("slimeccl")
    rank, n = dist.get_rank(), dist.get_world_size()
    gloo = dist.new_group(list(range(n)), backend="gloo")
    ours, our_losses, our_params = train(dist.group.WORLD, rank)
    theirs, gloo_losses, gloo_params = train(gloo, rank)
    assert ours == "slimeccl" and theirs == "gloo", (ours, theirs)
    worst = (our_losses - gloo_losses).abs().max().item()
    assert worst <= TOLERANCE, f"losses differ by {worst}: {our_losses} vs {gloo_losses}"
    drift = max((a - b).abs().max().item() for a, b in zip(our_params, gloo_params))
    assert drift <= TOLERANCE, f"weights differ by {drift}"
    assert our_losses[-1] < our_losses[0], "the model did not learn"
    dist.destroy_process_group()
    print(f"ddp: rank {rank} of {n}: {STEPS} steps, losses within {worst:.1e} of gloo's "
          f"({our_losses[0]:.4f} -> {our_losses[-1]:.4f})")


if __name__ == "__main__":
    main()
