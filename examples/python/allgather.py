"""AllGather of torch tensors with the slimeccl package, under torchrun:

    torchrun --nproc_per_node 4 examples/python/allgather.py
"""
import torch

import slimeccl.torch

comm = slimeccl.torch.comm_from_env()
rank, size = comm.rank, comm.size
count = 1 << 20
block = torch.full((count,), float(rank))
gathered = torch.empty(size * count)
comm.all_gather(block, gathered)
expected = torch.arange(size, dtype=torch.float32).repeat_interleave(count)
wrong = int((gathered != expected).sum())
print(f"rank {rank}: {size} blocks gathered, {wrong} wrong values")
comm.destroy()
