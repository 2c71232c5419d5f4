"""Writes the Keras model JSON files of this folder with real Keras
(not a dependency of axon; run by hand when they need remaking):

    python3 -m venv /tmp/tfenv && /tmp/tfenv/bin/pip install tensorflow-cpu tf_keras
    /tmp/tfenv/bin/python tests/data/make_keras_models.py tests/data

keras_guide_cnn.json is the guide's CNN, exactly as the trainer's built-in
model; keras_wide_cnn.json a wider one with padding='same', strides, a
bias-less Conv2D, a ReLU layer, Dropout and a softmax output (Keras 3's
layout, TensorFlow 2.21.0 and Keras 3.15.1). keras_augmented_cnn.json puts
Keras' six augmentation layers before the guide's CNN (RandomCrop to 26 x 26).
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


def main(folder):
    for name, make in (("keras_guide_cnn.json", guide_cnn), ("keras_wide_cnn.json", wide_cnn),
                       ("keras_augmented_cnn.json", augmented_cnn)):
        keras.backend.clear_session()  # layer names from conv2d, dense, ... again
        with open(os.path.join(folder, name), "w") as f:
            f.write(make().to_json())
        print("wrote", name)
    import tf_keras
    with open(os.path.join(folder, "keras2_guide_cnn.json"), "w") as f:
        f.write(guide_cnn(tf_keras, {"input_shape": (28, 28, 1)}).to_json())
    print("wrote keras2_guide_cnn.json")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
