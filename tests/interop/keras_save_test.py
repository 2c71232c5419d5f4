#!/usr/bin/env python3
"""`axon-train --save m.keras`: a .keras file the reference tools open.

h5py:       libhdf5 (through Debian's h5py) reads model.weights.h5; its layer
            variables are the weights of a safetensors file from the same run,
            value for value, and optimizer/vars holds Keras' layout (iterations,
            learning rate, Adam's m and v per weight).
round_trip: axon reads the file back (--model m.keras alone), evaluates to
            the figures the run ended with, and takes the optimizer's state:
            saved again, every variable is the same; a compile_config's
            metrics (mae, TopKCategoricalAccuracy(k=3)) are computed, logged
            and saved again, one axon lacks exits 2.
keras:      Keras 3 (the python named by AXON_KERAS_PYTHON; skipped without it)
            opens it with keras.models.load_model, compiled, with no warning,
            and evaluates to axon's loss within 0.1% and its accuracy (the
            guide's CNN with Adam, also on label-smoothed categorical
            cross-entropy with the metrics mse, mae and top-3 accuracy, each
            within 0.1% of axon's; the ResNet with SGD on a cosine schedule;
            ConvNeXt's parts: nested Sequentials, grouped Conv2D,
            LayerNormalization and LayerScale, written flat).
Usage: keras_save_test.py CASE AXON_TRAIN"""
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reliability"))
from app_util import DEFAULT_DATA, check, run, with_compile_config  # noqa: E402

case, TRAIN = sys.argv[1], sys.argv[2]
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
TRAIN_LIMIT, TEST_LIMIT = 640, 200


def train(tmp, extra):
    """One epoch of 640 images saved as out.keras; the run's final validation figures."""
    out = os.path.join(tmp, "out.keras")
    r = run([TRAIN, "--data", DEFAULT_DATA, "--epochs", "1", "--train-limit", str(TRAIN_LIMIT), "--test-limit",
             str(TEST_LIMIT), "--save", out, "--metrics-csv", os.path.join(tmp, "metrics.csv")] + extra, cwd=tmp)
    m = re.search(r"val_loss: ([0-9.]+) - val_accuracy: ([0-9.]+)", r.out)
    check(r.code == 0 and m is not None and os.path.exists(out), "it trains and saves out.keras", r)
    return out, float(m.group(1)), float(m.group(2))


def weights_h5(path):
    import h5py
    with zipfile.ZipFile(path) as z:
        check(sorted(z.namelist()) == ["config.json", "metadata.json", "model.weights.h5"],
              "the three members Keras writes", z.namelist())
        check(all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist()), "stored, as Keras stores them")
        return h5py.File(io.BytesIO(z.read("model.weights.h5")), "r"), json.loads(z.read("config.json"))


