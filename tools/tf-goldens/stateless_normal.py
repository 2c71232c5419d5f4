#!/usr/bin/env python3
"""Writes tests/api/goldens/stateless_normal.txt and stateless_uniform.txt:
tf.random.stateless_normal and tf.random.stateless_uniform for three shapes
and seeds, each value as the hex of its float32 bits, which axon's
StatelessRandomNormalV2 and StatelessRandomUniformV2 (and
axon::random::stateless_normal, stateless_uniform) must reproduce bit for
bit. Needs TensorFlow (pip install tensorflow-cpu); nothing in axon's build
or CI runs it. Usage:

    python3 tools/tf-goldens/stateless_normal.py [--out-dir tests/api/goldens]

File format: per case a line "case <dims, comma-separated> seed <s0>,<s1>",
then the values in row-major order, eight hex words per line.
"""
import argparse
import os

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

# An odd count (a partial last group of four), a matrix, and a rank-4 shape;
# seeds small, large and negative (int64, as TensorFlow takes them).
CASES = [
    ([7], (1, 2)),
    ([30, 20], (42, 0)),
    ([2, 3, 5, 7], (-5, 9007199254740993)),
]

ap = argparse.ArgumentParser()
ap.add_argument("--out-dir", default=os.path.join(os.path.dirname(__file__), "../../tests/api/goldens"))
args = ap.parse_args()

for name, draw in (("stateless_normal", tf.random.stateless_normal), ("stateless_uniform", tf.random.stateless_uniform)):
    lines = [f"# tf.random.{name}, TensorFlow {tf.__version__}, written by tools/tf-goldens/stateless_normal.py"]
    with tf.device("/CPU:0"):
        for shape, seed in CASES:
            values = draw(shape, seed=tf.constant(seed, dtype=tf.int64), dtype=tf.float32).numpy()
            bits = values.astype(np.float32).ravel().view(np.uint32)
            lines.append(f"case {','.join(map(str, shape))} seed {seed[0]},{seed[1]}")
            for i in range(0, len(bits), 8):
                lines.append(" ".join(f"{b:08x}" for b in bits[i:i + 8]))
    out = os.path.join(args.out_dir, name + ".txt")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {out}")
