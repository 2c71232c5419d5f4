#!/usr/bin/env python3
"""The guide's CNN trained from a folder of PNGs (Fashion-MNIST written by
Pillow, one folder per class) against the same images as IDX files: seconds
per epoch and the share of it spent waiting for input, without and with
--cache, and with --no-prefetch (decoding on the training thread: what
prefetching gains). The runs alternate; each epoch's best round is shown
(the machine may be shared). Prints figures, asserts nothing. Needs NumPy
and Pillow (the venv of tools/install-deps has both).
Usage: folder_epoch.py AXON_TRAIN [--images N] [--epochs E] [--threads T] [--rounds R]"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time

from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peer"))
from idx_data import load  # noqa: E402

DATA = "/usr/share/datasets/fashion-mnist"


def epochs_of(train, args, extra, tmp, name):
    out = os.path.join(tmp, name + ".csv")
    cmd = [train, "--epochs", str(args.epochs), "--threads", str(args.threads), "-q", "--metrics-csv", out] + extra
    subprocess.run(cmd, check=True)
    with open(out) as f:
        return [(float(r["seconds"]), float(r["input_wait_seconds"]), float(r["samples_per_second"]))
                for r in csv.DictReader(f)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("train")
    p.add_argument("--images", type=int, default=60000)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=2, help="the runs alternate, this many times each")
    args = p.parse_args()
    x, y = load(DATA, "train-images-idx3-ubyte")[:args.images], load(DATA, "train-labels-idx1-ubyte")[:args.images]
    with tempfile.TemporaryDirectory(prefix="axon-bench-folder-") as tmp:
        folder = os.path.join(tmp, "train")
        t0 = time.monotonic()
        for i, (img, label) in enumerate(zip(x, y)):
            d = os.path.join(folder, "class%d" % label)
            os.makedirs(d, exist_ok=True)
            Image.fromarray(img, "L").save(os.path.join(d, "%05d.png" % i))
        print("wrote %d PNGs in %.1f s" % (len(x), time.monotonic() - t0))
        limit = ["--train-limit", str(args.images), "--test-limit", "1000"]
        # About 1,000 of the folder's files validate, as the IDX run's 1,000 test images do.
        split = ["--data", folder, "--validation-split", "%.4g" % (1000.5 / len(x))]
        configs = {
            "IDX files": ["--data", DATA] + limit,
            "PNG folder": split,
            "PNG folder --cache": split + ["--cache"],
            "PNG --no-prefetch": split + ["--no-prefetch"],
        }
        # Alternating runs share the machine's load alike; each epoch's best round counts.
        runs = {name: None for name in configs}
        for r in range(args.rounds):
            for n, (name, extra) in enumerate(configs.items()):
                ep = epochs_of(args.train, args, extra, tmp, "run%d_%d" % (r, n))
                runs[name] = ep if runs[name] is None else [min(a, b) for a, b in zip(runs[name], ep)]
    print("each epoch's best of %d rounds: seconds, training samples/s, input wait share" % args.rounds)
    print("%-20s %s" % ("run", "  ".join("epoch %d                 " % (e + 1) for e in range(args.epochs))))
    for name, ep in runs.items():
        print("%-20s %s" % (name, "  ".join("%5.2f s %6.0f/s (%4.1f%%)" % (s, r, 100 * w / s) for s, w, r in ep)))
    # Epochs 2 on, per training sample (the folder trains on 1,000 fewer images than the IDX files).
    def per_sample(name):
        return min(1 / r for _, _, r in runs[name][1:] or runs[name])
    idx_t = per_sample("IDX files")
    print("epochs 2 on, time a training sample against the IDX run's: --cache %+.1f%%, without --cache %+.1f%%, "
          "--no-prefetch %+.1f%%; without --cache the input wait is at most %.1f%% of an epoch"
          % tuple([100 * (per_sample(n) / idx_t - 1) for n in ("PNG folder --cache", "PNG folder", "PNG --no-prefetch")]
                  + [100 * max(w / s for s, w, _ in runs["PNG folder"])]))


if __name__ == "__main__":
    main()