def h5py_case(tmp):
    import numpy as np
    from safetensors.numpy import load_file
    best = os.path.join(tmp, "epoch.safetensors")
    # One epoch: the checkpoint at its end holds the weights --save writes.
    path, _, _ = train(tmp, ["--model", os.path.join(DATA, "keras_resnet.json"),
                             "--model-checkpoint", "filepath=" + best])
    _, config = weights_h5(path)
    check(config["compile_config"]["optimizer"]["class_name"] == "Adam", "the compile_config names Adam",
          config["compile_config"])
    tensors = load_file(best)
    stored = datasets(path)
    layer_vars = {k: v for k, v in stored.items() if k.startswith("layers/")}
    check(len(layer_vars) == len(tensors), "one layer variable per weight", len(layer_vars), len(tensors))
    # Matched by value (two weights may be equal: the batch norms of both
    # branches into one Add get the same beta gradient), each variable used once.
    unused = dict(layer_vars)
    for name, t in tensors.items():
        same = [k for k, v in unused.items() if v.shape == t.shape and np.array_equal(v, t)]
        check(len(same) >= 1, "weight %s is a layer variable" % name)
        check(re.fullmatch(r"layers/[a-z0-9_]+/vars/[0-9]+", same[0]) is not None, "at a Keras path", same[0])
        del unused[same[0]]
    opt = {int(k.rsplit("/", 1)[1]): v for k, v in stored.items() if k.startswith("optimizer/vars/")}
    trainable = [t for n, t in tensors.items() if not n.endswith(("moving_mean", "moving_variance"))]
    check(len(opt) == 2 + 2 * len(trainable), "iterations, learning rate, m and v per trainable weight", len(opt))
    check(opt[0].dtype == np.int64 and opt[0] == TRAIN_LIMIT // 64, "iterations: the steps taken", opt[0])
    check(opt[1].dtype == np.float32 and opt[1] == np.float32(0.001), "the learning rate", opt[1])
    for i in range(2, len(opt), 2):
        check(opt[i].shape == opt[i + 1].shape, "m and v of one weight side by side", i, opt[i].shape, opt[i + 1].shape)
        check(np.all(opt[i + 1] >= 0), "v, a mean of squares, is not negative", i)


def datasets(path):
    h5, _ = weights_h5(path)
    out = {}
    h5.visititems(lambda name, o: out.__setitem__(name, o[()]) if hasattr(o, "shape") else None)
    return out


def round_trip(tmp):
    import numpy as np
    for extra in ([], ["--model", os.path.join(DATA, "keras_resnet.json"), "--optimizer", "rmsprop", "--momentum",
                       "0.5", "--centered", "--lr-schedule", "cosine:decay_steps=100"]):
        path, loss, accuracy = train(tmp, extra)
        again = os.path.join(tmp, "again.keras")
        r = run([TRAIN, "--data", DEFAULT_DATA, "--model", path, "--epochs", "0", "--test-limit", str(TEST_LIMIT),
                 "--save", again], cwd=tmp)
        m = re.search(r"loss: ([0-9.]+) - accuracy: ([0-9.]+)", r.out)
        check(r.code == 0 and m is not None, "axon evaluates its own .keras file", r)
        check((float(m.group(1)), float(m.group(2))) == (loss, accuracy), "to the run's last figures", extra,
              m.group(0), loss, accuracy)
        check(re.search(r"^(Adam|RMSprop) goes on from the state saved in .*out.keras \(step 10\)$", r.out, re.M),
              "the optimizer's state is read back", r)
        a, b = datasets(path), datasets(again)
        check(a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a),
              "saved again, every weight and optimizer variable is the same")
    # A slot of the wrong shape: exit 2 naming it, nothing trained.
    import h5py
    h5_path = os.path.join(tmp, "w.h5")
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    with open(h5_path, "wb") as f:
        f.write(members["model.weights.h5"])
    with h5py.File(h5_path, "r+") as f:
        del f["optimizer/vars/3"]
        f["optimizer/vars/3"] = np.zeros((2, 2), np.float32)
    with open(h5_path, "rb") as f:
        members["model.weights.h5"] = f.read()
    bad = os.path.join(tmp, "bad_slot.keras")
    with zipfile.ZipFile(bad, "w") as z:
        for n, b in members.items():
            z.writestr(n, b)
    r = run([TRAIN, "--data", DEFAULT_DATA, "--model", bad, "--epochs", "1", "--train-limit", "64"], cwd=tmp)
    check(r.code == 2 and r.err.count("\n") == 1 and "optimizer/vars/3" in r.err and "[2,2]" in r.err,
          "a slot of another shape: exit 2, one line naming it", r)
    # The compiled metrics besides accuracy are computed, logged under their names and saved again.
    metrics = with_compile_config(path, os.path.join(tmp, "metrics.keras"), metrics=[
        "accuracy", "mae", {"class_name": "TopKCategoricalAccuracy", "config": {"name": "top3", "k": 3}}])
    r = run([TRAIN, "--data", DEFAULT_DATA, "--model", metrics, "--epochs", "0", "--test-limit", "64", "--save",
             again], cwd=tmp)
    check(r.code == 0 and re.search(r"accuracy: [0-9.]+ - mae: [0-9.]+ - top3: [0-9.]+$", r.out, re.M),
          "a .keras file's compiled metrics: computed and logged under their names", r)
    _, saved = weights_h5(again)
    check(saved["compile_config"]["metrics"] == ["accuracy", "mae", {
        "module": "keras.metrics", "class_name": "TopKCategoricalAccuracy",
        "config": {"name": "top3", "dtype": "float32", "k": 3}, "registered_name": None}],
          "and saved again as Keras serialises them", saved["compile_config"]["metrics"])
    with_compile_config(path, metrics, metrics=["accuracy", "f1_score"])
    r = run([TRAIN, "--data", DEFAULT_DATA, "--model", metrics, "--epochs", "0", "--test-limit", "64"], cwd=tmp)
    check(r.code == 2 and r.err.count("\n") == 1 and "the metric f1_score is not one axon has (accuracy, mse" in r.err,
          "a metric axon lacks: exit 2, one line naming it and those axon has", r)
    # Another optimizer on the command line starts afresh, as Keras would.
    r = run([TRAIN, "--data", DEFAULT_DATA, "--model", path, "--optimizer", "sgd", "--epochs", "0", "--test-limit",
             "64"], cwd=tmp)
    check(r.code == 0 and "goes on from" not in r.out, "--optimizer sgd: no state from the file's RMSprop", r)


