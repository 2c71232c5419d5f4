#!/usr/bin/env python3
"""One thread against all of them: axon-bench-train's epoch with --threads 1
and --threads N, alternated in pairs in one run, on this shared machine.
Prints each pair's samples/s and ratio, then the median and range of the
ratios; with --per-op also each op's time per call at both counts (the best
of the pairs, from profiled steps) and the step's sum of them, so the op
that keeps the step from scaling shows. Figures, never verdicts.

    python3 bench/train/thread_scaling.py [--model tests/data/keras_resnet.json]
        [--pairs 6] [--train-limit 12800] [--per-op]

A pair runs the two counts back to back, the order alternating from pair
to pair, so a neighbour's burst lands on one pair rather than on one count:
the median of the pairs' ratios is the figure to quote, the range says how
noisy the run was. The ratio of each count's fastest run is printed too: it
holds where bursts hit several pairs, and a steady neighbour lowers it."""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OP_ROW = re.compile(r"^  (\S+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+[\d.]+%$")


def run(bench, common, threads, profile_steps):
    """(samples/s, {op: (calls, ms per call)}, profiled steps) of one run."""
    cmd = [bench] + common + ["--threads", str(threads), "--profile-steps", str(profile_steps)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"thread_scaling.py: {' '.join(cmd)} exited {p.returncode}:\n{p.stderr[-2000:]}")
    rate = re.search(r"^samples/s\s+(\d+)", p.stdout, re.M)
    if rate is None:
        sys.exit(f"thread_scaling.py: no samples/s line from {' '.join(cmd)}")
    steps = re.search(r"^per op over (\d+) profiled steps", p.stdout, re.M)
    ops = {}
    for line in p.stdout.splitlines():
        m = OP_ROW.match(line)
        if m and steps:
            ops[m.group(1)] = (int(m.group(2)), float(m.group(4)))
        if line.startswith("roofline"):
            break
    return float(rate.group(1)), ops, int(steps.group(1)) if steps else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "bin", "axon-bench-train"))
    ap.add_argument("--model", help="a Keras model JSON (default: the trainer's CNN)")
    ap.add_argument("--pairs", type=int, default=6)
    ap.add_argument("--train-limit", type=int, default=12800, help="samples per epoch (2 epochs, the faster counts)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="the count set against one thread")
    ap.add_argument("--per-op", action="store_true", help="also profile 100 steps a run and compare op by op")
    a = ap.parse_args()
    if a.pairs < 1 or a.train_limit < 1 or a.threads < 2:
        sys.exit("thread_scaling.py: --pairs and --train-limit must be at least 1, --threads at least 2")
    common = ["--train-limit", str(a.train_limit), "--epochs", "2", "--sgemm-size", "0"]
    if a.model:
        common += ["--model", a.model]
    profile = 100 if a.per_op else 0

    print(f"{a.model or 'the trainer CNN'}: {a.pairs} pairs of 1 and {a.threads} threads, "
          f"{a.train_limit} samples an epoch; load average at start {os.getloadavg()[0]:.2f}")
    ratios, best = [], {1: {}, a.threads: {}}
    fastest = {1: 0.0, a.threads: 0.0}
    steps = {}
    for i in range(a.pairs):
        order = (1, a.threads) if i % 2 == 0 else (a.threads, 1)
        rate = {}
        for t in order:
            rate[t], ops, steps[t] = run(a.bench, common, t, profile)
            fastest[t] = max(fastest[t], rate[t])
            for op, (calls, ms) in ops.items():
                if op not in best[t] or ms < best[t][op][1]:
                    best[t][op] = (calls, ms)
        ratios.append(rate[a.threads] / rate[1])
        print(f"pair {i + 1}: 1 thread {rate[1]:8.0f} samples/s, {a.threads} threads {rate[a.threads]:8.0f}: "
              f"{ratios[-1]:.3f}x")
    print(f"median {statistics.median(ratios):.3f}x, range {min(ratios):.3f}-{max(ratios):.3f}x; "
          f"load average at end {os.getloadavg()[0]:.2f}")
    # A neighbour's burst only ever slows a run: each count's fastest run is
    # its least disturbed one, wherever in the run the bursts fell.
    print(f"fastest runs: 1 thread {fastest[1]:.0f} samples/s, {a.threads} threads {fastest[a.threads]:.0f}: "
          f"{fastest[a.threads] / fastest[1]:.3f}x")
    if not a.per_op:
        return
    print(f"\nper op, the best ms per call of the {a.pairs} pairs ({steps[1]} profiled steps a run):")
    print(f"  {'op':38s} {'calls/step':>10s} {'1 thread us':>12s} {a.threads:>3d} threads us {'ratio':>7s}")
    total = {1: 0.0, a.threads: 0.0}
    ops = sorted(best[1], key=lambda op: -best[1][op][0] * best[1][op][1])
    for op in ops:
        if op not in best[a.threads]:
            continue
        per_step = best[1][op][0] / steps[1]
        one, many = 1e3 * best[1][op][1], 1e3 * best[a.threads][op][1]
        total[1] += per_step * one
        total[a.threads] += per_step * many
        ratio = f"{one / many:6.2f}x" if many > 0 else "     -"
        print(f"  {op:38s} {per_step:10.2f} {one:12.1f} {many:15.1f} {ratio:>7s}")
    print(f"  the step's ops: {total[1]:.0f} us on 1 thread, {total[a.threads]:.0f} us on {a.threads}: "
          f"{total[1] / total[a.threads]:.3f}x")


if __name__ == "__main__":
    main()
