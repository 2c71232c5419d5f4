#!/usr/bin/env python3
"""axon-train on NumPy arrays (--data FILE.npz, --data IMAGES.npy,LABELS.npy,
--validation-data): the same images as the IDX files train bit-identically
(the weights file's bytes) whatever the array's container, byte order,
memory order or float type; hostile arrays are refused with exit 2 and one
line naming the file and the fault, within 300 MB, writing nothing.
Usage: arrays_test.py CASE AXON_TRAIN"""
import json
import os
import struct
import sys
import tempfile
import zipfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reliability"))
import app_util  # noqa: E402
from app_util import check, clean_env, listing, one_line, run  # noqa: E402

case, TRAIN = (sys.argv[1], sys.argv[2]) if len(sys.argv) > 2 else (None, None)
HERE = os.path.dirname(os.path.abspath(__file__))
GUIDE_JSON = os.path.join(HERE, "..", "data", "keras_guide_cnn.json")
FASHION = app_util.DEFAULT_DATA
# The short run every comparison trains (100 steps), of a one-layer model:
# the comparisons are of the data path, and the CNN would cost 20 times as
# much under the sanitizers.
SHORT = ["--epochs", "1", "--train-limit", "6400", "--test-limit", "1000", "-q", "--threads", "2"]
DENSE_MODEL = {"class_name": "Sequential", "config": {"name": "dense", "layers": [
    {"class_name": "InputLayer", "config": {"batch_shape": [None, 28, 28, 1], "name": "input"}},
    {"class_name": "Flatten", "config": {"name": "flatten"}},
    {"class_name": "Dense", "config": {"name": "dense", "units": 10}}]}}
PEAK_LIMIT_MIB = 300


def read_idx(path):
    import gzip
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    rank = data[3]
    dims = struct.unpack(">" + "I" * rank, data[4:4 + 4 * rank])
    return np.frombuffer(data, np.uint8, offset=4 + 4 * rank).reshape(dims)


def idx_file(folder, stem):
    for name in (stem, stem + ".gz"):
        if os.path.exists(os.path.join(folder, name)):
            return os.path.join(folder, name)
    raise SystemExit("FAILED: %s has no %s" % (folder, stem))


def fashion():
    """Fashion-MNIST as keras.datasets.fashion_mnist.load_data() gives it."""
    get = lambda stem: read_idx(idx_file(FASHION, stem))  # noqa: E731
    return (get("train-images-idx3-ubyte"), get("train-labels-idx1-ubyte"),
            get("t10k-images-idx3-ubyte"), get("t10k-labels-idx1-ubyte"))


def train(tmp, data_args, name, extra=()):
    out, model = os.path.join(tmp, name + ".axw"), os.path.join(tmp, "dense.json")
    if not os.path.exists(model):
        with open(model, "w") as f:
            json.dump(DENSE_MODEL, f)
    r = run([TRAIN] + data_args + SHORT + ["--model", model] + list(extra) + ["--save", out], cwd=tmp)
    check(r.code == 0 and r.err == "", "%s trains" % name, r)
    with open(out, "rb") as f:
        return f.read()


def bit_identical(tmp):
    x, y, xt, yt = fashion()
    idx_weights = train(tmp, ["--data", FASHION], "idx")
    # As Keras' mnist.npz is written (compressed), and stored.
    np.savez_compressed(os.path.join(tmp, "fashion.npz"), x_train=x, y_train=y, x_test=xt, y_test=yt)
    check(train(tmp, ["--data", os.path.join(tmp, "fashion.npz")], "npz") == idx_weights,
          "np.savez_compressed in mnist.npz's layout: the weights file equals the IDX run's, byte for byte")
    np.savez(os.path.join(tmp, "stored.npz"), x_train=x, y_train=y.astype(np.int64), x_test=xt, y_test=yt)
    check(train(tmp, ["--data", os.path.join(tmp, "stored.npz")], "stored") == idx_weights,
          "np.savez (stored, int64 labels): the same bytes")
    # Two .npy pairs, the test pair as --validation-data.
    names = {}
    for key, a in (("x", x), ("y", y), ("xt", xt), ("yt", yt)):
        names[key] = os.path.join(tmp, key + ".npy")
        np.save(names[key], a)
    check(train(tmp, ["--data", names["x"] + "," + names["y"], "--validation-data", names["xt"] + "," + names["yt"]],
                "npy") == idx_weights, "IMAGES.npy,LABELS.npy with --validation-data: the same bytes")
    # Labels N x 1, big-endian images and labels, Fortran order: converted to the same bytes.
    np.savez(os.path.join(tmp, "odd.npz"), x_train=np.asfortranarray(x), y_train=y.astype(">i4").reshape(-1, 1),
             x_test=xt, y_test=yt.astype(">u2"))
    check(train(tmp, ["--data", os.path.join(tmp, "odd.npz")], "odd") == idx_weights,
          "Fortran-order images, big-endian N x 1 labels: the same bytes")


