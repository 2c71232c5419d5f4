"""Measures, with real Keras, what docs/training.md reports under "Models
from Keras" (by hand; TensorFlow is not a dependency of axon):

    /tmp/tfenv/bin/pip install tensorflow-cpu safetensors
    build/bin/axon-train --epochs 1 --save axon_cnn.safetensors     # prints its val_accuracy
    /tmp/tfenv/bin/python tests/data/keras_accuracy.py axon_cnn.safetensors build/bin/axon-train

1. axon's weights, read with the safetensors package into the guide's Keras
   model (tests/data/keras_guide_cnn.json): Keras' test accuracy, to set
   beside the val_accuracy axon printed.
2. The same Keras model trained one epoch by Keras, its weights saved to
   safetensors under their Keras names: Keras' test accuracy, and axon's
   from `axon-train --initial-weights FILE --epochs 0`.
"""
import gzip
import os
import subprocess
import sys

import numpy as np
import keras
import safetensors.numpy

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = "/usr/share/datasets/fashion-mnist"


def idx(stem):
    path = os.path.join(DATA, stem)
    raw = open(path, "rb").read() if os.path.exists(path) else gzip.open(path + ".gz").read()
    if stem.endswith("idx3-ubyte"):
        return np.frombuffer(raw, np.uint8, offset=16).reshape(-1, 28, 28, 1).astype("float32") / 255
    return np.frombuffer(raw, np.uint8, offset=8).astype("int64")


def model():
    with open(os.path.join(HERE, "keras_guide_cnn.json")) as f:
        m = keras.models.model_from_json(f.read())
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    return m


def set_weights(m, tensors):
    for layer in m.layers:
        if layer.weights:
            layer.set_weights([tensors[layer.name + "/" + v.name] for v in layer.weights])


def main(axon_file, axon_train):
    x_test, y_test = idx("t10k-images-idx3-ubyte"), idx("t10k-labels-idx1-ubyte")
    m = model()
    set_weights(m, safetensors.numpy.load_file(axon_file))
    _, acc = m.evaluate(x_test, y_test, batch_size=64, verbose=0)
    print("1. axon's weights in Keras: test accuracy %.4f" % acc)

    keras.utils.set_random_seed(0)
    m = model()
    m.fit(idx("train-images-idx3-ubyte"), idx("train-labels-idx1-ubyte"), epochs=1, batch_size=64, verbose=2)
    _, acc = m.evaluate(x_test, y_test, batch_size=64, verbose=0)
    tensors = {layer.name + "/" + v.name: np.asarray(v.numpy()) for layer in m.layers for v in layer.weights}
    out = "keras_cnn.safetensors"
    safetensors.numpy.save_file(tensors, out)
    print("2. Keras' own weights: Keras test accuracy %.4f; saved %s (%s)" % (acc, out, ", ".join(sorted(tensors))))
    r = subprocess.run([axon_train, "--initial-weights", out, "--epochs", "0"], capture_output=True, text=True)
    print("   axon-train --initial-weights %s --epochs 0: %s" % (out, (r.stdout + r.stderr).strip().splitlines()[-1]))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
