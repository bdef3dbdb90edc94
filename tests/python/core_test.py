"""The slimeccl Python package on forked ranks: every collective and Send/Recv on numpy arrays of
each datatype numpy has, on torch CPU tensors (DLPack) and on bytearrays, in and out of place;
split, groups, abort; and each kind of bad input raising slimeccl.Error with the code and a
sentence that names the rank and the op.

    core_test.py NRANKS
"""
import multiprocessing as mp
import sys
import traceback

import numpy as np

import slimeccl

DTYPES = [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64, np.float16, np.float32, np.float64]
COUNT = 1000  # above the shared slots' tiny calls, so the net path runs too for 4 ranks


def values(rank, count, dtype, salt=0):
    """Small values, exact in every dtype: rank r's element i."""
    return ((np.arange(count) + 3 * rank + salt) % 7).astype(dtype)


def check_collectives(comm, dtype):
    r, n = comm.rank, comm.size
    mine = values(r, COUNT, dtype)
    everyone = [values(p, COUNT, dtype) for p in range(n)]

    out = np.empty(COUNT * n, dtype)
    comm.all_gather(mine, out)
    assert np.array_equal(out, np.concatenate(everyone)), f"all_gather {dtype}"

    total = np.sum(np.stack(everyone).astype(np.float64), axis=0).astype(dtype)
    for in_place in (False, True):
        buf = mine.copy()
        dst = buf if in_place else np.empty_like(buf)
        comm.all_reduce(buf, dst)
        assert np.array_equal(dst, total), f"all_reduce {dtype} in_place={in_place}"
    biggest = np.max(np.stack(everyone), axis=0)
    comm.all_reduce(mine, out[:COUNT], slimeccl.MAX)
    assert np.array_equal(out[:COUNT], biggest), f"all_reduce max {dtype}"

    send = values(r, COUNT * n, dtype)
    block = np.empty(COUNT, dtype)
    comm.reduce_scatter(send, block)
    sums = np.sum(np.stack([values(p, COUNT * n, dtype).astype(np.float64) for p in range(n)]), axis=0)
    assert np.array_equal(block, sums[r * COUNT:(r + 1) * COUNT].astype(dtype)), f"reduce_scatter {dtype}"

    if n > 1:
        route = comm.last_op_route()
        assert route["op"] == "ReduceScatter" and route["route"] in ("net", "shared_slots") and route["algorithm"], route

    root = n - 1
    buf = values(r, COUNT, dtype, salt=5)
    comm.broadcast(buf, buf, root)
    assert np.array_equal(buf, values(root, COUNT, dtype, salt=5)), f"broadcast {dtype}"
    got = np.zeros(COUNT, dtype)
    comm.reduce(mine, got if r == root else None, root)
    if r == root:
        assert np.array_equal(got, total), f"reduce {dtype}"

    send = np.concatenate([values(r * n + p, COUNT, dtype) for p in range(n)])
    recv = np.empty_like(send)
    comm.all_to_all(send, recv)
    expect = np.concatenate([values(p * n + r, COUNT, dtype) for p in range(n)])
    assert np.array_equal(recv, expect), f"all_to_all {dtype}"


def check_all_gather_gemm(comm):
    r, n = comm.rank, comm.size
    m_local, k, cols = 16, 24, 8
    blocks = [values(p, m_local * k, np.float64).reshape(m_local, k) for p in range(n)]
    b = values(7, k * cols, np.float64).reshape(k, cols)
    c = np.empty((m_local * n, cols))
    gathered = np.empty((m_local * n, k))
    comm.all_gather_gemm(blocks[r], b, c, a_gathered=gathered)
    a = np.concatenate(blocks)
    assert np.array_equal(gathered, a), "all_gather_gemm a_gathered"
    assert np.allclose(c, a @ b, rtol=1e-12), "all_gather_gemm c"
    expect_error(4, [f"rank {r}: AllGatherGemm", "do not make C = AllGather(A) x B"],
                 lambda: comm.all_gather_gemm(blocks[r], b, np.empty((m_local * n + 1, cols))))


def check_gemm_reduce_scatter(comm):
    r, n = comm.rank, comm.size
    m_local, k, cols = 12, 20, 6
    a = [values(10 + p, m_local * n * k, np.float64).reshape(m_local * n, k) for p in range(n)]
    b = [values(20 + p, k * cols, np.float64).reshape(k, cols) for p in range(n)]
    c = np.empty((m_local, cols))
    comm.gemm_reduce_scatter(a[r], b[r], c)
    total = sum(a[p] @ b[p] for p in range(n))
    assert np.allclose(c, total[r * m_local:(r + 1) * m_local], rtol=1e-12), "gemm_reduce_scatter c"
    comm.gemm_reduce_scatter(a[r], b[r], c, slimeccl.MAX)
    most = np.max([a[p] @ b[p] for p in range(n)], axis=0)
    assert np.allclose(c, most[r * m_local:(r + 1) * m_local], rtol=1e-12), "gemm_reduce_scatter max"
    expect_error(4, [f"rank {r}: GemmReduceScatter", "do not make C = ReduceScatter(A x B)"],
                 lambda: comm.gemm_reduce_scatter(a[r], b[r], np.empty((m_local + 1, cols))))


