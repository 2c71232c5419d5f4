#!/usr/bin/env python3
"""Any Keras model JSON (model.to_json(), e.g. tests/data/keras_resnet.json)
trained by Keras on the same IDX files as axon-train: a speed peer. Not part
of the build; needs TensorFlow (e.g. the venv /tmp/tfenv).

    python bench/peer/keras_model.py --model tests/data/keras_resnet.json [--samples 12800] [--epochs 2]

Keras' own settings as axon-train uses them: keras.models.model_from_json,
Adam(1e-3), SparseCategoricalCrossentropy(from_logits=True), accuracy,
batch 64, shuffled. The first epoch on a few batches builds and traces the
step and is not timed; each timed epoch prints one line
`peer keras epoch E: S samples in T s` (no validation)."""
import argparse
import os

from idx_data import training_set
from keras_timing import epoch_timer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--samples", type=int, default=0, help="samples per timed epoch (0: all 60000)")
    ap.add_argument("--epochs", type=int, default=1, help="timed epochs")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import keras
    import tensorflow as tf
    keras.utils.set_random_seed(args.seed)
    x, y = training_set(args.data, args.samples)
    with open(args.model) as f:
        model = keras.models.model_from_json(f.read())
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    warm = 10 * args.batch_size
    model.fit(x[:warm], y[:warm], batch_size=args.batch_size, epochs=1, verbose=0)
    print(f"peer keras: TensorFlow {tf.__version__}, Keras {keras.__version__}, "
          f"threads intra {tf.config.threading.get_intra_op_parallelism_threads()} (0: all CPUs), "
          f"{model.count_params()} parameters", flush=True)

    times = []

    model.fit(x, y, batch_size=args.batch_size, epochs=args.epochs, shuffle=True, verbose=0, callbacks=[epoch_timer(keras, times)])
    for e, t in enumerate(times, 1):
        print(f"peer keras epoch {e}: {len(x)} samples in {t:.3f} s", flush=True)


if __name__ == "__main__":
    main()