def floats(tmp):
    x, y, xt, yt = fashion()
    idx_weights = train(tmp, ["--data", FASHION], "idx")
    # x / 255 in float32 is what the device computes from uint8 pixels, if
    # its division rounds correctly (checked here for all 256 values).
    f32 = (np.arange(256, dtype=np.float32) / np.float32(255))
    check(np.array_equal(f32, (np.arange(256) / 255.0).astype(np.float32)),
          "float32(x / 255) equals float32(float64(x) / 255) for every uint8")
    np.savez(os.path.join(tmp, "f32.npz"), x_train=x.astype(np.float32) / 255, y_train=y,
             x_test=xt.astype(np.float32) / 255, y_test=yt)
    w32 = train(tmp, ["--data", os.path.join(tmp, "f32.npz")], "float32")
    check(w32 == idx_weights, "float32 images x / 255 (given as they are): the IDX run's bytes")
    np.savez(os.path.join(tmp, "f64.npz"), x_train=(x / 255.0).astype(">f8"), y_train=y, x_test=xt / 255.0, y_test=yt)
    check(train(tmp, ["--data", os.path.join(tmp, "f64.npz")], "float64") == idx_weights,
          "float64 images x / 255 (big-endian for the training split), rounded to float32: the same bytes")
    # Float images are not divided again: x itself as floats trains differently.
    np.savez(os.path.join(tmp, "raw.npz"), x_train=x.astype(np.float32), y_train=y, x_test=xt.astype(np.float32),
             y_test=yt)
    check(train(tmp, ["--data", os.path.join(tmp, "raw.npz")], "raw") != idx_weights,
          "float32 images of 0 to 255 are given as they are (not divided by 255): other weights")
    # Three channels (N x H x W x C) train with a model made for them.
    rgb = np.repeat(x[:640, :, :, None], 3, axis=3)
    np.savez(os.path.join(tmp, "rgb.npz"), x_train=rgb, y_train=y[:640])
    r = run([TRAIN, "--data", os.path.join(tmp, "rgb.npz"), "--epochs", "1"], cwd=tmp)
    check(r.code == 0 and "640 training images (no validation data) of 28x28x3, 10 classes" in r.out,
          "N x H x W x 3 uint8 images train with the built-in CNN on 28x28x3", r)


def expect_refused(tmp, args, needles, what, stdout_empty=True):
    """Exit 2, one error line holding every needle, within the memory limit,
    nothing written (neither --save's file nor --metrics-csv's); nothing on
    stdout unless the fault is found only once training has started (an
    image whose pixels are corrupt)."""
    before = listing(tmp)
    out, csv_out = os.path.join(tmp, "never.safetensors"), os.path.join(tmp, "never.csv")
    epochs = [] if "--epochs" in args else ["--epochs", "1"]
    # --epochs 0 only evaluates and refuses --metrics-csv itself.
    metrics = [] if "--epochs" in args and args[args.index("--epochs") + 1] == "0" else ["--metrics-csv", csv_out]
    r = run([TRAIN] + args + epochs + ["--save", out] + metrics, cwd=tmp)
    check(r.code == 2, what + ": exit 2", r)
    check(one_line(r.err) and r.err.startswith("axon-train: error: "), what + ": one error line", r)
    for n in needles:
        check(n in r.err, "%s: the message says %r" % (what, n), r)
    if stdout_empty:
        check(r.out == "", what + ": nothing on stdout", r)
    if not app_util.SANITIZED:
        check(r.peak_mib < PEAK_LIMIT_MIB, "%s: peak memory %.0f MiB < %d" % (what, r.peak_mib, PEAK_LIMIT_MIB), r)
    check(listing(tmp) == before, what + ": nothing written", sorted(listing(tmp) - before))


def stderr_on_terminal(cmd):
    """Runs cmd with its stderr on a pseudo-terminal: (exit code, stdout, what the terminal showed)."""
    import pty
    import select
    import subprocess
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, env=clean_env())
    os.close(slave)
    shown = b""
    while select.select([master], [], [], 120)[0]:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the run has gone
            chunk = b""
        if not chunk:
            break
        shown += chunk
    os.close(master)
    out = p.communicate(timeout=120)[0].decode()
    return p.returncode, out, shown.decode()


