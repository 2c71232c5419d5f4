#!/usr/bin/env python3
"""Writes tests/goldens/tf/: inputs and TensorFlow's outputs for every op of
axon's plugin ABI, and the guide's CNN trained by Keras for three Adam steps.
Needs TensorFlow from PyPI (pip install tensorflow-cpu); nothing in axon's
build or CI runs it. Usage:

    python3 tools/tf-goldens/generate.py [--out tests/goldens/tf] [--data DIR]
    python3 tools/tf-goldens/generate.py --only fused_layers.axg|fused_residual.axg|conv_accumulate.axg

The file format, the cases and the bounds are described in
tests/goldens/tf/README.md. Ops whose TensorFlow name matches axon's are run
through tf.raw_ops; the others are compositions of TensorFlow ops (or, for
Keras' accuracy, Keras' own metric) as the README lists.
"""
import argparse
import gzip
import math
import os
import struct
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

U = 2.0 ** -24
DTYPES = {np.dtype(np.float32): 0, np.dtype(np.int32): 1, np.dtype(np.uint8): 2, np.dtype(np.int64): 3}
rng = np.random.default_rng(20261201)

# The largest error of TensorFlow's float32 result seen so far, in units of
# u * S (S the sum of magnitudes), per op: README.md quotes it.
tf_error = {}


# ---------------------------------------------------------------- file writing

class Golden:
    def __init__(self):
        self.cases = []

    def add(self, name, op, attrs, tensors):
        """tensors: list of (name, ndarray); names are in, out or bound, with an
        optional ':label'."""
        self.cases.append((name, op, attrs, tensors))

    def write(self, path):
        out = bytearray(b"AXONGLD1")
        out += struct.pack("<I", len(self.cases))
        for name, op, attrs, tensors in self.cases:
            for s in (name, op, " ".join(f"{k}={v}" for k, v in attrs.items())):
                b = s.encode()
                out += struct.pack("<I", len(b)) + b
            out += struct.pack("<I", len(tensors))
            for tname, a in tensors:
                a = np.asarray(a, order="C")  # a 0-d array stays 0-d
                b = tname.encode()
                out += struct.pack("<I", len(b)) + b
                out += struct.pack("<II", DTYPES[a.dtype], a.ndim)
                out += struct.pack(f"<{a.ndim}q", *a.shape)
                out += a.astype(a.dtype.newbyteorder("<")).tobytes()
        with open(path, "wb") as f:
            f.write(out)
        print(f"{path}: {len(self.cases)} cases, {len(out)} bytes")


def f32(a):
    return np.asarray(a, dtype=np.float32)


def uniform(shape, lo=-1.0, hi=1.0):
    return f32(rng.uniform(lo, hi, size=shape))


def note_error(op, got32, exact64, abs_sum):
    """Records TF's float32 error against float64, in units of u * S (the bound B for batch normalization)."""
    err = np.abs(np.float64(got32) - exact64) - U * np.abs(exact64)
    ratio = float(np.max(err / (U * np.maximum(abs_sum, 1e-300)))) if err.size else 0.0
    tf_error[op] = max(tf_error.get(op, 0.0), ratio)


def run64(fn, *arrays):
    """fn in float64, or None where TensorFlow's CPU kernel has no float64
    version (Conv2DBackpropInput with dilation; the depthwise ops with
    dilation or unequal strides)."""
    try:
        return fn(*[np.float64(a) for a in arrays]).numpy()
    except (tf.errors.InvalidArgumentError, tf.errors.UnimplementedError, tf.errors.NotFoundError):
        return None


def bound_of(fn, *arrays):
    """fn on |arrays|, the S of a bound: float64, else float32 (a bound needs
    no more than a few correct digits)."""
    s = run64(fn, *[np.abs(a) for a in arrays])
    return s if s is not None else np.float64(fn(*[np.abs(a) for a in arrays]).numpy())


# ---------------------------------------------------------------- convolutions

