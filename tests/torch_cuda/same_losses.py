"""Compares the losses that training_test.py printed in two logs: every rank's DDP and FSDP2
losses within 1e-4 of the reference run's.

    same_losses.py REFERENCE_LOG REFERENCE_NAME OTHER_LOG OTHER_NAME
"""
import json
import sys


def losses(path):
    lines = [line.split("losses: ", 1)[1] for line in open(path) if "losses: " in line]
    return {r["rank"]: r for r in map(json.loads, lines)}


def main():
    reference_log, reference, other_log, other = sys.argv[1:5]
    want, got = losses(reference_log), losses(other_log)
    if not want or sorted(want) != sorted(got):
        sys.exit(f"ranks reporting: {reference} {sorted(want)}, {other} {sorted(got)}")
    for rank in sorted(want):
        for kind in ("ddp", "fsdp2"):
            a, b = want[rank][kind], got[rank][kind]
            if not a or len(a) != len(b):
                sys.exit(f"rank {rank} {kind}: {reference} gave {len(a)} losses, {other} {len(b)}")
            # Written so that a NaN on either side fails.
            far = [(x, y) for x, y in zip(a, b) if not abs(x - y) <= 1e-4]
            if far:
                sys.exit(f"rank {rank} {kind}: {reference} {a}, {other} {b} (apart: {far})")
            worst = max(abs(x - y) for x, y in zip(a, b))
            print(f"rank {rank} {kind}: {len(a)} losses, at most {worst:.2e} from {reference}'s (last {b[-1]:.6f})")
    print(f"training: {other}'s losses match {reference}'s")


if __name__ == "__main__":
    main()
