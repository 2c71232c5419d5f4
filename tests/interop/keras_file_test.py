#!/usr/bin/env python3
"""A .keras file Keras 3 saved (tests/data/keras_small.keras: a functional
model with BatchNormalization and Add, SGD on a cosine schedule, trained by
Keras; make_keras_models.py) through `axon-train --model`: it evaluates to
Keras' own loss (within 0.1%) and accuracy on the same test images, trains on
from Keras' weights, gives the same figures as --initial-weights of a JSON
model; broken .keras files exit 2 with one line naming the file and the
reason, and write nothing.
Usage: keras_file_test.py CASE AXON_TRAIN"""
import io
import json
import os
import re
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reliability"))
from app_util import DEFAULT_DATA, check, one_line, run  # noqa: E402

case, TRAIN = sys.argv[1], sys.argv[2]
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
KERAS_FILE = os.path.join(DATA, "keras_small.keras")
WANT = json.load(open(os.path.join(DATA, "keras_small_evaluate.json")))
OTHER_WEIGHTS = os.path.join(DATA, "..", "reliability", "hdf5", "keras.keras")  # another model's


def evaluated(r):
    m = re.search(r"loss: ([0-9.]+) - accuracy: ([0-9.]+)", r.out)
    check(r.code == 0 and m is not None, "it evaluates", r)
    return float(m.group(1)), float(m.group(2))


def evaluate(tmp):
    loss, accuracy = evaluated(run([TRAIN, "--data", DEFAULT_DATA, "--model", KERAS_FILE, "--epochs", "0",
                                    "--test-limit", str(WANT["test_images"])], cwd=tmp))
    check(abs(loss - WANT["loss"]) <= 1e-3 * WANT["loss"], "Keras' loss within 0.1%% (%.4f, Keras %.6f)" %
          (loss, WANT["loss"]))
    check(abs(accuracy - WANT["accuracy"]) < 5e-5, "Keras' accuracy (%.4f, Keras %.4f)" % (accuracy, WANT["accuracy"]))


def initial_weights(tmp):
    """The model from config.json as JSON, the weights from the .keras file: the same figures."""
    config = os.path.join(tmp, "config.json")
    with zipfile.ZipFile(KERAS_FILE) as z, open(config, "wb") as f:
        f.write(z.read("config.json"))
    loss, accuracy = evaluated(run([TRAIN, "--data", DEFAULT_DATA, "--model", config, "--initial-weights", KERAS_FILE,
                                    "--epochs", "0", "--test-limit", str(WANT["test_images"])], cwd=tmp))
    check(abs(loss - WANT["loss"]) <= 1e-3 * WANT["loss"] and abs(accuracy - WANT["accuracy"]) < 5e-5,
          "--initial-weights FILE.keras on its own JSON: Keras' figures", loss, accuracy)


def trains(tmp):
    out = os.path.join(tmp, "out.safetensors")
    r = run([TRAIN, "--data", DEFAULT_DATA, "--model", KERAS_FILE, "--epochs", "1", "--train-limit", "640",
             "--test-limit", "200", "--save", out, "-q"], cwd=tmp)
    check(r.code == 0 and os.path.exists(out), "it trains on from Keras' weights and saves", r)


def keras_zip(path, members):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)


def broken(tmp):
    with zipfile.ZipFile(KERAS_FILE) as z:
        config, weights = z.read("config.json"), z.read("model.weights.h5")
    with zipfile.ZipFile(OTHER_WEIGHTS) as z:
        other = z.read("model.weights.h5")
    cases = []
    text = os.path.join(tmp, "text.keras")
    open(text, "w").write("not a zip\n")
    cases.append((text, "text.keras: not a readable zip archive"))
    for name, members, why in (
            ("no_config.keras", {"model.weights.h5": weights}, "no config.json inside"),
            ("no_weights.keras", {"config.json": config}, "no model.weights.h5 inside"),
            ("other_weights.keras", {"config.json": config, "model.weights.h5": other},
             "model.weights.h5: layers/conv2d/vars/0 (stem/kernel) is [3,3,1,2], the model's [3,3,1,8]"),
            ("cut_weights.keras", {"config.json": config, "model.weights.h5": weights[:len(weights) // 2]},
             "model.weights.h5: malformed HDF5"),
            ("not_hdf5.keras", {"config.json": config, "model.weights.h5": b"x" * 100}, "not an HDF5 file")):
        path = os.path.join(tmp, name)
        keras_zip(path, members)
        cases.append((path, why))
    for path, why in cases:
        saved = os.path.join(tmp, "never.safetensors")
        r = run([TRAIN, "--data", DEFAULT_DATA, "--model", path, "--epochs", "1", "--train-limit", "64",
                 "--save", saved], cwd=tmp)
        check(r.code == 2 and one_line(r.err) and why in r.err and not os.path.exists(saved),
              "%s: exit 2, one line: %s" % (os.path.basename(path), why), r)


CASES = {f.__name__: f for f in (evaluate, initial_weights, trains, broken)}

if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="axon-keras-file-") as tmp:
        CASES[case](tmp)
