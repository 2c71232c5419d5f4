#!/usr/bin/env python3
"""Writes the Keras 3 models axon's graph and layer tests train, and what
Keras computes with them. Needs TensorFlow and Keras from PyPI (pip install
tensorflow-cpu); nothing in axon's build or CI runs it. Usage:

    python3 tools/tf-goldens/keras_models.py [--data DIR]

For each model NAME it writes
  tests/data/keras_NAME.json         the model, model.to_json()
  tests/data/keras_NAME.safetensors  its initial weights under Keras' names
                                     ("conv2d/kernel"), for --initial-weights
and into tests/goldens/tf/keras_models.axg, per model:
  NAME/data    the initial weights (in:<layer>/<weight>)
  NAME/eval    Keras' evaluate() of those weights on the first 256 test
               images: out:loss, out:accuracy
  NAME/step    one train_on_batch (Adam, learning rate 1e-3) on the first 64
               training images: out:grad/<weight> (the gradients, from
               tf.GradientTape with training=True, before the update, of
               the loss plus the regularizers' penalties),
               out:loss, and out:<layer>/<weight> after the update (moving
               statistics included). Both come from the same model in
               float64 (the same weights and images, widened): Keras'
               float32 gradients of the ResNet are 5.5e-3 (relative norm)
               from float64's, axon's 2.5e-6, so a float32 Keras oracle
               would hide any error below 0.5% and flip Adam's sign(g) in
               the elements whose gradient it gets wrong.
The images come from Fashion-MNIST as axon reads them: uint8 scaled by 1/255
in float32, except for models that start with Rescaling, which get the
pixels as they are (axon's rule: such a model scales its input itself).
Dropout rates are 0 so that a step is deterministic.
"""
import argparse
import os
import re
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import keras  # noqa: E402
import tensorflow as tf  # noqa: E402
from keras import layers  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generate import Golden, find, read_idx  # noqa: E402

rng = np.random.default_rng(20261202)


def resnet():
    """A small ResNet: BatchNormalization, Add and strided 1x1 projection shortcuts."""
    def block(x, filters, stride):
        y = layers.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False)(x)
        y = layers.BatchNormalization()(y)
        y = layers.ReLU()(y)
        y = layers.Conv2D(filters, 3, padding="same", use_bias=False)(y)
        y = layers.BatchNormalization()(y)
        if stride != 1 or x.shape[-1] != filters:
            x = layers.Conv2D(filters, 1, strides=stride, use_bias=False)(x)
            x = layers.BatchNormalization()(x)
        return layers.ReLU()(layers.Add()([x, y]))

    i = keras.Input((28, 28, 1))
    x = layers.Conv2D(16, 3, padding="same", use_bias=False)(i)
    x = layers.BatchNormalization()(x)
    x = layers.ReLU()(x)
    x = block(x, 16, 1)
    x = block(x, 32, 2)
    x = block(x, 64, 2)
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(i, layers.Dense(10)(x), name="resnet")


def inception():
    """An Inception-style cell: four branches joined by Concatenate."""
    i = keras.Input((28, 28, 1))
    x = layers.Conv2D(16, 3, activation="relu")(i)
    b1 = layers.Conv2D(8, 1, activation="relu")(x)
    b2 = layers.Conv2D(8, 1, activation="relu")(x)
    b2 = layers.Conv2D(8, 3, padding="same", activation="relu")(b2)
    b3 = layers.Conv2D(4, 1, activation="relu")(x)
    b3 = layers.Conv2D(4, 5, padding="same", activation="relu")(b3)
    b4 = layers.MaxPooling2D(3, strides=1, padding="same")(x)
    b4 = layers.Conv2D(4, 1, activation="relu")(b4)
    x = layers.Concatenate()([b1, b2, b3, b4])
    x = layers.MaxPooling2D(2)(x)
    x = layers.Flatten()(x)
    return keras.Model(i, layers.Dense(10)(x), name="inception")


