#!/usr/bin/env python3
"""The guide's CNN in Keras, on the same IDX files axon-train reads: a peer for
accuracy and speed. Not part of the build; needs `pip install tensorflow-cpu`.

    python3 bench/peer/keras_cnn.py [--data DIR] [--epochs 5] [--seed 0]

Prints Keras' own progress and, at the end, validation accuracy per epoch and
seconds per epoch, so axon-train's figures can be set beside them."""
import argparse

from idx_data import load
from keras_timing import epoch_timer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    import tensorflow as tf
    tf.keras.utils.set_random_seed(args.seed)
    x_train = load(args.data, "train-images-idx3-ubyte")[..., None].astype("float32") / 255.0
    y_train = load(args.data, "train-labels-idx1-ubyte").astype("int32")
    x_test = load(args.data, "t10k-images-idx3-ubyte")[..., None].astype("float32") / 255.0
    y_test = load(args.data, "t10k-labels-idx1-ubyte").astype("int32")

    L = tf.keras.layers
    model = tf.keras.Sequential([
        tf.keras.Input((28, 28, 1)),
        L.Conv2D(32, 3, activation="relu"), L.MaxPooling2D(),
        L.Conv2D(64, 3, activation="relu"), L.MaxPooling2D(),
        L.Conv2D(64, 3, activation="relu"),
        L.Flatten(), L.Dense(64, activation="relu"), L.Dense(10),
    ])
    model.compile(optimizer="adam",
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])

    times = []

    hist = model.fit(x_train, y_train, batch_size=args.batch_size, epochs=args.epochs,
                     validation_data=(x_test, y_test), callbacks=[epoch_timer(tf.keras, times)], verbose=2)
    for i, (acc, t) in enumerate(zip(hist.history["val_accuracy"], times), 1):
        print(f"keras epoch {i}: val_accuracy {acc:.4f}  {t:.2f} s  {60000 / t:.0f} samples/s")


if __name__ == "__main__":
    main()
