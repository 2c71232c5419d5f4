#!/usr/bin/env python3
"""Writes the image files axon's decoders are tested on and what TensorFlow
makes of them: tf.io.decode_image(contents, channels=C,
expand_animations=False), the call Keras' image_dataset_from_directory
decodes with, for C in 1, 3, 4, and tf.image.resize(image, [H, W],
'bilinear') of two test images to several sizes. Needs TensorFlow and Pillow
from PyPI; nothing in axon's build or CI runs it. Usage:

    python3 tools/tf-goldens/image_goldens.py

It writes tests/datasets/images/* (small PNG, JPEG, BMP and GIF files made
with Pillow from a fixed seed) and tests/datasets/image_goldens.txt, one
line per case:
    decode FILE C ROWS COLS CHANNELS HEX      the decoded uint8 pixels (HWC)
    decode FILE C refused                     TensorFlow refuses C channels
    resize NAME ROWS COLS C HEX OUT_ROWS OUT_COLS HEX
        the input's uint8 pixels, then the float32 result (little-endian)
    classes NAME...                           Keras' class_names of tests/datasets/folder
    split SUBSET LABEL PATH                   image_dataset_from_directory(folder,
        validation_split=0.25, subset="both", seed=7): its file_paths (relative)
        and labels, in Keras' order
The folder tests/datasets/folder (class folders, nested folders, names in
mixed case, files that are not images, a hidden folder) is written too.
"""
import io
import os

import numpy as np
import tensorflow as tf
from PIL import Image

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "datasets")
IMAGES = os.path.join(ROOT, "images")
rng = np.random.default_rng(21)


def smooth(rows, cols, channels):
    """A picture with gradients and noise, so that JPEG has something to round."""
    y, x = np.mgrid[0:rows, 0:cols]
    base = np.stack([(x * 255 // max(cols - 1, 1)), (y * 255 // max(rows - 1, 1)), ((x + y) * 17) % 256], -1)
    noise = rng.integers(0, 40, (rows, cols, 3))
    img = np.clip(base + noise, 0, 255).astype(np.uint8)
    return img[:, :, :channels] if channels < 3 else img


def save(name, image, **kw):
    path = os.path.join(IMAGES, name)
    image.save(path, **kw)
    return name


def make_files():
    os.makedirs(IMAGES, exist_ok=True)
    files = []
    rgb = smooth(9, 13, 3)
    gray = smooth(9, 13, 1)[:, :, 0]
    alpha = rng.integers(0, 256, (9, 13), dtype=np.uint8)
    files.append(save("gray8.png", Image.fromarray(gray, "L")))
    files.append(save("gray1.png", Image.fromarray(gray > 128).convert("1")))
    files.append(save("gray16.png", Image.fromarray((gray.astype(np.uint16) * 257 + 3).astype(np.uint16))))
    files.append(save("rgb.png", Image.fromarray(rgb, "RGB")))
    files.append(save("rgba.png", Image.fromarray(np.dstack([rgb, alpha]), "RGBA")))
    files.append(save("gray_alpha.png", Image.fromarray(np.dstack([gray, alpha]), "LA")))
    pal = Image.fromarray(rgb, "RGB").quantize(16)
    pal.info["transparency"] = 3
    files.append(save("palette_trns.png", pal, transparency=3))
    files.append(save("color420.jpg", Image.fromarray(smooth(21, 30, 3), "RGB"), quality=90))
    files.append(save("color444.jpg", Image.fromarray(smooth(16, 16, 3), "RGB"), quality=95, subsampling=0))
    files.append(save("gray.jpg", Image.fromarray(smooth(12, 17, 1)[:, :, 0], "L"), quality=85))
    files.append(save("progressive.jpg", Image.fromarray(smooth(20, 24, 3), "RGB"), quality=80, progressive=True))
    files.append(save("rgb24.bmp", Image.fromarray(rgb, "RGB")))
    files.append(save("gray8.bmp", Image.fromarray(gray, "L")))
    files.append(save("palette.gif", Image.fromarray(rgb, "RGB").quantize(32)))
    tg = Image.fromarray(rgb, "RGB").quantize(32)
    files.append(save("transparent.gif", tg, transparency=5))
    return files


def decode_lines(files):
    lines = []
    for name in files:
        data = open(os.path.join(IMAGES, name), "rb").read()
        for c in (1, 3, 4):
            try:
                img = tf.io.decode_image(data, channels=c, expand_animations=False).numpy()
            except tf.errors.InvalidArgumentError:
                lines.append("decode %s %d refused" % (name, c))
                continue
            h, w, ch = img.shape
            lines.append("decode %s %d %d %d %d %s" % (name, c, h, w, ch, img.astype(np.uint8).tobytes().hex()))
    return lines


def resize_lines():
    lines = []
    cases = {"small": rng.integers(0, 256, (7, 5, 3), dtype=np.uint8), "digit": smooth(28, 28, 1)}
    sizes = [(28, 28), (11, 9), (3, 4), (14, 14), (32, 17), (5, 7), (1, 1), (56, 3)]
    for name, img in cases.items():
        for oh, ow in sizes:
            out = tf.image.resize(img, [oh, ow], method="bilinear").numpy().astype("<f4")
            h, w, c = img.shape
            lines.append("resize %s %d %d %d %s %d %d %s" % (name, h, w, c, img.tobytes().hex(), oh, ow, out.tobytes().hex()))
    return lines


def make_folder():
    root = os.path.join(ROOT, "folder")
    layout = {"dog": ["b.png", "a.PNG", "c.jpg", "notes.txt", "sub/z.png", "sub/deeper/y.Jpeg", "sub2/x.png"],
              "cat": ["1.png", "10.png", "2.png", "x.bmp", "readme.md"],
              "Fish": ["f.gif", "g.png", "h.png", "e.jpeg"],
              ".hidden": ["h.png"]}
    gray = smooth(9, 13, 1)[:, :, 0]
    for cls, names in layout.items():
        for n in names:
            path = os.path.join(root, cls, n)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            ext = n.lower().rsplit(".", 1)[-1]
            img = Image.fromarray(gray, "L")
            if ext == "png":
                img.save(path, format="PNG")
            elif ext in ("jpg", "jpeg"):
                img.save(path, format="JPEG", quality=90)
            elif ext == "bmp":
                img.convert("RGB").save(path, format="BMP")
            elif ext == "gif":
                img.convert("RGB").quantize(8).save(path, format="GIF")
            else:
                open(path, "w").write("not an image\n")
    import keras
    train, val = keras.utils.image_dataset_from_directory(root, validation_split=0.25, subset="both", seed=7,
                                                          image_size=(9, 13), color_mode="grayscale", batch_size=1)
    lines = ["classes " + " ".join(train.class_names)]
    for subset, ds in (("training", train), ("validation", val)):
        for path in ds.file_paths:
            rel = os.path.relpath(path, root)
            lines.append("split %s %d %s" % (subset, train.class_names.index(rel.split(os.sep)[0]), rel))
    return lines


if __name__ == "__main__":
    folder_lines = make_folder()
    files = make_files()
    with open(os.path.join(ROOT, "image_goldens.txt"), "w") as f:
        f.write("# tools/tf-goldens/image_goldens.py, TensorFlow %s\n" % tf.__version__)
        for line in decode_lines(files) + resize_lines() + folder_lines:
            f.write(line + "\n")