def progress(tmp):
    """Images of 64 MB or more show a count and rate on a terminal while they are read; smaller ones do not."""
    x, y, _, _ = fashion()
    big = np.concatenate([x, x])[:90000]  # 70.6 MB
    np.savez(os.path.join(tmp, "big.npz"), x_train=big, y_train=np.concatenate([y, y])[:90000])
    code, out, shown = stderr_on_terminal([TRAIN, "--data", os.path.join(tmp, "big.npz"), "--train-limit", "64",
                                           "--epochs", "1"])
    check(code == 0 and "Reading %s: x_train.npy: 71/71 MB (" % os.path.join(tmp, "big.npz") in shown and
          " MB/s)\r\n" in shown, "70.6 MB of images: a count and rate on the terminal", repr(shown[-300:]), out)
    check("Data: %s: 64 training images" % os.path.join(tmp, "big.npz") in out,
          "then the data line (after --train-limit)", out)
    np.savez(os.path.join(tmp, "small.npz"), x_train=x[:1000], y_train=y[:1000])
    code, out, shown = stderr_on_terminal([TRAIN, "--data", os.path.join(tmp, "small.npz"), "--epochs", "1"])
    check(code == 0 and "Reading" not in shown, "0.8 MB of images: none", repr(shown[-300:]))


def npy_bytes(header_dict, data=b"", version=1):
    text = repr(header_dict).encode("latin1")
    pad = 64 - (10 + len(text) + 1) % 64
    text += b" " * pad + b"\n"
    length = struct.pack("<H", len(text)) if version == 1 else struct.pack("<I", len(text))
    return b"\x93NUMPY" + bytes([version, 0]) + length + text + data