KERAS_SCRIPT = r"""
import gzip, json, os, sys, warnings
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import keras
path, data, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with gzip.open(os.path.join(data, "t10k-images-idx3-ubyte.gz")) as f:
    x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28, 1)[:n]
with gzip.open(os.path.join(data, "t10k-labels-idx1-ubyte.gz")) as f:
    y = np.frombuffer(f.read(), np.uint8, offset=8)[:n].astype(np.int32)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    model = keras.models.load_model(path)
if type(model.loss).__name__ == "CategoricalCrossentropy":
    y = np.eye(10, dtype=np.float32)[y]  # one-hot targets, as axon makes them from the labels
logs = model.evaluate((x / 255.0).astype(np.float32), y, batch_size=64, verbose=0, return_dict=True)
print(json.dumps({"logs": logs, "iterations": int(model.optimizer.iterations.numpy()),
                  "optimizer": type(model.optimizer).__name__,
                  "warnings": [str(w.message) for w in caught if "keras" in w.filename]}))
"""


def saved_metrics(path):
    """The final validation values of the compiled metrics besides accuracy, from the run's CSV beside `path`."""
    rows = open(os.path.join(os.path.dirname(path), "metrics.csv")).read().splitlines()
    header, last = rows[0].split(","), rows[-1].split(",")
    return {name[4:]: float(last[i]) for i, name in enumerate(header)
            if name.startswith("val_") and name not in ("val_loss", "val_accuracy")}


def keras_case(tmp):
    python = os.environ.get("AXON_KERAS_PYTHON")
    if not python:
        print("SKIP: AXON_KERAS_PYTHON names no python with Keras 3")
        sys.exit(77)
    for extra, optimizer in (([], "Adam"), (["--loss", "categorical_crossentropy:label_smoothing=0.1", "--metrics",
                                             "mse,mae", "--metrics", "top_k_categorical_accuracy:k=3,name=top3"],
                                            "Adam"),
                             (["--model", os.path.join(DATA, "keras_resnet.json"), "--optimizer", "sgd", "--momentum",
                               "0.9", "--lr-schedule", "cosine:decay_steps=100"], "SGD"),
                             (["--model", os.path.join(DATA, "keras_convnext.json")], "Adam"),
                             (["--model", os.path.join(DATA, "keras_inception_resnet.json")], "Adam"),
                             (["--model", os.path.join(DATA, "keras_prelu_minimum_mish.json")], "Adam"),
                             (["--model", os.path.join(DATA, "keras_grouped_conv.json")], "Adam"),
                             (["--model", os.path.join(DATA, "keras_group_norm.json")], "Adam"),
                             (["--model", os.path.join(DATA, "keras_operations.json")], "Adam"),
                             (["--model", os.path.join(DATA, "keras_transpose_padding.json")], "Adam"),
                             (["--model", os.path.join(DATA, "keras_upsampling.json")], "Adam"),
                             (["--model", os.path.join(DATA, "keras_augmented_color_cnn.json")], "Adam"),
                             (["--model", os.path.join(DATA, "keras_inverted_cnn.json")], "Adam")):
        path, loss, accuracy = train(tmp, extra)
        axon_metrics = {} if "--metrics" not in extra else saved_metrics(path)
        p = subprocess.run([python, "-c", KERAS_SCRIPT, path, DEFAULT_DATA, str(TEST_LIMIT)], capture_output=True,
                           text=True, timeout=600)
        check(p.returncode == 0, "Keras loads the file", p.stderr[-3000:])
        k = json.loads(p.stdout.strip().splitlines()[-1])
        logs = k["logs"]
        k["loss"], k["accuracy"] = logs.pop("loss"), logs.pop("accuracy")
        check(sorted(logs) == sorted(axon_metrics), "Keras compiles the metrics axon logged", logs, axon_metrics)
        for name, value in axon_metrics.items():
            check(abs(logs[name] - value) <= 1e-3 * abs(value) + 5e-5, "Keras' %s within 0.1%% of axon's (%.6f vs %.4f)"
                  % (name, logs[name], value))
        check(k["warnings"] == [], "without a warning", k["warnings"])
        check(k["optimizer"] == optimizer and k["iterations"] == TRAIN_LIMIT // 64, "compiled, with the optimizer's state",
              k)
        check(abs(k["loss"] - loss) <= 1e-3 * loss + 5e-5, "Keras' loss within 0.1%% of axon's (%.6f vs %.4f)" %
              (k["loss"], loss))
        check(abs(k["accuracy"] - accuracy) <= 5e-5, "Keras' accuracy is axon's (%.4f vs %.4f)" % (k["accuracy"], accuracy))
        print("%s %s: Keras loss %.6f accuracy %.4f, axon %.4f %.4f" % (optimizer, " ".join(extra[:2]), k["loss"],
                                                                    k["accuracy"], loss, accuracy))


with tempfile.TemporaryDirectory() as tmp:
    {"h5py": h5py_case, "round_trip": round_trip, "keras": keras_case}[case](tmp)
print("ok")
