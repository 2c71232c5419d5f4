#!/usr/bin/env python3
"""axon-train's --loss end to end: each of Keras' losses trains (the loss
falls over three short epochs) on the targets it builds from the labels:
the built-in CNN's 10 units for the categorical and regression losses, a
one-unit model (sigmoid or linear) on 0/1 labels for binary cross-entropy
and mean squared error; the weights' metadata and the checkpoint name the
loss, and a resume with another is refused; a .keras file's loss trains,
--loss overriding it; bad settings exit 2 with one line.
Usage: losses_test.py CASE AXON_TRAIN"""
import json
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reliability"))
from app_util import DEFAULT_DATA, SANITIZED, check, one_line, run, with_compile_config  # noqa: E402

case, TRAIN = sys.argv[1], sys.argv[2]
DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
SHORT = ["--train-limit", "192" if SANITIZED else "640", "--test-limit", "100", "--epochs", "3", "--seed", "4",
         "--threads", "2", "-q", "--metrics-csv", "m.csv"]


def losses(tmp):
    lines = open(os.path.join(tmp, "m.csv")).read().splitlines()
    return [float(line.split(",")[1]) for line in lines[1:]], [float(line.split(",")[2]) for line in lines[1:]]


def metadata(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(n))["__metadata__"]


def one_unit_model(tmp, activation):
    """The guide's CNN with one output unit."""
    model = json.load(open(os.path.join(DATA_DIR, "keras_guide_cnn.json")))
    last = model["config"]["layers"][-1]["config"]
    last["units"], last["activation"] = 1, activation
    path = os.path.join(tmp, f"one_unit_{activation}.json")
    json.dump(model, open(path, "w"))
    return path


def npy(path, array_bytes, dtype, shape):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        dtype, ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else ""))
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + array_bytes)


def binary_data(tmp, n=640):
    """A learnable two-class set: a bright square in the top-left (label 1) or
    the bottom-right (label 0) corner, on a dim noisy background."""
    images, labels, state = bytearray(), bytearray(), 12345
    for i in range(n):
        label = i % 2
        img = bytearray(28 * 28)
        for p in range(28 * 28):
            state = (state * 1103515245 + 12345) % 2 ** 31
            img[p] = state % 60
        r0 = 2 if label else 16
        for r in range(r0, r0 + 10):
            for c in range(r0, r0 + 10):
                img[r * 28 + c] = 220
        images += img
        labels += struct.pack("<i", label)
    npy(os.path.join(tmp, "x.npy"), bytes(images), "|u1", (n, 28, 28))
    npy(os.path.join(tmp, "y.npy"), bytes(labels), "<i4", (n,))
    return os.path.join(tmp, "x.npy") + "," + os.path.join(tmp, "y.npy")


def trains(tmp):
    fashion = ["--data", DEFAULT_DATA] + SHORT
    two = binary_data(tmp)
    cases = [
        (fashion + ["--loss", "categorical_crossentropy:label_smoothing=0.1"],
         "CategoricalCrossentropy(from_logits=True, label_smoothing=0.1)"),
        (fashion + ["--loss", "MeanSquaredError"], "MeanSquaredError()"),
        (fashion + ["--loss", "mae"], "MeanAbsoluteError()"),
        (fashion + ["--loss", "huber:delta=0.5", "--optimizer", "sgd", "--learning-rate", "0.5"],
         "Huber(delta=0.5)"),
        (["--data", two, "--validation-data", two, "--model", one_unit_model(tmp, "sigmoid"), "--loss",
          "binary_crossentropy:label_smoothing=0.1"] + SHORT, "BinaryCrossentropy(label_smoothing=0.1)"),
        (["--data", two, "--validation-data", two, "--model", one_unit_model(tmp, "linear"), "--loss",
          "BinaryCrossentropy"] + SHORT, "BinaryCrossentropy(from_logits=True)"),
        (["--data", two, "--validation-data", two, "--model", one_unit_model(tmp, "linear"), "--loss", "mse"] + SHORT,
         "MeanSquaredError()"),
    ]
    for args, keras in cases:
        r = run([TRAIN] + args + ["--save", "w.safetensors"], cwd=tmp)
        what = args[args.index("--loss") + 1]
        check(r.code == 0, what + " runs", r)
        loss, accuracy = losses(tmp)
        check(loss[-1] < loss[0] - 0.01 * abs(loss[0]), "%s: the loss falls (%s)" % (what, loss), r)
        if "binary" in what.lower():  # binary accuracy on two easy classes
            check(accuracy[-1] > 0.9, "%s: binary accuracy %s" % (what, accuracy))
        meta = metadata(os.path.join(tmp, "w.safetensors"))
        check(meta["loss"] == keras, "the weights say " + keras, meta["loss"])


