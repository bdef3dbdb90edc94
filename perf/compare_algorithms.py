#!/usr/bin/env python3
"""Times every algorithm of a collective (each forced on a communicator of its own) and the tuner's
choice, taking turns within one launch of the perf tool (-A ring,hd,...,default -K R), and prints
one row per size: the out-of-place time of each, the best forced algorithm, and the default's
ratio to it. Usage:
  perf/compare_algorithms.py --ranks 8 --coll allgather [--bin build/bin] [--net shm] [--hosts H]
                             [--repeat R] [--launches L] [--warmup W] [-- extra perf flags]
--hosts H spreads the ranks over H network-namespace hosts (perf/netns_hosts.sh, root).
--repeat R is the number of rounds in which the communicators take turns at each size; each size
reports the median of its R times. All of them share one launch, so where the scheduler put the
ranks (on a small shared machine the largest source of variation) is the same for every column.
The tools run blocking (-z 1: each call returns when done), so the times are the algorithms'
and not a stream worker's hand-off, which on ranks bound to one CPU each shares that CPU.
--warmup W untimed calls of each algorithm come before each size (the first few hundred calls over
connections a communicator has not used yet run several times slower).
--launches L repeats the launch and reports the median over launches of those medians.
The "default runs" column names the algorithm the tuner's table picks for the size (read from
slimeccl-info --json): where it is the best forced one, the two columns differ by noise only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ALGORITHMS = {
    "allgather": ["ring", "hd", "direct", "hier"],
    "allreduce": ["ring", "hd", "rd", "oneshot"],
    "reducescatter": ["ring", "hd"],
    "broadcast": ["tree", "chain", "scatter_ag"],
    "reduce": ["tree", "rs_gather"],
    "alltoall": ["pairwise", "bruck"],
}


UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def parse_bytes(text):
    text = text.strip(" [)")
    if text == "inf":
        return float("inf")
    value, unit = text.split()
    return float(value) * UNITS[unit]


def tuner_rows(bin_dir):
    out = subprocess.run([os.path.join(bin_dir, "slimeccl-info"), "--json"], capture_output=True, text=True, check=True)
    rows = []
    for row in json.loads(out.stdout)["tuner"]:
        low, high = row["bytes"].split(",")
        first, last = row["ranks"].split("..")
        rows.append((row["collective"], parse_bytes(low), parse_bytes(high), int(first),
                     float("inf") if last == "inf" else int(last), row["topology"], row["algorithm"]))
    return rows


def tuner_choice(rows, coll, size, ranks, several_hosts, shared_slots):
    """The algorithm of the first row that matches, as the library reads its table."""
    topologies = ["any", "several hosts" if several_hosts else "one host"]
    if shared_slots:
        topologies.append("shared slots")
    for name, low, high, first, last, topo, algo in rows:
        if name == coll and low <= size < high and first <= ranks <= last and topo in topologies:
            return algo
    return "?"


def run(args, names):
    """One launch: {algorithm or None for the default: {size: median time (us)}}."""
    tool = os.path.join(args.bin, f"{args.coll}_perf")
    if args.hosts > 1:
        hosts_script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "netns_hosts.sh")
        launcher = [hosts_script, args.bin, str(args.hosts), str(args.ranks // args.hosts), "--"]
    else:
        launcher = [os.path.join(args.bin, "slimeccl-run"), "-n", str(args.ranks)]
    command = launcher + [tool, "-b", args.min, "-e", args.max, "-f", "4", "-c", "0", "-n", str(args.iters),
                          "-w", str(args.warmup), "-z", "1", "-A", ",".join(names + ["default"]), "-K", str(args.repeat)]
    env = dict(os.environ)
    if args.net:
        env["SLIMECCL_NET"] = args.net
    out = subprocess.run(command + args.extra, env=env, capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{out.stdout}\n{out.stderr}")
    times = {name: {} for name in names + [None]}
    for line in out.stdout.splitlines():
        fields = line.split()
        if not fields or line.startswith("#") or not fields[0].isdigit():
            continue
        # size, count, type, redop, root, then one time per algorithm and the default, #wrong
        for name, cell in zip(names + [None], fields[5:]):
            times[name][int(fields[0])] = float(cell)
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
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=20, help="untimed calls per algorithm before each size")
    parser.add_argument("--launches", type=int, default=1)
    parser.add_argument("extra", nargs="*")
    args = parser.parse_args()
    names = ALGORITHMS[args.coll]
    samples = {name: {} for name in names + [None]}
    for _ in range(args.launches):
        for name, by_size in run(args, names).items():
            for size, t in by_size.items():
                samples[name].setdefault(size, []).append(t)
    medians = {name: {size: statistics.median(ts) for size, ts in by_size.items()} for name, by_size in samples.items()}
    forced = {name: medians[name] for name in names}
    default = medians[None]
    where = f", {args.hosts} hosts" if args.hosts > 1 else ""
    runs = f", median of {args.repeat} turns" + (f" in each of {args.launches} launches" if args.launches > 1 else "")
    print(f"# {args.coll}, {args.ranks} ranks{where}{', ' + args.net if args.net else ''}: out-of-place time (us){runs}")
    rows = tuner_rows(args.bin)
    print("| size (B) | " + " | ".join(names) + " | default | default runs | best forced | default / best |")
    print("|---:|" + "---:|" * len(names) + "---:|---|---|---:|")
    within = same = judged = 0
    for size in sorted(default):
        row = [forced[a].get(size) for a in names]
        best = min((t, a) for t, a in zip(row, names) if t is not None)
        cells = " | ".join(f"{t:.1f}" if t is not None else "-" for t in row)
        # An empty call (fewer elements than ranks round to none) moves nothing: shown, not judged.
        ratio = default[size] / best[0] if size > 0 else 1.0
        # The slots need one host, shm between the ranks (the default there) and at most 64 ranks.
        shared_slots = args.hosts == 1 and args.net in (None, "", "shm") and args.ranks <= 64 \
            and os.environ.get("SLIMECCL_SHARED_SLOTS", "1") != "0"
        choice = tuner_choice(rows, args.coll, size, args.ranks, args.hosts > 1, shared_slots)
        judged += size > 0
        within += size > 0 and ratio <= 1.10
        same += ratio > 1.10 and choice == best[1]
        shown = f"{ratio:.2f}" if size > 0 else "-"
        print(f"| {size} | {cells} | {default[size]:.1f} | {choice} | {best[1]} | {shown} |")
    print(f"\nThe default is within 10% of the best forced algorithm at {within} of {judged} sizes;"
          f" at {same} more it runs the best algorithm and differs by run-to-run noise.")


if __name__ == "__main__":
    main()
