"""torch.distributed's "slimeccl" backend under torchrun: every call the backend serves, on CPU
tensors (or, with --device cuda, on CUDA tensors: each rank on GPU LOCAL_RANK modulo the GPUs) of
several dtypes, with the data checked; async work with wait() and futures; new_group; the group's
timeout bounding an op; a mismatched call failing with slimeccl's sentence; the route each op took.
On CUDA also: ops queued on torch's current stream, in its order, without blocking the host.

    torchrun --nproc_per_node 4 torch_backend_test.py [--device cuda]
"""
import argparse
import datetime
import os
import re
import time

import torch
import torch.distributed as dist

import slimeccl.torch  # registers the backend

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int32, torch.int64, torch.uint8,
          torch.int8]


def rank_values(rank, count, dtype, salt=0):
    return ((torch.arange(count) + 3 * rank + salt) % 7).to(dtype)


def check_collectives(rank, n, dtype, count):
    everyone = [rank_values(p, count, dtype) for p in range(n)]
    mine = everyone[rank].clone()
    stacked = torch.stack([t.double() for t in everyone])

    out = torch.empty(count * n, dtype=dtype)
    dist.all_gather_into_tensor(out, mine)
    assert torch.equal(out, torch.cat(everyone)), f"all_gather_into_tensor {dtype}"
    listed = [torch.empty(count, dtype=dtype) for _ in range(n)]
    dist.all_gather(listed, mine)
    assert all(torch.equal(a, b) for a, b in zip(listed, everyone)), f"all_gather {dtype}"

    for op, expect in [(dist.ReduceOp.SUM, stacked.sum(0)), (dist.ReduceOp.MAX, stacked.max(0).values),
                       (dist.ReduceOp.MIN, stacked.min(0).values)]:
        x = mine.clone()
        dist.all_reduce(x, op=op)
        assert torch.equal(x, expect.to(dtype)), f"all_reduce {op} {dtype}"

    send = rank_values(rank, count * n, dtype)
    block = torch.empty(count, dtype=dtype)
    dist.reduce_scatter_tensor(block, send)
    sums = torch.stack([rank_values(p, count * n, dtype).double() for p in range(n)]).sum(0)
    assert torch.equal(block, sums[rank * count:(rank + 1) * count].to(dtype)), f"reduce_scatter_tensor {dtype}"
    block2 = torch.empty(count, dtype=dtype)
    dist.reduce_scatter(block2, list(send.chunk(n)))
    assert torch.equal(block2, block), f"reduce_scatter {dtype}"

    root = n - 1
    x = rank_values(rank, count, dtype, salt=5)
    dist.broadcast(x, src=root)
    assert torch.equal(x, rank_values(root, count, dtype, salt=5)), f"broadcast {dtype}"
    x = mine.clone()
    dist.reduce(x, dst=root)
    if rank == root:
        assert torch.equal(x, stacked.sum(0).to(dtype)), f"reduce {dtype}"
    else:
        assert torch.equal(x, mine), f"reduce leaves a non-root's tensor {dtype}"

    send = torch.cat([rank_values(rank * n + p, count, dtype) for p in range(n)])
    recv = torch.empty_like(send)
    dist.all_to_all_single(recv, send)
    assert torch.equal(recv, torch.cat([rank_values(p * n + rank, count, dtype) for p in range(n)])), \
        f"all_to_all_single {dtype}"


