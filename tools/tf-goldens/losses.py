#!/usr/bin/env python3
"""Writes tests/goldens/tf/losses.axg and cnn_losses.axg: Keras 3's losses
(TensorFlow backend) as the oracle for axon's loss ops of ABI 1.7 and for ten
training steps of the guide's CNN with CategoricalCrossentropy(label_smoothing=0.1)
on a CosineDecay schedule with warmup. Needs TensorFlow and Keras from PyPI;
nothing in axon's build or CI runs it. Usage:

    python3 tools/tf-goldens/losses.py [--out tests/goldens/tf]

losses.axg: per op and setting, random predictions and int32 labels in, and
Keras' per-sample loss (keras.losses.<function>) and its gradient with
respect to the predictions (tf.GradientTape on the sum of the per-sample
losses) out, each with the bound B of the ops rule:
(log2 C + 2) (1 + the row's largest |result| and |prediction|).
BinaryAccuracy cases hold keras.metrics.binary_accuracy, compared exactly.
cnn_losses.axg: the CNN from cnn_optimizers.axg's initial weights and
batches (its case cnn/data), Keras' loss of every step and the weights after
the tenth.
"""
import argparse
import os
import struct
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

from generate import Golden, f32  # noqa: E402

rng = np.random.default_rng(20261207)


def uniform(shape, lo, hi):
    return f32(rng.uniform(lo, hi, size=shape))


def bound(pred, result):
    """B per element of `result` ([N] or [N, C]) for predictions [N, C]."""
    units = pred.shape[1]
    row = np.max(np.abs(np.float64(pred)), axis=1)
    r = np.abs(np.float64(result)).reshape(len(pred), -1)
    row = np.maximum(row, np.max(r, axis=1)) if r.size else row
    b = (np.log2(units) + 2) * (1 + row)
    return f32(b if result.ndim == 1 else np.repeat(b[:, None], units, axis=1))


def targets(labels, units, one_hot):
    if one_hot:
        return f32(np.eye(units)[labels])
    return f32(labels.reshape(-1, 1))


def add_loss_case(g, name, op, attrs, pred, labels, fn, y_true):
    x = tf.Variable(pred)
    with tf.GradientTape() as tape:
        loss = fn(tf.constant(y_true), x)
        total = tf.reduce_sum(loss)
    grad = tape.gradient(total, x).numpy()
    loss = loss.numpy()
    assert loss.shape == (len(pred),), loss.shape
    g.add(name, op, attrs, [("in", pred), ("in", labels), ("out", f32(loss)), ("bound", bound(pred, loss)),
                            ("out", f32(grad)), ("bound", bound(pred, grad))])


def categorical_cases(g):
    for n, c in [(8, 10), (5, 3)]:
        labels = rng.integers(0, c, size=n).astype(np.int32)
        for from_logits in (1, 0):
            if from_logits:
                pred = uniform((n, c), -4, 4)
            else:
                # Unnormalised probabilities (Keras divides by the row's sum);
                # a row below the clip's range in one class and one above it.
                pred = uniform((n, c), 0.01, 1.0)
                pred[0, 1] = 1e-9
                pred[1, :] = 1e-9
                pred[1, labels[1]] = 1.0
            for s in (0.0, 0.1, 0.25):
                fn = lambda t, p, fl=from_logits, s=s: keras.losses.categorical_crossentropy(  # noqa: E731
                    t, p, from_logits=bool(fl), label_smoothing=s)
                add_loss_case(g, f"CategoricalCrossentropy/{n}x{c}/from_logits_{from_logits}/smoothing_{s}",
                              "CategoricalCrossentropy", {"from_logits": from_logits, "label_smoothing": s}, pred,
                              labels, fn, targets(labels, c, True))


def binary_cases(g):
    n = 16
    labels = rng.integers(0, 2, size=n).astype(np.int32)
    for from_logits in (1, 0):
        if from_logits:
            pred = uniform((n, 1), -6, 6)
            pred[0, 0] = 0.0  # where(x >= 0) picks the side of TensorFlow's expression
        else:
            # Probabilities, some outside the clip's range [1e-7, 1 - 1e-7].
            pred = uniform((n, 1), 0.001, 0.999)
            pred[0, 0], pred[1, 0], pred[2, 0], pred[3, 0] = 0.0, 1.0, 1e-9, -0.5
        for s in (0.0, 0.2):
            fn = lambda t, p, fl=from_logits, s=s: keras.losses.binary_crossentropy(  # noqa: E731
                t, p, from_logits=bool(fl), label_smoothing=s)
            add_loss_case(g, f"BinaryCrossentropy/from_logits_{from_logits}/smoothing_{s}", "BinaryCrossentropy",
                          {"from_logits": from_logits, "label_smoothing": s}, pred, labels, fn,
                          targets(labels, 1, False))


