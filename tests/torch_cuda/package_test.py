"""The slimeccl Python package on CUDA tensors under torchrun (one rank per GPU, or more ranks
sharing them): each call on torch CUDA tensors through DLPack, on the stream named by `stream=`
(torch's current stream, a side stream, the legacy default stream when None), with the data
checked after the stream has run, the route checked, and the tensor-parallel ops against
torch.matmul.

    torchrun --nproc_per_node 2 package_test.py
"""
import os

import torch
import torch.distributed as dist

import slimeccl.torch as st


def main():
    gpu = int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count()
    torch.cuda.set_device(gpu)
    comm = st.comm_from_env()
    rank, n = comm.rank, comm.size
    own_gpu = n <= torch.cuda.device_count()
    cur = torch.cuda.current_stream()
    for dtype in (torch.float32, torch.bfloat16, torch.int32):
        for count in (1, 4099, 1 << 20):
            x = torch.full((count,), rank + 1, dtype=dtype, device="cuda")
            comm.all_reduce(x, x, stream=cur)
            out = torch.empty(count * n, dtype=dtype, device="cuda")
            comm.all_gather(x[:count], out, stream=cur)
            cur.synchronize()
            assert torch.all(x == n * (n + 1) // 2), f"all_reduce {dtype} {count}"
            assert torch.all(out == n * (n + 1) // 2), f"all_gather {dtype} {count}"
            route = comm.last_op_route()
            # Ranks that share a GPU take GPU to GPU or host staging, op by op.
            assert route["route"] == "gpu_to_gpu" or not own_gpu, f"rank {rank}: {route}"
    # A side stream, and the legacy default stream (stream=None).
    side = torch.cuda.Stream()
    y = torch.arange(n * 1000, dtype=torch.float32, device="cuda") + rank
    got = torch.empty(1000, dtype=torch.float32, device="cuda")
    side.wait_stream(cur)
    comm.reduce_scatter(y, got, stream=side)
    side.synchronize()
    expect = (torch.arange(rank * 1000, (rank + 1) * 1000, dtype=torch.float32, device="cuda") * n + n * (n - 1) / 2)
    assert torch.equal(got, expect), "reduce_scatter on a side stream"
    z = torch.full((4096,), float(rank), device="cuda")
    torch.cuda.synchronize()
    comm.broadcast(z, z, n - 1)
    torch.cuda.synchronize()
    assert torch.all(z == n - 1), "broadcast on the legacy default stream"
    # The tensor-parallel ops on CUDA tensors, against torch.matmul of the whole.
    dist.init_process_group("slimeccl")
    torch.manual_seed(0)
    a_all = torch.randn(n * 256, 128, device="cuda", dtype=torch.float32)
    b = torch.randn(128, 64, device="cuda", dtype=torch.float32)
    a = a_all[rank * 256:(rank + 1) * 256]
    _, (c,) = st.all_gather_matmul(a, [b], gather_dim=0)
    assert torch.allclose(c, a_all @ b, rtol=1e-4, atol=1e-3), "all_gather_matmul"
    rs = st.matmul_reduce_scatter(a_all, b, "sum", 0)
    assert torch.allclose(rs, n * (a_all @ b)[rank * 256:(rank + 1) * 256], rtol=1e-4, atol=1e-2), \
        "matmul_reduce_scatter"
    comm.destroy()
    dist.destroy_process_group()
    print(f"package on cuda: rank {rank} of {n} passed", flush=True)


if __name__ == "__main__":
    main()
