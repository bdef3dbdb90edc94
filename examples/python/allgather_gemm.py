"""C = AllGather(A) x B with slimeccl, under torchrun: each rank holds a row block of A; the GEMM
of each block runs as soon as that block lands.

    torchrun --nproc_per_node 4 examples/python/allgather_gemm.py
"""
import torch

import slimeccl.torch

comm = slimeccl.torch.comm_from_env()
rank, size = comm.rank, comm.size
m_local, k, n = 256, 512, 128
gen = torch.Generator().manual_seed(rank)
a_local = torch.randn(m_local, k, generator=gen)
b = torch.randn(k, n, generator=torch.Generator().manual_seed(99))
c = torch.empty(size * m_local, n)
a = torch.empty(size * m_local, k)
comm.all_gather_gemm(a_local, b, c, a_gathered=a)
expected = torch.cat([torch.randn(m_local, k, generator=torch.Generator().manual_seed(p)) for p in range(size)]) @ b
error = (c - expected).abs().max().item()
print(f"rank {rank}: C = AllGather(A) x B is {size * m_local}x{n}, max error {error:.1e}")
comm.destroy()