def check_send_recv(comm):
    r, n = comm.rank, comm.size
    if n == 1:
        return
    # A ring in one group: every rank sends before it receives, which needs the group.
    big = np.full(1 << 18, r, np.float32)
    got = np.empty_like(big)
    with slimeccl.group():
        comm.send(big, (r + 1) % n)
        comm.recv(got, (r - 1) % n)
    assert np.all(got == (r - 1) % n), "ring send/recv"
    # bytearray through the buffer protocol
    if r == 0:
        comm.send(bytearray(b"slime"), 1)
    elif r == 1:
        into = bytearray(5)
        comm.recv(into, 0)
        assert into == bytearray(b"slime")


def check_torch(comm):
    try:
        import torch
    except ImportError:
        return
    r, n = comm.rank, comm.size
    x = torch.full((256,), float(r + 1), dtype=torch.bfloat16)
    comm.all_reduce(x, x)
    assert torch.all(x == n * (n + 1) / 2).item(), "torch bfloat16 all_reduce"
    out = torch.empty(256 * n, dtype=torch.int64)
    comm.all_gather(torch.full((256,), r, dtype=torch.int64), out)
    assert torch.equal(out, torch.arange(n).repeat_interleave(256)), "torch all_gather"
    column = torch.zeros(4, 4)[:, 1]
    expect_error(4, [f"rank {r}: AllReduce", "send buffer is not contiguous"], lambda: comm.all_reduce(column, column))


def expect_error(code, fragments, call):
    try:
        call()
    except slimeccl.Error as e:
        assert e.code == code, f"code {e.code} ({e.code_name}) for {e}"
        for f in fragments:
            assert f in str(e), f"{f!r} not in {e}"
        return
    raise AssertionError(f"no slimeccl.Error for {fragments}")


def check_errors(comm):
    r, n = comm.rank, comm.size
    inval = 4  # slimecclInvalidArgument
    f32 = np.zeros(8, np.float32)
    expect_error(inval, [f"rank {r}: AllGather", f"recv buffer holds {8 * n + 1} elements where {8 * n} are needed"],
                 lambda: comm.all_gather(f32, np.zeros(8 * n + 1, np.float32)))
    expect_error(inval, [f"rank {r}: AllReduce", "float32", "int32"],
                 lambda: comm.all_reduce(f32, np.zeros(8, np.int32)))
    readonly = np.zeros(8, np.float32)
    readonly.flags.writeable = False
    expect_error(inval, [f"rank {r}: AllReduce", "recv buffer", "writable"], lambda: comm.all_reduce(f32, readonly))
    expect_error(inval, [f"rank {r}: Broadcast", "recv buffer", "contiguous"],
                 lambda: comm.broadcast(None, np.zeros((4, 4), np.float32)[:, 1], 0))
    expect_error(inval, [f"rank {r}: AllReduce", "format 'Zf'", "no datatype"],
                 lambda: comm.all_reduce(np.zeros(4, np.complex64), np.zeros(4, np.complex64)))
    expect_error(inval, [f"rank {r}: Send", "a list"], lambda: comm.send([1, 2], 0))
    # From the library itself: a peer that is no rank.
    expect_error(inval, [f"rank {r}", "peer"], lambda: comm.send(f32, n + 3))
    expect_error(inval, ["unique id has 3 bytes"], lambda: slimeccl.Comm(2, b"abc", 0))


def check_split_and_abort(comm):
    r, n = comm.rank, comm.size
    half = comm.split(r % 2, key=-r)  # reversed order inside each half
    members = [p for p in range(n) if p % 2 == r % 2]
    assert half.size == len(members) and half.rank == len(members) - 1 - members.index(r), "split order"
    ones = np.ones(4, np.int32)
    half.all_reduce(ones, ones)
    assert np.all(ones == len(members)), "split all_reduce"
    half.destroy()
    expect_error(5, [f"rank {half.rank}: AllReduce", "destroyed"], lambda: half.all_reduce(ones, ones))
    assert comm.split(None) is None, "split with no color"
    with comm.split(0) as same:
        same.abort()
        assert not same.alive


def rank_main(rank, nranks, queue, results):
    try:
        uid = slimeccl.get_unique_id() if rank == 0 else queue.get()
        if rank == 0:
            for _ in range(nranks - 1):
                queue.put(uid)
        with slimeccl.Comm(nranks, uid, rank, timeout_ms=60000, name="python-core-test") as comm:
            assert (comm.rank, comm.size) == (rank, nranks)
            for dtype in DTYPES:
                check_collectives(comm, dtype)
            check_all_gather_gemm(comm)
            check_gemm_reduce_scatter(comm)
            check_send_recv(comm)
            check_torch(comm)
            check_errors(comm)
            check_split_and_abort(comm)
        results.put((rank, "ok"))
    except BaseException:
        results.put((rank, traceback.format_exc()))


def main():
    nranks = int(sys.argv[1])
    ctx = mp.get_context("fork")
    queue, results = ctx.Queue(), ctx.Queue()
    procs = [ctx.Process(target=rank_main, args=(r, nranks, queue, results)) for r in range(nranks)]
    for p in procs:
        p.start()
    reports = dict(results.get(timeout=300) for _ in range(nranks))
    for p in procs:
        p.join()
    failed = {r: text for r, text in reports.items() if text != "ok"}
    for r, text in sorted(failed.items()):
        print(f"rank {r}:\n{text}")
    if failed:
        sys.exit(1)
    print(f"python core: {nranks} ranks passed, slimeccl {slimeccl.version()}")


if __name__ == "__main__":
    main()