def check_reductions(rank, n):
    x = torch.full((64,), float(rank + 1), dtype=torch.float64)
    dist.all_reduce(x, op=dist.ReduceOp.PRODUCT)
    assert torch.all(x == float(torch.arange(1, n + 1).prod())), "product"
    x = torch.full((64,), float(rank), dtype=torch.float32)
    dist.all_reduce(x, op=dist.ReduceOp.AVG)
    assert torch.allclose(x, torch.full((64,), (n - 1) / 2)), "average"
    flags = torch.tensor([rank == 0, False, True])
    dist.all_reduce(flags)  # booleans: sum is logical or
    assert flags.tolist() == [True, False, True], "bool or"
    z = torch.full((8,), complex(rank, -rank), dtype=torch.complex64)
    dist.all_reduce(z)
    assert torch.all(z == complex(n * (n - 1) / 2, -n * (n - 1) / 2)), "complex sum"
    # PREMUL_SUM (as FSDP2 divides gradients): every rank's input times the factor, summed; the
    # factor a number or a one-element tensor.
    x = torch.full((64,), float(rank + 1))
    dist.all_reduce(x, op=dist._make_nccl_premul_sum(0.5))
    assert torch.all(x == 0.5 * n * (n + 1) / 2), "premul sum by a number"
    y = torch.full((n * 8,), float(rank + 1), dtype=torch.bfloat16)
    out = torch.empty(8, dtype=torch.bfloat16)
    factor = torch.tensor([2.0], device=y.device)
    # PyTorch 1 takes the tensor factor as a list of one tensor.
    by_tensor = dist._make_nccl_premul_sum(factor if int(torch.__version__.split(".")[0]) >= 2 else [factor])
    dist.reduce_scatter_tensor(out, y, op=by_tensor)
    assert torch.all(out == n * (n + 1)), "premul sum by a tensor"
    try:
        dist.all_reduce(torch.ones(4, dtype=torch.int32), op=dist._make_nccl_premul_sum(2.0))
        raise AssertionError("a premul sum of integers succeeded")
    except RuntimeError as e:
        assert "PREMUL_SUM takes floating tensors" in str(e), str(e)
    # A non-contiguous tensor gets the result in place.
    m = torch.full((8, 4), float(rank)).t()
    dist.all_reduce(m)
    assert torch.all(m == n * (n - 1) / 2) and not m.is_contiguous(), "non-contiguous all_reduce"


def check_uneven_all_to_all(rank, n):
    # rank r sends p + 1 rows to rank p; each row holds (sender, receiver, 2 more).
    sends = [torch.tensor([[rank, p, 0, 0]] * (p + 1), dtype=torch.int64) for p in range(n)]
    send = torch.cat(sends)
    recv = torch.empty((n * (rank + 1), 4), dtype=torch.int64)
    dist.all_to_all_single(recv, send, output_split_sizes=[rank + 1] * n, input_split_sizes=[p + 1 for p in range(n)])
    expect = torch.cat([torch.tensor([[p, rank, 0, 0]] * (rank + 1)) for p in range(n)])
    assert torch.equal(recv, expect), "uneven all_to_all_single"
    outs = [torch.empty(p + 1, dtype=torch.float32) for p in range(n)]
    ins = [torch.full((rank + 1,), float(rank * 10 + p)) for p in range(n)]
    dist.all_to_all(outs, ins)
    assert all(torch.all(outs[p] == p * 10 + rank) for p in range(n)), "all_to_all lists"


def check_gather_scatter(rank, n):
    root = 1 % n
    gathered = [torch.empty(5) for _ in range(n)] if rank == root else None
    dist.gather(torch.full((5,), float(rank)), gathered, dst=root)
    if rank == root:
        assert all(torch.all(g == p) for p, g in enumerate(gathered)), "gather"
    out = torch.empty(5)
    dist.scatter(out, [torch.full((5,), float(p * 2)) for p in range(n)] if rank == root else None, src=root)
    assert torch.all(out == rank * 2), "scatter"


