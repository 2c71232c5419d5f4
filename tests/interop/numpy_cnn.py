"""A Keras Sequential model's forward pass in NumPy, from its model JSON and
its weights by Keras name (HWIO conv kernels, (in, out) dense kernels): an
independent reader of what axon saves. Inference only (Dropout is the
identity); a softmax on the last layer is left out, as argmax and the loss
from logits do not need it."""
import gzip
import json
import os

import numpy as np


def load_test_set(folder, limit=0):
    """The t10k images (uint8 NHWC) and labels of an MNIST-format folder."""
    def read(stem):
        path = os.path.join(folder, stem)
        if os.path.exists(path):
            return open(path, "rb").read()
        return gzip.open(path + ".gz", "rb").read()
    images = read("t10k-images-idx3-ubyte")
    labels = read("t10k-labels-idx1-ubyte")
    n, rows, cols = np.frombuffer(images, ">u4", 3, 4)
    x = np.frombuffer(images, np.uint8, offset=16).reshape(int(n), int(rows), int(cols), 1)
    y = np.frombuffer(labels, np.uint8, offset=8).astype(np.int64)
    if limit:
        x, y = x[:limit], y[:limit]
    return x, y


def _pad(x, k, s, padding):
    """TensorFlow's padding: 'same' pads (total) so that out = ceil(in / s), the extra at the end."""
    if padding == "valid":
        return x
    h, w = x.shape[1], x.shape[2]
    ph = max((-(-h // s) - 1) * s + k - h, 0)
    pw = max((-(-w // s) - 1) * s + k - w, 0)
    return np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)),
                  constant_values=-np.inf if padding == "same-pool" else 0)


def _windows(x, k, s):
    n, h, w, c = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    st = x.strides
    return np.lib.stride_tricks.as_strided(x, (n, oh, ow, k, k, c), (st[0], st[1] * s, st[2] * s, st[1], st[2], st[3]))


def _pair(v):
    return v[0] if isinstance(v, list) else v


def logits(model_json, weights, images, chunk=1000):
    layers = json.loads(model_json)["config"]["layers"]
    out = []
    for start in range(0, len(images), chunk):
        h = images[start:start + chunk].astype(np.float32) / np.float32(255)
        for layer in layers:
            cls, c = layer["class_name"], layer["config"]
            if cls == "Conv2D":
                k, s = _pair(c["kernel_size"]), _pair(c["strides"])
                win = _windows(_pad(h, k, s, c["padding"]), k, s)
                kernel = weights[c["name"] + "/kernel"]
                cols = np.ascontiguousarray(win).reshape(-1, kernel.shape[0] * kernel.shape[1] * kernel.shape[2])
                h = (cols @ kernel.reshape(cols.shape[1], -1)).reshape(win.shape[:3] + (kernel.shape[3],))
                if c.get("use_bias", True):
                    h = h + weights[c["name"] + "/bias"]
                if c["activation"] == "relu":
                    h = np.maximum(h, 0)
            elif cls == "MaxPooling2D":
                k = _pair(c["pool_size"])
                s = _pair(c["strides"]) if c.get("strides") else k
                pad = "same-pool" if c["padding"] == "same" else "valid"
                h = _windows(_pad(h, k, s, pad), k, s).max(axis=(3, 4))
            elif cls == "Flatten":
                h = h.reshape(len(h), -1)
            elif cls == "Dense":
                h = h @ weights[c["name"] + "/kernel"] + weights[c["name"] + "/bias"]
                if c["activation"] == "relu":
                    h = np.maximum(h, 0)
            elif cls == "ReLU":
                h = np.maximum(h, 0)
            elif cls not in ("InputLayer", "Dropout"):
                raise ValueError("no NumPy form for " + cls)
            h = h.astype(np.float32)
        out.append(h)
    return np.concatenate(out)


def accuracy_of(logits_, labels):
    """Keras' accuracy: argmax (ties to the lower index) equals the label."""
    return float(np.mean(np.argmax(logits_, axis=1) == labels))


def accuracy(model_json, weights, images, labels):
    return accuracy_of(logits(model_json, weights, images), labels)
