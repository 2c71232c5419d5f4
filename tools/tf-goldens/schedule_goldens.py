#!/usr/bin/env python3
"""Writes Keras 3's learning rates for a set of schedules and steps, for
axon's schedules (core/src/nn/lr_schedule.cpp) to be checked against. Needs
Keras on the TensorFlow backend; nothing in axon's build or CI runs it.

    python3 tools/tf-goldens/schedule_goldens.py

It writes tests/train/schedule_goldens.txt, one schedule per line: the
schedule as keras.optimizers.schedules.serialize writes it (JSON without
spaces), then STEP:RATE pairs, RATE the float32 Keras returns, as 8 hex
digits (its bits, big-endian).
"""
import json
import os
import struct

import keras
import numpy as np
from keras.optimizers import schedules as S

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "train", "schedule_goldens.txt")
STEPS = [0, 1, 2, 7, 99, 100, 101, 149, 150, 250, 499, 1000, 1234, 5000, 123457]

CASES = [
    S.ExponentialDecay(0.1, 100, 0.96),
    S.ExponentialDecay(0.01, 37, 0.5, staircase=True),
    S.PiecewiseConstantDecay([100, 1000], [1.0, 0.5, 0.1]),
    S.PiecewiseConstantDecay([150], [0.003, 0.0007]),
    S.PolynomialDecay(0.1, 1000),
    S.PolynomialDecay(0.05, 250, end_learning_rate=0.001, power=0.5, cycle=True),
    S.PolynomialDecay(1.0, 500, end_learning_rate=0.0, power=2.0),
    S.InverseTimeDecay(0.1, 100, 0.5),
    S.InverseTimeDecay(0.2, 30, 2.0, staircase=True),
    S.CosineDecay(0.1, 1000),
    S.CosineDecay(0.05, 500, alpha=0.1),
    S.CosineDecay(0.0, 1000, warmup_target=0.1, warmup_steps=150),
    S.CosineDecay(0.001, 300, alpha=0.01, warmup_target=0.01, warmup_steps=100),
    S.CosineDecayRestarts(0.1, 100),
    S.CosineDecayRestarts(0.05, 37, t_mul=1.0, m_mul=0.9, alpha=0.05),
    S.CosineDecayRestarts(0.02, 50, t_mul=1.5, m_mul=0.8),
]


def bits(x):
    return struct.pack(">f", np.float32(x)).hex()


def main():
    lines = ["# tools/tf-goldens/schedule_goldens.py, Keras %s" % keras.__version__]
    for s in CASES:
        text = json.dumps(S.serialize(s), separators=(",", ":"))
        rates = ["%d:%s" % (step, bits(np.asarray(s(step)))) for step in STEPS]
        lines.append(text + " " + " ".join(rates))
    with open(OUT, "w") as out:
        out.write("\n".join(lines) + "\n")
    print("wrote", len(CASES), "schedules to", os.path.normpath(OUT))


if __name__ == "__main__":
    main()