def conv_out(n, k, s, d, pad):
    eff = (k - 1) * d + 1
    return -(-n // s) if pad == "SAME" else (n - eff) // s + 1


def conv_cases(g, gf):
    # (name, x shape, filter shape, strides (h, w), dilations (h, w), padding, x >= 0)
    cases = [
        ("valid_3x3", (2, 7, 6, 3), (3, 3, 3, 4), (1, 1), (1, 1), "VALID", False),
        ("same_2x2_pad_after", (1, 2, 2, 1), (2, 2, 1, 1), (1, 1), (1, 1), "SAME", False),
        ("same_2x2_asym", (1, 6, 5, 2), (2, 2, 2, 3), (1, 1), (1, 1), "SAME", False),
        ("same_s2_asym", (2, 7, 8, 3), (3, 3, 3, 4), (2, 2), (1, 1), "SAME", False),
        ("same_s2_even_kernel", (1, 9, 10, 2), (4, 4, 2, 3), (2, 2), (1, 1), "SAME", False),
        ("same_kernel_over_input", (1, 3, 3, 1), (4, 4, 1, 2), (1, 1), (1, 1), "SAME", False),
        ("same_strides_2_1_kernel_3x2", (2, 9, 8, 3), (3, 2, 3, 4), (2, 1), (1, 1), "SAME", False),
        ("valid_strides_1_3_kernel_2x3", (1, 8, 11, 2), (2, 3, 2, 3), (1, 3), (1, 1), "VALID", False),
        ("same_dilation_2", (1, 9, 9, 2), (3, 3, 2, 3), (1, 1), (2, 2), "SAME", False),
        ("valid_dilation_2_1", (2, 9, 7, 2), (3, 2, 2, 3), (1, 1), (2, 1), "VALID", False),
        ("same_stride_2_dilation_2", (1, 10, 9, 2), (3, 3, 2, 2), (2, 2), (2, 2), "SAME", False),
        ("pointwise", (3, 5, 4, 7), (1, 1, 7, 5), (1, 1), (1, 1), "VALID", False),
        ("batch1_cnn_conv2_k288", (1, 13, 13, 32), (3, 3, 32, 16), (1, 1), (1, 1), "VALID", True),
        ("batch64_valid", (64, 6, 6, 3), (3, 3, 3, 4), (1, 1), (1, 1), "VALID", True),
        ("batch64_same_s2", (64, 5, 6, 2), (3, 3, 2, 3), (2, 2), (1, 1), "SAME", False),
    ]
    for name, xs, ws, st, dil, pad, nonneg in cases:
        x = uniform(xs, 0.0 if nonneg else -1.0, 1.0)
        w = uniform(ws)
        if name == "same_2x2_pad_after":  # taps that tell where the padding went
            x = f32([1, 10, 100, 1000]).reshape(xs)
            w = f32([1, 2, 3, 4]).reshape(ws)
        ys = (xs[0], conv_out(xs[1], ws[0], st[0], dil[0], pad), conv_out(xs[2], ws[1], st[1], dil[1], pad), ws[3])
        dy = uniform(ys)
        attrs = {"stride_h": st[0], "stride_w": st[1], "dilation_h": dil[0], "dilation_w": dil[1], "padding": pad}
        kw = dict(strides=[1, st[0], st[1], 1], padding=pad, dilations=[1, dil[0], dil[1], 1])

        def fwd(a, b):
            return tf.raw_ops.Conv2D(input=a, filter=b, **kw)

        def bwd_in(d, b):
            return tf.raw_ops.Conv2DBackpropInput(input_sizes=list(xs), filter=b, out_backprop=d, **kw)

        def bwd_f(a, d):
            return tf.raw_ops.Conv2DBackpropFilter(input=a, filter_sizes=list(ws), out_backprop=d, **kw)

        for op, fn, ins in (("Conv2D", fwd, (x, w)), ("Conv2DBackpropInput", bwd_in, (dy, w)),
                            ("Conv2DBackpropFilter", bwd_f, (x, dy))):
            got = fn(*ins).numpy()
            bound = bound_of(fn, *ins)
            exact = run64(fn, *ins)
            if exact is not None:
                note_error(op, got, exact, bound)
            assert got.dtype == np.float32
            g.add(f"{op}/{name}", op, attrs, [("in", i) for i in ins] + [("out", got), ("bound", f32(bound))])

    # The fused forward: Conv2D, BiasAdd, then relu or nothing (TensorFlow's
    # _FusedConv2D is not in tf.raw_ops; these are the ops it fuses).
    for name, xs, ws, st, pad, act in [("valid_relu", (2, 8, 7, 3), (3, 3, 3, 5), 1, "VALID", "relu"),
                                       ("same_s2_none", (1, 9, 8, 2), (3, 3, 2, 4), 2, "SAME", "none"),
                                       ("batch64_relu", (64, 5, 5, 4), (3, 3, 4, 6), 1, "VALID", "relu")]:
        x, w, b = uniform(xs), uniform(ws), uniform((ws[3],), -0.5, 0.5)
        kw = dict(strides=[1, st, st, 1], padding=pad)

        def fused(a, f, bias):
            z = tf.raw_ops.BiasAdd(value=tf.raw_ops.Conv2D(input=a, filter=f, **kw), bias=bias)
            return tf.raw_ops.Relu(features=z) if act == "relu" else z

        got = fused(x, w, b).numpy()
        bound = run64(lambda a, f, bias: tf.raw_ops.BiasAdd(value=tf.raw_ops.Conv2D(input=a, filter=f, **kw), bias=bias),
                      np.abs(x), np.abs(w), np.abs(b))
        attrs = {"stride_h": st, "stride_w": st, "dilation_h": 1, "dilation_w": 1, "padding": pad, "activation": act}
        gf.add(f"_FusedConv2D/{name}", "_FusedConv2D", attrs,
               [("in", x), ("in", w), ("in", b), ("out", got), ("bound", f32(bound))])


# ---------------------------------------------------------------- pooling

def pool_cases(g):
    # (name, x shape, window (h, w), strides (h, w), padding, values)
    cases = [
        ("2x2_s2_valid", (2, 6, 6, 3), (2, 2), (2, 2), "VALID", "random"),
        ("2x2_s2_valid_odd", (1, 5, 5, 2), (2, 2), (2, 2), "VALID", "random"),
        ("3x3_s2_same_asym", (1, 7, 9, 3), (3, 3), (2, 2), "SAME", "random"),
        ("3x3_s1_same_overlap", (2, 6, 5, 2), (3, 3), (1, 1), "SAME", "random"),
        ("2x2_s2_valid_ties", (2, 6, 6, 4), (2, 2), (2, 2), "VALID", "ties"),
        ("3x3_s1_same_ties", (1, 6, 6, 3), (3, 3), (1, 1), "SAME", "ties"),
        ("2x3_s1x2_valid_ties", (2, 7, 9, 2), (2, 3), (1, 2), "VALID", "ties"),
        ("2x2_s2_same_negative", (1, 5, 5, 2), (2, 2), (2, 2), "SAME", "negative"),
        ("batch64_2x2_s2", (64, 4, 4, 2), (2, 2), (2, 2), "VALID", "random"),
    ]
    for name, xs, win, st, pad, values in cases:
        if values == "ties":  # small integers: many equal maxima in a window
            x = f32(rng.integers(-2, 3, size=xs))
        elif values == "negative":  # the padding must never win
            x = uniform(xs, -2.0, -1.0)
        else:
            x = uniform(xs)
        kw = dict(ksize=[1, win[0], win[1], 1], strides=[1, st[0], st[1], 1], padding=pad)
        y = tf.raw_ops.MaxPool(input=x, **kw).numpy()
        attrs = {"window_h": win[0], "window_w": win[1], "stride_h": st[0], "stride_w": st[1], "padding": pad}
        g.add(f"MaxPool/{name}", "MaxPool", attrs, [("in", x), ("out", y)])
        dy = uniform(y.shape)
        dx = tf.raw_ops.MaxPoolGrad(orig_input=x, orig_output=y, grad=dy, **kw).numpy()
        tensors = [("in", x), ("in", y), ("in", dy), ("out", dx)]
        if win[0] > st[0] or win[1] > st[1]:  # overlapping windows add at a shared maximum
            bound = tf.raw_ops.MaxPoolGrad(orig_input=np.float64(x), orig_output=np.float64(y), grad=np.abs(np.float64(dy)),
                                           **kw).numpy()
            tensors.append(("bound", f32(bound)))
        g.add(f"MaxPoolGrad/{name}", "MaxPoolGrad", attrs, tensors)


def pool_windows(z, win, st, pad):
    """Yields (n, i, j, c, [(tap, value), ...]) for every pooled element, the
    window's real (not padded) taps in row-major order, counted from the
    window's unclipped top-left corner (TensorFlow's SAME: smaller half of
    the padding before)."""
    n, h, w, c = z.shape
    oh, ow = conv_out(h, win, st, 1, pad), conv_out(w, win, st, 1, pad)
    ph = max((oh - 1) * st + win - h, 0) // 2 if pad == "SAME" else 0
    pw = max((ow - 1) * st + win - w, 0) // 2 if pad == "SAME" else 0
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                for ch in range(c):
                    taps = [(th * win + tw, z[b, i * st - ph + th, j * st - pw + tw, ch])
                            for th in range(win) for tw in range(win)
                            if 0 <= i * st - ph + th < h and 0 <= j * st - pw + tw < w]
                    yield b, i, j, ch, taps


def first_max_taps(z, win, st, pad, relu):
    """axon's argmax of _FusedConv2DMaxPool (plugin_abi.h): the tap of each
    window's first maximum; 255 where relu left the maximum <= 0."""
    oh, ow = conv_out(z.shape[1], win, st, 1, pad), conv_out(z.shape[2], win, st, 1, pad)
    out = np.zeros((z.shape[0], oh, ow, z.shape[3]), np.uint8)
    for b, i, j, ch, taps in pool_windows(z, win, st, pad):
        tap, best = taps[0]
        for t, v in taps[1:]:
            if v > best:
                tap, best = t, v
        out[b, i, j, ch] = 255 if relu and best <= 0 else tap
    return out


def clear_maxima(z, win, st, pad, relu):
    """True when every window's largest value beats the next by more than
    1e-3 (or, under relu, is 0): an argmax no float rounding can move."""
    for _, _, _, _, taps in pool_windows(z, win, st, pad):
        vals = sorted((v for _, v in taps), reverse=True)
        if len(vals) > 1 and not (relu and vals[0] <= 0) and vals[0] - vals[1] <= 1e-3:
            return False
    return True


def conv_pool_cases(gf):
    # axon's own op pair: a conv layer (bias, relu) and the max pool after it.
    # Values from TensorFlow's Conv2D, BiasAdd, Relu, MaxPool and, backward,
    # MaxPoolGrad, ReluGrad, BiasAddGrad, Conv2DBackpropFilter/Input.
    for name, xs, ws, cst, cpad, win, pst, ppad, act in [
            ("cnn_like_relu", (2, 8, 8, 3), (3, 3, 3, 5), 1, "VALID", 2, 2, "VALID", "relu"),
            ("same_pool_3_s2_none", (1, 9, 7, 2), (3, 3, 2, 4), 1, "SAME", 3, 2, "SAME", "none"),
            ("conv_s2_relu", (3, 10, 9, 2), (3, 3, 2, 3), 2, "SAME", 2, 2, "VALID", "relu")]:
        for attempt in range(100):  # inputs without near-ties in any window (the argmax is compared exactly)
            x, w, b = uniform(xs), uniform(ws), uniform((ws[3],), -0.3, 0.3)
            ckw = dict(strides=[1, cst, cst, 1], padding=cpad)
            pkw = dict(ksize=[1, win, win, 1], strides=[1, pst, pst, 1], padding=ppad)
            pre = tf.raw_ops.BiasAdd(value=tf.raw_ops.Conv2D(input=x, filter=w, **ckw), bias=b)
            z = tf.raw_ops.Relu(features=pre) if act == "relu" else pre
            z = z.numpy()
            if clear_maxima(z, win, pst, ppad, act == "relu") and np.min(np.abs(pre.numpy())) > 1e-4:
                break
        else:
            sys.exit(f"generate.py: no inputs without near-ties found for {name}")
        y = tf.raw_ops.MaxPool(input=z, **pkw).numpy()
        taps = first_max_taps(z, win, pst, ppad, act == "relu")
        zbound = run64(lambda a, f, bias: tf.raw_ops.BiasAdd(value=tf.raw_ops.Conv2D(input=a, filter=f, **ckw), bias=bias),
                       np.abs(x), np.abs(w), np.abs(b))
        ybound = tf.raw_ops.MaxPool(input=zbound, **pkw).numpy()
        attrs = {"stride_h": cst, "stride_w": cst, "dilation_h": 1, "dilation_w": 1, "padding": cpad, "activation": act,
                 "pool_window_h": win, "pool_window_w": win, "pool_stride_h": pst, "pool_stride_w": pst,
                 "pool_padding": ppad}
        gf.add(f"_FusedConv2DMaxPool/{name}", "_FusedConv2DMaxPool", attrs,
               [("in", x), ("in", w), ("in", b), ("out", y), ("bound", f32(ybound)), ("out", taps)])

        dy = uniform(y.shape)
        dz = tf.raw_ops.MaxPoolGrad(orig_input=z, orig_output=y, grad=dy, **pkw)
        dz_abs = tf.raw_ops.MaxPoolGrad(orig_input=np.float64(z), orig_output=np.float64(y), grad=np.abs(np.float64(dy)),
                                        **pkw)
        if act == "relu":
            dz = tf.raw_ops.ReluGrad(gradients=dz, features=z)
            dz_abs = tf.raw_ops.ReluGrad(gradients=dz_abs, features=np.float64(z))
        dz, dz_abs = dz.numpy(), dz_abs.numpy()
        dw = tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=list(ws), out_backprop=dz, **ckw).numpy()
        db = tf.raw_ops.BiasAddGrad(out_backprop=dz).numpy()
        dx = tf.raw_ops.Conv2DBackpropInput(input_sizes=list(xs), filter=w, out_backprop=dz, **ckw).numpy()
        dw_b = tf.raw_ops.Conv2DBackpropFilter(input=np.abs(np.float64(x)), filter_sizes=list(ws), out_backprop=dz_abs,
                                               **ckw).numpy()
        db_b = tf.raw_ops.BiasAddGrad(out_backprop=dz_abs).numpy()
        dx_b = tf.raw_ops.Conv2DBackpropInput(input_sizes=list(xs), filter=np.abs(np.float64(w)), out_backprop=dz_abs,
                                              **ckw).numpy()
        gf.add(f"_FusedConv2DMaxPoolGrad/{name}", "_FusedConv2DMaxPoolGrad", attrs,
               [("in", x), ("in", w), ("in", dy), ("in", taps), ("out", dw), ("bound", f32(dw_b)), ("out", db),
                ("bound", f32(db_b)), ("out", dx), ("bound", f32(dx_b))])


# ---------------------------------------------------------------- dense, bias, relu

def dense_cases(g, gf):
    for m, k, n in [(3, 5, 4), (64, 96, 10), (1, 7, 1), (17, 33, 9), (5, 1, 6)]:
        for ta in (0, 1):
            for tb in (0, 1):
                a = uniform((k, m) if ta else (m, k))
                b = uniform((n, k) if tb else (k, n))

                def mm(p, q):
                    return tf.raw_ops.MatMul(a=p, b=q, transpose_a=bool(ta), transpose_b=bool(tb))

                got = mm(a, b).numpy()
                bound = bound_of(mm, a, b)
                note_error("MatMul", got, run64(mm, a, b), bound)
                g.add(f"MatMul/{m}x{k}x{n}_t{ta}{tb}", "MatMul", {"transpose_a": ta, "transpose_b": tb},
                      [("in", a), ("in", b), ("out", got), ("bound", f32(bound))])
    # MatMul, BiasAdd, then relu or nothing (TensorFlow's _FusedMatMul fuses these).
    for m, k, n, ta, tb, act in [(64, 96, 10, 0, 0, "relu"), (9, 13, 7, 1, 0, "none"), (5, 8, 6, 0, 1, "relu")]:
        a, b = uniform((k, m) if ta else (m, k)), uniform((n, k) if tb else (k, n))
        bias = uniform((n,), -0.5, 0.5)

        def fmm(p, q, r):
            z = tf.raw_ops.BiasAdd(value=tf.raw_ops.MatMul(a=p, b=q, transpose_a=bool(ta), transpose_b=bool(tb)), bias=r)
            return tf.raw_ops.Relu(features=z) if act == "relu" else z

        got = fmm(a, b, bias).numpy()
        bound = run64(lambda p, q, r: tf.raw_ops.BiasAdd(value=tf.raw_ops.MatMul(a=p, b=q, transpose_a=bool(ta),
                                                                                  transpose_b=bool(tb)), bias=r),
                      np.abs(a), np.abs(b), np.abs(bias))
        gf.add(f"_FusedMatMul/{m}x{k}x{n}_t{ta}{tb}_{act}", "_FusedMatMul",
               {"transpose_a": ta, "transpose_b": tb, "activation": act},
               [("in", a), ("in", b), ("in", bias), ("out", got), ("bound", f32(bound))])

    for shape in [(4, 3, 5, 6), (64, 10), (2, 1)]:
        x, b = uniform(shape), uniform((shape[-1],))
        g.add(f"BiasAdd/{'x'.join(map(str, shape))}", "BiasAdd", {},
              [("in", x), ("in", b), ("out", tf.raw_ops.BiasAdd(value=x, bias=b).numpy())])
    for shape in [(4, 3, 5, 6), (64, 10), (16, 5, 5, 64)]:
        dy = uniform(shape)
        got = tf.raw_ops.BiasAddGrad(out_backprop=dy).numpy()
        bound = tf.raw_ops.BiasAddGrad(out_backprop=np.abs(np.float64(dy))).numpy()
        g.add(f"BiasAddGrad/{'x'.join(map(str, shape))}", "BiasAddGrad", {}, [("in", dy), ("out", got), ("bound", f32(bound))])

    for shape in [(3, 4, 5), (16, 13, 13, 2)]:
        x = uniform(shape)
        x.ravel()[::7] = 0.0  # relu's kink: relu(0) = 0, no gradient through it
        y = tf.raw_ops.Relu(features=x).numpy()
        g.add(f"Relu/{'x'.join(map(str, shape))}", "Relu", {}, [("in", x), ("out", y)])
        dy = uniform(shape)
        g.add(f"ReluGrad/{'x'.join(map(str, shape))}", "ReluGrad", {},
              [("in", dy), ("in", y), ("out", tf.raw_ops.ReluGrad(gradients=dy, features=y).numpy())])
        # dx = ReluGrad(dy, y), dbias = BiasAddGrad(dx), in one op.
        dx = tf.raw_ops.ReluGrad(gradients=dy, features=y).numpy()
        db = tf.raw_ops.BiasAddGrad(out_backprop=dx).numpy()
        db_b = tf.raw_ops.BiasAddGrad(out_backprop=np.abs(np.float64(dx))).numpy()
        gf.add(f"_FusedReluGradBiasAddGrad/{'x'.join(map(str, shape))}", "_FusedReluGradBiasAddGrad", {},
               [("in", dy), ("in", y), ("out", dx), ("out", db), ("bound", f32(db_b))])


