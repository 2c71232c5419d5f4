#!/usr/bin/env python3
"""The guide's CNN trained from a folder of PNGs (Fashion-MNIST written by
Pillow, one folder per class) against the same images as IDX files: seconds
per epoch and the share of it spent waiting for input, without and with
--cache. Prints figures, asserts nothing. Needs NumPy and Pillow (the venv of
tools/install-deps has both).
Usage: folder_epoch.py AXON_TRAIN [--images N] [--epochs E] [--threads T]"""
import argparse
import csv
import gzip
import os
import struct
import subprocess
import tempfile
import time

import numpy as np
from PIL import Image

DATA = "/usr/share/datasets/fashion-mnist"


def idx(stem):
    for name in (stem, stem + ".gz"):
        path = os.path.join(DATA, name)
        if os.path.exists(path):
            data = (gzip.open if name.endswith(".gz") else open)(path, "rb").read()
            dims = struct.unpack(">" + "I" * data[3], data[4:4 + 4 * data[3]])
            return np.frombuffer(data, np.uint8, offset=4 + 4 * data[3]).reshape(dims)
    raise SystemExit("no %s in %s" % (stem, DATA))


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
    args = p.parse_args()
    x, y = idx("train-images-idx3-ubyte")[:args.images], idx("train-labels-idx1-ubyte")[:args.images]
    with tempfile.TemporaryDirectory(prefix="axon-bench-folder-") as tmp:
        folder = os.path.join(tmp, "train")
        t0 = time.monotonic()
        for i, (img, label) in enumerate(zip(x, y)):
            d = os.path.join(folder, "class%d" % label)
            os.makedirs(d, exist_ok=True)
            Image.fromarray(img, "L").save(os.path.join(d, "%05d.png" % i))
        print("wrote %d PNGs in %.1f s" % (len(x), time.monotonic() - t0))
        limit = ["--train-limit", str(args.images), "--test-limit", "1000"]
        runs = {
            "IDX files": epochs_of(args.train, args, ["--data", DATA] + limit, tmp, "idx"),
            "PNG folder": epochs_of(args.train, args, ["--data", folder, "--validation-split", "0.0167"], tmp, "png"),
            "PNG folder --cache": epochs_of(args.train, args, ["--data", folder, "--validation-split", "0.0167",
                                                               "--cache"], tmp, "cache"),
        }
    print("%-20s %s" % ("run", "  ".join("epoch %d: samples/s (input wait)" % (e + 1) for e in range(args.epochs))))
    for name, ep in runs.items():
        print("%-20s %s" % (name, "  ".join("%8.0f (%4.1f%%)          " % (r, 100 * w / s) for s, w, r in ep)))
    # The best of epochs 2 on (the machine is shared): samples/s, as the folder trains on 1.67% fewer images.
    idx_rate = max(r for _, _, r in runs["IDX files"][1:] or runs["IDX files"])
    cache_rate = max(r for _, _, r in runs["PNG folder --cache"][1:] or runs["PNG folder --cache"])
    print("--cache, epochs 2 on: %.0f samples/s against the IDX run's %.0f (%+.1f%%); without --cache the input wait "
          "is at most %.1f%% of training time" % (cache_rate, idx_rate, 100 * (cache_rate / idx_rate - 1),
                                                  100 * max(w / s for s, w, _ in runs["PNG folder"])))


if __name__ == "__main__":
    main()
