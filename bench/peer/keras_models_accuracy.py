#!/usr/bin/env python3
"""Keras' own spread of validation accuracy against axon-train's, for the
Keras models of tests/data (keras_resnet, keras_inception,
keras_sequential_mix, keras_strided, keras_augmented_cnn, keras_convnext), on the same IDX
files axon-train reads.
Not part of the build; needs TensorFlow and Keras from PyPI (pip install
tensorflow-cpu).

    python3 bench/peer/keras_models_accuracy.py --axon-train build/bin/axon-train \\
        [--data DIR] [--models resnet,inception,...] [--seeds 1,2,3] [--epochs 3] \\
        [--only keras|axon] [--results FILE.jsonl]

Each run trains one model from scratch for --epochs on the full training set
(batch 64, Adam 1e-3, validation on the test set): Keras with its own
initialisers and shuffling after keras.utils.set_random_seed(seed), the
SparseCategoricalCrossentropy whose from_logits matches the model's output
(False for a softmax output), and the pixels as axon feeds them (uint8 / 255
in float32); axon-train with --model, --epochs and --seed, read back from its
--metrics-csv. Runs go one at a time; each prints its validation accuracy per
epoch and is appended to --results, and a run already there is not repeated,
so a stopped measurement goes on where it stopped. At the end: per model,
Keras' accuracies after the last epoch (min, mean, spread), axon's (mean) and
the two criteria docs/training.md reports: axon's lowest at or above Keras'
lowest minus 0.5 points, axon's mean within 1 point of Keras' mean."""
import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from idx_data import load  # noqa: E402
from keras_timing import epoch_timer  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = ["resnet", "inception", "sequential_mix", "strided", "augmented_cnn", "convnext"]


def model_json(name):
    return os.path.join(ROOT, "tests", "data", f"keras_{name}.json")


def softmax_output(config):
    """Whether the model's output layer is a softmax (then Keras' loss takes
    probabilities, from_logits=False)."""
    cfg = config["config"]
    if config["class_name"] == "Sequential":
        last = cfg["layers"][-1]
    else:
        out = cfg["output_layers"]
        out_name = out[0][0] if isinstance(out[0], list) else out[0]
        last = next(layer for layer in cfg["layers"] if layer["config"]["name"] == out_name)
    return last["class_name"] == "Softmax" or last["config"].get("activation") == "softmax"


def keras_run(name, seed, args, data):
    import keras
    with open(model_json(name)) as f:
        text = f.read()
    keras.backend.clear_session()
    keras.utils.set_random_seed(seed)
    model = keras.models.model_from_json(text)
    from_logits = not softmax_output(json.loads(text))
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=from_logits), metrics=["accuracy"])
    x_train, y_train, x_test, y_test = data
    times = []

    hist = model.fit(x_train, y_train, batch_size=64, epochs=args.epochs, validation_data=(x_test, y_test),
                     callbacks=[epoch_timer(keras, times)], verbose=2)
    return {k: [float(v) for v in hist.history[k]] for k in ("loss", "accuracy", "val_loss", "val_accuracy")}, times


def axon_run(name, seed, args):
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "m.csv")
        cmd = [args.axon_train, "--model", model_json(name), "--epochs", str(args.epochs), "--seed", str(seed),
               "--data", args.data, "--metrics-csv", metrics]
        print(" ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
        with open(metrics) as f:
            rows = list(csv.DictReader(f))
    return ({k: [float(r[k]) for r in rows] for k in ("loss", "accuracy", "val_loss", "val_accuracy")},
            [float(r["seconds"]) for r in rows])


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.machine()


def read_results(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def summary(results, models, seeds, epochs):
    def last(framework, model):
        runs = {r["seed"]: r["val_accuracy"][-1] * 100 for r in results
                if r["framework"] == framework and r["model"] == model and r["epochs"] == epochs}
        return [runs[s] for s in seeds if s in runs]

    print(f"\nvalidation accuracy after epoch {epochs}, seeds {','.join(map(str, seeds))} (%)")
    print(f"{'model':15} {'Keras':24} {'min':>6} {'mean':>6} {'spread':>6}   {'axon':24} {'min':>6} {'mean':>6}"
          f"   min >= Keras min - 0.5   |mean - Keras mean| <= 1")
    for model in models:
        k, a = last("keras", model), last("axon", model)
        if not k or not a:
            print(f"{model:15} (runs missing: Keras {len(k)}, axon {len(a)})")
            continue
        k_min, k_mean, a_min, a_mean = min(k), np.mean(k), min(a), np.mean(a)
        first = "yes" if a_min >= k_min - 0.5 else "NO"
        second = "yes" if abs(a_mean - k_mean) <= 1.0 else "NO"
        print(f"{model:15} {', '.join(f'{v:.2f}' for v in k):24} {k_min:6.2f} {k_mean:6.2f} {max(k) - k_min:6.2f}   "
              f"{', '.join(f'{v:.2f}' for v in a):24} {a_min:6.2f} {a_mean:6.2f}   {first} ({a_min - k_min:+.2f})"
              f"{'':13}{second} ({a_mean - k_mean:+.2f})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--axon-train", default=os.path.join(ROOT, "build", "bin", "axon-train"))
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--only", choices=["keras", "axon"])
    ap.add_argument("--results", default="keras_models_accuracy.jsonl")
    args = ap.parse_args()
    models = args.models.split(",")
    seeds = [int(s) for s in args.seeds.split(",")]
    frameworks = [args.only] if args.only else ["keras", "axon"]

    data = None
    results = read_results(args.results)
    for framework in frameworks:
        for model in models:
            for seed in seeds:
                if any(r["framework"] == framework and r["model"] == model and r["seed"] == seed and
                       r["epochs"] == args.epochs for r in results):
                    continue
                print(f"== {framework} {model} seed {seed}", flush=True)
                if framework == "keras":
                    if data is None:
                        data = (load(args.data, "train-images-idx3-ubyte")[..., None].astype("float32") / 255.0,
                                load(args.data, "train-labels-idx1-ubyte").astype("int32"),
                                load(args.data, "t10k-images-idx3-ubyte")[..., None].astype("float32") / 255.0,
                                load(args.data, "t10k-labels-idx1-ubyte").astype("int32"))
                    logs, secs = keras_run(model, seed, args, data)
                else:
                    logs, secs = axon_run(model, seed, args)
                for i, t in enumerate(secs):
                    print(f"{framework} {model} seed {seed} epoch {i + 1}: loss {logs['loss'][i]:.4f} accuracy "
                          f"{logs['accuracy'][i]:.4f} val_loss {logs['val_loss'][i]:.4f} val_accuracy "
                          f"{logs['val_accuracy'][i]:.4f}  {t:.1f} s", flush=True)
                record = {"framework": framework, "model": model, "seed": seed, "epochs": args.epochs, **logs,
                          "seconds": secs, "date": time.strftime("%Y-%m-%d"),
                          "machine": f"{cpu_model()}, {os.cpu_count()} cores"}
                if framework == "keras":
                    import keras
                    import tensorflow as tf
                    record["versions"] = f"TensorFlow {tf.__version__}, Keras {keras.__version__}"
                results.append(record)
                with open(args.results, "a") as f:
                    f.write(json.dumps(record) + "\n")
    summary(results, models, seeds, args.epochs)


if __name__ == "__main__":
    main()
