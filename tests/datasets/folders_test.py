#!/usr/bin/env python3
"""axon-train on image folders in Keras' image_dataset_from_directory layout
(images written by Pillow): PNGs of Fashion-MNIST reach the accuracy of the
same images as arrays; JPEGs of another size and colour mode train after
--image-size and --color-mode; --cache and the decoding threads change
nothing; hostile folders are refused with exit 2 and one line naming the
file and the fault, within 300 MB, writing nothing.
Usage: folders_test.py CASE AXON_TRAIN"""
import csv
import os
import sys
import tempfile

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arrays_test  # noqa: E402  (its helpers; its CASE argument is ours)
from arrays_test import check, expect_refused, fashion, run  # noqa: E402

case, TRAIN = sys.argv[1], sys.argv[2]
NAMES = ["T-shirt_top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle_boot"]


def write_folder(root, x, y, fmt="png", convert=None, size=None, names=NAMES):
    for i, (img, label) in enumerate(zip(x, y)):
        d = os.path.join(root, names[label])
        os.makedirs(d, exist_ok=True)
        im = Image.fromarray(img, "L")
        if size:
            im = im.resize(size, Image.BILINEAR)
        if convert:
            im = im.convert(convert)
        im.save(os.path.join(d, "%05d.%s" % (i, fmt)), quality=92) if fmt == "jpg" else \
            im.save(os.path.join(d, "%05d.%s" % (i, fmt)))


def final_val_accuracy(csv_path):
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    return float(rows[-1]["val_accuracy"])


def png_accuracy(tmp):
    x, y, xt, yt = fashion()
    train, val = os.path.join(tmp, "train"), os.path.join(tmp, "val")
    # Class folders named so that Keras' sorted order is Fashion-MNIST's label order.
    numbered = ["%d_%s" % (i, n) for i, n in enumerate(NAMES)]
    write_folder(train, x[:6000], y[:6000], names=numbered)
    write_folder(val, xt[:1000], yt[:1000], names=numbered)
    common = ["--threads", "2", "-q"]
    # One epoch: the decoded PNGs are the arrays' pixels, so the same images as arrays in the folder's order
    # (class by class, by file name) train to the same weights file, byte for byte.
    r = run([TRAIN, "--data", train, "--validation-data", val, "--epochs", "1", "--save", os.path.join(tmp, "png.axw")] +
            common, cwd=tmp)
    check(r.code == 0 and r.err == "", "6,000 PNGs train, 1,000 validate", r)
    order, vorder = np.argsort(y[:6000], kind="stable"), np.argsort(yt[:1000], kind="stable")
    np.savez(os.path.join(tmp, "folder_order.npz"), x_train=x[:6000][order], y_train=y[:6000][order],
             x_test=xt[:1000][vorder], y_test=yt[:1000][vorder])
    r = run([TRAIN, "--data", os.path.join(tmp, "folder_order.npz"), "--epochs", "1", "--save",
             os.path.join(tmp, "sorted.axw")] + common, cwd=tmp)
    check(r.code == 0, "the same images as arrays in the folder's order train", r)
    check(open(os.path.join(tmp, "png.axw"), "rb").read() == open(os.path.join(tmp, "sorted.axw"), "rb").read(),
          "the PNG folder and the arrays in its order: the same weights file, byte for byte")
    # Ten epochs: the PNG folder against the IDX run on the same images (the IDX files' first 6,000 and 1,000, in
    # their own order; after 3 epochs seeds and orders still differ by 2-3 points, after 10 by 0.2-1.3 points, either
    # way: 1.3 once the CPU's Winograd convolutions rounded the gradients differently). The folder must not lose
    # accuracy: at most 1 point below the IDX run.
    r = run([TRAIN, "--data", train, "--validation-data", val, "--epochs", "10", "--metrics-csv",
             os.path.join(tmp, "png.csv")] + common, cwd=tmp)
    check(r.code == 0, "10 epochs of the PNG folder", r)
    r = run([TRAIN, "--data", arrays_test.FASHION, "--train-limit", "6000", "--test-limit", "1000", "--epochs", "10",
             "--metrics-csv", os.path.join(tmp, "idx.csv")] + common, cwd=tmp)
    check(r.code == 0, "10 epochs of the same images as IDX files", r)
    png, idx = final_val_accuracy(os.path.join(tmp, "png.csv")), final_val_accuracy(os.path.join(tmp, "idx.csv"))
    check(png >= idx - 0.01, "the PNG folder validates at %.4f, the IDX run at %.4f: it reaches the IDX run's "
          "accuracy within 1 point" % (png, idx))
    plain = os.path.join(tmp, "plain")
    write_folder(plain, x[:64], y[:64])
    r = run([TRAIN, "--data", plain, "--epochs", "1", "--validation-data", val, "--image-size", "28,28"], cwd=tmp)
    check(r.code == 2 and "are not the training data's" in r.err, "other class names than the validation folder's", r)
    r = run([TRAIN, "--data", plain, "--epochs", "1", "--validation-split", "0.25", "--seed", "3"], cwd=tmp)
    check(r.code == 0 and "Classes: 0 Ankle_boot, 1 Bag, 2 Coat, 3 Dress, 4 Pullover, 5 Sandal, 6 Shirt, 7 Sneaker, "
          "8 T-shirt_top, 9 Trouser" in r.out, "the class names, sorted as Keras sorts them, printed at start", r)
    check("48 training and 16 validation images of 28x28x1, 10 classes" in r.out, "the data line", r)


