#!/usr/bin/env python3
"""Writes the HDF5 files axon's HDF5 reader (core/src/io/hdf5.cpp) is tested
on, with h5py (and Keras for the weights of a .keras file); nothing in
axon's build or CI runs it. Values follow formulas the test recomputes.

    python3 tools/tf-goldens/hdf5_files.py

tests/reliability/hdf5/:
  keras.keras      a Keras 3 model (Conv2D(2, 3) + Flatten + Dense(3) on 5x5x1,
                   SGD(momentum=0.9)) whose weights are k * 0.001 + w for the
                   k-th value of its w-th weight, saved by model.save()
  many.h5          group g of 300 float32 datasets d000..d299 ([i, -i]: a
                   two-level B-tree of symbol-table nodes), nested groups
                   a/b/c with a scalar int64 (123456789012), f64 float64
                   [0.5, 1.25, -2], i32 int32 [-1, 2, 3], u8 uint8 [7, 255],
                   compact float32 [1, 2, 3, 4] in compact layout, empty
                   float32 of shape (0, 3)
  latest.h5        libver='latest' (superblock 3, version-2 object headers)
  gzip.h5, chunked.h5, big_endian.h5
                   a dataset compressed, stored in chunks, big-endian
"""
import os

import h5py
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "reliability", "hdf5")


def keras_file():
    import keras
    model = keras.Sequential([keras.Input((5, 5, 1)), keras.layers.Conv2D(2, 3), keras.layers.Flatten(),
                              keras.layers.Dense(3)])
    model.set_weights([(np.arange(w.size) * 0.001 + i).reshape(w.shape).astype(np.float32)
                       for i, w in enumerate(model.get_weights())])
    model.compile(optimizer=keras.optimizers.SGD(0.01, momentum=0.9),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.save(os.path.join(OUT, "keras.keras"))


def many():
    with h5py.File(os.path.join(OUT, "many.h5"), "w") as f:
        g = f.create_group("g")
        for i in range(300):
            g.create_dataset("d%03d" % i, data=np.array([i, -i], np.float32))
        f.create_group("a/b/c").create_dataset("deep", data=np.int64(123456789012))
        f.create_dataset("f64", data=np.array([0.5, 1.25, -2], np.float64))
        f.create_dataset("i32", data=np.array([-1, 2, 3], np.int32))
        f.create_dataset("u8", data=np.array([7, 255], np.uint8))
        f.create_dataset("empty", shape=(0, 3), dtype=np.float32)
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        space = h5py.h5s.create_simple((4,))
        ds = h5py.h5d.create(f.id, b"compact", h5py.h5t.IEEE_F32LE, space, dcpl=dcpl)
        ds.write(h5py.h5s.ALL, h5py.h5s.ALL, np.array([1, 2, 3, 4], np.float32))


def refused():
    with h5py.File(os.path.join(OUT, "latest.h5"), "w", libver="latest") as f:
        f.create_dataset("x", data=np.ones(3, np.float32))
    with h5py.File(os.path.join(OUT, "gzip.h5"), "w") as f:
        f.create_dataset("x", data=np.ones(64, np.float32), compression="gzip")
    with h5py.File(os.path.join(OUT, "chunked.h5"), "w") as f:
        f.create_dataset("x", data=np.ones(64, np.float32), chunks=(16,))
    with h5py.File(os.path.join(OUT, "big_endian.h5"), "w") as f:
        f.create_dataset("x", data=np.ones(3, ">f4"))


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    keras_file()
    many()
    refused()
    print("wrote", sorted(os.listdir(OUT)))
