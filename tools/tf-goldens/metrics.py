#!/usr/bin/env python3
"""Writes tests/goldens/tf/metrics.axg and tests/data/keras_small_metrics.json:
Keras 3's metrics besides accuracy (TensorFlow backend) as the oracle for
axon's InTopKV2 op (ABI 1.8) and its compiled metrics. Needs TensorFlow and
Keras from PyPI; nothing in axon's build or CI runs it. Usage:

    python3 tools/tf-goldens/metrics.py [--out tests/goldens/tf] [--data tests/data]

metrics.axg: InTopKV2 cases, random logits and int32 labels in and
keras.metrics.sparse_top_k_categorical_accuracy (tf.math.in_top_k) out,
compared exactly: k from 1 to past the classes, whole-number logits tied
across the k-th place, rows holding a NaN or an infinity.
keras_small_metrics.json: Keras' evaluate of tests/data/keras_small.keras on
the first 1,000 Fashion-MNIST test images with the metrics mse, mae,
top_k_categorical_accuracy and TopKCategoricalAccuracy(k=2, name="top2") on
one-hot labels (Keras computes these on one-hot targets only), and
sparse_top_k_categorical_accuracy and SparseTopKCategoricalAccuracy(k=3,
name="top3") on the class indices.
"""
import argparse
import gzip
import json
import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keras  # noqa: E402

from generate import Golden, f32  # noqa: E402

rng = np.random.default_rng(20261202)


def in_top_k_cases(g):
    for n, c, ties in [(32, 10, False), (24, 7, True), (1, 3, False)]:
        labels = rng.integers(0, c, size=n).astype(np.int32)
        # Ties: whole numbers 0..2, so the label's logit often shares the k-th place.
        pred = f32(rng.integers(0, 3, size=(n, c))) if ties else f32(rng.uniform(-4, 4, size=(n, c)))
        if n > 4:
            pred[0, 0], pred[1, c - 1], pred[2, labels[2]] = np.nan, np.inf, -np.inf
        for k in sorted({1, 2, 3, 5, c, c + 2}):
            got = keras.metrics.sparse_top_k_categorical_accuracy(labels, pred, k=k).numpy()
            g.add(f"InTopKV2/{n}x{c}{'/ties' if ties else ''}/k_{k}", "InTopKV2", {"k": k},
                  [("in", pred), ("in", labels), ("out", f32(got).reshape(-1))])


def idx(name, offset, shape):
    raw = gzip.open("/usr/share/datasets/fashion-mnist/%s.gz" % name).read()[offset:]
    return np.frombuffer(raw, np.uint8).reshape(shape)


def keras_small_metrics(data):
    x = idx("t10k-images-idx3-ubyte", 16, (-1, 28, 28, 1))[:1000] / np.float32(255)
    y = idx("t10k-labels-idx1-ubyte", 8, (-1,))[:1000]
    model = keras.models.load_model(os.path.join(data, "keras_small.keras"))
    out = {"test_images": 1000}
    model.compile(loss=keras.losses.CategoricalCrossentropy(from_logits=True),
                  metrics=["mse", "mae", "top_k_categorical_accuracy",
                           keras.metrics.TopKCategoricalAccuracy(k=2, name="top2")])
    out.update(model.evaluate(x, np.eye(10, dtype=np.float32)[y], batch_size=64, verbose=0, return_dict=True))
    model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["sparse_top_k_categorical_accuracy",
                           keras.metrics.SparseTopKCategoricalAccuracy(k=3, name="top3")])
    sparse = model.evaluate(x, y, batch_size=64, verbose=0, return_dict=True)
    out["sparse_loss"] = sparse.pop("loss")
    out.update(sparse)
    path = os.path.join(data, "keras_small_metrics.json")
    with open(path, "w") as f:
        json.dump(out, f)
        f.write("\n")
    print("wrote", path, out)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=os.path.join(here, "..", "..", "tests", "goldens", "tf"))
    p.add_argument("--data", default=os.path.join(here, "..", "..", "tests", "data"))
    a = p.parse_args()
    g = Golden()
    in_top_k_cases(g)
    g.write(os.path.join(a.out, "metrics.axg"))
    keras_small_metrics(a.data)


if __name__ == "__main__":
    main()
