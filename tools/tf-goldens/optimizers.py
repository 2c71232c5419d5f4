#!/usr/bin/env python3
"""Writes tests/goldens/tf/optimizers.axg and cnn_optimizers.axg: Keras 3's
optimizers (TensorFlow backend) as the oracle for axon's optimizer ops and
for ten training steps of the guide's CNN. Needs TensorFlow and Keras from
PyPI; nothing in axon's build or CI runs it. Usage:

    python3 tools/tf-goldens/optimizers.py [--out tests/goldens/tf] [--data DIR]

optimizers.axg: per op, a few consecutive steps of Keras' optimizer on random
variables and gradients, each step a case whose inputs are the variable, the
optimizer's variables and the gradient before it and whose outputs are them
after it (Keras' own update_step, _apply_weight_decay and _clip_gradients).
cnn_optimizers.axg: the CNN of cnn_adam.axg from the same kind of initial
weights, ten steps of batch 32 on the first 320 Fashion-MNIST training
images, per optimizer configuration the loss of every step and the weights
after the last. tests/goldens/tf/README.md describes the bounds.
"""
import argparse
import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

from generate import Golden, f32, find, read_idx  # noqa: E402

rng = np.random.default_rng(20261206)


def uniform(shape, lo=-1.0, hi=1.0):
    return f32(rng.uniform(lo, hi, size=shape))


def gradient(n):
    # Magnitudes from 1e-4 to 1 and some zeros.
    g = f32(rng.choice([-1, 1], size=n) * 10.0 ** rng.uniform(-4, 0, size=n))
    g[::40] = 0.0
    return g


# The ABI's name of each Keras optimizer variable, in the op's input order,
# and whether it is a running sum of squares (its bound takes g^2).
SLOTS = {
    "ApplySGD": [("momentums", False)],
    "ApplyRMSprop": [("_velocities", True), ("_momentums", False), ("_average_gradients", False)],
    "ApplyAdamWithAmsgrad": [("_momentums", False), ("_velocities", True), ("_velocity_hats", True)],
    "ApplyAdagrad": [("_accumulators", True)],
    "ApplyNadam": [("_momentums", False), ("_velocities", True)],
}


def update_cases(g, op, name, make, attrs, n=500, steps=3):
    """`steps` consecutive Keras steps from Keras' initial state; each step a case."""
    var = tf.Variable(uniform((n,)))
    opt = make()
    opt.build([var])
    for step in range(1, steps + 1):
        grad = gradient(n)
        before = var.numpy().copy()
        slots = []
        for attr, _ in SLOTS[op]:
            lst = getattr(opt, attr)
            slots.append(lst[0].numpy().copy() if lst else np.zeros(n, np.float32))
        opt.apply_gradients([(tf.constant(grad), var)])
        after = var.numpy().copy()
        slots_after = []
        for (attr, _), s in zip(SLOTS[op], slots):
            lst = getattr(opt, attr)
            slots_after.append(lst[0].numpy().copy() if lst else s)
        a = dict(attrs)
        a["step"] = step
        if op == "ApplyNadam":
            a["u_product"] = repr(float(opt._u_product.numpy()))
        # Bounds: the variable's magnitude plus 32 times its update; each
        # optimizer variable's magnitude before and after plus the gradient's
        # part (g^2 for the sums of squares).
        tensors = [("in", before)] + [("in", s) for s in slots] + [("in", grad)]
        tensors += [("out", after), ("bound", f32(np.abs(before) + 32 * np.abs(np.float64(after) - before)))]
        for (attr, squares), s0, s1 in zip(SLOTS[op], slots, slots_after):
            part = np.float64(grad) ** 2 if squares else np.abs(np.float64(grad))
            tensors += [("out", s1), ("bound", f32(np.abs(s0) + np.abs(s1) + part))]
        g.add(f"{op}/{name}/step{step}", op, a, tensors)


