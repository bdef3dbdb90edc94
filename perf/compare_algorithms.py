#!/usr/bin/env python3
"""Runs a perf tool once per algorithm (forced with -A) and once with the tuner's choice, and prints
one row per size: the out-of-place time of each, the best forced algorithm, and the default's
ratio to it. Usage:
  perf/compare_algorithms.py --ranks 8 --coll allgather [--bin build/bin] [--net shm] [--hosts H]
                             [-- extra perf flags]
--hosts H spreads the ranks over H network-namespace hosts (perf/netns_hosts.sh, root).
--repeat R runs every configuration R times, taking turns, and reports the median time per size:
on a small shared machine one run's small-message times depend on where the scheduler put the
ranks.
"""
import argparse
import os
import statistics
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
    if args.hosts > 1:
        hosts_script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "netns_hosts.sh")
        launcher = [hosts_script, args.bin, str(args.hosts), str(args.ranks // args.hosts), "--"]
    else:
        launcher = [os.path.join(args.bin, "slimeccl-run"), "-n", str(args.ranks)]
    command = launcher + [tool, "-b", args.min, "-e", args.max, "-f", "4", "-c", "0", "-n", str(args.iters),
                          "-w", "2"]
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
    parser.add_argument("--hosts", type=int, default=1)
    parser.add_argument("--min", default="8")
    parser.add_argument("--max", default="16M")
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("extra", nargs="*")
    args = parser.parse_args()
    names = ALGORITHMS[args.coll]
    samples = {name: {} for name in names + [None]}
    for _ in range(args.repeat):
        for name in names + [None]:
            for size, t in run(args, name).items():
                samples[name].setdefault(size, []).append(t)
    medians = {name: {size: statistics.median(ts) for size, ts in by_size.items()} for name, by_size in samples.items()}
    forced = {name: medians[name] for name in names}
    default = medians[None]
    where = f", {args.hosts} hosts" if args.hosts > 1 else ""
    runs = f", median of {args.repeat} runs" if args.repeat > 1 else ""
    print(f"# {args.coll}, {args.ranks} ranks{where}{', ' + args.net if args.net else ''}: out-of-place time (us){runs}")
    print("| size (B) | " + " | ".join(names) + " | default | best forced | default / best |")
    print("|---:|" + "---:|" * len(names) + "---:|---|---:|")
    within = 0
    for size in sorted(default):
        row = [forced[a].get(size) for a in names]
        best = min((t, a) for t, a in zip(row, names) if t is not None)
        cells = " | ".join(f"{t:.1f}" if t is not None else "-" for t in row)
        ratio = default[size] / best[0]
        within += ratio <= 1.10
        print(f"| {size} | {cells} | {default[size]:.1f} | {best[1]} | {ratio:.2f} |")
    print(f"\nThe default is within 10% of the best forced algorithm at {within} of {len(default)} sizes.")


if __name__ == "__main__":
    main()
