#!/usr/bin/env python3
"""Runs Keras 3's EarlyStopping, ReduceLROnPlateau and ModelCheckpoint
(save_best_only) on recorded loss histories and writes what each decided,
for axon's (core/src/train/) to be checked against. Needs Keras; nothing in
axon's build or CI runs it.

    python3 tools/tf-goldens/callback_goldens.py

It writes tests/train/callback_goldens.txt, one case per line, tab-separated:
    CLASS  CONFIG_JSON  HISTORY_JSON  OUTCOME_JSON
HISTORY is a list of per-epoch logs ({"loss": ..., "val_loss": ...,
"val_accuracy": ...}). OUTCOME: EarlyStopping: {"stopped_epoch": E or -1
(0-based epoch after which training stopped), "restored_epoch": E or -1};
ReduceLROnPlateau: {"lr": [the float32 learning rate after each epoch]} from
an initial 0.1; ModelCheckpoint: {"saved": [0-based epochs saved]}.
"""
import json
import os

import keras
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "train", "callback_goldens.txt")
rng = np.random.default_rng(5)


class FakeModel:
    """What the callbacks touch of a model: its weights (the epoch they are from), stop flag, optimizer."""

    def __init__(self):
        self.stop_training = False
        self.epoch = -1
        self.restored = -1
        self.optimizer = keras.optimizers.SGD(0.1)
        self.metrics = []

    def get_weights(self):
        return [np.array(self.epoch)]

    def set_weights(self, w):
        self.restored = int(w[0])


def histories():
    # an overfitting run: training loss falls, validation falls then rises, with noise and plateaus
    out = []
    for n, turn in ((12, 4), (15, 7), (10, 2)):
        t = np.arange(n)
        loss = 1.0 / (1 + t) + rng.normal(0, 0.005, n)
        val = 0.5 + 0.02 * (t - turn) ** 2 / (1 + turn) + rng.normal(0, 0.01, n)
        acc = 0.9 - 0.01 * np.abs(t - turn) + rng.normal(0, 0.003, n)
        out.append([{"loss": float(np.float32(a)), "val_loss": float(np.float32(b)), "val_accuracy": float(np.float32(c))}
                    for a, b, c in zip(loss, val, acc)])
    flat = [{"loss": 0.5, "val_loss": 0.3, "val_accuracy": 0.8}] * 8  # no change at all
    tiny = [{"loss": 0.5, "val_loss": 0.3 - 1e-5 * i, "val_accuracy": 0.8} for i in range(8)]  # below min_delta
    return out + [flat, tiny]


def run(callback, history):
    model = FakeModel()
    callback.set_model(model)
    callback.on_train_begin()
    lrs, saved, stopped = [], [], -1
    for epoch, logs in enumerate(history):
        model.epoch = epoch
        if isinstance(callback, keras.callbacks.ModelCheckpoint):
            if callback.monitor_op is None:
                callback._set_monitor_op()  # as its on_epoch_end does
            if callback._should_save_model(epoch, None, dict(logs), "unused"):
                saved.append(epoch)
        else:
            callback.on_epoch_end(epoch, dict(logs))
        lrs.append(float(np.float32(model.optimizer.learning_rate.numpy())))
        if model.stop_training:
            stopped = epoch
            break
    callback.on_train_end()
    return model, lrs, saved, stopped


def main():
    lines = []
    early = [dict(patience=2, restore_best_weights=True), dict(patience=0), dict(patience=3, min_delta=0.01),
             dict(monitor="val_accuracy", mode="max", patience=2, restore_best_weights=True),
             dict(monitor="loss", patience=1), dict(patience=2, baseline=0.45), dict(patience=1, start_from_epoch=3,
                                                                                       restore_best_weights=True)]
    plateau = [dict(patience=2, factor=0.5), dict(patience=1, factor=0.2, cooldown=2, min_lr=0.005),
               dict(monitor="val_accuracy", mode="max", patience=1, factor=0.5, min_delta=0.002),
               dict(patience=0, factor=0.1, min_delta=0)]
    best = [dict(save_best_only=True), dict(save_best_only=True, monitor="val_accuracy", mode="max"),
            dict(save_best_only=True, initial_value_threshold=0.5)]
    for h in histories():
        for cfg in early:
            model, _, _, stopped = run(keras.callbacks.EarlyStopping(**cfg), h)
            lines.append(("EarlyStopping", cfg, h, {"stopped_epoch": stopped, "restored_epoch": model.restored}))
        for cfg in plateau:
            _, lrs, _, _ = run(keras.callbacks.ReduceLROnPlateau(**cfg), h)
            lines.append(("ReduceLROnPlateau", cfg, h, {"lr": lrs}))
        for cfg in best:
            _, _, saved, _ = run(keras.callbacks.ModelCheckpoint("unused.keras", **cfg), h)
            lines.append(("ModelCheckpoint", cfg, h, {"saved": saved}))
    with open(OUT, "w") as out:
        out.write("# tools/tf-goldens/callback_goldens.py, Keras %s\n" % keras.__version__)
        for cls, cfg, h, outcome in lines:
            out.write("\t".join([cls, json.dumps(cfg), json.dumps(h), json.dumps(outcome)]) + "\n")
    print("wrote", len(lines), "cases to", os.path.normpath(OUT))


if __name__ == "__main__":
    main()
