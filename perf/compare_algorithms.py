#!/usr/bin/env python3
"""Runs a perf tool once per algorithm (forced with -A) and once with the tuner's choice, and prints
one row per size: the out-of-place time of each, the best forced algorithm, and the default's
ratio to it. Usage:
  perf/compare_algorithms.py --ranks 8 --coll allgather [--bin build/bin] [--net shm] [-- extra perf flags]
"""
import argparse
import os
import subprocess
import sys

ALGORITHMS = {
    "allgather": ["ring", "hd", "direct", "hier"],
    "allreduce": ["ring", "hd", "rd"],
    "reducescatter": ["ring", "hd"],
    "broadcast": ["tree", "chain", "scatter_ag"],
    "reduce": ["tree", "rs_gather"],
    "alltoall": ["pairwise", "bruck"],
}


def run(args, algo):
    tool = os.path.join(args.bin, f"{args.coll}_perf")
    command = [os.path.join(args.bin, "slimeccl-run"), "-n", str(args.ranks), tool,
               "-b", args.min, "-e", args.max, "-f", "4", "-c", "0", "-n", str(args.iters), "-w", "2"]
    if algo:
        command += ["-A", algo]
    env = dict(os.environ)
    if args.net:
        env["SLIMECCL_NET"] = args.net
    out = subprocess.run(command + args.extra, env=env, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{out.stdout}\n{out.stderr}")
    times = {}
    for line in out.stdout.splitlines():
        fields = line.split()
        if not fields or line.startswith("#") or not fields[0].isdigit():
            continue
        times[int(fields[0])] = float(fields[5])  # size, count, type, redop, root, time
    return times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--coll", choices=sorted(ALGORITHMS), default="allgather")
    parser.add_argument("--bin", default="build/bin")
    parser.add_argument("--net", default="")
    parser.add_argument("--min", default="8")
    parser.add_argument("--max", default="16M")
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("extra", nargs="*")
    args = parser.parse_args()
    forced = {algo: run(args, algo) for algo in ALGORITHMS[args.coll]}
    default = run(args, None)
    names = ALGORITHMS[args.coll]
    print(f"# {args.coll}, {args.ranks} ranks{', ' + args.net if args.net else ''}: out-of-place time (us)")
    print("| size (B) | " + " | ".join(names) + " | default | best forced | default / best |")
    print("|---:|" + "---:|" * len(names) + "---:|---|---:|")
    for size in sorted(default):
        row = [forced[a].get(size) for a in names]
        best = min((t, a) for t, a in zip(row, names) if t is not None)
        cells = " | ".join(f"{t:.1f}" if t is not None else "-" for t in row)
        print(f"| {size} | {cells} | {default[size]:.1f} | {best[1]} | {default[size] / best[0]:.2f} |")


if __name__ == "__main__":
    main()