def optimizer_cases(g):
    sgd = {"learning_rate": 0.01}
    update_cases(g, "ApplySGD", "plain", lambda: keras.optimizers.SGD(0.01), dict(sgd, momentum=0.0, nesterov=0))
    update_cases(g, "ApplySGD", "momentum", lambda: keras.optimizers.SGD(0.01, momentum=0.9),
                 dict(sgd, momentum=0.9, nesterov=0))
    update_cases(g, "ApplySGD", "nesterov", lambda: keras.optimizers.SGD(0.01, momentum=0.9, nesterov=True),
                 dict(sgd, momentum=0.9, nesterov=1))
    rms = {"learning_rate": 0.001, "rho": 0.9, "epsilon": 1e-7}
    update_cases(g, "ApplyRMSprop", "plain", lambda: keras.optimizers.RMSprop(0.001), dict(rms, momentum=0.0, centered=0))
    update_cases(g, "ApplyRMSprop", "momentum_centered",
                 lambda: keras.optimizers.RMSprop(0.001, momentum=0.5, centered=True), dict(rms, momentum=0.5, centered=1))
    update_cases(g, "ApplyRMSprop", "rho_0.5_eps_1e-3",
                 lambda: keras.optimizers.RMSprop(0.01, rho=0.5, epsilon=1e-3),
                 {"learning_rate": 0.01, "rho": 0.5, "epsilon": 1e-3, "momentum": 0.0, "centered": 0})
    adam = {"learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7}
    update_cases(g, "ApplyAdamWithAmsgrad", "default", lambda: keras.optimizers.Adam(0.001, amsgrad=True), adam)
    update_cases(g, "ApplyAdagrad", "default", lambda: keras.optimizers.Adagrad(0.001),
                 {"learning_rate": 0.001, "epsilon": 1e-7})
    update_cases(g, "ApplyAdagrad", "zero_start", lambda: keras.optimizers.Adagrad(0.01, initial_accumulator_value=0.0),
                 {"learning_rate": 0.01, "epsilon": 1e-7})
    update_cases(g, "ApplyNadam", "default", lambda: keras.optimizers.Nadam(0.001), adam, steps=4)


def weight_decay_cases(g):
    for lr, wd in [(0.001, 0.004), (0.1, 0.5)]:
        v = uniform((1000,))
        var = tf.Variable(v)
        opt = keras.optimizers.SGD(lr, weight_decay=wd)
        opt.build([var])
        opt._apply_weight_decay([var])
        g.add(f"ApplyWeightDecay/lr_{lr}_wd_{wd}", "ApplyWeightDecay", {"learning_rate": lr, "weight_decay": wd},
              [("in", v), ("out", var.numpy()), ("bound", f32(np.abs(v)))])


def clip_cases(g):
    # Variables of several sizes laid end to end, one of them all zeros (its
    # norm is 0) and one small enough to stay unclipped.
    sizes = [300, 7, 1000, 64, 1]
    for mode, key, clip in [(1, "clipnorm", 1.0), (2, "global_clipnorm", 2.0), (0, "clipvalue", 0.1)]:
        grads = [uniform((n,)) for n in sizes]
        grads[1] = np.zeros(7, np.float32)
        grads[3] = uniform((64,), -1e-3, 1e-3)
        opt = keras.optimizers.SGD(0.01, **{key: clip})
        clipped = [np.asarray(c, np.float32) for c in opt._clip_gradients([tf.constant(x) for x in grads])]
        flat, out = np.concatenate(grads), np.concatenate(clipped)
        ends = np.cumsum(sizes).astype(np.int64)
        tensors = [("in", flat), ("in", ends), ("out", out)]
        if mode != 0:  # the norms are sums of squares: a few roundings of |out|
            tensors.append(("bound", f32(4 * np.abs(out))))
        g.add(f"ClipGradients/{key}", "ClipGradients", {"mode": mode, "clip": clip}, tensors)


# ---------------------------------------------------------------- the CNN, ten steps per configuration

CONFIGS = [
    ("sgd_nesterov", lambda: keras.optimizers.SGD(0.01, momentum=0.9, nesterov=True),
     "--optimizer sgd --learning-rate 0.01 --momentum 0.9 --nesterov"),
    # Epsilon 1e-4 where Keras' default 1e-7 would make a weight's step
    # nearly sign(g) even for a gradient of 1e-6: such a gradient's rounding
    # (or a pooling tie broken the other way) would move the weight by the
    # whole learning rate and the comparison would measure that, not the
    # optimizer.
    ("rmsprop_centered", lambda: keras.optimizers.RMSprop(0.001, centered=True, epsilon=1e-4),
     "--optimizer rmsprop --learning-rate 0.001 --centered --epsilon 1e-4"),
    ("adamw_weight_decay", lambda: keras.optimizers.AdamW(0.001, weight_decay=0.5, epsilon=1e-4),
     "--optimizer adamw --learning-rate 0.001 --weight-decay 0.5 --epsilon 1e-4"),
    ("adam_amsgrad", lambda: keras.optimizers.Adam(0.001, amsgrad=True),
     "--optimizer adam --learning-rate 0.001 --amsgrad"),
    # The first step's gradient norms are 0.06 to 0.35: clipnorm 0.1 clips 8 of the 10.
    ("sgd_clipnorm", lambda: keras.optimizers.SGD(0.05, momentum=0.9, clipnorm=0.1),
     "--optimizer sgd --learning-rate 0.05 --momentum 0.9 --clipnorm 0.1"),
    ("adagrad", lambda: keras.optimizers.Adagrad(0.01), "--optimizer adagrad --learning-rate 0.01"),
    # The first step's global norm is 0.63.
    ("nadam_global_clipnorm", lambda: keras.optimizers.Nadam(0.001, global_clipnorm=0.3, epsilon=1e-4),
     "--optimizer nadam --learning-rate 0.001 --global-clipnorm 0.3 --epsilon 1e-4"),
]
STEPS, BATCH = 10, 32


def cnn_model():
    return keras.Sequential([
        keras.Input((28, 28, 1)),
        keras.layers.Conv2D(32, 3, activation="relu", name="conv2d"),
        keras.layers.MaxPooling2D(2, name="max_pooling2d"),
        keras.layers.Conv2D(64, 3, activation="relu", name="conv2d_1"),
        keras.layers.MaxPooling2D(2, name="max_pooling2d_1"),
        keras.layers.Conv2D(64, 3, activation="relu", name="conv2d_2"),
        keras.layers.Flatten(name="flatten"),
        keras.layers.Dense(64, activation="relu", name="dense"),
        keras.layers.Dense(10, name="dense_1"),
    ])


def cnn_cases(data_dir, path):
    count = STEPS * BATCH
    images = read_idx(find(data_dir, "train-images-idx3-ubyte"))[:count]
    labels = read_idx(find(data_dir, "train-labels-idx1-ubyte"))[:count].astype(np.int32)
    model = cnn_model()
    init = []
    for w in model.weights:  # glorot_uniform kernels, small non-zero biases (as cnn_adam.axg)
        shape = tuple(w.shape)
        if len(shape) > 1:
            fan_in = int(np.prod(shape[:-1]))
            fan_out = shape[-1] * (int(np.prod(shape[:-2])) if len(shape) == 4 else 1)
            limit = np.sqrt(6.0 / (fan_in + fan_out))
            init.append(uniform(shape, -limit, limit))
        else:
            init.append(uniform(shape, -0.05, 0.05))
    names = [f"{layer.name}/{w.name}" for layer in model.layers for w in layer.weights]
    g = Golden()
    g.add("cnn/data", "", {"steps": STEPS, "batch_size": BATCH},
          [("in:images", images.reshape(count, 28, 28, 1)), ("in:labels", labels)] +
          [(f"in:{n}", a) for n, a in zip(names, init)])
    x_all = (images.astype(np.float64) / 255.0).astype(np.float32).reshape(count, 28, 28, 1)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    for name, make, flags in CONFIGS:
        model.set_weights(init)
        optimizer = make()
        losses = []
        for step in range(STEPS):
            x, y = x_all[BATCH * step:BATCH * (step + 1)], labels[BATCH * step:BATCH * (step + 1)]
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_weights)
            if step == 0 and name == CONFIGS[0][0]:
                print("  the first step's gradient norms: " + " ".join(f"{float(tf.norm(gr)):.3g}" for gr in grads))
            optimizer.apply_gradients(zip(grads, model.trainable_weights))
            losses.append(float(loss))
        g.add(f"cnn/{name}", "", {"flags": flags.replace(" ", "_")},
              [("out:loss", f32(losses))] +
              [(f"out:{n}", np.asarray(w.numpy(), np.float32)) for n, w in zip(names, model.weights)])
        print(f"  {name}: loss {losses[0]:.6f} -> {losses[-1]:.6f}")
    g.write(path)


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=os.path.join(root, "tests", "goldens", "tf"))
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    a = p.parse_args()
    print(f"TensorFlow {tf.__version__}, Keras {keras.__version__}, NumPy {np.__version__}")
    ops = Golden()
    optimizer_cases(ops)
    weight_decay_cases(ops)
    clip_cases(ops)
    ops.write(os.path.join(a.out, "optimizers.axg"))
    cnn_cases(a.data, os.path.join(a.out, "cnn_optimizers.axg"))


if __name__ == "__main__":
    main()
