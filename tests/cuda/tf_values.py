"""TensorFlow's own outputs for the host tests of the CUDA kernels' per-element
arithmetic (activation_math_test.cpp, batch_norm_math_test.cpp,
pool_math_test.cpp). Writes tf_values.inc next to this file; the build and
the tests never need TensorFlow. Run with a TensorFlow 2.x Python:

    python tests/cuda/tf_values.py
"""
import os

import numpy as np
import tensorflow as tf
import keras

f32 = np.float32
out = []


def c_float(v):
    v = f32(v)
    if np.isnan(v):
        return "NAN"
    if np.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    text = "%.9g" % v
    return text + ("f" if "." in text or "e" in text else ".0f")


def emit(name, values):
    values = np.asarray(values, f32).reshape(-1)
    body = ", ".join(c_float(v) for v in values)
    out.append(f"const std::vector<float> {name} = {{{body}}};")


def grad(fn, x):
    x = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    return tape.gradient(y, x, output_gradients=tf.constant(dy)).numpy()


# Activations: x over the ranges each formula switches in, dy alongside.
x = f32([-100, -90, -20, -15, -14, -13.9, -13, -6, -3.5, -1, -0.5, -1e-3, -1e-7, 0, 1e-7, 1e-3, 0.5, 1, 2.5, 5.999,
         6, 6.5, 13, 13.9, 14, 15, 20, 90, 100])
dy = f32(np.linspace(-1.5, 2.0, x.size))
emit("kX", x)
emit("kDy", dy)
raw = tf.raw_ops
for name, fwd, bwd in [
    ("Sigmoid", lambda t: raw.Sigmoid(x=t), lambda y: raw.SigmoidGrad(y=y, dy=dy)),
    ("Tanh", lambda t: raw.Tanh(x=t), lambda y: raw.TanhGrad(y=y, dy=dy)),
    ("Elu", lambda t: raw.Elu(features=t), lambda y: raw.EluGrad(gradients=dy, outputs=y)),
    ("Selu", lambda t: raw.Selu(features=t), lambda y: raw.SeluGrad(gradients=dy, outputs=y)),
]:
    y = fwd(x).numpy()
    emit(f"k{name}Y", y)
    emit(f"k{name}Dx", bwd(y).numpy())  # the gradient ops take y
for name, fwd, bwd in [
    ("Relu6", lambda t: raw.Relu6(features=t), lambda t: raw.Relu6Grad(gradients=dy, features=t)),
    ("LeakyRelu", lambda t: raw.LeakyRelu(features=t, alpha=0.2),
     lambda t: raw.LeakyReluGrad(gradients=dy, features=t, alpha=0.2)),
    ("Softplus", lambda t: raw.Softplus(features=t), lambda t: raw.SoftplusGrad(gradients=dy, features=t)),
]:
    emit(f"k{name}Y", fwd(x).numpy())
    emit(f"k{name}Dx", bwd(x).numpy())
for name, fn in [("GeluErf", lambda t: tf.nn.gelu(t, approximate=False)),
                 ("GeluTanh", lambda t: tf.nn.gelu(t, approximate=True)),
                 ("Silu", tf.nn.silu)]:
    emit(f"k{name}Y", fn(x).numpy())
    emit(f"k{name}Dx", grad(fn, x))
# Keras' relu(x, negative_slope, max_value, threshold), with arguments where
# it agrees with the op table's formula.
for i, (slope, max_value, threshold) in enumerate([(0.0, None, 0.0), (0.1, 6.0, 0.5), (0.3, None, 0.0), (0.0, 4.0, 1.0)]):
    fn = lambda t: keras.activations.relu(t, negative_slope=slope, max_value=max_value, threshold=threshold)
    emit(f"kClippedRelu{i}Y", fn(x).numpy())
    emit(f"kClippedRelu{i}Dx", grad(fn, x))
# Two tensors: Sub, Mul, Maximum (NaN on either side), MaximumGrad's rule.
a = f32([1, -2, 3, np.nan, 5, 0, -0.0, 7, np.inf])
b = f32([1, 4, -3, 2, np.nan, 0.0, 0.0, -np.inf, np.inf])
emit("kA", a)
emit("kB", b)
emit("kSub", raw.Sub(x=a, y=b).numpy())
emit("kMul", raw.Mul(x=a, y=b).numpy())
emit("kMaximum", raw.Maximum(x=a, y=b).numpy())

# Batch normalization over [2, 3, 4, 5] (5 channels), TensorFlow's fused kernel.
rng = np.random.default_rng(5)
bx = f32(rng.normal(1.5, 2.0, (2, 3, 4, 5)))
bdy = f32(rng.normal(0.0, 1.0, bx.shape))
scale, offset = f32(rng.uniform(0.5, 2.0, 5)), f32(rng.uniform(-1, 1, 5))
mean, var = f32(rng.uniform(-1, 1, 5)), f32(rng.uniform(0.5, 2.0, 5))
for name, v in [("kBnX", bx), ("kBnDy", bdy), ("kBnScale", scale), ("kBnOffset", offset), ("kBnMean", mean),
                ("kBnVariance", var)]:
    emit(name, v)
for tag, training, factor in [("Train", True, 1.0), ("TrainAvg", True, 0.3), ("Infer", False, 1.0)]:
    r = raw.FusedBatchNormV3(x=bx, scale=scale, offset=offset, mean=mean, variance=var, epsilon=0.001,
                             exponential_avg_factor=factor, data_format="NHWC", is_training=training)
    for k, part in enumerate(["Y", "BatchMean", "BatchVariance", "Reserve1", "Reserve2"]):
        emit(f"kBn{tag}{part}", r[k].numpy())
    g = raw.FusedBatchNormGradV3(y_backprop=bdy, x=bx, scale=scale, reserve_space_1=r[3], reserve_space_2=r[4],
                                 reserve_space_3=r[5], epsilon=0.001, data_format="NHWC", is_training=training)
    for k, part in enumerate(["Dx", "ScaleBackprop", "OffsetBackprop"]):
        emit(f"kBn{tag}{part}", g[k].numpy())

# Average pooling [2, 7, 6, 3]: 3x3 stride 2 SAME (padding after only on
# rows), 2x2 stride 2 VALID, 3x3 stride 1 SAME.
px = f32(rng.uniform(-1, 1, (2, 7, 6, 3)))
emit("kPoolX", px)
for tag, k, s, pad in [("S3s2Same", 3, 2, "SAME"), ("S2s2Valid", 2, 2, "VALID"), ("S3s1Same", 3, 1, "SAME")]:
    y = raw.AvgPool(value=px, ksize=[1, k, k, 1], strides=[1, s, s, 1], padding=pad, data_format="NHWC").numpy()
    pdy = f32(rng.uniform(-1, 1, y.shape))
    dx = raw.AvgPoolGrad(orig_input_shape=px.shape, grad=pdy, ksize=[1, k, k, 1], strides=[1, s, s, 1], padding=pad,
                         data_format="NHWC").numpy()
    emit(f"kAvg{tag}Y", y)
    emit(f"kAvg{tag}Dy", pdy)
    emit(f"kAvg{tag}Dx", dx)

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf_values.inc")
with open(path, "w") as f:
    f.write("// Generated by tests/cuda/tf_values.py from TensorFlow " + tf.__version__ + "; do not edit.\n")
    f.write("\n".join(out) + "\n")
print("wrote", path)