# ---------------------------------------------------------------- loss, metric, optimizer

def loss_cases(g):
    for name, n, c, big in [("64x10", 64, 10, False), ("1x1", 1, 1, False), ("5x3_large_logits", 5, 3, True),
                            ("7x1000", 7, 1000, False)]:
        logits = uniform((n, c), -5.0, 5.0)
        if big:
            logits[0, 0], logits[1, 1], logits[2, 2] = 80.0, -80.0, 88.0
        labels = rng.integers(0, c, size=n).astype(np.int32)
        loss, back = (t.numpy() for t in tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=logits, labels=labels))
        # The magnitudes involved, for an 8 u bound (tests/common/tolerance.hpp):
        # the loss is log(sum exp(l - max)) + max - l[label], the softmax a
        # quotient of exponentials summed over C terms.
        l64 = np.float64(logits)
        mx = l64.max(axis=1, keepdims=True)
        p = np.exp(l64 - mx) / np.exp(l64 - mx).sum(axis=1, keepdims=True)
        terms = np.log2(c) + 2
        loss_scale = terms + np.abs(mx[:, 0]) + np.abs(l64[np.arange(n), labels])
        back_scale = terms * p + (np.arange(c)[None, :] == labels[:, None])
        g.add(f"SparseSoftmaxCrossEntropyWithLogits/{name}", "SparseSoftmaxCrossEntropyWithLogits", {},
              [("in", logits), ("in", labels), ("out", loss), ("bound", f32(loss_scale)), ("out", back),
               ("bound", f32(back_scale))])


def in_top_k_cases(g):
    rows = [
        ([1, 5, 5], 2),  # a tie for the largest, label on the higher index: in the top 1
        ([1, 5, 5], 1),  # ... on the lower
        ([1, 5, 4], 2),  # below the largest
        ([7, 0, 0], 0),  # a clear largest
        ([0, np.nan, 5], 2),  # a NaN elsewhere in the row
        ([0, np.inf, -1], 0),
        ([np.inf, 0, 0], 0),  # the label's own logit infinite
        ([2, -np.inf, 1], 0),  # minus infinity elsewhere
        ([1, 2, 3], 3),  # label out of range
        ([1, 2, 3], -1),
        ([3, 3, 3], 1),  # all tied
    ]
    logits = f32([r[0] for r in rows])
    labels = np.array([r[1] for r in rows], np.int32)
    top = tf.raw_ops.InTopK(predictions=logits, targets=labels, k=1).numpy().astype(np.float32)
    g.add("InTopK/ties_and_non_finite", "InTopK", {}, [("in", logits), ("in", labels), ("out", top)])
    for n, c in [(64, 10), (9, 1000)]:
        l = f32(rng.integers(-3, 4, size=(n, c)))  # small integers: ties are common
        lab = rng.integers(0, c, size=n).astype(np.int32)
        top = tf.raw_ops.InTopK(predictions=l, targets=lab, k=1).numpy().astype(np.float32)
        g.add(f"InTopK/integers_{n}x{c}", "InTopK", {}, [("in", l), ("in", lab), ("out", top)])
    # Keras' accuracy (argmax == label, a tie to the lower index), Keras' own
    # metric function; rows with NaN are left out (plugin_abi.h).
    finite = np.all(np.isfinite(logits), axis=1)
    for name, l, lab in [("ties", logits[finite], labels[finite]),
                         ("integers_64x10", f32(rng.integers(-3, 4, size=(64, 10))),
                          rng.integers(0, 10, size=64).astype(np.int32))]:
        acc = np.asarray(keras.metrics.sparse_categorical_accuracy(lab.astype(np.int64), l)).astype(np.float32)
        g.add(f"_SparseCategoricalAccuracy/{name}", "_SparseCategoricalAccuracy", {},
              [("in", l), ("in", lab), ("out", acc.reshape(-1))])


def adam_cases(g):
    # ResourceApplyAdam is ApplyAdam on a resource variable (the same kernel;
    # ApplyAdam itself needs TF1 reference variables).
    n = 2000
    for name, step, lr, eps, fresh in [("step1", 1, 1e-3, 1e-7, True), ("step7", 7, 1e-3, 1e-7, False),
                                       ("step7_eps_1e-4_lr_0.01", 7, 1e-2, 1e-4, False)]:
        b1, b2 = np.float32(0.9), np.float32(0.999)
        var = uniform((n,))
        # Gradients from 1e-6 to 1 and some zeros: where v is near epsilon the
        # update depends on where epsilon goes.
        grad = f32(rng.choice([-1, 1], size=n) * 10.0 ** rng.uniform(-6, 0, size=n))
        grad[::50] = 0.0
        m = np.zeros(n, np.float32) if fresh else f32(grad * rng.uniform(0.0, 1.0, size=n))
        v = np.zeros(n, np.float32) if fresh else f32(grad * grad * rng.uniform(0.5, 2.0, size=n))
        tv, tm, tvv = tf.Variable(var), tf.Variable(m), tf.Variable(v)
        b1p, b2p = np.float32(np.float64(b1) ** step), np.float32(np.float64(b2) ** step)
        tf.raw_ops.ResourceApplyAdam(var=tv.handle, m=tm.handle, v=tvv.handle, beta1_power=b1p, beta2_power=b2p,
                                     lr=np.float32(lr), beta1=b1, beta2=b2, epsilon=np.float32(eps), grad=grad)
        # Bounds: 8 u times the magnitudes each result is made of; for var the
        # update is scaled by 32 (its bias correction and division add a few
        # roundings, and TensorFlow takes b^t as float32 inputs).
        m1 = np.float64(b1) * m + (1 - np.float64(b1)) * grad
        v1 = np.float64(b2) * v + (1 - np.float64(b2)) * np.float64(grad) ** 2
        lr_t = lr * np.sqrt(1 - np.float64(b2) ** step) / (1 - np.float64(b1) ** step)
        update = lr_t * m1 / (np.sqrt(v1) + eps)
        m_scale = np.abs(np.float64(b1) * m) + np.abs((1 - np.float64(b1)) * grad)
        v_scale = np.abs(np.float64(b2) * v) + (1 - np.float64(b2)) * np.float64(grad) ** 2
        var_scale = np.abs(np.float64(var)) + 32 * np.abs(update)
        attrs = {"learning_rate": repr(float(np.float32(lr))), "beta_1": repr(float(b1)), "beta_2": repr(float(b2)),
                 "epsilon": repr(float(np.float32(eps))), "step": step}
        g.add(f"ApplyAdam/{name}", "ApplyAdam", attrs,
              [("in", var), ("in", m), ("in", v), ("in", grad), ("out", tv.numpy()), ("bound", f32(var_scale)),
               ("out", tm.numpy()), ("bound", f32(m_scale)), ("out", tvv.numpy()), ("bound", f32(v_scale))])


def misc_cases(g):
    for shape in [(1000,), (64, 26, 3), (0,)]:
        x = uniform(shape)
        got = tf.raw_ops.Sum(input=x, axis=list(range(len(shape)))).numpy().reshape(1)
        bound = np.array([np.abs(np.float64(x)).sum()])
        g.add(f"Sum/{'x'.join(map(str, shape))}", "Sum", {}, [("in", x), ("out", got), ("bound", f32(bound))])
    g.add("Fill/3x4", "Fill", {"value": "2.5"},
          [("out", tf.raw_ops.Fill(dims=[3, 4], value=np.float32(2.5)).numpy())])
    # Scale is Mul by a scalar in TensorFlow.
    x = uniform((5, 7))
    g.add("Scale/5x7", "Scale", {"alpha": repr(float(np.float32(-0.37)))},
          [("in", x), ("out", tf.raw_ops.Mul(x=x, y=np.float32(-0.37)).numpy())])
    for count in (1, 3, 5):
        xs = [uniform((4, 9)) for _ in range(count)]
        got = tf.raw_ops.AddN(inputs=xs).numpy()
        bound = tf.raw_ops.AddN(inputs=[np.abs(np.float64(a)) for a in xs]).numpy()
        g.add(f"AddN/{count}_inputs", "AddN", {}, [("in", a) for a in xs] + [("out", got), ("bound", f32(bound))])
    # NormalizeImage is Cast then RealDiv by 255 (the guide's x / 255.0).
    img = np.arange(256, dtype=np.uint8).reshape(4, 64)
    norm = tf.raw_ops.RealDiv(x=tf.raw_ops.Cast(x=img, DstT=tf.float32), y=np.float32(255.0)).numpy()
    g.add("NormalizeImage/all_bytes", "NormalizeImage", {}, [("in", img), ("out", norm)])
    for dt in (np.float32, np.int32, np.uint8, np.int64):
        x = rng.integers(0, 100, size=(3, 5)).astype(dt)
        g.add(f"Identity/{np.dtype(dt).name}", "Identity", {}, [("in", x), ("out", tf.raw_ops.Identity(input=x).numpy())])


# ---------------------------------------------------------------- layers (ABI 1.4): layers.axg
# Their own generator, so that ops.axg, fused_ops.axg and cnn_adam.axg keep
# their inputs.
lrng = np.random.default_rng(20261202)


def luniform(shape, lo=-1.0, hi=1.0):
    return f32(lrng.uniform(lo, hi, size=shape))