def check_point_to_point(rank, n):
    if n == 1:
        return
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    big = 1 << 20  # far above the eager size: each Send waits for its Recv
    # isend then irecv on every rank, then the waits: the batch runs as one group.
    got = torch.empty(big)
    reqs = [dist.isend(torch.full((big,), float(rank)), nxt), dist.irecv(got, prv)]
    for req in reqs:
        req.wait()
    assert torch.all(got == prv), "isend/irecv ring"
    ops = [dist.P2POp(dist.isend, torch.full((big,), float(rank) + 0.5), nxt), dist.P2POp(dist.irecv, got, prv)]
    for req in dist.batch_isend_irecv(ops):
        req.wait()
    assert torch.all(got == prv + 0.5), "batch_isend_irecv"
    # Blocking send/recv between pairs, the lower rank sending first.
    partner = rank ^ 1
    if partner < n:
        t = torch.full((100,), float(rank))
        if rank < partner:
            dist.send(t, partner)
            dist.recv(t, partner)
        else:
            dist.recv(t, partner)
            dist.send(torch.full((100,), float(rank)), partner)
        assert torch.all(t == partner), "send/recv"


def check_async(rank, n):
    xs = [torch.full((1 << 16,), float(rank + k)) for k in range(4)]
    works = [dist.all_reduce(x, async_op=True) for x in xs]
    futures = [w.get_future() for w in works]
    for w in works:
        assert w.wait()
        # On CUDA tensors wait() makes the current stream wait, as NCCL's Work does; the op is done
        # once that stream has caught up.
        if xs[0].is_cuda:
            torch.cuda.current_stream().synchronize()
        assert w.is_completed()
    for k, (x, f) in enumerate(zip(xs, futures)):
        expect = n * (n - 1) / 2 + n * k
        assert torch.all(x == expect), "async all_reduce"
        assert torch.all(f.wait()[0] == expect), "future result"
    # Nobody waits: the group's thread runs it, and is_completed turns true on its own.
    y = torch.ones(32)
    work = dist.all_reduce(y, async_op=True)
    deadline = time.monotonic() + 30
    while not work.is_completed():
        assert time.monotonic() < deadline, "an op nobody waits on never ran"
        time.sleep(0.001)
    assert torch.all(y == n), "unwaited all_reduce"
    chained = dist.all_reduce(torch.ones(4), async_op=True).get_future().then(lambda f: f.value()[0] * 2)
    assert torch.all(chained.wait() == 2 * n), "future then"
    dist.barrier()


def check_new_group(rank, n):
    evens = [p for p in range(n) if p % 2 == 0]
    # Every rank calls new_group, as torch requires; only members get a group.
    group = dist.new_group(evens)
    if rank in evens:
        x = torch.ones(10)
        dist.all_reduce(x, group=group)
        assert torch.all(x == len(evens)), "new_group all_reduce"
        out = torch.empty(len(evens))
        dist.all_gather_into_tensor(out, torch.tensor([float(rank)]), group=group)
        assert out.tolist() == [float(p) for p in evens], "new_group all_gather"
        assert dist.get_backend(group) == "slimeccl"


def finish(work):
    """Waits for an op that may fail: on CUDA its failure can come after the call returned, once
    the library lets the stream go."""
    if torch.ones(1).is_cuda:
        torch.cuda.current_stream().synchronize()
    work.wait()


def check_failures(rank, n):
    if n < 2:
        return
    # A group whose op rank 0 never calls: the others time out after the group's 2 s, with
    # slimeccl's sentence, not torch's 30 min.
    group = dist.new_group(list(range(n)), timeout=datetime.timedelta(seconds=2))
    if rank != 0:
        start = time.monotonic()
        try:
            finish(dist.all_reduce(torch.ones(4), group=group, async_op=True))
            raise AssertionError("an op that a rank never called succeeded")
        except RuntimeError as e:
            took = time.monotonic() - start
            assert "slimeccl" in str(e) and "timed out" in str(e), str(e)
            assert took < 20, f"the timeout took {took:.1f} s"
    dist.barrier()
    # Mismatched calls fail on both sides with a sentence naming both calls.
    mismatch = dist.new_group(list(range(n)))
    if rank in (0, 1):
        try:
            finish(dist.all_reduce(torch.ones(4 if rank == 0 else 8), group=mismatch, async_op=True))
            raise AssertionError("mismatched calls succeeded")
        except RuntimeError as e:
            # The host path names a call "AllReduce(count=4, ...", the GPU path "AllReduce (seq 0, count 4, ...".
            names = [re.search(rf"AllReduce ?\((seq \d+, )?count[= ]{count}\b", str(e)) for count in (4, 8)]
            assert all(names), str(e)
    dist.barrier()


