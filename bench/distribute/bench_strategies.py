#!/usr/bin/env python3
"""Samples/s of axon-train's three strategies on this machine, measured in one
run: default (one CPU device, all threads), mirrored (2 logical CPU devices,
1 thread each) and multi-worker (mpirun -np 2, 1 thread each), alternating
for --rounds rounds (the machine is shared: each figure is the best of its
rounds). Prints samples/s, scaling efficiency against default, the all-reduce
time per step that --verbose reports (for multi-worker it includes waiting for
the slower worker) and the pure all-reduce time from axon-bench-allreduce,
each as a share of a default step. Figures only; no verdicts.

  python3 bench/distribute/bench_strategies.py [--build build] [--rounds 3] [--train-limit 20000]
"""
import argparse
import os
import re
import subprocess
import sys


def run(cmd, env):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if p.returncode != 0:
        sys.exit("bench_strategies: %s failed (exit %d):\n%s" % (" ".join(cmd), p.returncode, p.stdout[-2000:]))
    return p.stdout


def train(cmd, env):
    out = run(cmd, env)
    rate = float(re.search(r"([0-9.]+) samples/s", out).group(1))
    reduce_ms = [float(m) for m in re.findall(r"all-reduce: ([0-9.]+) ms per step", out)]
    return rate, min(reduce_ms) if reduce_ms else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--train-limit", type=int, default=20000)
    ap.add_argument("--epochs", type=int, default=2)
    a = ap.parse_args()
    exe = os.path.join(a.build, "bin", "axon-train")
    bench = os.path.join(a.build, "bin", "axon-bench-allreduce")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    common = ["--epochs", str(a.epochs), "--train-limit", str(a.train_limit), "--test-limit", "500",
              "--batch-size", "64", "--verbose"]
    runs = {
        "default (1 device, 2 threads)": [exe, "--threads", "2"] + common,
        "mirrored (2 devices x 1 thread)": [exe, "--strategy", "mirrored", "--cpu-devices", "2", "--threads", "2"] + common,
        "multi-worker (2 ranks x 1 thread)": ["mpirun", "-np", "2", "--bind-to", "core", exe, "--strategy",
                                              "multi-worker", "--threads", "1"] + common,
    }
    best = {k: (0.0, float("inf")) for k in runs}
    for r in range(a.rounds):
        for name, cmd in runs.items():
            rate, reduce_ms = train(cmd, env)
            best[name] = (max(best[name][0], rate), min(best[name][1], reduce_ms))
            print("round %d  %-36s %8.0f samples/s" % (r + 1, name, rate), flush=True)

    pure = {}
    out = run([bench, "--cpu-devices", "2", "--threads", "2"], env)
    pure["mirrored"] = float(re.search(r"axon mirrored.*?\s+\d+\s+([0-9.]+)", out).group(1)) / 1000
    out = run(["mpirun", "-np", "2", "--bind-to", "core", bench, "--threads", "1"], env)
    pure["multi-worker"] = float(re.search(r"axon multi-worker.*?\s+\d+\s+([0-9.]+)", out).group(1)) / 1000
    mpi = re.search(r"MPI_Allreduce.*?\s+\d+\s+([0-9.]+)", out)

    base = best["default (1 device, 2 threads)"][0]
    step_ms = 64 / base * 1000
    print("\nbest of %d rounds, %d samples x %d epochs, global batch 64; a default step takes %.2f ms"
          % (a.rounds, a.train_limit, a.epochs, step_ms))
    print("%-36s %11s %11s %22s %22s" % ("strategy", "samples/s", "efficiency", "all-reduce ms/step",
                                        "pure all-reduce ms"))
    for name in runs:
        rate, reduce_ms = best[name]
        kind = "mirrored" if name.startswith("mirrored") else "multi-worker" if name.startswith("multi") else None
        shown = "%.3f (%.1f%%)" % (reduce_ms, 100 * reduce_ms / step_ms) if kind else "-"
        p = "%.3f (%.1f%%)" % (pure[kind], 100 * pure[kind] / step_ms) if kind else "-"
        print("%-36s %11.0f %10.1f%% %22s %22s" % (name, rate, 100 * rate / base, shown, p))
    if mpi:
        print("MPI_Allreduce of the same buffer (the library's own order): %.3f ms" % (float(mpi.group(1)) / 1000))


if __name__ == "__main__":
    main()