def avg_pool_cases(g):
    # (name, x shape, window (h, w), strides (h, w), padding)
    cases = [
        ("2x2_s2_valid", (2, 6, 6, 3), (2, 2), (2, 2), "VALID"),
        ("3x3_s2_same_asym", (1, 7, 9, 3), (3, 3), (2, 2), "SAME"),
        ("3x3_s1_same_overlap", (2, 6, 5, 2), (3, 3), (1, 1), "SAME"),
        ("2x3_s1x2_valid", (2, 7, 9, 2), (2, 3), (1, 2), "VALID"),
        ("window_over_input_same", (1, 3, 3, 2), (4, 4), (1, 1), "SAME"),
        ("global_7x7", (8, 7, 7, 64), (7, 7), (7, 7), "VALID"),
        ("global_28x28", (2, 28, 28, 16), (28, 28), (28, 28), "VALID"),
    ]
    for name, xs, win, st, pad in cases:
        x = luniform(xs)
        kw = dict(ksize=[1, win[0], win[1], 1], strides=[1, st[0], st[1], 1], padding=pad)
        attrs = {"window_h": win[0], "window_w": win[1], "stride_h": st[0], "stride_w": st[1], "padding": pad}

        def fwd(a):
            return tf.raw_ops.AvgPool(value=a, **kw)

        def bwd(d):
            return tf.raw_ops.AvgPoolGrad(orig_input_shape=list(xs), grad=d, **kw)

        y = fwd(x).numpy()
        dy = luniform(y.shape)
        for op, fn, arg, out in (("AvgPool", fwd, x, y), ("AvgPoolGrad", bwd, dy, bwd(dy).numpy())):
            bound = run64(fn, np.abs(arg))
            note_error(op, out, run64(fn, arg), bound)
            g.add(f"{op}/{name}", op, attrs, [("in", arg), ("out", out), ("bound", f32(bound))])


def batch_norm_reference(x, scale, offset, mean, var, eps, training, factor):
    """FusedBatchNormV3 in float64 over the last dimension, and the bounds B
    of its outputs (sdk/include/axon/tolerance_batch_norm.hpp states them):
    [y, batch_mean, batch_variance, reserve_space_1, reserve_space_2], then
    their B."""
    c = x.shape[-1]
    x2 = np.float64(x).reshape(-1, c)
    n = x2.shape[0]
    a = np.abs(x2).mean(axis=0)
    if training:
        m = x2.mean(axis=0)
        v = ((x2 - m) ** 2).mean(axis=0)
    else:
        m, v = np.float64(mean), np.float64(var)
    r = 1.0 / np.sqrt(v + np.float64(np.float32(eps)))
    s, o = np.float64(scale), np.float64(offset)
    y = (x2 - m) * r * s + o
    t = np.sqrt(n) if training else 0.0  # the statistics' rounding grows with n
    y_b = np.abs(s) * r * ((1 + t) * np.abs(x2 - m) + t * a) + np.abs(o)
    if not training:
        return [y.reshape(x.shape), m, v, m, v], [y_b.reshape(x.shape), 0 * m, 0 * v, 0 * m, 0 * v]
    f = np.float64(np.float32(factor))
    unbias = n / max(n - 1, 1)
    big_v = v + a * a * 2.0 ** -20  # the mean's rounding enters the variance squared
    bm = m if f == 1 else (1 - f) * np.float64(mean) + f * m
    bv = v * unbias if f == 1 else (1 - f) * np.float64(var) + f * unbias * v
    bm_b = (1 - f) * np.abs(np.float64(mean)) + f * t * a
    bv_b = (1 - f) * np.abs(np.float64(var)) + f * unbias * t * big_v
    return [y.reshape(x.shape), bm, bv, m, v], [y_b.reshape(x.shape), bm_b, bv_b, t * a, t * big_v]


def batch_norm_grad_reference(dy, x, scale, mean, var, eps, training):
    """FusedBatchNormGradV3 in float64 and the bounds B of dx, scale_backprop
    and offset_backprop."""
    c = x.shape[-1]
    d2, x2 = np.float64(dy).reshape(-1, c), np.float64(x).reshape(-1, c)
    r = 1.0 / np.sqrt(np.float64(var) + np.float64(np.float32(eps)))
    xhat = (x2 - np.float64(mean)) * r
    s = np.float64(scale)
    if training:
        dx = s * r * (d2 - d2.mean(axis=0) - xhat * (d2 * xhat).mean(axis=0))
        dx_b = np.abs(s) * r * (np.abs(d2) + np.abs(d2).mean(axis=0) + np.abs(xhat) * np.abs(d2 * xhat).mean(axis=0))
    else:
        dx = d2 * s * r
        dx_b = np.abs(dx)
    return ([dx.reshape(x.shape), (d2 * xhat).sum(axis=0), d2.sum(axis=0)],
            [dx_b.reshape(x.shape), np.abs(d2 * xhat).sum(axis=0), np.abs(d2).sum(axis=0)])


def batch_norm_cases(g):
    # (name, x shape, epsilon, is_training, exponential_avg_factor, x values, outputs written)
    cases = [
        ("train_4d", (8, 5, 5, 3), 1e-3, True, 1.0, "uniform", 5),
        ("train_4d_running_average", (4, 6, 6, 8), 1e-3, True, 0.3, "uniform", 5),
        ("train_2d", (32, 10), 1e-3, True, 1.0, "uniform", 5),
        ("train_one_value_per_channel", (1, 4), 1e-3, True, 1.0, "uniform", 5),
        ("train_one_value_running_average", (1, 1, 1, 4), 1e-5, True, 0.1, "uniform", 5),
        ("train_constant_channel", (6, 4, 4, 3), 1e-3, True, 1.0, "constant_channel", 5),
        ("train_mean_far_from_zero", (4, 5, 5, 4), 1e-3, True, 1.0, "offset", 5),
        ("train_resnet_14x14x32", (4, 14, 14, 32), 1.001e-5, True, 1.0, "relu", 5),
        ("infer_4d_y_only", (8, 5, 5, 3), 1e-3, False, 1.0, "uniform", 1),
        ("infer_4d_all_outputs", (2, 3, 4, 5), 1e-3, False, 1.0, "uniform", 5),
        ("infer_2d", (16, 7), 1e-5, False, 1.0, "uniform", 1),
    ]
    for name, xs, eps, training, factor, values, outputs in cases:
        c = xs[-1]
        x = luniform(xs, -1.0, 3.0)
        if values == "constant_channel":
            x[..., 1] = 0.75
        elif values == "offset":
            x = f32(100.0 + luniform(xs))
        elif values == "relu":
            x = f32(np.maximum(luniform(xs), 0.0))
        scale, offset = luniform((c,), 0.5, 1.5), luniform((c,), -0.5, 0.5)
        mean, var = luniform((c,), -0.2, 0.2), luniform((c,), 0.5, 2.0)
        # TensorFlow's kernel takes 4-D x: a 2-D x [N, C] goes through as [N, 1, 1, C].
        x4 = x.reshape(-1, 1, 1, c) if x.ndim == 2 else x
        got = tf.raw_ops.FusedBatchNormV3(x=x4, scale=scale, offset=offset, mean=mean, variance=var, epsilon=np.float32(eps),
                                          exponential_avg_factor=np.float32(factor), data_format="NHWC",
                                          is_training=training)
        got = [got[0].numpy().reshape(xs)] + [t.numpy() for t in got[1:5]]
        exact, bounds = batch_norm_reference(x, scale, offset, mean, var, eps, training, factor)
        tensors = [("in", x), ("in", scale), ("in", offset), ("in", mean), ("in", var)]
        for k in range(outputs):
            note_error("FusedBatchNormV3", got[k], exact[k], bounds[k])
            tensors += [("out", got[k])] + ([("bound", f32(bounds[k]))] if np.any(bounds[k]) else [])
        attrs = {"epsilon": repr(float(np.float32(eps))), "exponential_avg_factor": repr(float(np.float32(factor))),
                 "is_training": int(training)}
        g.add(f"FusedBatchNormV3/{name}", "FusedBatchNormV3", attrs, tensors)

        # The gradient, with the reserve spaces the forward wrote (training) or
        # the given mean and variance (inference).
        dy = luniform(xs)
        rs1, rs2 = (got[3], got[4]) if training else (mean, var)
        d4 = dy.reshape(-1, 1, 1, c) if x.ndim == 2 else dy
        gr = tf.raw_ops.FusedBatchNormGradV3(y_backprop=d4, x=x4, scale=scale, reserve_space_1=rs1, reserve_space_2=rs2,
                                             reserve_space_3=np.zeros(0, np.float32), epsilon=np.float32(eps),
                                             data_format="NHWC", is_training=training)
        gr = [gr[0].numpy().reshape(xs), gr[1].numpy(), gr[2].numpy()]
        exact, bounds = batch_norm_grad_reference(dy, x, scale, rs1, rs2, eps, training)
        tensors = [("in", dy), ("in", x), ("in", scale), ("in", rs1), ("in", rs2)]
        for k in range(3):
            note_error("FusedBatchNormGradV3", gr[k], exact[k], bounds[k])
            tensors += [("out", gr[k]), ("bound", f32(bounds[k]))]
        g.add(f"FusedBatchNormGradV3/{name}", "FusedBatchNormGradV3", {**attrs, "exponential_avg_factor": "1.0"}, tensors)


def depthwise_cases(g):
    # (name, x shape, filter shape [KH, KW, C, M], strides (h, w), dilations (h, w), padding)
    cases = [
        ("valid_3x3", (2, 7, 6, 3), (3, 3, 3, 1), (1, 1), (1, 1), "VALID"),
        ("same_3x3_multiplier_2", (1, 6, 5, 2), (3, 3, 2, 2), (1, 1), (1, 1), "SAME"),
        ("same_s2_asym", (2, 7, 8, 4), (3, 3, 4, 1), (2, 2), (1, 1), "SAME"),
        ("valid_strides_2_1_kernel_2x3_multiplier_3", (1, 8, 9, 2), (2, 3, 2, 3), (2, 1), (1, 1), "VALID"),
        ("same_dilation_2", (1, 9, 9, 2), (3, 3, 2, 1), (1, 1), (2, 2), "SAME"),
        ("valid_dilation_2_multiplier_2", (2, 9, 8, 3), (3, 2, 3, 2), (1, 1), (2, 2), "VALID"),
        ("valid_dilation_1_2", (1, 6, 9, 2), (2, 3, 2, 1), (1, 1), (1, 2), "VALID"),
        ("same_kernel_over_input", (1, 3, 3, 2), (4, 4, 2, 1), (1, 1), (1, 1), "SAME"),
        ("same_resnet_14x14x32", (4, 14, 14, 32), (3, 3, 32, 1), (1, 1), (1, 1), "SAME"),
    ]
    for name, xs, ws, st, dil, pad in cases:
        x, w = luniform(xs), luniform(ws)
        ys = (xs[0], conv_out(xs[1], ws[0], st[0], dil[0], pad), conv_out(xs[2], ws[1], st[1], dil[1], pad), ws[2] * ws[3])
        dy = luniform(ys)
        attrs = {"stride_h": st[0], "stride_w": st[1], "dilation_h": dil[0], "dilation_w": dil[1], "padding": pad}
        kw = dict(strides=[1, st[0], st[1], 1], padding=pad, dilations=[1, dil[0], dil[1], 1])

        def fwd(a, b):
            return tf.raw_ops.DepthwiseConv2dNative(input=a, filter=b, **kw)

        def by_tape(a, b, d, wrt_input):
            """The gradient of tf.nn.depthwise_conv2d (dilation through
            SpaceToBatchND), for dilated cases: TensorFlow 2.21's oneDNN
            kernels of the raw gradient ops refuse VALID and ignore the
            dilation with SAME (README.md)."""
            a, b = tf.constant(a), tf.constant(b)
            with tf.GradientTape() as tape:
                tape.watch([a, b])
                out = tf.nn.depthwise_conv2d(a, b, strides=[1, st[0], st[1], 1], padding=pad, dilations=list(dil))
            return tape.gradient(out, a if wrt_input else b, output_gradients=tf.constant(d, out.dtype))

        raw_grads = dil == (1, 1)

        def bwd_in(d, b):
            if not raw_grads:
                return by_tape(np.zeros(xs, b.dtype), b, d, True)
            return tf.raw_ops.DepthwiseConv2dNativeBackpropInput(input_sizes=list(xs), filter=b, out_backprop=d, **kw)

        def bwd_f(a, d):
            if not raw_grads:
                return by_tape(a, np.zeros(ws, a.dtype), d, False)
            return tf.raw_ops.DepthwiseConv2dNativeBackpropFilter(input=a, filter_sizes=list(ws), out_backprop=d, **kw)

        for op, fn, ins in (("DepthwiseConv2dNative", fwd, (x, w)), ("DepthwiseConv2dNativeBackpropInput", bwd_in, (dy, w)),
                            ("DepthwiseConv2dNativeBackpropFilter", bwd_f, (x, dy))):
            got = fn(*ins).numpy()
            bound = bound_of(fn, *ins)
            exact = run64(fn, *ins)
            if exact is not None:
                note_error(op, got, exact, bound)
            g.add(f"{op}/{name}", op, attrs, [("in", i) for i in ins] + [("out", got), ("bound", f32(bound))])


