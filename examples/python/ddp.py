"""A small DistributedDataParallel training run on the "slimeccl" backend, under torchrun:

    torchrun --nproc_per_node 4 examples/python/ddp.py
"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import slimeccl.torch  # noqa: F401  (registers the backend)

dist.init_process_group("slimeccl")
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(torch.nn.Sequential(torch.nn.Linear(20, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
data = torch.Generator().manual_seed(rank)
x = torch.randn(64, 20, generator=data)
y = x.sum(dim=1, keepdim=True)
for step in range(50):
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step in (0, 49):
        print(f"rank {rank}: step {step}, loss {loss.item():.4f}")
dist.destroy_process_group()