def regression_cases(g):
    losses = [("mse", 0, 1.0, keras.losses.mean_squared_error), ("mae", 1, 1.0, keras.losses.mean_absolute_error),
              ("huber_1", 2, 1.0, lambda t, p: keras.losses.huber(t, p, delta=1.0)),
              ("huber_0.3", 2, 0.3, lambda t, p: keras.losses.huber(t, p, delta=0.3)),
              ("huber_2.5", 2, 2.5, lambda t, p: keras.losses.huber(t, p, delta=2.5))]
    for n, c in [(7, 10), (9, 1)]:
        labels = rng.integers(0, 10 if c == 1 else c, size=n).astype(np.int32)
        pred = uniform((n, c), -1.5, 1.5) if c > 1 else f32(labels[:, None] + rng.uniform(-4, 4, size=(n, 1)))
        for name, kind, delta, fn in losses:
            add_loss_case(g, f"RegressionLoss/{n}x{c}/{name}", "RegressionLoss", {"loss": kind, "delta": delta}, pred,
                          labels, fn, targets(labels, c, c > 1))


def binary_accuracy_cases(g):
    n = 64
    labels = rng.integers(0, 2, size=n).astype(np.int32)
    pred = uniform((n, 1), -1.0, 1.5)
    pred[:4, 0] = [0.5, 0.0, 0.49999997, 0.50000006]  # at and beside the thresholds
    for threshold in (0.5, 0.0):
        acc = keras.metrics.binary_accuracy(f32(labels[:, None]), pred, threshold=threshold).numpy()
        g.add(f"BinaryAccuracy/threshold_{threshold}", "BinaryAccuracy", {"threshold": threshold},
              [("in", pred), ("in", labels), ("out", f32(acc).reshape(-1))])


# ---------------------------------------------------------------- the CNN

def read_axg(path):
    """The cases of an .axg file: {name: {tensor name: ndarray}}."""
    dtypes = {0: np.float32, 1: np.int32, 2: np.uint8, 3: np.int64}
    data = open(path, "rb").read()
    assert data[:8] == b"AXONGLD1"
    at = 8

    def u32():
        nonlocal at
        v = struct.unpack_from("<I", data, at)[0]
        at += 4
        return v

    def text():
        nonlocal at
        n = u32()
        s = data[at:at + n].decode()
        at += n
        return s

    cases = {}
    for _ in range(u32()):
        name, _op, _attrs = text(), text(), text()
        tensors = {}
        for _ in range(u32()):
            tname = text()
            dt, rank = struct.unpack_from("<II", data, at)
            at += 8
            shape = struct.unpack_from(f"<{rank}q", data, at)
            at += 8 * rank
            a = np.frombuffer(data, dtypes[dt], int(np.prod(shape)), at).reshape(shape)
            at += a.nbytes
            tensors[tname] = a
        cases[name] = tensors
    return cases


STEPS, BATCH = 10, 32
SCHEDULE = dict(initial_learning_rate=0.002, decay_steps=10, alpha=0.1, warmup_target=0.01, warmup_steps=3)


def cnn_cases(source, path):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from optimizers import cnn_model  # the same Sequential, weight names and order

    data = read_axg(source)["cnn/data"]
    images, labels = data["in:images"], data["in:labels"]
    model = cnn_model()
    names = [f"{layer.name}/{w.name}" for layer in model.layers for w in layer.weights]
    model.set_weights([data[f"in:{n}"] for n in names])
    x_all = (images.astype(np.float64) / 255.0).astype(np.float32)
    y_all = np.eye(10, dtype=np.float32)[labels]  # to_categorical
    loss_fn = keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1)
    optimizer = keras.optimizers.SGD(keras.optimizers.schedules.CosineDecay(**SCHEDULE), momentum=0.9)
    losses = []
    for step in range(STEPS):
        x, y = x_all[BATCH * step:BATCH * (step + 1)], y_all[BATCH * step:BATCH * (step + 1)]
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        losses.append(float(loss))
    g = Golden()
    g.add("cnn/categorical_smoothing_cosine_warmup", "", dict(SCHEDULE, momentum=0.9, label_smoothing=0.1),
          [("out:loss", f32(losses))] +
          [(f"out:{n}", np.asarray(w.numpy(), np.float32)) for n, w in zip(names, model.weights)])
    print(f"  loss {losses[0]:.6f} -> {losses[-1]:.6f}")
    g.write(path)


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=os.path.join(root, "tests", "goldens", "tf"))
    a = p.parse_args()
    print(f"TensorFlow {tf.__version__}, Keras {keras.__version__}, NumPy {np.__version__}")
    g = Golden()
    categorical_cases(g)
    binary_cases(g)
    regression_cases(g)
    binary_accuracy_cases(g)
    g.write(os.path.join(a.out, "losses.axg"))
    cnn_cases(os.path.join(a.out, "cnn_optimizers.axg"), os.path.join(a.out, "cnn_losses.axg"))


if __name__ == "__main__":
    main()