def sequential():
    """AveragePooling2D, GlobalMaxPooling2D, tanh / elu / sigmoid,
    BatchNormalization after a Dense layer and a softmax output."""
    return keras.Sequential([
        keras.Input((28, 28, 1)),
        layers.Conv2D(16, 3, activation="tanh"),
        layers.AveragePooling2D(2),
        layers.Conv2D(32, 3, activation="elu"),
        layers.GlobalMaxPooling2D(),
        layers.Dense(32, activation="sigmoid"),
        layers.BatchNormalization(),
        layers.Dense(10, activation="softmax"),
    ], name="sequential_mix")


def strided():
    """A 5x4 kernel with strides (2, 1), then a dilated convolution."""
    return keras.Sequential([
        keras.Input((28, 28, 1)),
        layers.Conv2D(16, (5, 4), strides=(2, 1), activation="relu"),
        layers.Conv2D(16, 3, dilation_rate=2, activation="relu"),
        layers.Flatten(),
        layers.Dense(10),
    ], name="strided")


def misc():
    """Every other layer and activation axon reads, in one graph: Rescaling
    at the input, ZeroPadding2D, DepthwiseConv2D, the merges, LeakyReLU,
    ReLU(max_value), SpatialDropout2D, Reshape, Dropout and the Softmax layer."""
    i = keras.Input((28, 28, 1))
    x = layers.Rescaling(1.0 / 255)(i)
    x = layers.ZeroPadding2D(((1, 0), (2, 1)))(x)
    x = layers.DepthwiseConv2D(3, depth_multiplier=2, activation="relu6")(x)
    x = layers.MaxPooling2D(2)(x)
    a = layers.Conv2D(8, 1, activation="gelu")(x)
    b = layers.Conv2D(8, 1, activation="silu")(x)
    s = layers.Subtract()([a, b])
    m = layers.Multiply()([a, b])
    av = layers.Average()([s, m, a])
    mx = layers.Maximum()([av, b])
    x = layers.LeakyReLU(negative_slope=0.1)(mx)
    x = layers.ReLU(max_value=3.0, negative_slope=0.05)(x)
    x = layers.SpatialDropout2D(0.0)(x)
    x = layers.Reshape((-1,))(x)
    x = layers.Dense(16, activation="selu")(x)
    x = layers.Dropout(0.0)(x)
    x = layers.Dense(16, activation="softplus")(x)
    x = layers.Activation("leaky_relu")(x)
    x = layers.Dense(10)(x)
    return keras.Model(i, layers.Softmax()(x), name="misc")


def squeeze_excite():
    """Merges that broadcast: a squeeze-and-excitation gate of rank 1 ([C],
    first in its Multiply) and one of [1, 1, C] against [H, W, C] maps, a
    row profile [1, W, C] of the gated maps subtracted, a Maximum and an Average against a
    [1, 1, C] input."""
    i = keras.Input((28, 28, 1))
    x = layers.Conv2D(16, 3, strides=2, padding="same", use_bias=False)(i)
    x = layers.BatchNormalization()(x)
    x = layers.ReLU()(x)
    s = layers.GlobalAveragePooling2D()(x)
    s = layers.Dense(4, activation="relu")(s)
    s = layers.Dense(16, activation="sigmoid")(s)
    x = layers.Multiply()([s, x])
    t = layers.GlobalMaxPooling2D(keepdims=True)(x)
    t = layers.Conv2D(16, 1, activation="tanh")(t)
    y = layers.Conv2D(16, 3, padding="same")(x)
    y = layers.Add()([y, t])
    r = layers.AveragePooling2D((14, 1))(x)
    y = layers.Subtract()([y, r])
    y = layers.Maximum()([y, t])
    y = layers.Average()([t, y, x])
    y = layers.GlobalAveragePooling2D()(y)
    return keras.Model(i, layers.Dense(10)(y), name="squeeze_excite")


