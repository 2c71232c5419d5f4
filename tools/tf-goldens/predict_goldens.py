#!/usr/bin/env python3
"""Writes what axon-predict is tested against: a small Keras model trained
by axon-train on a folder of Fashion-MNIST PNGs, 200 test images, and Keras'
model.predict of those images with those weights. Needs TensorFlow, Keras and
Pillow from PyPI and a built axon-train; nothing in axon's build or CI runs
it. Usage:

    python3 tools/tf-goldens/predict_goldens.py build/bin/axon-train

It writes into tests/datasets/predict/:
  model.json           the model (Keras 3's to_json): Rescaling(1/255), a
                       strided Conv2D, Dense(10, softmax)
  model.safetensors    axon-train --save after 2 epochs on 2,000 training
                       images written as PNGs (its metadata holds the model
                       JSON and the class names, as axon-predict reads them)
  images/CLASS/*.png   200 test images (Fashion-MNIST's t10k 0 to 199)
  keras_predict.csv    file (relative to images/), then Keras' ten
                       probabilities: keras.models.model_from_json of the
                       weights file's metadata, the weights set from the file,
                       model.predict of image_dataset_from_directory(images,
                       shuffle=False, color_mode="grayscale") as Keras loads them
"""
import gzip
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import keras
import numpy as np
from keras import layers
from PIL import Image
from safetensors import safe_open
from safetensors.numpy import load_file

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "datasets", "predict")
DATA = "/usr/share/datasets/fashion-mnist"
NAMES = ["T-shirt_top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle_boot"]


def idx(stem):
    for name in (stem, stem + ".gz"):
        path = os.path.join(DATA, name)
        if os.path.exists(path):
            data = (gzip.open if name.endswith(".gz") else open)(path, "rb").read()
            rank = data[3]
            dims = struct.unpack(">" + "I" * rank, data[4:4 + 4 * rank])
            return np.frombuffer(data, np.uint8, offset=4 + 4 * rank).reshape(dims)
    raise SystemExit("no %s in %s" % (stem, DATA))


def write_pngs(root, x, y):
    for i, (img, label) in enumerate(zip(x, y)):
        d = os.path.join(root, NAMES[label])
        os.makedirs(d, exist_ok=True)
        Image.fromarray(img, "L").save(os.path.join(d, "%04d.png" % i))


def main(train_exe):
    x, y = idx("train-images-idx3-ubyte"), idx("train-labels-idx1-ubyte")
    xt, yt = idx("t10k-images-idx3-ubyte"), idx("t10k-labels-idx1-ubyte")
    shutil.rmtree(ROOT, ignore_errors=True)
    os.makedirs(ROOT)
    i = keras.Input((28, 28, 1))
    h = layers.Rescaling(1.0 / 255)(i)
    h = layers.Conv2D(8, 3, strides=2, activation="relu")(h)
    o = layers.Dense(10, activation="softmax")(layers.Flatten()(h))
    open(os.path.join(ROOT, "model.json"), "w").write(keras.Model(i, o).to_json())
    write_pngs(os.path.join(ROOT, "images"), xt[:200], yt[:200])
    with tempfile.TemporaryDirectory() as tmp:
        write_pngs(os.path.join(tmp, "train"), x[:2000], y[:2000])
        subprocess.run([train_exe, "--data", os.path.join(tmp, "train"), "--model", os.path.join(ROOT, "model.json"),
                        "--epochs", "2", "-q", "--save", os.path.join(ROOT, "model.safetensors")], check=True)
    weights = os.path.join(ROOT, "model.safetensors")
    with safe_open(weights, "np") as f:
        meta = f.metadata()
    model = keras.models.model_from_json(meta["model"])
    w = load_file(weights)
    for layer in model.layers:
        if layer.weights:
            layer.set_weights([w[layer.name + "/" + v.name] for v in layer.weights])
    ds = keras.utils.image_dataset_from_directory(os.path.join(ROOT, "images"), shuffle=False, color_mode="grayscale",
                                                  image_size=(28, 28), batch_size=200)
    p = model.predict(ds, verbose=0)
    with open(os.path.join(ROOT, "keras_predict.csv"), "w") as f:
        f.write("file," + ",".join(json.loads(meta["class_names"])) + "\n")
        for path, row in zip(ds.file_paths, p):
            f.write(os.path.relpath(path, os.path.join(ROOT, "images")) + "," +
                    ",".join("%.8f" % v for v in row) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
