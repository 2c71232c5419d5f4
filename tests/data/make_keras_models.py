"""Writes the Keras model JSON files of this folder with real Keras
(not a dependency of axon; run by hand when they need remaking):

    python3 -m venv /tmp/tfenv && /tmp/tfenv/bin/pip install tensorflow-cpu tf_keras
    /tmp/tfenv/bin/python tests/data/make_keras_models.py tests/data

keras_guide_cnn.json is the guide's CNN, exactly as the trainer's built-in
model; keras_wide_cnn.json a wider one with padding='same', strides, a
bias-less Conv2D, a ReLU layer, Dropout and a softmax output (Keras 3's
layout, TensorFlow 2.21.0 and Keras 3.15.1). keras_augmented_cnn.json puts
Keras' six augmentation layers before the guide's CNN (RandomCrop to 26 x 26),
keras_augmented_color_cnn.json RandomShear, RandomBrightness and
RandomGrayscale (a grey image passes through it) before it,
keras_inverted_cnn.json AutoContrast, RandomInvert, Solarization,
RandomPosterization and RandomSharpness.
keras2_guide_cnn.json is the
guide's CNN in Keras 2's layout, from tf_keras 2.21.0 (the Keras 2 that
TensorFlow keeps for old code), built as Keras 2 code usually did:
input_shape= on the first layer.
"""
import os
import sys

import keras
from keras import layers


def guide_cnn(k=keras, first=None):
    """k: keras or tf_keras; first: the first layer's extra arguments (none: an Input layer)."""
    head = [k.Input(shape=(28, 28, 1))] if first is None else []
    return k.Sequential(head + [
        k.layers.Conv2D(32, (3, 3), activation="relu", **(first or {})),
        k.layers.MaxPooling2D((2, 2)),
        k.layers.Conv2D(64, (3, 3), activation="relu"),
        k.layers.MaxPooling2D((2, 2)),
        k.layers.Conv2D(64, (3, 3), activation="relu"),
        k.layers.Flatten(),
        k.layers.Dense(64, activation="relu"),
        k.layers.Dense(10),
    ])


def wide_cnn():
    return keras.Sequential([
        keras.Input(shape=(28, 28, 1)),
        layers.Conv2D(64, 3, strides=2, padding="same", use_bias=False),
        layers.ReLU(),
        layers.Conv2D(128, 3, strides=2, padding="same", activation="relu"),
        layers.MaxPooling2D(pool_size=3, strides=2, padding="same"),
        layers.Flatten(),
        layers.Dropout(0.3),
        layers.Dense(128, activation="relu"),
        layers.Dropout(0.2),
        layers.Dense(10, activation="softmax"),
    ])


def augmented_cnn():
    return keras.Sequential([
        keras.Input(shape=(28, 28, 1)),
        layers.RandomFlip("horizontal"),
        layers.RandomTranslation(0.1, 0.1, fill_mode="constant"),
        layers.RandomRotation(0.05, fill_mode="constant"),
        layers.RandomZoom(0.1, fill_mode="constant"),
        layers.RandomContrast(0.2, value_range=(0, 1)),
        layers.RandomCrop(26, 26),
    ] + guide_cnn().layers)


def augmented_color_cnn():
    return keras.Sequential([
        keras.Input(shape=(28, 28, 1)),
        layers.RandomShear(0.2, 0.1, fill_mode="constant"),
        layers.RandomBrightness(0.1, value_range=(0, 1)),
        layers.RandomGrayscale(0.5),
    ] + guide_cnn().layers)


def inverted_cnn():
    return keras.Sequential([
        keras.Input(shape=(28, 28, 1)),
        layers.AutoContrast(value_range=(0, 1)),
        layers.RandomInvert(0.3, value_range=(0, 1)),
        layers.Solarization(addition_factor=0.1, threshold_factor=(0.4, 0.9), value_range=(0, 1)),
        layers.RandomPosterization((3, 7), value_range=(0, 1)),
        layers.RandomSharpness(0.8, value_range=(0, 1)),
    ] + guide_cnn().layers)


def small_keras_file(folder):
    """keras_small.keras: a functional model whose layers' names differ from
    the paths Keras files their weights under (stem -> layers/conv2d, branch
    -> layers/conv2d_1), with BatchNormalization and Add, compiled with SGD
    (momentum, nesterov) on a cosine schedule, trained three epochs on the first
    2,000 Fashion-MNIST images (batch 64, seed 3) and saved by model.save();
    keras_small_evaluate.json: Keras' evaluate on the first 1,000 test images."""
    import gzip
    import json

    import numpy as np

    def idx(name, offset, shape):
        raw = gzip.open("/usr/share/datasets/fashion-mnist/%s.gz" % name).read()[offset:]
        return np.frombuffer(raw, np.uint8).reshape(shape)

    x = idx("train-images-idx3-ubyte", 16, (-1, 28, 28, 1))[:2000] / np.float32(255)
    y = idx("train-labels-idx1-ubyte", 8, (-1,))[:2000]
    xt = idx("t10k-images-idx3-ubyte", 16, (-1, 28, 28, 1))[:1000] / np.float32(255)
    yt = idx("t10k-labels-idx1-ubyte", 8, (-1,))[:1000]
    keras.utils.set_random_seed(3)
    i = keras.Input((28, 28, 1))
    h = layers.Conv2D(8, 3, strides=2, name="stem")(i)
    h = layers.ReLU()(layers.BatchNormalization(momentum=0.9, name="bn")(h))
    h = layers.Add()([h, layers.Conv2D(8, 3, padding="same", name="branch")(h)])
    model = keras.Model(i, layers.Dense(10, name="head")(layers.GlobalAveragePooling2D()(h)))
    model.compile(optimizer=keras.optimizers.SGD(keras.optimizers.schedules.CosineDecay(0.05, 1000), momentum=0.9,
                                                 nesterov=True),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    model.fit(x, y, batch_size=64, epochs=3, verbose=0)
    model.save(os.path.join(folder, "keras_small.keras"))
    loss, accuracy = model.evaluate(xt, yt, batch_size=64, verbose=0)
    with open(os.path.join(folder, "keras_small_evaluate.json"), "w") as f:
        json.dump({"test_images": 1000, "loss": loss, "accuracy": accuracy}, f)
        f.write("\n")
    print("wrote keras_small.keras and keras_small_evaluate.json")


def main(folder):
    for name, make in (("keras_guide_cnn.json", guide_cnn), ("keras_wide_cnn.json", wide_cnn),
                       ("keras_augmented_cnn.json", augmented_cnn),
                       ("keras_augmented_color_cnn.json", augmented_color_cnn),
                       ("keras_inverted_cnn.json", inverted_cnn)):
        keras.backend.clear_session()  # layer names from conv2d, dense, ... again
        with open(os.path.join(folder, name), "w") as f:
            f.write(make().to_json())
        print("wrote", name)
    import tf_keras
    with open(os.path.join(folder, "keras2_guide_cnn.json"), "w") as f:
        f.write(guide_cnn(tf_keras, {"input_shape": (28, 28, 1)}).to_json())
    print("wrote keras2_guide_cnn.json")
    small_keras_file(folder)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
