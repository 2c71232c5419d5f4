#!/usr/bin/env python3
"""axon-train's compiled metrics besides accuracy, end to end: Keras' own
evaluate of tests/data/keras_small.keras (keras_small_metrics.json, written by
tools/tf-goldens/metrics.py) is what axon prints for mse, mae and the top-k
accuracies on the same 1,000 test images, by flag and from a .keras file's
compile_config; bad metrics exit 2 with one line.
Usage: metrics_test.py CASE AXON_TRAIN"""
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reliability"))
from app_util import DEFAULT_DATA, check, one_line, run, with_compile_config  # noqa: E402

case, TRAIN = sys.argv[1], sys.argv[2]
DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
KERAS_FILE = os.path.join(DATA_DIR, "keras_small.keras")
WANT = json.load(open(os.path.join(DATA_DIR, "keras_small_metrics.json")))


def evaluated(tmp, args):
    r = run([TRAIN, "--data", DEFAULT_DATA, "--epochs", "0", "--test-limit", str(WANT["test_images"])] + args, cwd=tmp)
    check(r.code == 0 and "Evaluated" in r.out, "it evaluates", r)
    line = next(x for x in r.out.splitlines() if x.startswith("Evaluated"))
    return {k: float(v) for k, v in re.findall(r"([A-Za-z_0-9]+): ([-0-9.e]+)", line)}


def matches_keras(got, names):
    for name in names:
        # Printed to 4 decimals: the mean errors within 0.1%, the accuracies to the last digit.
        want = WANT[name]
        check(name in got and abs(got[name] - want) <= 1e-3 * abs(want) + 5e-5,
              "%s: %.4f, Keras %.6f" % (name, got.get(name, float("nan")), want))


def keras_figures(tmp):
    got = evaluated(tmp, ["--model", KERAS_FILE, "--metrics", "mse,mae,top_k_categorical_accuracy",
                          "--metrics", "sparse_top_k_categorical_accuracy", "--metrics",
                          "top_k_categorical_accuracy:k=2,name=top2", "--metrics",
                          "sparse_top_k_categorical_accuracy:k=3,name=top3"])
    matches_keras(got, ["loss", "mse", "mae", "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy",
                        "top2", "top3"])


def with_metrics(tmp, metrics, name="m.keras"):
    """keras_small.keras with its compile_config's metrics replaced."""
    return with_compile_config(KERAS_FILE, os.path.join(tmp, name), metrics=metrics)


def compile_config(tmp):
    """A .keras file's metrics as Keras serialises them: computed, in order, under their names."""
    model = with_metrics(tmp, ["accuracy", "mae", {"module": "keras.metrics", "class_name": "MeanSquaredError",
                                                   "config": {"name": "mean_squared_error", "dtype": "float32"}},
                               {"module": "keras.metrics", "class_name": "SparseTopKCategoricalAccuracy",
                                "config": {"name": "top3", "dtype": "float32", "k": 3}}])
    r = run([TRAIN, "--data", DEFAULT_DATA, "--epochs", "0", "--test-limit", "1000", "--model", model], cwd=tmp)
    check(r.code == 0 and re.search(r"accuracy: [0-9.]+ - mae: [0-9.]+ - mean_squared_error: [0-9.]+ - top3: [0-9.]+$",
                                    r.out, re.M), "in the file's order, under the file's names", r)
    got = evaluated(tmp, ["--model", model])
    got["mse"] = got.pop("mean_squared_error")
    matches_keras(got, ["mae", "mse", "top3"])
    got = evaluated(tmp, ["--model", model, "--metrics", "mse"])
    check(sorted(got) == ["accuracy", "loss", "mse"], "--metrics overrides the file's", got)


def refused(tmp):
    fashion = ["--data", DEFAULT_DATA, "--train-limit", "64", "--epochs", "1"]
    for args, why in (
            (fashion + ["--metrics", "f1_score"], "--metrics: unknown metric 'f1_score'; axon has accuracy, mse, mae, "
             "top_k_categorical_accuracy, sparse_top_k_categorical_accuracy"),
            (fashion + ["--metrics", "top_k_categorical_accuracy:k=0"], "k='0' is not an integer from 1"),
            (fashion + ["--metrics", "mse:k=3"], "unknown setting 'k'"),
            (fashion + ["--metrics", "mse,mse"], "--metrics: the metric mse is compiled twice"),
            (fashion + ["--metrics", "mae:name=loss"], "the metric name loss is taken by the logs"),
            (fashion + ["--model", with_metrics(tmp, ["kl_divergence"])],
             "compile_config.metrics: the metric kl_divergence is not one axon has"),
            (fashion + ["--model", with_metrics(tmp, [{"class_name": "TopKCategoricalAccuracy",
                                                       "config": {"name": "t", "k": -1}}], "k.keras")],
             "compile_config.metrics: t: k is -1, not a positive integer")):
        r = run([TRAIN] + args, cwd=tmp)
        check(r.code == 2 and one_line(r.err) and why in r.err, "%s: exit 2, one line: %s" % (" ".join(args[-2:]), why),
              r)


CASES = {f.__name__: f for f in (keras_figures, compile_config, refused)}

if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="axon-metrics-") as tmp:
        CASES[case](tmp)