def jpeg_resize(tmp):
    x, y, xt, yt = fashion()
    # Under the sanitizers (each step 20 times slower) a tenth of the images
    # run the same decoding and resizing; whether they learn is the suite's to say.
    n = 300 if arrays_test.app_util.SANITIZED else 3000
    train, val = os.path.join(tmp, "train"), os.path.join(tmp, "val")
    write_folder(train, x[:n], y[:n], "jpg", "RGB", (36, 36))
    write_folder(val, xt[:500], yt[:500], "jpg", "RGB", (36, 36))
    base = [TRAIN, "--data", train, "--validation-data", val, "--threads", "2"]
    r = run(base + ["--epochs", "2", "--image-size", "28,28", "--color-mode", "grayscale", "--metrics-csv", "m.csv"],
            cwd=tmp)
    check(r.code == 0 and "%d training images, 500 validation images from %s, of 28x28x1" % (n, val) in r.out,
          "RGB JPEGs of 36x36 train as 28x28 gray after --image-size 28,28 --color-mode grayscale", r)
    if not arrays_test.app_util.SANITIZED:
        acc = final_val_accuracy(os.path.join(tmp, "m.csv"))
        check(acc > 0.70, "they learn: validation accuracy %.4f after 2 epochs of 3,000 images" % acc)
    r = run(base + ["--image-size", "32,32", "--epochs", "1", "-q"], cwd=tmp)
    check(r.code == 0, "and as 32x32 RGB (the first image's colour mode) with the built-in CNN", r)


def cache_identical(tmp):
    x, y, _, _ = fashion()
    train = os.path.join(tmp, "train")
    write_folder(train, x[:640], y[:640], "jpg", "RGB", (30, 30))
    runs = {}
    for name, extra in (("plain", []), ("cache", ["--cache"]), ("no-prefetch", ["--no-prefetch"])):
        out = os.path.join(tmp, name + ".axw")
        r = run([TRAIN, "--data", train, "--image-size", "28,28", "--epochs", "3", "--threads", "2", "-q",
                 "--validation-split", "0.25", "--save", out] + extra, cwd=tmp)
        check(r.code == 0 and r.err == "", name + " trains", r)
        runs[name] = open(out, "rb").read()
    check(runs["cache"] == runs["plain"], "--cache: the same weights, byte for byte, after 3 epochs")
    check(runs["no-prefetch"] == runs["plain"], "--no-prefetch (decoding on the training thread): the same bytes")
    r = run([TRAIN, "--data", train, "--image-size", "28,28", "--epochs", "1", "--validation-split", "0.2"], cwd=tmp)
    check(r.code == 0 and "512 training and 128 validation images of 28x28x3, 10 classes" in r.out,
          "--validation-split 0.2 of 640 files: 512 and 128, as Keras cuts them", r)


