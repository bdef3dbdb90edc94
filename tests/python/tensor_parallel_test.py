"""slimeccl.torch.all_gather_matmul and matmul_reduce_scatter under torchrun, on CPU tensors with
the gloo backend: every rank rebuilds every rank's inputs from seeds and checks the results
against torch.matmul of the whole, exactly (integer-valued float64), for 2-D and 3-D tensors,
gather and scatter along dim 0 and 1, sum and avg, return_A on and off, a second B, and a
subgroup; bad arguments raise ValueError."""
import os

import torch
import torch.distributed as dist

import slimeccl.torch as st


def ints(seed, *shape):
    return torch.randint(-3, 4, shape, generator=torch.Generator().manual_seed(seed)).to(torch.float64)


def check_all_gather_matmul(rank, size, group, members):
    me = members.index(rank)
    n = len(members)
    for shape, dim in (((6, 10), 0), ((2, 5, 10), 1), ((3, 4, 10), 0)):
        shards = [ints(100 + p, *shape) for p in range(n)]
        b1, b2 = ints(7, 10, 9), ints(8, 10, 3)
        a_out, (c1, c2) = st.all_gather_matmul(shards[me], [b1, b2], gather_dim=dim, group_name=group)
        whole = torch.cat(shards, dim=dim)
        assert torch.equal(a_out, whole), f"all_gather_matmul A, shape {shape} dim {dim}"
        assert torch.equal(c1, whole @ b1) and torch.equal(c2, whole @ b2), f"all_gather_matmul C, {shape} dim {dim}"
        none, (c3,) = st.all_gather_matmul(shards[me], [b1], gather_dim=dim, group_name=group, return_A=False)
        assert none is None and torch.equal(c3, whole @ b1), "all_gather_matmul without A"


def check_matmul_reduce_scatter(rank, size, group, members):
    me = members.index(rank)
    n = len(members)
    for shape, dim in (((4 * n, 10), 0), ((2, 3 * n, 10), 1), ((2 * n, 3, 10), 0)):
        for op in ("sum", "avg"):
            a = [ints(200 + p, *shape) for p in range(n)]
            b = [ints(300 + p, 10, 5) for p in range(n)]
            out = st.matmul_reduce_scatter(a[me], b[me], op, scatter_dim=dim, group_name=group)
            total = sum(a[p] @ b[p] for p in range(n))
            if op == "avg":
                total = total / n
            want = total.chunk(n, dim=dim)[me]
            assert out.shape == want.shape, f"matmul_reduce_scatter shape {tuple(out.shape)} for {tuple(want.shape)}"
            assert torch.allclose(out, want, rtol=0, atol=1e-12), f"matmul_reduce_scatter {shape} dim {dim} {op}"


def check_errors(rank, group, members):
    n = len(members)
    a, b = ints(1, 2 * n, 4), ints(2, 4, 3)
    for bad in (lambda: st.matmul_reduce_scatter(a, b, "max", 0, group),
                lambda: st.matmul_reduce_scatter(a, b, "sum", 1, group),
                lambda: st.all_gather_matmul(a, [b], gather_dim=1, group_name=group)):
        try:
            bad()
        except ValueError:
            continue
        raise AssertionError("a bad argument was taken")


def main():
    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    world = list(range(size))
    check_all_gather_matmul(rank, size, None, world)
    check_matmul_reduce_scatter(rank, size, None, world)
    check_errors(rank, None, world)
    # A subgroup of the even ranks, by group object.
    evens = world[::2]
    sub = dist.new_group(evens)
    if rank in evens:
        check_all_gather_matmul(rank, size, sub, evens)
        check_matmul_reduce_scatter(rank, size, sub, evens)
    dist.barrier()
    print(f"tensor parallel: rank {rank} of {size} passed", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
