#!/usr/bin/env python3
"""One training epoch of a Keras model in axon, Keras and PyTorch, alternating
in one run on the same machine and data; figures and ratios, never verdicts.

    python3 bench/peer/compare_epoch.py --model tests/data/keras_resnet.json \\
        --torch bench/peer/torch_resnet.py [--samples 12800] [--rounds 3]

Each round runs, one after another (the order rotates from round to round,
so no runner always follows the same neighbour):
  - axon:  build/bin/axon-bench-train --model FILE (its effective GFLOP/s
    counts Model::training_flops_per_sample), right after
    build/bin/axon-bench-sgemm 2048, the yardstick of its share of sgemm;
  - keras: bench/peer/keras_model.py --model FILE in --keras-python (TensorFlow);
  - torch: the --torch script (the same architecture written in PyTorch) in
    --torch-python, with OMP_WAIT_POLICY=PASSIVE unless --torch-wait-policy
    says otherwise: on this shared machine, with neighbours' processes
    running, PyTorch's two OpenMP threads spinning at their barriers ran
    4-10x slower than with passive waiting (1,920 samples: 14-33 s active,
    3.7-4.0 s passive, 2.7 s on one thread).
Each process warms up on a few batches first and then times --samples
samples (all 60,000 with --samples 0), so the figures are per sample; the
processes' peak resident memory and CPU seconds come from wait4(). The
machine is shared: the load average is printed at the start and the end,
and the medians and bests over the rounds are set side by side."""
import argparse
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run_measured(cmd, env=None):
    """(stdout, peak RSS MiB, CPU s) of one process, through wait4."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.dup2(w, 1)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        try:
            os.execve(cmd[0], cmd, env or os.environ)
        finally:
            os._exit(127)
    os.close(w)
    chunks = []
    with os.fdopen(r) as f:
        for line in f:
            chunks.append(line)
    _, status, usage = os.wait4(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    out = "".join(chunks)
    if code != 0:
        sys.exit(f"compare_epoch.py: {' '.join(cmd)} exited {code}:\n{out[-2000:]}")
    return out, usage.ru_maxrss / 1024.0, usage.ru_utime + usage.ru_stime


def grab(pattern, text, what):
    m = re.search(pattern, text, re.M)
    if not m:
        sys.exit(f"compare_epoch.py: no {what} in:\n{text[-2000:]}")
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="Keras model JSON")
    ap.add_argument("--torch", help="PyTorch peer script (the same architecture)")
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--samples", type=int, default=12800, help="timed samples per runner and round (0: all 60000)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2, help="PyTorch's threads")
    ap.add_argument("--torch-wait-policy", default="PASSIVE", help="OMP_WAIT_POLICY for PyTorch ('' : unset)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--keras-python", default="/tmp/tfenv/bin/python")
    ap.add_argument("--torch-python", default="/tmp/torchenv/bin/python")
    args = ap.parse_args()

    samples = args.samples if args.samples > 0 else 60000
    bench = os.path.join(args.build, "bin", "axon-bench-train")
    sgemm = os.path.join(args.build, "bin", "axon-bench-sgemm")
    runners = {
        "axon": [bench, "--model", args.model, "--data", args.data, "--batch-size", str(args.batch_size),
                 "--train-limit", str(args.samples), "--epochs", "1", "--profile-steps", "0", "--sgemm-size", "0"],
        "keras": [args.keras_python, os.path.join(HERE, "keras_model.py"), "--model", args.model, "--data", args.data,
                  "--samples", str(args.samples), "--batch-size", str(args.batch_size)],
    }
    if args.torch:
        runners["torch"] = [args.torch_python, args.torch, "--data", args.data, "--samples", str(args.samples),
                            "--batch-size", str(args.batch_size), "--threads", str(args.threads)]
    names = list(runners)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    torch_env = dict(env)
    if args.torch_wait_policy:
        torch_env["OMP_WAIT_POLICY"] = args.torch_wait_policy

    print(f"model {args.model}, batch {args.batch_size}, {samples} timed samples per runner and round, "
          f"{args.rounds} rounds; load average at start {os.getloadavg()[0]:.2f}", flush=True)
    rows = {n: [] for n in names}
    sgemm_rates = []
    axon_gflops = []
    for rnd in range(args.rounds):
        order = names[rnd % len(names):] + names[:rnd % len(names)]
        for name in order:
            if name == "axon":
                out, _, _ = run_measured([sgemm, "2048"], env)
                sgemm_rates.append(float(grab(r"^sgemm_gflops (\S+)", out, "sgemm rate").group(1)))
            out, rss, cpu = run_measured(runners[name], torch_env if name == "torch" else env)
            if name == "axon":
                m = grab(r"^epoch 1\s+(\S+) s, (\S+) samples/s, (\S+) GFLOP/s", out, "axon epoch line")
                seconds = float(m.group(1))
                axon_gflops.append(float(m.group(3)))
                flops = float(grab(r"\((\S+) MFLOP per training sample\)", out, "FLOPs").group(1))
            else:
                m = grab(r"^peer \w+ epoch 1: (\d+) samples in (\S+) s", out, f"{name} epoch line")
                seconds = float(m.group(2))
            sps = samples / seconds
            rows[name].append((sps, rss, cpu))
            extra = ""
            if name == "axon":
                extra = f", {axon_gflops[-1]:.1f} GFLOP/s = {100 * axon_gflops[-1] / sgemm_rates[-1]:.1f}% of sgemm " \
                        f"({sgemm_rates[-1]:.1f} GFLOP/s just before)"
            print(f"round {rnd + 1} {name:6s} {seconds:7.2f} s, {sps:7.0f} samples/s, "
                  f"{60000 / sps:6.1f} s per 60,000-sample epoch, peak RSS {rss:6.0f} MiB, "
                  f"process CPU {cpu:6.1f} s{extra}", flush=True)

    print(f"\nload average at end {os.getloadavg()[0]:.2f}")
    print(f"{'':8s} {'median samples/s':>17s} {'best':>8s} {'s/epoch (median)':>17s} {'peak RSS MiB':>13s}")
    med = {n: statistics.median(r[0] for r in rows[n]) for n in names}
    best = {n: max(r[0] for r in rows[n]) for n in names}
    for n in names:
        print(f"{n:8s} {med[n]:17.0f} {best[n]:8.0f} {60000 / med[n]:17.1f} {max(r[1] for r in rows[n]):13.0f}")
    for n in names:
        if n != "axon":
            print(f"axon / {n}: {med['axon'] / med[n]:.2f}x (medians), {best['axon'] / best[n]:.2f}x (bests)")
    share = [g / s for g, s in zip(axon_gflops, sgemm_rates)]
    print(f"axon's step: {flops:.2f} MFLOP per training sample; {statistics.median(axon_gflops):.1f} GFLOP/s "
          f"(median), {100 * statistics.median(share):.1f}% of OpenBLAS sgemm's rate measured just before it "
          f"(median; sgemm {min(sgemm_rates):.1f}-{max(sgemm_rates):.1f} GFLOP/s)")


if __name__ == "__main__":
    main()
