#!/usr/bin/env python3
"""axon-predict against Keras' model.predict (predict/keras_predict.csv,
written by tools/tf-goldens/predict_goldens.py from the same weights file,
the model JSON taken from its metadata): on 200 PNGs the predicted classes
agree on at least 99.5% and every probability is within 1e-4. The same
images as a .npy and in a .npz give the same rows; a .keras file Keras
saved (its model in the file) classifies the first 1,000 test images with
the accuracy Keras' evaluate gave; bad input exits 2.
Usage: predict_test.py CASE AXON_PREDICT"""
import csv
import json
import os
import sys
import tempfile

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reliability"))
from app_util import DEFAULT_DATA, check, listing, one_line, run  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from numpy_cnn import load_test_set  # noqa: E402

case, PREDICT = sys.argv[1], sys.argv[2]
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "predict")
WEIGHTS, IMAGES = os.path.join(HERE, "model.safetensors"), os.path.join(HERE, "images")


def keras_rows():
    with open(os.path.join(HERE, "keras_predict.csv")) as f:
        r = csv.reader(f)
        names = next(r)[1:]
        return names, {row[0]: [float(v) for v in row[1:]] for row in r}


def predict(args, tmp):
    out = os.path.join(tmp, "p.csv")
    r = run([PREDICT, WEIGHTS] + args + ["--top-k", "9", "--output", out], cwd=tmp)
    check(r.code == 0, "axon-predict %s" % " ".join(os.path.basename(a) for a in args), r)
    with open(out) as f:
        rows = list(csv.reader(f))
    check(rows[0][:5] == ["input", "class", "probability", "class_2", "probability_2"], "the CSV header", rows[0])
    return r, {row[0]: {row[k]: float(row[k + 1]) for k in range(1, len(row), 2)} for row in rows[1:]}


def against_keras(tmp):
    names, expected = keras_rows()
    r, got = predict([IMAGES], tmp)
    check(len(got) == 200, "200 rows", len(got))
    agree, worst = 0, 0.0
    for rel, probs in expected.items():
        row = got[os.path.join(IMAGES, rel)]
        agree += max(row, key=row.get) == names[int(np.argmax(probs))]
        worst = max(worst, max(abs(row[n] - p) for n, p in zip(names, probs)))
    check(agree >= 199, "predicted classes agree with Keras' on %d of 200 images (>= 99.5%%)" % agree)
    check(worst <= 1e-4, "every probability within 1e-4 of Keras' (largest difference %.2g)" % worst)
    check(one_line(r.err) and r.err.startswith("Predicted 200 samples on /device:") and "images/s" in r.err,
          "one summary line on stderr with images/s", r)
    # The same pixels as a .npy (rows by index, in the folder's order) and as a .npz's x_test.
    order = sorted(expected)
    x = np.stack([np.array(Image.open(os.path.join(IMAGES, rel))) for rel in order])
    np.save(os.path.join(tmp, "x.npy"), x)
    _, by_index = predict([os.path.join(tmp, "x.npy")], tmp)
    check(all(by_index[str(i)] == got[os.path.join(IMAGES, rel)] for i, rel in enumerate(order)),
          "all 200 rows of x.npy equal the images' rows")
    np.savez(os.path.join(tmp, "x.npz"), x_train=x[:5], y_train=np.zeros(5, np.uint8), x_test=x,
             y_test=np.zeros(200, np.uint8))
    _, from_npz = predict([os.path.join(tmp, "x.npz")], tmp)
    check(from_npz == by_index, "a .npz: its x_test, the same rows")
    # Images of another size and colour are resized as Keras resizes them.
    big = os.path.join(tmp, "big.jpg")
    Image.open(os.path.join(IMAGES, order[0])).convert("RGB").resize((40, 40)).save(big, quality=95)
    _, one = predict([big], tmp)
    check(list(one) == [big], "a 40x40 RGB JPEG is resized to the model's 28x28x1 and classified")


def keras_file(tmp):
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
    want = json.load(open(os.path.join(data, "keras_small_evaluate.json")))
    x, y = load_test_set(DEFAULT_DATA, want["test_images"])
    np.save(os.path.join(tmp, "x.npy"), x[..., 0])
    out = os.path.join(tmp, "p.csv")
    r = run([PREDICT, os.path.join(data, "keras_small.keras"), os.path.join(tmp, "x.npy"), "--output", out], cwd=tmp)
    check(r.code == 0, "axon-predict keras_small.keras x.npy: the model from the .keras file", r)
    with open(out) as f:
        rows = list(csv.reader(f))[1:]
    accuracy = np.mean([int(row[1]) == y[int(row[0])] for row in rows])
    check(len(rows) == len(y) and abs(accuracy - want["accuracy"]) <= 1.0 / len(y) + 1e-9,
          "%d rows whose classes score Keras' evaluate accuracy %.4f (axon-predict: %.4f)" %
          (len(y), want["accuracy"], accuracy))


def refused(tmp):
    before = listing(tmp)
    axw = os.path.join(tmp, "w.axw")
    open(axw, "wb").write(b"AXONWTS1")
    cases = [([WEIGHTS], "usage: axon-predict"),
             ([WEIGHTS, os.path.join(tmp, "absent.png")], "absent.png does not exist"),
             ([axw, IMAGES], "pass --model FILE.json"),
             ([WEIGHTS, IMAGES, "--image-size", "32,32"], "is not the model's input [28,28,1]"),
             ([WEIGHTS, IMAGES, "--color-mode", "rgb"], "3 channels, the model's input has 1"),
             ([WEIGHTS, IMAGES, "--top-k", "-1"], "--top-k must be from 0 to 1000")]
    for args, needle in cases:
        r = run([PREDICT] + args + ["--output", os.path.join(tmp, "never.csv")], cwd=tmp)
        check(r.code == 2 and one_line(r.err) and needle in r.err and r.out == "",
              "%s: exit 2, one line saying %r" % (" ".join(os.path.basename(a) for a in args), needle), r)
    os.unlink(axw)
    check(listing(tmp) == before, "nothing written (no --output file)")


CASES = {f.__name__: f for f in (against_keras, keras_file, refused)}

if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="axon-predict-") as tmp:
        CASES[case](tmp)