def check_route(rank, n, device):
    x = torch.ones(1 << 18)
    dist.all_reduce(x)
    if device == "cuda":
        torch.cuda.current_stream().synchronize()  # an op through host staging starts once the stream reaches it
    route = slimeccl.torch.last_op_route()
    assert route["op"] == "AllReduce", route
    # GPU to GPU where each rank has a GPU of its own, never for host tensors; ranks that share a GPU
    # take either way, op by op.
    if device == "cpu":
        assert route["route"] != "gpu_to_gpu", f"rank {rank}: {route}"
    elif n <= torch.cuda.device_count():
        assert route["route"] == "gpu_to_gpu", f"rank {rank}: {route}"
    print(f"rank {rank}: an all_reduce of 1 MiB went {route['route']}")


def check_stream_order(rank, n):
    """Ops on CUDA tensors are queued on torch's current stream: behind a kernel queued before
    them, the call returns at once and the op is done only after that kernel."""
    x = torch.full((1024,), float(rank))
    torch.cuda._sleep(200_000_000)  # about 0.1 s of the GPU's clock
    start = time.monotonic()
    work = dist.all_reduce(x, async_op=True)
    # Ranks that share a GPU stage their ops in host memory; without a chunk arena
    # (SLIMECCL_STAGING_CHUNKS=off) such an op runs as a blocking call (docs/cuda.md).
    blocking = os.environ.get("SLIMECCL_STAGING_CHUNKS") == "off" and n > torch.cuda.device_count()
    if blocking:
        work.wait()
        torch.cuda.current_stream().synchronize()
        assert work.is_completed() and torch.all(x == n * (n - 1) / 2), "a blocking all_reduce behind a kernel"
        return
    assert time.monotonic() - start < 0.05, "the call waited for the stream"
    assert not work.is_completed(), "the op finished before the kernel queued ahead of it"
    work.wait()  # the current stream waits, not the host
    torch.cuda.current_stream().synchronize()
    assert work.is_completed() and torch.all(x == n * (n - 1) / 2), "all_reduce behind a kernel"
    # An op on a side stream: wait() makes the current stream wait for it.
    side = torch.cuda.Stream()
    y = torch.full((1 << 16,), 1.0)
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(100_000_000)
        side_work = dist.all_reduce(y, async_op=True)
    side_work.wait()
    z = y * 2  # on the current stream, after the op
    assert torch.all(z == 2 * n), "the current stream ran ahead of a side stream's op it waited for"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    device = parser.parse_args().device
    if device == "cuda":
        gpu = int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count()
        torch.cuda.set_device(gpu)
        torch.set_default_device(f"cuda:{gpu}")
    dist.init_process_group("slimeccl")
    rank, n = dist.get_rank(), dist.get_world_size()
    assert dist.get_backend() == "slimeccl"
    check_route(rank, n, device)
    if device == "cuda":
        check_stream_order(rank, n)
    for dtype in DTYPES:
        for count in (1, 1000, 70000):
            check_collectives(rank, n, dtype, count)
    check_reductions(rank, n)
    check_uneven_all_to_all(rank, n)
    check_gather_scatter(rank, n)
    check_point_to_point(rank, n)
    check_async(rank, n)
    check_new_group(rank, n)
    check_failures(rank, n)
    dist.destroy_process_group()
    print(f"torch backend: rank {rank} of {n} passed on {device}")


if __name__ == "__main__":
    main()