# ---------------------------------------------------------------- ABI 1.4: activations, softmax, arithmetic, shapes

# The activations' own generator, so that adding them changed no byte of the other files.
act_rng = np.random.default_rng(20261214)
SELU_SCALE, SELU_SCALE_ALPHA = 1.0507009873554804934193349852946, 1.7580993408473768599402175208123
GELU_C, GELU_A = 0.7978845608028654, 0.044715
erfc64 = np.vectorize(math.erfc, otypes=[np.float64])

# TensorFlow's largest error against float64, in units of u * B, per op
# (B: function_bound below); README.md quotes it.
tf_function_error = {}


def act_uniform(shape, lo, hi):
    return f32(act_rng.uniform(lo, hi, size=shape))


def sigmoid64(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def function_bound(op, a, b=None, tanh_form=False):
    """B of sdk/include/axon/function_bounds.hpp, element by element: the
    magnitude of the terms the result is made of, times the amplification of
    a float32 argument's rounding. a, b: the op's inputs in its order."""
    a = np.float64(a)
    b = None if b is None else np.float64(b)
    with np.errstate(over="ignore", invalid="ignore"):
        if op == "Sigmoid":
            return sigmoid64(a)
        if op == "SigmoidGrad":
            return np.abs(b * a * (1 - a))
        if op == "Tanh":
            return np.abs(np.tanh(a))
        if op == "TanhGrad":
            return np.abs(b) * (1 + a * a)
        if op == "Elu":
            return np.where(a > 0, a, np.exp(np.minimum(a, 0)) + 1)
        if op == "EluGrad":
            return np.abs(a) * (np.abs(b) + 1)
        if op == "Selu":
            return np.where(a > 0, SELU_SCALE * a, SELU_SCALE_ALPHA * (np.exp(np.minimum(a, 0)) + 1))
        if op == "SeluGrad":
            return np.abs(a) * np.where(b < 0, np.abs(b) + SELU_SCALE_ALPHA, SELU_SCALE)
        if op == "Softplus":
            return np.where(a > 30, a, np.log1p(np.exp(np.minimum(a, 30))))
        if op == "SoftplusGrad":
            return np.abs(a) * sigmoid64(b)
        if op == "Silu":
            return np.abs(a) * sigmoid64(a)
        if op == "SiluGrad":
            return np.abs(a) * sigmoid64(b) * (1 + np.abs(b))
        if op in ("Gelu", "GeluGrad"):
            x, dy = (a, 1.0) if op == "Gelu" else (b, np.abs(a))
            if tanh_form:
                t = np.tanh(GELU_C * (x + GELU_A * x ** 3))
                half = 0.5 * (1 + np.abs(t))
                if op == "Gelu":
                    return np.abs(x) * half
                return dy * (half + 0.5 * np.abs(x) * (1 + t * t) * GELU_C * (1 + 3 * GELU_A * x * x))
            cdf, tail = 0.5 * erfc64(-x / np.sqrt(2)), 0.5 * erfc64(np.abs(x) / np.sqrt(2))
            if op == "Gelu":
                return np.abs(x) * (cdf + tail * (2 + x * x))
            return dy * (cdf + (tail + np.abs(x) * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)) * (2 + x * x))
        if op == "Softmax":
            mx = a.max(axis=-1, keepdims=True)
            e = np.exp(a - mx)
            y = e / e.sum(axis=-1, keepdims=True)
            return np.where(y > 0, y * (2 + np.log2(a.shape[-1]) + np.abs(a - mx)), 0.0)
        if op == "SoftmaxGrad":
            s = np.abs(a * b).sum(axis=-1, keepdims=True)
            return np.abs(b) * (np.abs(a) + s)
    raise ValueError(op)


def exact_value(op, a, b=None, tanh_form=False):
    """The op in float64 from the float32 inputs (TensorFlow's definitions),
    to measure TensorFlow's own error."""
    a = np.float64(a)
    b = None if b is None else np.float64(b)
    th = np.float32(np.log(np.finfo(np.float32).eps)) + np.float32(2)  # Softplus' threshold, in float as TensorFlow
    with np.errstate(over="ignore", invalid="ignore"):
        if op == "Sigmoid":
            return sigmoid64(a)
        if op == "SigmoidGrad":
            return b * a * (1 - a)
        if op == "Tanh":
            return np.tanh(a)
        if op == "TanhGrad":
            return b * (1 - a * a)
        if op == "Elu":
            return np.where(a < 0, np.expm1(np.minimum(a, 0)), a)
        if op == "EluGrad":
            return np.where(b < 0, a * (b + 1), a)
        if op == "Selu":
            return np.where(a < 0, np.float64(np.float32(SELU_SCALE_ALPHA)) * np.expm1(np.minimum(a, 0)),
                            np.float64(np.float32(SELU_SCALE)) * a)
        if op == "SeluGrad":
            scale, scale_alpha = np.float64(np.float32(SELU_SCALE)), np.float64(np.float32(SELU_SCALE_ALPHA))
            return np.where(b < 0, a * (b + scale_alpha), a * scale)
        if op == "Softplus":
            return np.where(a > -th, a, np.where(a < th, np.exp(a), np.log1p(np.exp(np.minimum(a, 30)))))
        if op == "SoftplusGrad":
            return a * sigmoid64(b)
        if op == "Silu":
            return a * sigmoid64(a)
        if op == "SiluGrad":
            return a * sigmoid64(b) * (1 + b * sigmoid64(-b))
        if op in ("Gelu", "GeluGrad"):
            x = a if op == "Gelu" else b
            if tanh_form:
                t = np.tanh(GELU_C * (x + GELU_A * x ** 3))
                if op == "Gelu":
                    return 0.5 * x * (1 + t)
                return a * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * GELU_C * (1 + 3 * GELU_A * x * x))
            cdf = 0.5 * erfc64(-x / np.sqrt(2))
            if op == "Gelu":
                return x * cdf
            return a * (cdf + x * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi))
        if op == "Softmax":
            e = np.exp(a - a.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)
        if op == "SoftmaxGrad":
            return (a - (a * b).sum(axis=-1, keepdims=True)) * b
    raise ValueError(op)


def add_function_case(g, name, op, attrs, ins, got, tanh_form=False):
    """A case judged by the function bound: records TensorFlow's own error."""
    got = np.asarray(got, np.float32)
    bound = function_bound(op, *ins, tanh_form=tanh_form)
    exact = exact_value(op, *ins, tanh_form=tanh_form)
    key = op + (" (tanh form)" if tanh_form else "")
    err = np.abs(np.float64(got) - exact)
    ratio = np.where(err <= 1e-30, 0.0, err / (U * np.maximum(bound, 1e-300)))
    tf_function_error[key] = max(tf_function_error.get(key, 0.0), float(np.max(ratio)) if ratio.size else 0.0)
    g.add(name, op, attrs, [("in", i) for i in ins] + [("out", got), ("bound", f32(bound))])


def tape(f, x, dy, *more):
    """The gradient TensorFlow's tape gives for f at x (and at more), fed dy."""
    xs = [tf.constant(v) for v in (x,) + more]
    with tf.GradientTape() as t:
        for v in xs:
            t.watch(v)
        y = f(*xs)
    grads = t.gradient(y, xs, output_gradients=tf.constant(dy))
    return [gr.numpy() for gr in grads]


# Values an activation must get right: signed zeros, where axon's
# polynomials switch, Softplus' thresholds, where e^x under- and overflows, huge.
EDGES = [0.0, -0.0, 1e-30, -1e-30, 1e-8, -1e-8, 1e-3, -1e-3, 0.625, -0.625, 0.7, -0.7, 1.0, -1.0, 6.0, -6.0,
         13.942385, -13.942385, 13.942386, -13.942386, 15.0, -15.0, 20.0, -20.0, 44.5, -44.5, 87.0, -87.0, 88.5,
         -88.5, 103.0, -103.0, 200.0, -200.0, 1e4, -1e4, 1e30, -1e30]


def activation_inputs(huge=True):
    """The inputs of every activation case: 600 in [-4, 4], 300 in [-30, 30],
    100 from 1e-8 to 1e2 of either sign, and the edges (without |x| > 1e4
    when huge is False)."""
    edges = [e for e in EDGES if huge or abs(e) <= 1e4]
    logs = np.sign(act_rng.uniform(-1, 1, 100)) * 10.0 ** act_rng.uniform(-8, 2, 100)
    return f32(np.concatenate([act_uniform(600, -4, 4), act_uniform(300, -30, 30), logs, edges]))


