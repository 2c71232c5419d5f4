#!/usr/bin/env python3
"""The gradient all-reduce overlapped with backward, measured in one run:
axon-train's step with the gradients summed in buckets while backward goes on
(--all-reduce-bucket-mb B) against one all-reduce after backward
(--all-reduce-bucket-mb 0), for multi-worker (mpirun -np 2, 1 thread each)
and mirrored (2 logical CPU devices, 1 thread each), on the guide's CNN
(0.37 MB of gradients) and on the same CNN with a 4608-unit Dense layer
(bench/distribute/wide_dense_cnn.json, 11 MB). Multi-worker also runs over a
simulated slow link (AXON_TEST_SLOW_LINK_MS_PER_MIB: each all-reduce lasts at
least that long per MiB, asleep), where the all-reduce costs time but no CPU,
as a network does. Rounds alternate the settings (the machine is shared);
each figure is the best round's. Prints per setting: ms per step, the
all-reduce the step waited for after backward, the all-reduce calls that ran
during backward (waiting for the other worker included), and the share of
the all-reduce taken off the step: 1 - waited with buckets / waited without.
Figures only; no verdicts.

  python3 bench/distribute/bench_overlap.py [--build build] [--rounds 3] [--samples 6400]
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# model, its --model flag, the bucket size, and the slow link (ms per MiB)
# that makes one all-reduce take about as long as a backward pass.
MODELS = [
    ("guide CNN (0.37 MB)", [], "0.05", "10"),
    ("wide Dense CNN (11 MB)", ["--model", os.path.join(HERE, "wide_dense_cnn.json")], "2", "1"),
]


def run(cmd, env):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if p.returncode != 0:
        sys.exit("bench_overlap: %s failed (exit %d):\n%s" % (" ".join(cmd), p.returncode, p.stdout[-2000:]))
    return p.stdout


def figures(out, batch):
    rate = float(re.search(r"([0-9.]+) samples/s", out).group(1))
    waited = float(re.search(r"all-reduce: ([0-9.]+) ms per step", out).group(1))
    hidden = re.search(r"; ([0-9.]+) ms per step more ran during backward", out)
    return {"step": 1000.0 * batch / rate, "waited": waited, "hidden": float(hidden.group(1)) if hidden else 0.0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--samples", type=int, default=6400)
    ap.add_argument("--batch-size", type=int, default=64)
    a = ap.parse_args()
    exe = os.path.join(a.build, "bin", "axon-train")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    common = ["--epochs", "1", "--train-limit", str(a.samples), "--test-limit", "100", "--batch-size",
              str(a.batch_size), "--verbose"]
    settings = []  # (model, setup, link, bucket flag, command, env)
    for model, flags, bucket, slow in MODELS:
        for setup, prefix, links in [
                ("multi-worker 2x1", ["mpirun", "-np", "2", "-x", "AXON_TEST_SLOW_LINK_MS_PER_MIB", exe,
                                      "--strategy", "multi-worker", "--threads", "1"], ["0", slow]),
                ("mirrored 2x1", [exe, "--strategy", "mirrored", "--cpu-devices", "2", "--threads", "2"], ["0"])]:
            for link in links:
                for mb in ["0", bucket]:
                    settings.append((model, setup, link, mb, prefix + flags + common + ["--all-reduce-bucket-mb", mb],
                                     dict(env, AXON_TEST_SLOW_LINK_MS_PER_MIB=link)))
    best = {}
    for r in range(a.rounds):
        for model, setup, link, mb, cmd, e in settings:
            f = figures(run(cmd, e), a.batch_size)
            key = (model, setup, link, mb)
            if key not in best or f["step"] < best[key]["step"]:
                best[key] = f
        print("round %d of %d done" % (r + 1, a.rounds), flush=True)

    print("\nbest of %d rounds, %d samples, global batch %d; ms per step" % (a.rounds, a.samples, a.batch_size))
    print("%-24s %-17s %-11s %-9s %8s %8s %11s %14s %7s" % ("model", "strategy", "link ms/MiB", "buckets", "step",
                                                               "speedup", "waited for", "during bwd", "hidden"))
    for model, setup, link, mb, _, _ in settings:
        f = best[(model, setup, link, mb)]
        off = best[(model, setup, link, "0")]
        hidden = "%6.0f%%" % (100 * (1 - f["waited"] / off["waited"])) if mb != "0" and off["waited"] > 0 else "-"
        print("%-24s %-17s %-11s %-9s %8.2f %7.2fx %11.3f %14.3f %7s" % (
            model, setup, link if link != "0" else "-", mb + " MiB" if mb != "0" else "off", f["step"],
            off["step"] / f["step"], f["waited"], f["hidden"], hidden))


if __name__ == "__main__":
    main()