def checkpoints(tmp):
    base = ["--data", DEFAULT_DATA, "--train-limit", "128", "--test-limit", "50", "-q", "--checkpoint-dir", "ckpt"]
    r = run([TRAIN] + base + ["--epochs", "1", "--loss", "huber:delta=2"], cwd=tmp)
    check(r.code == 0, "a run with Huber(delta=2) writes a checkpoint", r)
    ckpt = os.path.join(tmp, "ckpt", sorted(os.listdir(os.path.join(tmp, "ckpt")))[-1])
    check(metadata(ckpt)["loss"] == "--loss huber:delta=2.0", "the checkpoint records the loss", metadata(ckpt))
    r = run([TRAIN] + base + ["--epochs", "2", "--resume", "--loss", "mse"], cwd=tmp)
    named = "the loss" in r.err and "huber" in r.err and "mean_squared_error" in r.err
    check(r.code == 2 and one_line(r.err) and named, "resuming with another loss: exit 2, one line naming both", r)
    r = run([TRAIN] + base + ["--epochs", "2", "--resume", "--loss", "huber:delta=2"], cwd=tmp)
    check(r.code == 0, "resuming with the same loss", r)


def keras_file(tmp, loss, name="m.keras"):
    """keras_small.keras with its compile_config's loss replaced."""
    return with_compile_config(os.path.join(DATA_DIR, "keras_small.keras"), os.path.join(tmp, name), loss=loss)


def compile_config(tmp):
    base = ["--data", DEFAULT_DATA, "--train-limit", "128", "--test-limit", "50", "--epochs", "1", "-q",
            "--save", "w.safetensors"]
    smoothing = {"module": "keras.losses", "class_name": "CategoricalCrossentropy",
                 "config": {"name": "categorical_crossentropy", "reduction": "sum_over_batch_size",
                            "from_logits": True, "label_smoothing": 0.2, "axis": -1}, "registered_name": None}
    model = keras_file(tmp, smoothing)
    r = run([TRAIN, "--model", model] + base, cwd=tmp)
    check(r.code == 0, "a .keras file with CategoricalCrossentropy(label_smoothing=0.2) trains", r)
    meta = metadata(os.path.join(tmp, "w.safetensors"))
    check(meta["loss"] == "CategoricalCrossentropy(from_logits=True, label_smoothing=0.2)", "with its loss",
          meta["loss"])
    r = run([TRAIN, "--model", model, "--loss", "mae"] + base, cwd=tmp)
    check(r.code == 0 and metadata(os.path.join(tmp, "w.safetensors"))["loss"] == "MeanAbsoluteError()",
          "--loss overrides the file's", r)


def refused(tmp):
    fashion = ["--data", DEFAULT_DATA, "--train-limit", "64", "--epochs", "1"]
    two = binary_data(tmp, 64)
    ten = ["--data", two, "--validation-data", two, "--epochs", "1"]
    for args, why in (
            (fashion + ["--loss", "hinge"], "--loss: unknown loss 'hinge'; axon has sparse_categorical_crossentropy, "
             "categorical_crossentropy, binary_crossentropy, mean_squared_error, mean_absolute_error, huber"),
            (fashion + ["--loss", "binary_crossentropy"],
             "binary_crossentropy does not fit the model's output of 10 units (it needs 1 unit"),
            (ten + ["--model", one_unit_model(tmp, "linear"), "--loss", "categorical_crossentropy"],
             "categorical_crossentropy does not fit the model's output of 1 unit (it needs one unit per class"),
            (fashion + ["--model", one_unit_model(tmp, "sigmoid"), "--loss", "binary_crossentropy"],
             "label 9 (sample"),
            (fashion + ["--loss", "categorical_crossentropy:label_smoothing=1.5"],
             "label_smoothing must be in [0, 1], got 1.5"),
            (fashion + ["--loss", "huber:delta=0"], "delta must be a positive number, got 0.0"),
            (fashion + ["--loss", "huber:delta=-1"], "delta must be a positive number, got -1.0"),
            (fashion + ["--loss", "mse:delta=2"], "unknown setting 'delta'"),
            (fashion + ["--model", keras_file(tmp, "kl_divergence")],
             "compile_config.loss: the loss kl_divergence is not one axon has"),
            (fashion + ["--model", keras_file(tmp, {"class_name": "Huber", "config": {"delta": 0}}, "huber.keras")],
             "compile_config.loss: huber: delta must be a positive number")):
        r = run([TRAIN] + args, cwd=tmp)
        check(r.code == 2 and one_line(r.err) and why in r.err, "%s: exit 2, one line: %s" % (" ".join(args[-2:]), why),
              r)


CASES = {f.__name__: f for f in (trains, checkpoints, compile_config, refused)}

if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="axon-losses-") as tmp:
        CASES[case](tmp)