def smooth_activation_cases(g):
    r = tf.raw_ops
    forward = {"Sigmoid": lambda x: r.Sigmoid(x=x), "Tanh": lambda x: r.Tanh(x=x), "Elu": lambda x: r.Elu(features=x),
               "Selu": lambda x: r.Selu(features=x), "Softplus": lambda x: r.Softplus(features=x),
               "Silu": lambda x: keras.activations.silu(x)}
    for op, fn in forward.items():
        x = activation_inputs()
        add_function_case(g, f"{op}/wide", op, {}, (x,), fn(x).numpy())
        x = act_uniform((16, 13, 5), -5, 5)
        add_function_case(g, f"{op}/16x13x5", op, {}, (x,), fn(x).numpy())
    for tanh_form in (False, True):
        form = "tanh" if tanh_form else "erf"
        for name, x in (("wide", activation_inputs()), ("16x13x5", act_uniform((16, 13, 5), -5, 5))):
            add_function_case(g, f"Gelu/{form}_{name}", "Gelu", {"approximate": int(tanh_form)}, (x,),
                              keras.activations.gelu(x, approximate=tanh_form).numpy(), tanh_form)
    # The gradients, inputs in TensorFlow's order; y from TensorFlow's forward op.
    for name, x in (("wide", activation_inputs()), ("16x13x5", act_uniform((16, 13, 5), -5, 5))):
        dy = act_uniform(x.shape, -2, 2)
        y = r.Sigmoid(x=x).numpy()
        add_function_case(g, f"SigmoidGrad/{name}", "SigmoidGrad", {}, (y, dy), r.SigmoidGrad(y=y, dy=dy).numpy())
        y = r.Tanh(x=x).numpy()
        add_function_case(g, f"TanhGrad/{name}", "TanhGrad", {}, (y, dy), r.TanhGrad(y=y, dy=dy).numpy())
        y = r.Elu(features=x).numpy()
        add_function_case(g, f"EluGrad/{name}", "EluGrad", {}, (dy, y), r.EluGrad(gradients=dy, outputs=y).numpy())
        y = r.Selu(features=x).numpy()
        add_function_case(g, f"SeluGrad/{name}", "SeluGrad", {}, (dy, y), r.SeluGrad(gradients=dy, outputs=y).numpy())
        add_function_case(g, f"SoftplusGrad/{name}", "SoftplusGrad", {}, (dy, x),
                          r.SoftplusGrad(gradients=dy, features=x).numpy())
        add_function_case(g, f"SiluGrad/{name}", "SiluGrad", {}, (dy, x), tape(keras.activations.silu, x, dy)[0])
        add_function_case(g, f"GeluGrad/erf_{name}", "GeluGrad", {"approximate": 0}, (dy, x),
                          tape(lambda v: keras.activations.gelu(v, approximate=False), x, dy)[0])
    # The tanh form's tape is NaN where x^3 overflows (|x| > 7e12): inputs within 1e4.
    for name, x in (("wide", activation_inputs(huge=False)), ("16x13x5", act_uniform((16, 13, 5), -5, 5))):
        dy = act_uniform(x.shape, -2, 2)
        add_function_case(g, f"GeluGrad/tanh_{name}", "GeluGrad", {"approximate": 1}, (dy, x),
                          tape(lambda v: keras.activations.gelu(v, approximate=True), x, dy)[0], True)


def quarter_steps(shape):
    """Multiples of 1/4 in [-8, 8]: values at 0, 6, thresholds and maxima."""
    return f32(np.round(act_rng.uniform(-8, 8, size=shape) * 4) / 4)


def piecewise_activation_cases(g):
    r = tf.raw_ops
    x = quarter_steps((40, 25))
    dy = act_uniform(x.shape, -2, 2)
    g.add("Relu6/ties_40x25", "Relu6", {}, [("in", x), ("out", r.Relu6(features=x).numpy())])
    g.add("Relu6Grad/ties_40x25", "Relu6Grad", {}, [("in", dy), ("in", x),
                                                   ("out", r.Relu6Grad(gradients=dy, features=x).numpy())])
    for alpha in (0.2, -0.5):
        a = float(np.float32(alpha))
        g.add(f"LeakyRelu/alpha_{alpha}_ties", "LeakyRelu", {"alpha": repr(a)},
              [("in", x), ("out", r.LeakyRelu(features=x, alpha=a).numpy())])
        g.add(f"LeakyReluGrad/alpha_{alpha}_ties", "LeakyReluGrad", {"alpha": repr(a)},
              [("in", dy), ("in", x), ("out", r.LeakyReluGrad(gradients=dy, features=x, alpha=a).numpy())])
    # Keras' relu(x, negative_slope, max_value, threshold) and its tape. The
    # gradient cases with ties are those where Keras' tape follows the op
    # table at the kinks; the others avoid x at the threshold and the maximum
    # (README.md). No negative threshold with a finite maximum: there Keras
    # clips t < x < 0 to 0, the op table keeps x.
    for slope, mx, th, ties in [(0.0, None, 0.0, True), (0.1, None, 0.0, True), (0.0, 6.0, 0.0, True),
                                (0.1, 6.0, 0.0, False), (0.2, 2.0, 1.0, False), (0.1, None, -1.0, False),
                                (0.0, 0.5, 0.25, False)]:
        s, t = float(np.float32(slope)), float(np.float32(th))
        m = None if mx is None else float(np.float32(mx))
        attrs = {"negative_slope": repr(s), "max_value": "inf" if m is None else repr(m), "threshold": repr(t)}
        label = f"slope_{slope}_max_{mx}_threshold_{th}"
        f = lambda v: keras.activations.relu(v, negative_slope=s, max_value=m, threshold=t)  # noqa: E731
        y = f(x).numpy()
        g.add(f"ClippedRelu/{label}_ties", "ClippedRelu", attrs, [("in", x), ("out", y)])
        xg = x if ties else act_uniform(x.shape, -8, 8)
        assert ties or not np.any((xg == t) | (xg == (m if m is not None else np.inf)) | (xg == 0))
        g.add(f"ClippedReluGrad/{label}", "ClippedReluGrad", attrs,
              [("in", dy), ("in", xg), ("out", tape(f, xg, dy)[0])])


def softmax_cases(g):
    for name, shape, scale in [("64x10", (64, 10), 4.0), ("7x1000", (7, 1000), 8.0), ("3x5x17", (3, 5, 17), 30.0),
                               ("1x1", (1, 1), 1.0), ("masked_8x37", (8, 37), 5.0)]:
        x = act_uniform(shape, -scale, scale)
        if name.startswith("masked"):  # -inf logits (attention masks), never a whole row; huge ones
            x[:, 1::3] = -np.inf
            x[2, 0], x[3, 0], x[3, 2] = 1e30, -1e30, 1e30
        y = tf.raw_ops.Softmax(logits=x).numpy()
        add_function_case(g, f"Softmax/{name}", "Softmax", {}, (x,), y)
        # TensorFlow has no SoftmaxGrad op: its gradient is the tape's _SoftmaxGrad.
        dy = act_uniform(shape, -1, 1)
        add_function_case(g, f"SoftmaxGrad/{name}", "SoftmaxGrad", {}, (dy, y), tape(tf.nn.softmax, x, dy)[0])


def arithmetic_cases(g):
    r = tf.raw_ops
    for name, shape in [("3x5x7", (3, 5, 7)), ("8x13x13x3", (8, 13, 13, 3))]:
        # Whole numbers every other element: ties between a and b; signed zeros.
        a, b = act_uniform(shape, -3, 3), act_uniform(shape, -3, 3)
        a.ravel()[::2], b.ravel()[::2] = np.round(a.ravel()[::2]), np.round(b.ravel()[::2])
        a.ravel()[1], b.ravel()[1] = -0.0, 0.0
        g.add(f"Sub/{name}", "Sub", {}, [("in", a), ("in", b), ("out", r.Sub(x=a, y=b).numpy())])
        g.add(f"Mul/{name}", "Mul", {}, [("in", a), ("in", b), ("out", r.Mul(x=a, y=b).numpy())])
        g.add(f"Maximum/{name}", "Maximum", {}, [("in", a), ("in", b), ("out", r.Maximum(x=a, y=b).numpy())])
        dy = act_uniform(shape, -1, 1)
        da, db = tape(tf.maximum, a, dy, b)
        g.add(f"MaximumGrad/{name}", "MaximumGrad", {}, [("in", dy), ("in", a), ("in", b), ("out", da), ("out", db)])
    # Keras' moving statistics in float32: v * momentum + x * (1 - momentum).
    for momentum in (0.99, 0.9):
        v, x = act_uniform((1000,), -5, 5), act_uniform((1000,), -5, 5)
        out = (tf.constant(v) * momentum + tf.constant(x) * (1.0 - momentum)).numpy()
        g.add(f"MovingAverage/momentum_{momentum}", "MovingAverage",
              {"momentum": repr(float(np.float32(momentum))), "weight": repr(float(np.float32(1.0 - momentum)))},
              [("in", v), ("in", x), ("out", out)])


def shape_cases(g):
    r = tf.raw_ops
    for name, shapes, axis in [("axis1_with_empty", [(2, 3, 4), (2, 1, 4), (2, 0, 4), (2, 5, 4)], 1),
                               ("axis0", [(2, 3, 4), (1, 3, 4)], 0),
                               ("axis3_channels", [(2, 13, 13, 32), (2, 13, 13, 16)], 3),
                               ("axis2_three", [(2, 3, 4), (2, 3, 1), (2, 3, 2)], 2)]:
        xs = [act_uniform(s, -1, 1) for s in shapes]
        g.add(f"ConcatV2/{name}", "ConcatV2", {"axis": axis},
              [("in", x) for x in xs] + [("out", r.ConcatV2(values=xs, axis=axis).numpy())])
    for name, large, small, begin in [("middle", (5, 7), (2, 3), (3, 4)),
                                      ("whole_rows", (3, 5, 4), (1, 5, 4), (2, 0, 0)),
                                      ("4d", (3, 5, 3, 2), (2, 2, 3, 1), (1, 2, 0, 1)),
                                      ("empty", (2, 3), (0, 3), (1, 0)),
                                      ("crop_4x28x28x3", (4, 28, 28, 3), (4, 24, 25, 3), (0, 2, 3, 0))]:
        x = act_uniform(large, -1, 1)
        attrs = {"begin": ",".join(map(str, begin))}
        g.add(f"Slice/{name}", "Slice", attrs,
              [("in", x), ("out", r.Slice(input=x, begin=list(begin), size=list(small)).numpy())])
        xs = act_uniform(small, -1, 1)
        paddings = [[b, l - s - b] for b, l, s in zip(begin, large, small)]
        g.add(f"Pad/{name}", "Pad", attrs, [("in", xs), ("out", r.Pad(input=xs, paddings=paddings).numpy())])


# ---------------------------------------------------------------- the guide's CNN, three Adam steps

def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    dims = [struct.unpack(">I", data[4 + 4 * i:8 + 4 * i])[0] for i in range(data[3])]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * len(dims)).reshape(dims)


def find(data_dir, stem):
    for name in (stem, stem + ".gz"):
        if os.path.exists(os.path.join(data_dir, name)):
            return os.path.join(data_dir, name)
    sys.exit(f"generate.py: {stem} not found in {data_dir} (apt-get install dataset-fashion-mnist)")