def channelless():
    """Keras' Input((28, 28)): the images without their channel axis. A
    Dense over each image row first, then TensorFlow's beginner quickstart
    (Flatten, Dense 128, Dropout, Dense 10)."""
    return keras.Sequential([
        keras.Input((28, 28)),
        layers.Dense(16, activation="relu"),
        layers.Flatten(),
        layers.Dense(128, activation="relu"),
        layers.Dropout(0.0),
        layers.Dense(10),
    ], name="channelless")


def separable():
    """Keras' "image classification from scratch" example in small:
    Rescaling, a strided Conv2D with BatchNormalization and relu, then a
    block of SeparableConv2D (depth_multiplier 2, he_normal; then a 5x3
    kernel), BatchNormalization, MaxPooling2D(3, strides 2, same) added to a
    strided 1x1 Conv2D of the block's input; a strided SeparableConv2D,
    GlobalAveragePooling2D, Dropout, Dense. No bias before a batch
    normalization (its gradient is zero there: no relative bound holds)."""
    i = keras.Input((28, 28, 1))
    x = layers.Rescaling(1.0 / 255)(i)
    x = layers.Conv2D(16, 3, strides=2, padding="same", use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("relu")(x)
    previous = x
    x = layers.SeparableConv2D(24, 3, padding="same", depth_multiplier=2, use_bias=False,
                               depthwise_initializer="he_normal")(x)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("relu")(x)
    x = layers.SeparableConv2D(24, (5, 3), padding="same", use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    x = layers.MaxPooling2D(3, strides=2, padding="same")(x)
    x = layers.add([x, layers.Conv2D(24, 1, strides=2, padding="same")(previous)])
    x = layers.SeparableConv2D(32, 3, strides=2, activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dropout(0.0)(x)
    return keras.Model(i, layers.Dense(10)(x), name="separable")


def regularized():
    """Keras' L2 regularizers (their penalty in the loss and the gradients):
    a Conv2D's kernel and bias, a DepthwiseConv2D's kernel (Keras 2's name
    "l2", 0.01), a SeparableConv2D's pointwise kernel, a Dense kernel."""
    from keras import regularizers
    return keras.Sequential([
        keras.Input((28, 28, 1)),
        layers.Conv2D(8, 3, strides=2, activation="relu", kernel_regularizer=regularizers.L2(1e-3),
                      bias_regularizer=regularizers.L2(1e-2)),
        layers.DepthwiseConv2D(3, depthwise_regularizer="l2"),
        layers.SeparableConv2D(16, 3, activation="relu", pointwise_regularizer=regularizers.L1L2(l1=0.0, l2=5e-3)),
        layers.Flatten(),
        layers.Dense(10, kernel_regularizer=regularizers.L2(2e-3)),
    ], name="regularized")


def applications():
    """What Keras' own applications build with beyond the models above:
    EfficientNet's Normalization of the input (its weights mean, variance
    and count) and ConvNeXt's (numbers in its config), MobileNetV3's
    hard_silu and its hard sigmoid `ReLU(6.0)(x + 3.0) * (1.0 / 6.0)`
    (keras.ops arithmetic of a tensor and a number), NASNet's Cropping2D
    after a ZeroPadding2D, EfficientNet's per-sample Dropout (noise_shape
    [None, 1, 1, 1]; rate 0 here), and keras.ops arithmetic of two tensors,
    of a number and a tensor, a division and a negation."""
    i = keras.Input((28, 28, 1))
    x = layers.Normalization()(i)
    x = layers.Conv2D(16, 3, strides=2, padding="same", use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("hard_silu")(x)
    s = layers.GlobalAveragePooling2D(keepdims=True)(x)
    s = layers.Conv2D(8, 1, activation="relu")(s)
    s = layers.Conv2D(16, 1)(s)
    s = layers.ReLU(6.0)(s + 3.0) * (1.0 / 6.0)
    x = layers.Multiply()([x, s])
    p = layers.ZeroPadding2D(((0, 1), (0, 1)))(x)
    p = layers.Cropping2D(((1, 0), (1, 0)))(p)
    p = layers.Conv2D(16, 3, padding="same", activation="hard_sigmoid")(p)
    p = layers.Dropout(0.0, noise_shape=(None, 1, 1, 1))(p)
    x = x + p
    x = 1.0 - x / 4.0
    x = -(x * 2.0) - 0.5
    x = layers.Cropping2D(2)(x)
    x = layers.Normalization(mean=0.5, variance=4.0)(x)
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(i, layers.Dense(10)(x), name="applications")


def transpose():
    """Conv2DTranspose: SAME at stride 2 back to the input's size, VALID
    with a rectangular kernel and strides (1, 2), a kernel smaller than its
    stride (the output's last rows and columns only the bias's), and one
    without bias; and UpSampling2D by (2, 3)."""
    i = keras.Input((28, 28, 1))
    x = layers.Conv2D(8, 3, strides=2, padding="same", activation="relu")(i)
    x = layers.Conv2DTranspose(8, 3, strides=2, padding="same", activation="relu")(x)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2DTranspose(4, (3, 2), strides=(1, 2), activation="tanh")(x)
    x = layers.Conv2D(4, 3, strides=3)(x)
    x = layers.UpSampling2D((2, 3))(x)
    x = layers.Conv2DTranspose(6, 2, strides=3)(x)
    x = layers.Conv2DTranspose(6, 3, padding="same", use_bias=False, activation="elu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(i, layers.Dense(10)(x), name="transpose")


def convnext():
    """ConvNeXt's parts: nested Sequentials (a patchifying stem, a
    downsampling LayerNormalization + strided Conv2D), blocks of a Conv2D
    grouped by channel, LayerNormalization, Dense layers on the pixels with
    gelu, ConvNeXt's LayerScale and the residual Add; a grouped Conv2D of two
    filters a channel, LayerNormalization over a whole sample without beta
    and over features without gamma."""
    from keras.src.applications.convnext import LayerScale

    def block(x, dim, name):
        r = layers.Conv2D(dim, 3, padding="same", groups=dim, name=f"{name}_depthwise_conv")(x)
        r = layers.LayerNormalization(epsilon=1e-6, name=f"{name}_layernorm")(r)
        r = layers.Dense(4 * dim, name=f"{name}_pointwise_conv_1")(r)
        r = layers.Activation("gelu", name=f"{name}_gelu")(r)
        r = layers.Dense(dim, name=f"{name}_pointwise_conv_2")(r)
        r = LayerScale(0.5, dim, name=f"{name}_layer_scale")(r)
        return layers.Add(name=f"{name}_add")([x, r])

    i = keras.Input((28, 28, 1))
    x = keras.Sequential([layers.Conv2D(16, 2, strides=2, name="stem_conv"),
                          layers.LayerNormalization(epsilon=1e-6, name="stem_layernorm")], name="stem")(i)
    x = block(x, 16, "block_0")
    x = keras.Sequential([layers.LayerNormalization(epsilon=1e-6, name="downsampling_layernorm"),
                          layers.Conv2D(32, 2, strides=2, name="downsampling_conv")], name="downsampling")(x)
    x = block(x, 32, "block_1")
    x = layers.Conv2D(64, 3, groups=32, activation="relu", name="grouped_conv")(x)
    x = layers.LayerNormalization(axis=[1, 2, 3], center=False, name="sample_layernorm")(x)
    x = layers.GlobalAveragePooling2D(name="head_gap")(x)
    x = layers.LayerNormalization(scale=False, name="head_layernorm")(x)
    return keras.Model(i, layers.Dense(10, name="head_dense")(x), name="convnext")


def inception_resnet():
    """Inception-ResNet-v2's parts: convolutions with BatchNormalization
    without gamma (its conv2d_bn), branches concatenated, a linear 1x1
    convolution back to the shortcut's channels and its CustomScaleLayer
    x + r * scale, with and without the activation after it; L1 and L1L2
    regularizers (an L1 on a bias that starts at zero, whose gradient
    sign(0) is 0)."""
    from keras.src.applications.inception_resnet_v2 import CustomScaleLayer

    def conv_bn(x, filters, size, name, strides=1):
        x = layers.Conv2D(filters, size, strides=strides, padding="same", use_bias=False, name=name)(x)
        x = layers.BatchNormalization(scale=False, name=f"{name}_bn")(x)
        return layers.Activation("relu", name=f"{name}_ac")(x)

    def block(x, scale, name, activation="relu"):
        b0 = conv_bn(x, 8, 1, f"{name}_b0")
        b1 = conv_bn(x, 8, 1, f"{name}_b1a")
        b1 = conv_bn(b1, 8, 3, f"{name}_b1b")
        mixed = layers.Concatenate(name=f"{name}_mixed")([b0, b1])
        up = layers.Conv2D(16, 1, kernel_regularizer=keras.regularizers.L1(0.002), name=f"{name}_conv")(mixed)
        x = CustomScaleLayer(scale, name=f"{name}_scale")([x, up])
        return x if activation is None else layers.Activation(activation, name=f"{name}_ac")(x)

    i = keras.Input((28, 28, 1))
    x = conv_bn(i, 16, 3, "stem", strides=2)
    x = block(x, 0.17, "block35_1")
    x = block(x, 1.0, "block8_10", activation=None)
    x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
    out = layers.Dense(10, kernel_regularizer=keras.regularizers.L1L2(l1=0.001, l2=0.002), bias_regularizer="l1",
                       name="predictions")(x)
    return keras.Model(i, out, name="inception_resnet")


def prelu_minimum_mish():
    """PReLU with an alpha a channel (shared_axes [1, 2]) and an alpha a
    value (with an L2 regularizer), Minimum of three inputs, mish as a
    Conv2D's activation and as a layer of its own."""
    i = keras.Input((28, 28, 1))
    x = layers.Conv2D(8, 3, strides=2, name="conv")(i)
    x = layers.PReLU(alpha_initializer=keras.initializers.Constant(0.25), shared_axes=[1, 2], name="prelu_channel")(x)
    a = layers.Conv2D(8, 3, padding="same", activation="mish", name="branch_a")(x)
    b = layers.Conv2D(8, 3, padding="same", name="branch_b")(x)
    b = layers.PReLU(alpha_regularizer="l2", name="prelu_value")(b)
    m = layers.Minimum(name="minimum")([a, b, x])
    m = layers.Activation("mish", name="mish")(m)
    m = layers.GlobalAveragePooling2D(name="gap")(m)
    return keras.Model(i, layers.Dense(10, name="head")(m), name="prelu_minimum_mish")


def grouped_conv():
    """ResNeXt's grouped convolutions (1 < groups < channels): a block of a
    1x1 convolution, a 3x3 one in 4 groups with relu and a bias, a 1x1
    back and the residual Add; a strided grouped convolution with SAME
    padding and no bias, and one of 2 groups with 3 filters a group."""
    i = keras.Input((28, 28, 1))
    x = layers.Conv2D(16, 3, strides=2, activation="relu", name="stem")(i)
    r = layers.Conv2D(16, 1, activation="relu", name="reduce")(x)
    r = layers.Conv2D(16, 3, padding="same", groups=4, activation="relu", name="grouped")(r)
    r = layers.Conv2D(16, 1, name="expand")(r)
    x = layers.Add(name="add")([x, r])
    x = layers.Conv2D(8, 3, strides=2, padding="same", groups=2, use_bias=False, name="grouped_strided")(x)
    x = layers.Conv2D(6, 3, groups=2, activation="tanh", name="grouped_wide")(x)
    x = layers.GlobalAveragePooling2D(name="gap")(x)
    return keras.Model(i, layers.Dense(10, name="head")(x), name="grouped_conv")


def group_norm():
    """GroupNormalization: 4 groups of an image's channels, one group a
    channel (groups=-1, instance normalisation) without beta, and 2 groups
    of a Dense layer's features without gamma."""
    i = keras.Input((28, 28, 1))
    x = layers.Conv2D(16, 3, strides=2, use_bias=False, name="conv")(i)
    x = layers.GroupNormalization(groups=-1, center=False, epsilon=1e-5, name="instance_norm")(x)
    x = layers.Activation("relu", name="relu")(x)
    x = layers.Conv2D(16, 3, padding="same", use_bias=False, name="conv_1")(x)
    x = layers.GroupNormalization(groups=4, name="group_norm")(x)
    x = layers.Activation("relu", name="relu_1")(x)
    x = layers.GlobalMaxPooling2D(name="gmp")(x)
    x = layers.Dense(16, name="dense")(x)
    x = layers.GroupNormalization(groups=2, scale=False, name="feature_norm")(x)
    return keras.Model(i, layers.Dense(10, name="head")(x), name="group_norm")


def operations():
    """keras.ops called on a functional model's tensors (Keras writes each
    as an operation among the layers): leaky_relu, silu, tanh, maximum and
    minimum of two tensors, concatenate, relu6, hard_silu, relu, mean and
    max over height and width (keepdims), reshape, selu, elu, exact gelu,
    hard_sigmoid, sigmoid, softplus, gelu's tanh approximation (ops.gelu's
    default) and softmax."""
    from keras import ops
    i = keras.Input((28, 28, 1))
    x = ops.leaky_relu(layers.Conv2D(8, 3, strides=2, name="conv")(i), negative_slope=0.1)
    a = ops.silu(layers.Conv2D(8, 3, padding="same", name="branch_a")(x))
    b = ops.tanh(layers.Conv2D(8, 3, padding="same", name="branch_b")(x))
    c = ops.hard_silu(ops.relu6(ops.concatenate([ops.maximum(a, b), ops.minimum(a, b)], axis=-1)))
    c = ops.relu(layers.Conv2D(8, 1, name="mix")(c))
    pooled = ops.reshape(ops.max(c, axis=[1, 2], keepdims=True), (-1, 8))
    h = ops.concatenate([ops.mean(c, axis=[1, 2]), pooled], axis=-1)
    acts = [ops.selu, ops.elu, lambda t: ops.gelu(t, approximate=False), ops.hard_sigmoid, ops.sigmoid, ops.softplus,
            ops.gelu]
    h = ops.concatenate([f(layers.Dense(4, name=f"dense_{k}")(h)) for k, f in enumerate(acts)], axis=-1)
    h = ops.reshape(ops.softmax(ops.reshape(h, (-1, 4, 7))), (-1, 28))
    return keras.Model(i, layers.Dense(10, name="head")(h), name="operations")


def transpose_padding():
    """Conv2DTranspose with output_padding: SAME at stride 2 with 1 (an even
    size from an odd one), VALID at strides (2, 3) with (1, 2), SAME with an
    even kernel (where 1 is the only padding that maps back)."""
    i = keras.Input((28, 28, 1))
    x = layers.Conv2D(8, 3, strides=2, activation="relu")(i)
    x = layers.Conv2DTranspose(8, 3, strides=2, padding="same", output_padding=1, activation="relu")(x)
    x = layers.Conv2D(4, 3, strides=3)(x)
    x = layers.Conv2DTranspose(4, (3, 2), strides=(2, 3), output_padding=(1, 2), activation="tanh")(x)
    x = layers.Conv2DTranspose(6, 4, strides=2, padding="same", output_padding=1, use_bias=False)(x)
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(i, layers.Dense(10)(x), name="transpose_padding")


def upsampling():
    """UpSampling2D with bilinear interpolation (TensorFlow's resize:
    half-pixel centres, edges clamped) by 2, and by (3, 2): an odd factor,
    whose tent is 5 taps, beside an even one."""
    i = keras.Input((28, 28, 1))
    x = layers.Conv2D(6, 3, strides=2, activation="relu")(i)
    x = layers.UpSampling2D(2, interpolation="bilinear")(x)
    x = layers.Conv2D(4, 3, strides=3, activation="tanh")(x)
    x = layers.UpSampling2D((3, 2), interpolation="bilinear")(x)
    x = layers.Conv2D(6, 3, strides=2)(x)
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(i, layers.Dense(10)(x), name="upsampling")


MODELS = {"resnet": resnet, "inception": inception, "sequential_mix": sequential, "strided": strided, "misc": misc,
          "squeeze_excite": squeeze_excite, "channelless": channelless, "separable": separable,
          "regularized": regularized, "applications": applications, "transpose": transpose, "convnext": convnext,
          "inception_resnet": inception_resnet, "prelu_minimum_mish": prelu_minimum_mish,
          "grouped_conv": grouped_conv, "group_norm": group_norm, "operations": operations,
          "transpose_padding": transpose_padding, "upsampling": upsampling}


# Weights that start at zero (drawn, then replaced, so that the draws of
# the models after them stay as they were): an L1 regularizer's gradient at
# 0 is sign(0) = 0.
ZERO_WEIGHTS = {"inception_resnet": {"predictions/bias"}}


def initial_weights(model):
    """Glorot-uniform kernels, small non-zero biases and batch-norm scales
    and offsets, moving statistics away from 0 and 1: every weight shows
    (but those of ZERO_WEIGHTS)."""
    out = []
    for w in model.weights:
        shape = tuple(w.shape)
        name = w.name
        if w.path in ZERO_WEIGHTS.get(model.name, ()):
            rng.uniform(-0.05, 0.05, shape)
            out.append(np.zeros(shape, np.float32))
        elif len(shape) > 1:
            fan_in = int(np.prod(shape[:-1]))
            fan_out = shape[-1] * (int(np.prod(shape[:-2])) if len(shape) == 4 else 1)
            limit = np.sqrt(6.0 / (fan_in + fan_out))
            out.append(rng.uniform(-limit, limit, shape).astype(np.float32))
        elif name == "gamma":
            out.append(rng.uniform(0.8, 1.2, shape).astype(np.float32))
        elif name == "count":  # Normalization's adapt() count: an integer, unused by its call
            out.append(np.array(7, np.float32))
        elif name in ("moving_variance", "variance"):
            out.append(rng.uniform(0.5, 1.5, shape).astype(np.float32))
        else:
            out.append(rng.uniform(-0.05, 0.05, shape).astype(np.float32))
    return out


def set_weights(model, weights):
    """model.set_weights, then what loading a .keras file also does:
    Normalization computes with the statistics of its last finalize_state()
    (at build: mean 0, variance 1), not with its weights as set."""
    model.set_weights(weights)
    for layer in model.layers:
        if isinstance(layer, keras.layers.Normalization):
            layer.finalize_state()


def leaf_layers(model):
    """The model's layers, those of a nested model in its place (axon reads
    a nested Sequential's layers as the model's own)."""
    for layer in model.layers:
        if hasattr(layer, "layers"):
            yield from leaf_layers(layer)
        else:
            yield layer


def weight_name(layer, w):
    """layer/weight. A weight made without a name (ConvNeXt's LayerScale) is
    "variable" to Keras, numbered as a process makes more ("variable_1", ...):
    axon calls it "variable" in every layer."""
    return f"{layer.name}/{re.sub(r'^variable_[0-9]+$', 'variable', w.name)}"


def weight_names(model):
    return [weight_name(layer, w) for layer in leaf_layers(model) for w in layer.weights]


def write_safetensors(path, names, arrays):
    from safetensors.numpy import save_file
    save_file({n: np.asarray(a, order="C") for n, a in zip(names, arrays)}, path)


def step_in_float64(make, names, init, x, y, softmax_out):
    """The gradients of one batch and one train_on_batch of the model built
    in float64 from the same weights: the golden tensors of NAME/step."""
    keras.config.set_floatx("float64")
    try:
        keras.backend.clear_session()
        model = make()
        set_weights(model, [np.float64(w) for w in init])
        x64 = np.float64(x)
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=not softmax_out)
        trainable = list(model.trainable_weights)
        with tf.GradientTape() as tape:
            # The regularizers' penalties join the loss, as in Keras' fit (none: + 0).
            step_loss = loss(y, model(x64, training=True)) + sum(model.losses)
        grads = tape.gradient(step_loss, trainable)
        # The gradient pass above moved the moving statistics: start again.
        set_weights(model, [np.float64(w) for w in init])
        model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3), loss=loss)
        tob = model.train_on_batch(x64, y, return_dict=True)
        trainable_names = {id(v): weight_name(l, v) for l in leaf_layers(model) for v in l.trainable_weights}
        return ([("out:loss", np.float32([tob["loss"]]))] +
                [(f"out:grad/{trainable_names[id(v)]}", np.float32(gr.numpy())) for v, gr in zip(trainable, grads)] +
                [(f"out:{n}", np.float32(w.numpy())) for n, w in zip(names, model.weights)])
    finally:
        keras.config.set_floatx("float32")


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    a = p.parse_args()
    print(f"TensorFlow {tf.__version__}, Keras {keras.__version__}")
    train_x = read_idx(find(a.data, "train-images-idx3-ubyte"))[:64].reshape(64, 28, 28, 1)
    train_y = read_idx(find(a.data, "train-labels-idx1-ubyte"))[:64].astype(np.int32)
    test_x = read_idx(find(a.data, "t10k-images-idx3-ubyte"))[:256].reshape(256, 28, 28, 1)
    test_y = read_idx(find(a.data, "t10k-labels-idx1-ubyte"))[:256].astype(np.int32)
    g = Golden()
    g.add("data", "", {}, [("in:train_images", train_x), ("in:train_labels", train_y),
                           ("in:test_images", test_x), ("in:test_labels", test_y)])
    for name, make in MODELS.items():
        keras.backend.clear_session()  # layer names from conv2d, dense, ... again
        model = make()
        softmax_out = name in ("sequential_mix", "misc")
        raw = name in ("misc", "separable")  # start with Rescaling: the pixels as they are
        pixels = (lambda x: x.astype(np.float32)) if raw else (
            lambda x: (x.astype(np.float64) / 255.0).astype(np.float32))
        # Input((H, W)): the images [N, H, W, 1] without their channel axis.
        scale = (lambda x: pixels(x)[..., 0]) if len(model.input_shape) == 3 else pixels
        names = weight_names(model)
        init = initial_weights(model)
        set_weights(model, init)
        with open(os.path.join(root, "tests", "data", f"keras_{name}.json"), "w") as f:
            f.write(model.to_json())
        write_safetensors(os.path.join(root, "tests", "data", f"keras_{name}.safetensors"), names, init)
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=not softmax_out)
        model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3), loss=loss, metrics=["accuracy"])
        ev_loss, ev_acc = model.evaluate(scale(test_x), test_y, batch_size=64, verbose=0)
        g.add(f"{name}/data", "", {"raw_pixels": int(raw)}, [(f"in:{n}", w) for n, w in zip(names, init)])
        g.add(f"{name}/eval", "", {}, [("out:loss", np.float32([ev_loss])), ("out:accuracy", np.float32([ev_acc]))])
        x = scale(train_x)
        step = step_in_float64(make, names, init, x, train_y, softmax_out)
        g.add(f"{name}/step", "", {}, step)
        print(f"  {name}: {model.count_params()} parameters, evaluate loss {ev_loss:.6f} accuracy {ev_acc:.4f}, "
              f"train_on_batch loss (float64) {step[0][1][0]:.6f}")
    g.write(os.path.join(root, "tests", "goldens", "tf", "keras_models.axg"))


if __name__ == "__main__":
    main()