def write_zip(path, members, method=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", method) as z:
        for name, data in members.items():
            z.writestr(name, data)


def hostile(tmp):
    ok_x = np.zeros((100, 28, 28), np.uint8)
    ok_y = np.arange(100, dtype=np.uint8) % 10

    def npz(name, **arrays):
        path = os.path.join(tmp, "in", name)
        np.savez(path, **arrays)
        return path

    os.makedirs(os.path.join(tmp, "in"))
    work = os.path.join(tmp, "work")
    os.makedirs(work)
    # An object array: NumPy itself refuses it without allow_pickle.
    p = npz("object.npz", x_train=np.array([{"a": 1}, None], dtype=object), y_train=np.zeros(2, np.uint8))
    expect_refused(work, ["--data", p], ["object.npz: x_train.npy", "object array", "allow_pickle=False"],
                   "an object array")
    # A zip bomb: 784 MB of zeros in under a megabyte.
    n = 1000000
    header = npy_bytes({"descr": "|u1", "fortran_order": False, "shape": (n, 28, 28)})
    bomb = os.path.join(tmp, "in", "bomb.npz")
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("x_train.npy", "w", force_zip64=True) as f:
            f.write(header)
            chunk = bytes(1 << 20)
            left = n * 784
            while left:
                f.write(chunk[:min(left, len(chunk))])
                left -= min(left, len(chunk))
        z.writestr("y_train.npy", npy_bytes({"descr": "|u1", "fortran_order": False, "shape": (n,)}, bytes(n)))
    check(os.path.getsize(bomb) < 2 << 20, "the bomb is %d bytes" % os.path.getsize(bomb))
    expect_refused(work, ["--data", bomb], ["bomb.npz: x_train.npy", "zip bomb"], "a zip bomb of 784 MB")
    # Lengths that differ.
    p = npz("lengths.npz", x_train=ok_x, y_train=ok_y[:99])
    expect_refused(work, ["--data", p], ["x_train.npy holds 100 images", "y_train.npy holds 99 labels"],
                   "x_train and y_train of different lengths")
    # A label outside the model's classes.
    y = ok_y.copy()
    y[37] = 12
    p = npz("label12.npz", x_train=ok_x, y_train=y)
    expect_refused(work, ["--data", p, "--model", GUIDE_JSON],
                   ["label12.npz: y_train.npy: label 12 (sample 37)", "model's 10 classes"],
                   "label 12 with a model of 10 classes")
    y = y.astype(np.int8)
    y[37] = -1
    p = npz("negative.npz", x_train=ok_x, y_train=y)
    expect_refused(work, ["--data", p], ["y_train.npy: label -1 at index 37 is negative"], "a negative label")
    p = npz("floatlabels.npz", x_train=ok_x, y_train=ok_y.astype(np.float32))
    expect_refused(work, ["--data", p], ["y_train.npy: labels of dtype float32", "integers"], "float labels")
    p = npz("int16.npz", x_train=ok_x.astype(np.int16), y_train=ok_y)
    expect_refused(work, ["--data", p], ["x_train.npy: images of dtype int16", "uint8", "float32 or float64"],
                   "int16 images")
    x = ok_x.astype(np.float32)
    x[5, 3, 4] = np.nan
    p = npz("nan.npz", x_train=x, y_train=ok_y)
    expect_refused(work, ["--data", p], ["x_train.npy: image 5 has a value that is not finite at row 3, column 4"], "a NaN in float images")
    p = npz("halfsplit.npz", x_train=ok_x, y_train=ok_y, x_test=ok_x)
    expect_refused(work, ["--data", p], ["halfsplit.npz: holds x_test without y_test"], "x_test without y_test")
    p = npz("names.npz", images=ok_x, labels=ok_y)
    expect_refused(work, ["--data", p], ["names.npz: a .npz in Keras' layout holds x_train.npy", "images.npy"],
                   "a .npz of other names")
    p = npz("structured.npz", x_train=np.zeros(100, dtype=[("a", "u1"), ("b", "f4")]), y_train=ok_y)
    expect_refused(work, ["--data", p], ["x_train.npy: holds a structured array"], "a structured array")
    p = npz("shape.npz", x_train=np.zeros((100, 784), np.uint8), y_train=ok_y)
    expect_refused(work, ["--data", p], ["x_train.npy: images must be N x H x W", "(100, 784)"], "2-D images")
    # Truncated archive and truncated .npy.
    good = npz("good.npz", x_train=ok_x, y_train=ok_y)
    data = open(good, "rb").read()
    cut = os.path.join(tmp, "in", "cut.npz")
    open(cut, "wb").write(data[:len(data) // 2])
    expect_refused(work, ["--data", cut], ["cut.npz: not a readable zip archive"], "a truncated .npz")
    xs, ys = os.path.join(tmp, "in", "x.npy"), os.path.join(tmp, "in", "y.npy")
    np.save(xs, ok_x)
    np.save(ys, ok_y)
    whole = open(xs, "rb").read()
    open(xs, "wb").write(whole[:-100])
    expect_refused(work, ["--data", xs + "," + ys], ["x.npy: the .npy header promises 78400 data bytes but the file "
                                                     "has 78300"], "a truncated .npy")
    open(xs, "wb").write(whole)
    expect_refused(work, ["--data", xs], ["is one .npy file", "IMAGES.npy,LABELS.npy"], "one .npy alone")
    expect_refused(work, ["--data", xs + "," + os.path.join(tmp, "in", "absent.npy")], ["absent.npy does not exist"],
                   "a pair whose labels file is missing")
    # A member whose deflated data is corrupt (its CRC or stream fails).
    z = os.path.join(tmp, "in", "crc.npz")
    write_zip(z, {"x_train.npy": open(xs, "rb").read(), "y_train.npy": open(ys, "rb").read()}, zipfile.ZIP_DEFLATED)
    raw = bytearray(open(z, "rb").read())
    raw[200] ^= 0xFF
    open(z, "wb").write(bytes(raw))
    expect_refused(work, ["--data", z], ["crc.npz: x_train.npy"], "a corrupt deflated member")
    # A header that promises more than the limit.
    z = os.path.join(tmp, "in", "huge.npz")
    write_zip(z, {"x_train.npy": npy_bytes({"descr": "<f8", "fortran_order": False, "shape": (1 << 20, 1 << 20, 1)}),
                  "y_train.npy": open(ys, "rb").read()})
    expect_refused(work, ["--data", z], ["huge.npz: x_train.npy", "limit"], "a header claiming 8 TiB")
    # Validation images of another shape.
    p2 = npz("small.npz", x_train=np.zeros((10, 14, 14), np.uint8), y_train=ok_y[:10])
    expect_refused(work, ["--data", good, "--validation-data", p2], ["validation images are 14x14x1",
                                                                     "training images 28x28x1"],
                   "validation images of another size")
    expect_refused(work, ["--data", xs + "," + ys, "--epochs", "0", "--initial-weights", xs],
                   ["--epochs 0 evaluates on the validation data", "--validation-data"], "--epochs 0 without validation")


CASES = {f.__name__: f for f in (bit_identical, floats, hostile, progress)}

if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="axon-arrays-") as tmp:
        CASES[case](tmp)