def cnn_case(data_dir, path):
    images = read_idx(find(data_dir, "train-images-idx3-ubyte"))[:192]
    labels = read_idx(find(data_dir, "train-labels-idx1-ubyte"))[:192].astype(np.int32)
    model = keras.Sequential([
        keras.Input((28, 28, 1)),
        keras.layers.Conv2D(32, 3, activation="relu", name="conv2d"),
        keras.layers.MaxPooling2D(2, name="max_pooling2d"),
        keras.layers.Conv2D(64, 3, activation="relu", name="conv2d_1"),
        keras.layers.MaxPooling2D(2, name="max_pooling2d_1"),
        keras.layers.Conv2D(64, 3, activation="relu", name="conv2d_2"),
        keras.layers.Flatten(name="flatten"),
        keras.layers.Dense(64, activation="relu", name="dense"),
        keras.layers.Dense(10, name="dense_1"),
    ])
    # Initial weights: glorot_uniform kernels and small non-zero biases from
    # this script's generator (non-zero so that a bias left out shows).
    init = []
    for w in model.weights:
        shape = tuple(w.shape)
        if len(shape) > 1:
            fan_in = int(np.prod(shape[:-1]))
            fan_out = shape[-1] * (int(np.prod(shape[:-2])) if len(shape) == 4 else 1)
            limit = np.sqrt(6.0 / (fan_in + fan_out))
            init.append(uniform(shape, -limit, limit))
        else:
            init.append(uniform(shape, -0.05, 0.05))
    model.set_weights(init)
    names = [f"{layer.name}/{w.name}" for layer in model.layers for w in layer.weights]
    optimizer = keras.optimizers.Adam(learning_rate=1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    g = Golden()
    g.add("cnn/data", "", {}, [("in:images", images.reshape(192, 28, 28, 1)), ("in:labels", labels)] +
          [(f"in:{n}", a) for n, a in zip(names, init)])
    x_all = (images.astype(np.float64) / 255.0).astype(np.float32).reshape(192, 28, 28, 1)
    for step in range(3):
        x, y = x_all[64 * step:64 * (step + 1)], labels[64 * step:64 * (step + 1)]
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_weights)
        # The first step's gradients too: Adam's first update is nearly
        # sign(g), so the weights after it hide most of a gradient's error.
        grad_tensors = [(f"out:grad/{n}", np.asarray(gr.numpy(), np.float32)) for n, gr in zip(names, grads)] if step == 0 else []
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        g.add(f"cnn/step{step + 1}", "", {"batch_start": 64 * step, "batch_size": 64},
              [("out:loss", f32([loss.numpy()]))] + grad_tensors +
              [(f"out:{n}", np.asarray(w.numpy(), np.float32)) for n, w in zip(names, model.weights)])
        print(f"  step {step + 1}: loss {float(loss):.7f}")
    g.write(path)


# ---------------------------------------------------------------- batch normalization with relu (ABI 1.5)
# fused_layers.axg, its own generator again. TensorFlow's _FusedBatchNormEx
# and _FusedBatchNormGradEx are not in tf.raw_ops: composed of the ops they
# stand for, FusedBatchNormV3 then Relu, ReluGrad then FusedBatchNormGradV3.
frng = np.random.default_rng(20261203)


def funiform(shape, lo=-1.0, hi=1.0):
    return f32(frng.uniform(lo, hi, size=shape))


def batch_norm_relu_cases(g):
    # (name, x shape, epsilon, is_training, exponential_avg_factor, outputs written)
    cases = [
        ("train_4d", (8, 5, 5, 3), 1e-3, True, 1.0, 5),
        ("train_4d_running_average", (4, 6, 6, 8), 1e-3, True, 0.3, 5),
        ("train_2d", (32, 10), 1e-3, True, 1.0, 5),
        ("train_resnet_28x28x16", (2, 28, 28, 16), 1e-3, True, 1.0, 5),
        ("infer_4d_y_only", (8, 5, 5, 3), 1e-3, False, 1.0, 1),
        ("infer_2d_all_outputs", (16, 7), 1e-5, False, 1.0, 5),
    ]
    for name, xs, eps, training, factor, outputs in cases:
        c = xs[-1]
        x = funiform(xs, -1.0, 3.0)
        scale, offset = funiform((c,), 0.5, 1.5), funiform((c,), -0.5, 0.5)
        mean, var = funiform((c,), -0.2, 0.2), funiform((c,), 0.5, 2.0)
        x4 = x.reshape(-1, 1, 1, c) if x.ndim == 2 else x
        bn = tf.raw_ops.FusedBatchNormV3(x=x4, scale=scale, offset=offset, mean=mean, variance=var, epsilon=np.float32(eps),
                                         exponential_avg_factor=np.float32(factor), data_format="NHWC",
                                         is_training=training)
        y = tf.raw_ops.Relu(features=bn[0]).numpy().reshape(xs)
        got = [y] + [t.numpy() for t in bn[1:5]]
        exact, bounds = batch_norm_reference(x, scale, offset, mean, var, eps, training, factor)
        exact[0] = np.maximum(exact[0], 0.0)  # relu moves no value by more than its error
        tensors = [("in", x), ("in", scale), ("in", offset), ("in", mean), ("in", var)]
        for k in range(outputs):
            note_error("_FusedBatchNormEx", got[k], exact[k], bounds[k])
            tensors += [("out", got[k])] + ([("bound", f32(bounds[k]))] if np.any(bounds[k]) else [])
        attrs = {"epsilon": repr(float(np.float32(eps))), "exponential_avg_factor": repr(float(np.float32(factor))),
                 "is_training": int(training), "activation": "relu"}
        g.add(f"_FusedBatchNormEx/{name}", "_FusedBatchNormEx", attrs, tensors)

        # The gradient: dy through ReluGrad with the forward's y, then
        # FusedBatchNormGradV3 with the reserve spaces (training) or the given
        # statistics; the bounds are those of the masked dy.
        dy = funiform(xs)
        rs1, rs2 = (got[3], got[4]) if training else (mean, var)
        masked = tf.raw_ops.ReluGrad(gradients=dy, features=y).numpy()
        m4 = masked.reshape(-1, 1, 1, c) if x.ndim == 2 else masked
        gr = tf.raw_ops.FusedBatchNormGradV3(y_backprop=m4, x=x4, scale=scale, reserve_space_1=rs1, reserve_space_2=rs2,
                                             reserve_space_3=np.zeros(0, np.float32), epsilon=np.float32(eps),
                                             data_format="NHWC", is_training=training)
        gr = [gr[0].numpy().reshape(xs), gr[1].numpy(), gr[2].numpy()]
        exact, bounds = batch_norm_grad_reference(masked, x, scale, rs1, rs2, eps, training)
        tensors = [("in", dy), ("in", x), ("in", scale), ("in", rs1), ("in", rs2), ("in", y)]
        for k in range(3):
            note_error("_FusedBatchNormGradEx", gr[k], exact[k], bounds[k])
            tensors += [("out", gr[k]), ("bound", f32(bounds[k]))]
        g.add(f"_FusedBatchNormGradEx/{name}", "_FusedBatchNormGradEx", {**attrs, "exponential_avg_factor": "1.0"},
              tensors)


# ---------------------------------------------------------------- batch normalization, side input and relu (ABI 2.1)
# fused_residual.axg, from a generator of its own (the other files keep their
# bytes). TensorFlow's _FusedBatchNormEx with a side input is not in
# tf.raw_ops: composed of FusedBatchNormV3, AddN of its y and the side input,
# then Relu; backward ReluGrad (the side input's gradient), then
# FusedBatchNormGradV3 of it.
rrng = np.random.default_rng(20261204)


def runiform(shape, lo=-1.0, hi=1.0):
    return f32(rrng.uniform(lo, hi, size=shape))


def batch_norm_add_relu_cases(g):
    # (name, x shape, epsilon, is_training, exponential_avg_factor, outputs written, activation)
    cases = [
        ("train_4d", (8, 5, 5, 3), 1e-3, True, 1.0, 5, "relu"),
        ("train_4d_running_average", (4, 6, 6, 8), 1e-3, True, 0.3, 5, "relu"),
        ("train_2d", (32, 10), 1e-3, True, 1.0, 5, "relu"),
        ("train_resnet_28x28x16", (2, 28, 28, 16), 1e-3, True, 1.0, 5, "relu"),
        ("train_4d_no_activation", (4, 5, 5, 6), 1e-3, True, 1.0, 5, "none"),
        ("infer_4d_y_only", (8, 5, 5, 3), 1e-3, False, 1.0, 1, "relu"),
        ("infer_2d_all_outputs", (16, 7), 1e-5, False, 1.0, 5, "relu"),
    ]
    for name, xs, eps, training, factor, outputs, act in cases:
        relu = act == "relu"
        c = xs[-1]
        x = runiform(xs, -1.0, 3.0)
        scale, offset = runiform((c,), 0.5, 1.5), runiform((c,), -0.5, 0.5)
        mean, var = runiform((c,), -0.2, 0.2), runiform((c,), 0.5, 2.0)
        side = runiform(xs)
        x4 = x.reshape(-1, 1, 1, c) if x.ndim == 2 else x
        bn = tf.raw_ops.FusedBatchNormV3(x=x4, scale=scale, offset=offset, mean=mean, variance=var,
                                         epsilon=np.float32(eps), exponential_avg_factor=np.float32(factor),
                                         data_format="NHWC", is_training=training)
        z = tf.raw_ops.AddN(inputs=[bn[0], side.reshape(x4.shape)])
        y = (tf.raw_ops.Relu(features=z) if relu else z).numpy().reshape(xs)
        got = [y] + [t.numpy() for t in bn[1:5]]
        exact, bounds = batch_norm_reference(x, scale, offset, mean, var, eps, training, factor)
        # The side input adds its magnitude (the add's rounding) to y's B;
        # relu moves no value by more than its error.
        exact[0] = exact[0] + np.float64(side)
        bounds[0] = bounds[0] + np.abs(np.float64(side))
        if relu:
            exact[0] = np.maximum(exact[0], 0.0)
        tensors = [("in", x), ("in", scale), ("in", offset), ("in", mean), ("in", var), ("in", side)]
        for k in range(outputs):
            note_error("_FusedBatchNormAddEx", got[k], exact[k], bounds[k])
            tensors += [("out", got[k])] + ([("bound", f32(bounds[k]))] if np.any(bounds[k]) else [])
        attrs = {"epsilon": repr(float(np.float32(eps))), "exponential_avg_factor": repr(float(np.float32(factor))),
                 "is_training": int(training), "activation": act}
        g.add(f"_FusedBatchNormAddEx/{name}", "_FusedBatchNormAddEx", attrs, tensors)

        # The gradient: side_input_backprop is dy through ReluGrad with the
        # forward's y (dy itself without relu), compared exactly; dx and the
        # scale and offset gradients are FusedBatchNormGradV3's of it, with
        # the reserve spaces (training) or the given statistics.
        dy = runiform(xs)
        rs1, rs2 = (got[3], got[4]) if training else (mean, var)
        masked = tf.raw_ops.ReluGrad(gradients=dy, features=y).numpy() if relu else dy
        assert np.array_equal(masked, np.where(y > 0, dy, 0.0) if relu else dy)
        m4 = masked.reshape(-1, 1, 1, c) if x.ndim == 2 else masked
        gr = tf.raw_ops.FusedBatchNormGradV3(y_backprop=m4, x=x4, scale=scale, reserve_space_1=rs1, reserve_space_2=rs2,
                                             reserve_space_3=np.zeros(0, np.float32), epsilon=np.float32(eps),
                                             data_format="NHWC", is_training=training)
        gr = [gr[0].numpy().reshape(xs), gr[1].numpy(), gr[2].numpy()]
        exact, bounds = batch_norm_grad_reference(masked, x, scale, rs1, rs2, eps, training)
        tensors = [("in", dy), ("in", x), ("in", scale), ("in", rs1), ("in", rs2), ("in", y)]
        for k in range(3):
            note_error("_FusedBatchNormAddGradEx", gr[k], exact[k], bounds[k])
            tensors += [("out", gr[k]), ("bound", f32(bounds[k]))]
        tensors.append(("out", f32(masked)))
        g.add(f"_FusedBatchNormAddGradEx/{name}", "_FusedBatchNormAddGradEx",
              {**attrs, "exponential_avg_factor": "1.0"}, tensors)


