#!/usr/bin/env python3
"""The GEMM inside slimeccl's fused calls against torch.matmul, on one GPU.

For each shape (M x K x N, bfloat16 by default) it runs, in one process on the same tensors: a
one-rank slimecclAllGatherGemm (its GEMM is the whole product, written straight into C), a
one-rank slimecclGemmReduceScatter (the GEMM into the library's workspace, then a one-rank Reduce
that copies it into C), and torch.matmul(out=). It prints the CUDA kernels each ran (PyTorch's
profiler) with their times, then the medians of interleaved timed iterations, and whether the
three results are equal bit for bit.

  python3 perf/torch_gemm_kernels.py --slimeccl .../libslimeccl.so.0 [--shapes 8192x8192x14336,...]
      [--iters 30] [--dtype bf16]
"""
import argparse
import ctypes
import statistics

import torch
from torch.profiler import ProfilerActivity, profile

DTYPES = {"bf16": (torch.bfloat16, 9), "fp16": (torch.float16, 6), "fp32": (torch.float32, 7)}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--slimeccl", required=True, help="libslimeccl.so.0")
    p.add_argument("--shapes", default="8192x8192x14336,4096x8192x14336,16384x8192x3584,4096x8192x5120",
                   help="comma-separated M x K x N")
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    args = p.parse_args()
    args.shapes = [tuple(int(v) for v in s.lower().split("x")) for s in args.shapes.split(",") if s]
    return args


class OneRank:
    """A one-rank communicator and a slimeccl stream on PyTorch's current CUDA stream."""

    class UniqueId(ctypes.Structure):
        _fields_ = [("internal", ctypes.c_char * 128)]

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.slimecclGetLastError.restype = ctypes.c_char_p
        uid = self.UniqueId()
        self.comm, self.stream = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(self.lib.slimecclGetUniqueId(ctypes.byref(uid)), "slimecclGetUniqueId")
        self.check(self.lib.slimecclCommInitRank(ctypes.byref(self.comm), 1, uid, 0), "slimecclCommInitRank")
        cuda_stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        self.check(self.lib.slimecclStreamCreateFromCuda(ctypes.byref(self.stream), cuda_stream),
                   "slimecclStreamCreateFromCuda")
        self.lib.slimecclAllGatherGemm.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_size_t] * 3 + [
            ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
        self.lib.slimecclGemmReduceScatter.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_size_t] * 3 + [
            ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]

    def check(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"{what}: {self.lib.slimecclGetLastError(getattr(self, 'comm', None)).decode()}")

    def all_gather_gemm(self, a, b, c, code):
        self.check(self.lib.slimecclAllGatherGemm(a.data_ptr(), None, b.data_ptr(), c.data_ptr(), a.shape[0],
                                                  b.shape[1], a.shape[1], code, self.comm, self.stream),
                   "slimecclAllGatherGemm")

    def gemm_reduce_scatter(self, a, b, c, code):
        self.check(self.lib.slimecclGemmReduceScatter(a.data_ptr(), b.data_ptr(), c.data_ptr(), a.shape[0], b.shape[1],
                                                      a.shape[1], code, 0, self.comm, self.stream),
                   "slimecclGemmReduceScatter")

    def close(self):
        self.lib.slimecclStreamDestroy(self.stream)
        self.lib.slimecclCommDestroy(self.comm)


def main():
    args = parse_args()
    torch.cuda.set_device(0)
    dtype, code = DTYPES[args.dtype]
    ours = OneRank(args.slimeccl)
    print(f"# torch {torch.__version__}, {torch.cuda.get_device_name()}, {args.dtype}, {args.iters} interleaved "
          f"iterations; times in ms (medians), kernels in us (one profiled call each)")
    print("| M x K x N | torch.matmul kernel | its us | AllGatherGemm kernel | its us | torch.matmul ms | "
          "AllGatherGemm ms | GemmReduceScatter ms | torch / AllGatherGemm | same bits |")
    print("| --- " * 10 + "|")
    for m, k, n in args.shapes:
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        b = (torch.randn(k, n, device="cuda") / k**0.5).to(dtype)
        c_torch, c_ag, c_rs = (torch.empty(m, n, device="cuda", dtype=dtype) for _ in range(3))
        calls = {
            "torch": lambda: torch.matmul(a, b, out=c_torch),
            "ag": lambda: ours.all_gather_gemm(a, b, c_ag, code),
            "rs": lambda: ours.gemm_reduce_scatter(a, b, c_rs, code),
        }
        for _ in range(5):
            for fn in calls.values():
                fn()
        torch.cuda.synchronize()
        kernels = {}
        for name in ("torch", "ag"):
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                calls[name]()
                torch.cuda.synchronize()
            gemm = max((e for e in prof.events() if e.device_type.name == "CUDA"), key=lambda e: e.device_time_total)
            kernels[name] = (gemm.name, gemm.device_time_total)
        times = {name: [] for name in calls}
        for _ in range(args.iters):
            for name, fn in calls.items():
                torch.cuda.synchronize()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                times[name].append(start.elapsed_time(end))
        t = {name: statistics.median(v) for name, v in times.items()}
        same = torch.equal(c_torch, c_ag) and torch.equal(c_torch, c_rs)
        print(f"| {m}x{k}x{n} | `{kernels['torch'][0][:60]}` | {kernels['torch'][1]:.0f} | "
              f"`{kernels['ag'][0][:60]}` | {kernels['ag'][1]:.0f} | {t['torch']:.3f} | {t['ag']:.3f} | {t['rs']:.3f} | "
              f"{t['torch'] / t['ag']:.3f} | {'yes' if same else 'no'} |", flush=True)
    ours.close()


if __name__ == "__main__":
    main()
