#!/usr/bin/python3
"""Seeds of fuzz_npy and fuzz_npz, written by NumPy (Debian's python3-numpy):
small valid inputs of each kind the readers take. fuzz_npy's input is a
2-byte little-endian length, the images .npy, then the labels .npy.
Usage: make_array_seeds.py tests/fuzz/corpus"""
import io
import os
import struct
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(7)


def npy(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


x8 = rng.integers(0, 256, (3, 4, 5), dtype=np.uint8)
y8 = np.array([0, 2, 1], np.uint8)
pairs = {
    "uint8": (x8, y8),
    "float32-channels": (rng.random((2, 3, 3, 2), dtype=np.float32), np.array([1, 0], np.int64)),
    "float64-big-endian": (rng.random((2, 2, 2)).astype(">f8"), np.array([[3], [1]], ">i2")),
    "fortran": (np.asfortranarray(x8), y8.astype(np.int32)),
}
for name, (x, y) in pairs.items():
    xb = npy(x)
    with open(os.path.join(out, "npy", name), "wb") as f:
        f.write(struct.pack("<H", len(xb)) + xb + npy(y))

for name, compressed, arrays in (
        ("stored", False, dict(x_train=x8, y_train=y8, x_test=x8[:1], y_test=y8[:1])),
        ("deflated", True, dict(x_train=x8, y_train=y8)),
        ("floats", True, dict(x_train=pairs["float64-big-endian"][0], y_train=pairs["float64-big-endian"][1]))):
    b = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(b, **arrays)
    with open(os.path.join(out, "npz", name), "wb") as f:
        f.write(b.getvalue())