# ---------------------------------------------------------------- a convolution's input gradient summed into (ABI 2.2)
# conv_accumulate.axg, from a generator of its own: _Conv2DBackpropInputAccumulate
# is dx + Conv2DBackpropInput(dy, filter), composed of TensorFlow's
# Conv2DBackpropInput and AddN. The shapes reach each of the CPU plugin's
# paths: Winograd (padded: the turned convolution; unpadded: the adjoint),
# im2col at stride 2, the strided 1x1, few channels and a 1x1 at stride 1.
arng = np.random.default_rng(20261205)


def conv_accumulate_cases(g):
    # (name, x shape, filter shape, strides (h, w), padding)
    cases = [
        ("resnet_3x3_s2_16_to_32", (2, 28, 28, 16), (3, 3, 16, 32), (2, 2), "SAME"),
        ("resnet_3x3_s1_16_to_16", (2, 28, 28, 16), (3, 3, 16, 16), (1, 1), "SAME"),
        ("valid_3x3_s1_16_to_17", (2, 13, 13, 16), (3, 3, 16, 17), (1, 1), "VALID"),
        ("resnet_1x1_s2_32_to_64", (2, 14, 14, 32), (1, 1, 32, 64), (2, 2), "VALID"),
        ("same_3x3_4_to_8", (2, 9, 9, 4), (3, 3, 4, 8), (1, 1), "SAME"),
        ("pointwise_7_to_5", (3, 5, 4, 7), (1, 1, 7, 5), (1, 1), "VALID"),
        ("same_s2_asym", (2, 7, 8, 3), (3, 3, 3, 4), (2, 2), "SAME"),
    ]
    for name, xs, ws, st, pad in cases:
        w = f32(arng.uniform(-1.0, 1.0, size=ws))
        ys = (xs[0], conv_out(xs[1], ws[0], st[0], 1, pad), conv_out(xs[2], ws[1], st[1], 1, pad), ws[3])
        dy = f32(arng.uniform(-1.0, 1.0, size=ys))
        dx = f32(arng.uniform(-1.0, 1.0, size=xs))
        kw = dict(strides=[1, st[0], st[1], 1], padding=pad)

        def accumulate(into, d, f):
            part = tf.raw_ops.Conv2DBackpropInput(input_sizes=list(xs), filter=f, out_backprop=d, **kw)
            return tf.raw_ops.AddN(inputs=[into, part])

        got = accumulate(dx, dy, w).numpy()
        bound = bound_of(accumulate, dx, dy, w)
        note_error("_Conv2DBackpropInputAccumulate", got, run64(accumulate, dx, dy, w), bound)
        attrs = {"stride_h": st[0], "stride_w": st[1], "dilation_h": 1, "dilation_w": 1, "padding": pad}
        g.add(f"_Conv2DBackpropInputAccumulate/{name}", "_Conv2DBackpropInputAccumulate", attrs,
              [("in", dx), ("in", dy), ("in", w), ("out", got), ("bound", f32(bound))])


# ---------------------------------------------------------------- layer normalization (ABI 2.3)
# layer_norm.axg, from a generator of its own. TensorFlow has no layer
# normalization op: these are Keras 3's own numbers (keras.ops.
# layer_normalization on TensorFlow: moments, rsqrt and arithmetic in
# float32), the row statistics from tf.nn.moments and rsqrt as it takes them,
# the gradients from tf.GradientTape. Bounds as
# sdk/include/axon/tolerance_layer_norm.hpp states them, t = sqrt(K).
lrng = np.random.default_rng(20261207)


def layer_norm_reference(x, scale, offset, eps):
    """LayerNorm over the last dimension of x [R, K] in float64, and the bounds
    B of y, mean and inv_std."""
    x2 = np.float64(x)
    k = x2.shape[1]
    a = np.abs(x2).mean(axis=1, keepdims=True)
    m = x2.mean(axis=1, keepdims=True)
    v = ((x2 - m) ** 2).mean(axis=1, keepdims=True)
    e = np.float64(np.float32(eps))
    r = 1.0 / np.sqrt(v + e)
    s, o = np.float64(scale), np.float64(offset)
    t = np.sqrt(k)
    y = (x2 - m) * r * s + o
    y_b = np.abs(s) * r * ((1 + t) * np.abs(x2 - m) + t * a) + np.abs(o)
    big_v = v + a * a * 2.0 ** -20
    return [y, m[:, 0], r[:, 0]], [y_b, t * a[:, 0], (r * (1 + t * big_v / (v + e)))[:, 0]]


def layer_norm_grad_reference(dy, x, scale, mean, inv_std):
    """LayerNormGrad in float64 (from the given mean and inv_std) and the
    bounds B of dx, scale_backprop and offset_backprop."""
    d2, x2 = np.float64(dy), np.float64(x)
    r = np.float64(inv_std)[:, None]
    xhat = (x2 - np.float64(mean)[:, None]) * r
    g = d2 * np.float64(scale)
    dx = r * (g - g.mean(axis=1, keepdims=True) - xhat * (g * xhat).mean(axis=1, keepdims=True))
    ga = np.abs(g)
    dx_b = r * (ga + ga.mean(axis=1, keepdims=True) + np.abs(xhat) * (ga * np.abs(xhat)).mean(axis=1, keepdims=True))
    # Keras' composed form takes scale's gradient as sum(dy x inv) - sum(dy
    # mean inv): its B counts both terms (|x| + |mean| where axon's header
    # has |x - mean|), else rows far from 0 put TensorFlow's own rounding 100
    # times past the bound.
    far = np.abs(d2) * (np.abs(x2) + np.abs(np.float64(mean))[:, None]) * r
    return ([dx, (d2 * xhat).sum(axis=0), d2.sum(axis=0)],
            [dx_b, far.sum(axis=0), np.abs(d2).sum(axis=0)])


def layer_norm_cases(g):
    # (name, x shape [R, K], epsilon, x values)
    cases = [
        ("rows_of_5", (12, 5), 1e-3, "uniform"),
        ("convnext_96", (2 * 8 * 8, 96), 1e-6, "uniform"),
        ("one_value", (4, 1), 1e-3, "uniform"),
        ("constant_row", (6, 16), 1e-3, "constant_row"),
        ("mean_far_from_zero", (8, 33), 1e-5, "offset"),
        ("dense_head_768", (4, 768), 1e-6, "uniform"),
    ]
    for name, xs, eps, values in cases:
        k = xs[1]
        x = f32(lrng.uniform(-1.0, 3.0, size=xs))
        if values == "constant_row":
            x[1, :] = 0.75
        elif values == "offset":
            x = f32(100.0 + lrng.uniform(-1.0, 1.0, size=xs))
        scale, offset = f32(lrng.uniform(0.5, 1.5, size=(k,))), f32(lrng.uniform(-0.5, 0.5, size=(k,)))
        e32 = np.float32(eps)
        xt, st, ot = tf.constant(x), tf.constant(scale), tf.constant(offset)
        mean, var = tf.nn.moments(xt, axes=[1], keepdims=True)
        inv_std = tf.math.rsqrt(var + e32)
        with tf.GradientTape() as tape:
            tape.watch([xt, st, ot])
            y = keras.ops.layer_normalization(xt, st, ot, axis=-1, epsilon=float(e32))
            dy = f32(lrng.uniform(-1.0, 1.0, size=xs))
            loss = tf.reduce_sum(y * dy)
        dx, dscale, doffset = tape.gradient(loss, [xt, st, ot])
        got = [y.numpy(), mean.numpy()[:, 0], inv_std.numpy()[:, 0]]
        exact, bounds = layer_norm_reference(x, scale, offset, eps)
        tensors = [("in", x), ("in", scale), ("in", offset)]
        for j in range(3):
            note_error("LayerNorm", got[j], exact[j], bounds[j])
            tensors += [("out", got[j]), ("bound", f32(bounds[j]))]
        attrs = {"epsilon": repr(float(e32))}
        g.add(f"LayerNorm/{name}", "LayerNorm", attrs, tensors)

        gr = [dx.numpy(), dscale.numpy(), doffset.numpy()]
        exact, bounds = layer_norm_grad_reference(dy, x, scale, got[1], got[2])
        tensors = [("in", dy), ("in", x), ("in", scale), ("in", got[1]), ("in", got[2])]
        for j in range(3):
            note_error("LayerNormGrad", gr[j], exact[j], bounds[j])
            tensors += [("out", gr[j]), ("bound", f32(bounds[j]))]
        g.add(f"LayerNormGrad/{name}", "LayerNormGrad", attrs, tensors)


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=os.path.join(root, "tests", "goldens", "tf"))
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    # The files of their own generators: each can be written alone.
    alone = {"fused_layers.axg": batch_norm_relu_cases, "fused_residual.axg": batch_norm_add_relu_cases,
             "conv_accumulate.axg": conv_accumulate_cases, "layer_norm.axg": layer_norm_cases}
    p.add_argument("--only", choices=sorted(alone), help="write only this file of the folder")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    print(f"TensorFlow {tf.__version__}, Keras {keras.__version__}, NumPy {np.__version__}")
    for file, cases in alone.items():
        if a.only in (None, file):
            golden = Golden()
            cases(golden)
            golden.write(os.path.join(a.out, file))
    if a.only is not None:
        print("TensorFlow's float32 error, in units of 2^-24 * B:",
              ", ".join(f"{k} {v:.2f}" for k, v in sorted(tf_error.items())))
        return
    ops, fused = Golden(), Golden()
    conv_cases(ops, fused)
    pool_cases(ops)
    conv_pool_cases(fused)
    dense_cases(ops, fused)
    loss_cases(ops)
    in_top_k_cases(ops)
    adam_cases(ops)
    misc_cases(ops)
    ops.write(os.path.join(a.out, "ops.axg"))
    fused.write(os.path.join(a.out, "fused_ops.axg"))
    layers = Golden()
    avg_pool_cases(layers)
    batch_norm_cases(layers)
    depthwise_cases(layers)
    layers.write(os.path.join(a.out, "layers.axg"))
    cnn_case(a.data, os.path.join(a.out, "cnn_adam.axg"))
    print("TensorFlow's float32 error, in units of 2^-24 * S:",
          ", ".join(f"{k} {v:.2f}" for k, v in sorted(tf_error.items())))
    activations = Golden()
    smooth_activation_cases(activations)
    piecewise_activation_cases(activations)
    softmax_cases(activations)
    arithmetic_cases(activations)
    shape_cases(activations)
    activations.write(os.path.join(a.out, "activations.axg"))
    print("TensorFlow's float32 error of the activations, in units of 2^-24 * B:",
          ", ".join(f"{k} {v:.2f}" for k, v in sorted(tf_function_error.items())))


if __name__ == "__main__":
    main()
