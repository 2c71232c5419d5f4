"""Fashion-MNIST from the IDX files axon-train reads, for the peers: uint8
images and int labels, as NumPy arrays (gzip or plain)."""
import gzip
import os
import struct

import numpy as np


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    _, _, rank = struct.unpack(">HBB", data[:4])
    dims = struct.unpack(">" + "I" * rank, data[4:4 + 4 * rank])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * rank).reshape(dims)


def load(folder, stem):
    for suffix in (".gz", ""):
        path = os.path.join(folder, stem + suffix)
        if os.path.exists(path):
            return read_idx(path)
    raise SystemExit(f"no {stem}[.gz] in {folder}")


def training_set(folder, limit=0):
    """(images [N, 28, 28, 1] float32 in [0, 1], labels [N] int64), the first `limit` when > 0."""
    x = load(folder, "train-images-idx3-ubyte")
    y = load(folder, "train-labels-idx1-ubyte")
    if limit > 0:
        x, y = x[:limit], y[:limit]
    return x[..., None].astype("float32") / 255.0, y.astype("int64")