def hostile(tmp):
    x, y, _, _ = fashion()
    good = os.path.join(tmp, "in", "good")
    write_folder(good, x[:40], y[:40])
    work = os.path.join(tmp, "work")
    os.makedirs(work)

    def variant(name, change):
        d = os.path.join(tmp, "in", name)
        os.system("cp -r '%s' '%s'" % (good, d))
        return change(d) or d

    first = os.path.join("Ankle_boot", sorted(os.listdir(os.path.join(good, "Ankle_boot")))[0])

    def truncate(d):
        p = os.path.join(d, first)
        data = open(p, "rb").read()
        open(p, "wb").write(data[:len(data) // 2])
    d = variant("truncated", truncate)
    # Pixels are decoded when their batch is: found in the first epoch, after the start-up lines.
    expect_refused(work, ["--data", d], [first + ": corrupt PNG", "truncated"], "a truncated PNG", False)

    def corrupt_jpeg(d):
        p = os.path.join(d, "Bag", "bad.jpg")
        Image.fromarray(x[0], "L").save(p, quality=90)
        data = bytearray(open(p, "rb").read())
        data[len(data) // 2:] = b"\0" * (len(data) - len(data) // 2)
        open(p, "wb").write(bytes(data))
    d = variant("corrupt", corrupt_jpeg)
    expect_refused(work, ["--data", d], ["Bag/bad.jpg: corrupt JPEG"], "a corrupt JPEG", False)

    def huge_png(d):
        import struct
        import zlib
        p = os.path.join(d, "Bag", "huge.png")
        ihdr = struct.pack(">IIBBBBB", 60000, 60000, 8, 0, 0, 0, 0)
        chunk = lambda t, b: struct.pack(">I", len(b)) + t + b + struct.pack(">I", zlib.crc32(t + b))  # noqa: E731
        open(p, "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 1000)) +
                            chunk(b"IEND", b""))
    d = variant("huge", huge_png)
    expect_refused(work, ["--data", d, "--image-size", "28,28"],
                   ["Bag/huge.png: PNG header claims 60000 x 60000 pixels", "limit"], "a PNG claiming 60000 x 60000")
    flat = os.path.join(tmp, "in", "flat")
    os.makedirs(flat)
    Image.fromarray(x[0], "L").save(os.path.join(flat, "a.png"))
    expect_refused(work, ["--data", flat], ["holds images but no class folders"], "images without class folders")
    one = os.path.join(tmp, "in", "one")
    write_folder(one, x[:5], np.zeros(5, np.uint8))
    expect_refused(work, ["--data", one], ["only one class folder (T-shirt_top)"], "one class")
    d = variant("empty", lambda d: os.makedirs(os.path.join(d, "Zebra")))
    expect_refused(work, ["--data", d], ["Zebra: class folder without images"], "an empty class")
    d = variant("loop", lambda d: os.symlink("loop.png", os.path.join(d, "Bag", "loop.png")))
    expect_refused(work, ["--data", d], ["Bag/loop.png: is a symbolic link loop"], "a symbolic link loop")
    d = variant("fifo", lambda d: os.mkfifo(os.path.join(d, "Bag", "pipe.png")))
    expect_refused(work, ["--data", d], ["Bag/pipe.png: is a FIFO"], "a FIFO named like an image")

    def other_size(d):
        Image.fromarray(np.zeros((32, 30), np.uint8), "L").save(os.path.join(d, "Coat", "big.png"))
    d = variant("size", other_size)
    expect_refused(work, ["--data", d, "--model", arrays_test.GUIDE_JSON],
                   ["Coat/big.png: the image is 30x32 pixels but the images must be 28x28 (the model's input)",
                    "--image-size"], "an image of another size than the model's input")
    expect_refused(work, ["--data", good, "--model", arrays_test.GUIDE_JSON, "--color-mode", "rgb"],
                   ["model's input is [28,28,1]", "[28,28,3]"], "rgb images for a grayscale model")
    other = os.path.join(tmp, "in", "other")
    write_folder(other, x[:20], (y[:20] % 3))
    expect_refused(work, ["--data", good, "--validation-data", other], ["are not the training data's"],
                   "validation classes that differ")
    expect_refused(work, ["--data", good, "--validation-split", "0.01"], ["leaves no file to validate"],
                   "a split that leaves no validation file")
    expect_refused(work, ["--data", arrays_test.FASHION, "--image-size", "28,28"], ["--image-size applies to image "
                                                                                   "folders"], "--image-size on IDX")


def class_names_kept(tmp):
    from safetensors import safe_open
    x, y, _, _ = fashion()
    train = os.path.join(tmp, "train")
    write_folder(train, x[:200], y[:200] % 3, names=["cat", "dog", "fish"])
    ckpt, weights = os.path.join(tmp, "ckpt"), os.path.join(tmp, "w.safetensors")
    r = run([TRAIN, "--data", train, "--epochs", "2", "-q", "--checkpoint-dir", ckpt, "--save", weights], cwd=tmp)
    check(r.code == 0, "a folder of 3 classes trains with checkpoints", r)
    with safe_open(weights, "np") as f:
        check(f.metadata().get("class_names") == '["cat","dog","fish"]', "the weights' metadata keeps the class names",
              f.metadata())
    newest = sorted(os.listdir(ckpt))[-1]
    with safe_open(os.path.join(ckpt, newest), "np") as f:
        check(f.metadata().get("class_names") == '["cat","dog","fish"]', "so does the checkpoint", f.metadata())
    r = run([TRAIN, "--data", train, "--epochs", "3", "-q", "--checkpoint-dir", ckpt, "--resume"], cwd=tmp)
    check(r.code == 0, "the same folder resumes", r)
    os.rename(os.path.join(train, "fish"), os.path.join(train, "bird"))
    r = run([TRAIN, "--data", train, "--epochs", "4", "-q", "--checkpoint-dir", ckpt, "--resume"], cwd=tmp)
    check(r.code == 2 and "was written with the classes" in r.err and "fish" in r.err and "bird" in r.err,
          "a folder of other class names does not resume", r)


def progress_terminal(tmp):
    """While every file's header is checked, a terminal's stderr shows a count and a rate, redrawn in place."""
    x, y, _, _ = fashion()
    train = os.path.join(tmp, "train")
    write_folder(train, x[:3000], y[:3000])
    code, out, text = arrays_test.stderr_on_terminal([TRAIN, "--data", train, "--epochs", "1", "--validation-split",
                                                      "0.5"])
    check(code == 0, "a run with its stderr on a terminal", out)
    check("Checking images: 3000/3000 (" in text and " files/s)" in text,
          "a count and a rate of the 3,000 files on the terminal", repr(text[-400:]))
    check("\rChecking images: " in text, "redrawn in place", repr(text[:200]))
    check("Data: %s: 1500 training and 1500 validation images of 28x28x1, 10 classes" % train in out,
          "then the data line on stdout", out)
    r = run([TRAIN, "--data", train, "--epochs", "1", "--validation-split", "0.5"], cwd=tmp)
    check("Checking images" not in r.err, "not when stderr is not a terminal", r)


def streaming(tmp):
    """Without --cache an image folder streams: decoded images are held a few batches at a time, so peak memory
    stays far below the decoded folder's size; with --cache it holds them all (which shows the measure sees them).
    96x96 RGB PNGs resized to 64x64 (the largest input a model takes) are 48 KiB of floats each."""
    import json
    x, y, _, _ = fashion()
    n, side, size = 5000, 96, 64
    train = os.path.join(tmp, "train")
    for i in range(n):
        d = os.path.join(train, NAMES[y[i]])
        os.makedirs(d, exist_ok=True)
        Image.fromarray(x[i], "L").resize((side, side), Image.BILINEAR).convert("RGB").save(
            os.path.join(d, "%05d.png" % i))
    decoded_mib = n * size * size * 3 * 4 / 2**20
    # The guide's model file with a 64x64x3 input, global average pooling and its last Dense: cheap to train.
    with open(arrays_test.GUIDE_JSON) as f:
        guide = json.load(f)
    layers = guide["config"]["layers"]
    layers[0]["config"]["batch_shape"] = [None, size, size, 3]
    pool = {"module": "keras.layers", "class_name": "GlobalAveragePooling2D", "registered_name": None,
            "config": {"name": "pool", "trainable": True, "dtype": layers[-1]["config"]["dtype"],
                       "data_format": "channels_last", "keepdims": False}}
    dense = json.loads(json.dumps(layers[-1]))
    dense.pop("build_config", None)
    guide["config"]["layers"] = [layers[0], pool, dense]
    model = os.path.join(tmp, "pool_dense.json")
    with open(model, "w") as f:
        json.dump(guide, f)
    # Measured from a small process: Linux carries a parent's high-water mark into its child through fork (or
    # vfork) and exec, so run()'s wait4 would count this script's own arrays too.
    helper = ("import os, sys\npid = os.fork()\nif pid == 0:\n    os.execv(sys.argv[2], sys.argv[2:])\n"
              "_, status, usage = os.wait4(pid, 0)\nopen(sys.argv[1], 'w').write('%d %d' % "
              "(os.waitstatus_to_exitcode(status), usage.ru_maxrss))\n")
    peaks = {}
    for name, extra in (("streaming", []), ("cache", ["--cache"])):
        report = os.path.join(tmp, name + ".peak")
        r = run([sys.executable, "-c", helper, report, TRAIN, "--data", train, "--model", model, "--image-size",
                 "%d,%d" % (size, size), "--epochs", "1", "--threads", "2", "-q"] + extra, cwd=tmp)
        code, kib = (int(v) for v in open(report).read().split())
        check(r.code == 0 and code == 0 and r.err == "",
              "%d PNGs of %dx%dx3 train at %dx%d (%s)" % (n, side, side, size, size, name), r)
        peaks[name] = kib / 1024.0
    if arrays_test.app_util.SANITIZED:
        print("skipped under ASan: peak memory %s (the decoded images: %.0f MiB)" % (peaks, decoded_mib))
        return
    check(peaks["cache"] > decoded_mib, "with --cache the %.0f MiB of decoded images are held: peak %.0f MiB"
          % (decoded_mib, peaks["cache"]))
    check(peaks["streaming"] < decoded_mib / 2, "without --cache the folder streams: peak %.0f MiB, under half the "
          "%.0f MiB it decodes to" % (peaks["streaming"], decoded_mib))


CASES = {f.__name__: f for f in (png_accuracy, jpeg_resize, cache_identical, hostile, class_names_kept,
                                 progress_terminal, streaming)}

if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="axon-folders-") as tmp:
        CASES[case](tmp)
