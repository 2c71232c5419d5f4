#!/usr/bin/env python3
"""Writes what Keras 3's augmentation layers make of fixed draws, and its
Resizing, CenterCrop and AutoContrast of fixed images, for axon's own
(core/src/nn/layers/random_*.cpp, resizing.cpp, center_crop.cpp,
auto_contrast.cpp, solarization.cpp) to be
checked against: each layer's
transform_images() on a small batch with a transformation built from the
draws as the layer's get_random_transformation() would build it. Needs
TensorFlow (Keras' TensorFlow backend runs tf.raw_ops.ImageProjectiveTransformV3);
nothing in axon's build or CI runs it. Usage:

    python3 tools/tf-goldens/augment_goldens.py

It writes tests/train/augment_goldens.txt, one case per line:
    NAME TRAINING N H W C IN_HEX DRAWS_HEX OUT_H OUT_W OUT_HEX MODEL_JSON
IN_HEX and OUT_HEX are float32 images (NHWC, little-endian); DRAWS_HEX is
float32 [N, 4], each sample's draw as axon's layer keeps it (see
core/include/axon/nn/augmentation.hpp; RandomCrop's is the batch's, in row
0); MODEL_JSON is a Keras Sequential (Input, the layer, Flatten, Dense) from
which the test builds the layer through axon's Keras reader. RandomCrop at
inference is Keras 2's (smart_resize of the image to the window), since
Keras 3.15 passes images through uncropped there.
"""
import json
import os

import keras
import numpy as np
from keras import layers

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "train", "augment_goldens.txt")
rng = np.random.default_rng(23)


def hexf(a):
    return np.ascontiguousarray(a, dtype="<f4").tobytes().hex()


def images(n, h, w, c, scale=1.0):
    return (rng.random((n, h, w, c)) * scale).astype(np.float32)


def model_json(layer, shape):
    keras.backend.clear_session()
    m = keras.Sequential([keras.Input(shape=shape), layer, layers.Flatten(), layers.Dense(2)])
    return m, json.dumps(json.loads(m.to_json()), separators=(",", ":"))


def case(lines, name, layer, x, draws, transformation, training=True, expect=None):
    m, text = model_json(layer, x.shape[1:])
    lay = m.layers[0]
    y = expect if expect is not None else np.asarray(lay.transform_images(x, transformation, training=training))
    d = np.zeros((x.shape[0], 4), np.float32)
    d[:, :draws.shape[1]] = draws
    n, h, w, c = x.shape
    lines.append(" ".join(str(v) for v in (name, int(training), n, h, w, c, hexf(x), hexf(d), y.shape[1], y.shape[2],
                                           hexf(y), text)))


def flips(lines):
    x = images(4, 5, 7, 2)
    u = np.array([[0.1], [0.7], [0.5], [0.9]], np.float32)
    for mode in ("horizontal", "vertical", "horizontal_and_vertical"):
        case(lines, "flip_" + mode, layers.RandomFlip(mode), x, u, {"flips": (u <= 0.5).reshape(4, 1, 1, 1)})


def fill_cases():
    for mode in ("reflect", "wrap", "constant", "nearest"):
        for interpolation in ("bilinear", "nearest"):
            yield mode, interpolation


def translations(lines):
    x = images(3, 9, 11, 3)
    # height then width fractions; large shifts reach the fill modes' second period
    f = np.array([[0.3, -0.45], [-0.95, 0.8], [0.123, 0.377]], np.float32)
    for mode, interpolation in fill_cases():
        layer = layers.RandomTranslation((-1, 1), (-1, 1), fill_mode=mode, interpolation=interpolation, fill_value=0.25)
        h, w = x.shape[1], x.shape[2]
        t = np.stack([f[:, 1] * np.float32(w), f[:, 0] * np.float32(h)], 1).astype(np.float32)
        case(lines, "translation_%s_%s" % (mode, interpolation), layer, x, f, {"translations": t, "input_shape": x.shape})


def rotations(lines):
    x = images(3, 8, 10, 1)
    angles = np.array([[17.3], [-123.9], [250.0]], np.float32)
    for mode, interpolation in fill_cases():
        layer = layers.RandomRotation((-1, 1), fill_mode=mode, interpolation=interpolation, fill_value=-1.0)
        n, h, w = x.shape[0], x.shape[1], x.shape[2]
        m = layer._compute_affine_matrix(0.5, 0.5, keras.ops.convert_to_tensor(angles[:, 0]), np.zeros(n, np.float32),
                                         np.zeros(n, np.float32), np.ones(n, np.float32), np.zeros(n, np.float32),
                                         np.zeros(n, np.float32), h, w)
        case(lines, "rotation_%s_%s" % (mode, interpolation), layer, x, angles, {"rotation_matrix": m})


def zooms(lines):
    x = images(3, 10, 7, 2)
    z = np.array([[0.7, 1.3], [1.45, 0.82], [1.0, 0.6]], np.float32)  # height zoom, width zoom
    for mode, interpolation in fill_cases():
        layer = layers.RandomZoom((-0.5, 0.5), (-0.5, 0.5), fill_mode=mode, interpolation=interpolation)
        case(lines, "zoom_%s_%s" % (mode, interpolation), layer, x, z,
             {"height_zoom": z[:, 0:1], "width_zoom": z[:, 1:2], "input_shape": x.shape})
    layer = layers.RandomZoom(0.4)  # no width_factor: the height's zoom both ways
    zz = np.array([[0.8, 0.8], [1.3, 1.3], [1.1, 1.1]], np.float32)
    case(lines, "zoom_height_only", layer, x, zz, {"height_zoom": zz[:, 0:1], "width_zoom": zz[:, 0:1],
                                                   "input_shape": x.shape})


def crops(lines):
    x = images(2, 9, 12, 3)
    case(lines, "crop_window", layers.RandomCrop(5, 7), x, np.array([[3, 4], [3, 4]], np.float32), (3, 4))
    case(lines, "crop_corner", layers.RandomCrop(5, 7), x, np.array([[0, 0], [0, 0]], np.float32), (0, 0))
    # not larger both ways: the centre window of the target's aspect ratio (Keras' offsets), sliced and resized
    for hw in ((9, 6), (12, 12), (6, 16)):
        layer = layers.RandomCrop(*hw)
        h_start, w_start = layer.get_random_transformation(x, training=True)
        d = np.array([[h_start, w_start]] * 2, np.float32)
        case(lines, "crop_small_%dx%d" % hw, layer, x, d, (h_start, w_start))
    # inference: Keras 2's centre crop and resize
    from keras.src.utils.image_utils import smart_resize
    for hw in ((5, 7), (9, 12), (6, 16)):
        y = np.asarray(smart_resize(x, hw, interpolation="bilinear"))
        case(lines, "crop_inference_%dx%d" % hw, layers.RandomCrop(*hw), x, np.zeros((2, 2), np.float32), None,
             training=False, expect=y)


def contrasts(lines):
    x = images(3, 6, 5, 3, 255.0)
    f = np.array([[0.55], [1.7], [1.0]], np.float32)
    case(lines, "contrast", layers.RandomContrast((0.5, 0.9)), x, f, {"contrast_factor": f.reshape(3, 1, 1, 1)})
    x01 = images(3, 6, 5, 1)
    case(lines, "contrast_range", layers.RandomContrast(0.5, value_range=(0.2, 0.8)), x01, f,
         {"contrast_factor": f.reshape(3, 1, 1, 1)})


def brightnesses(lines):
    """rgb_delta as RandomBrightness' get_random_transformation makes it: the
    draw (a float32 tensor) times the range's width (a Python float)."""
    f = np.array([[-0.35], [0.52], [0.0]], np.float32)
    for name, x, value_range in (("brightness", images(3, 6, 5, 3, 255.0), (0, 255)),
                                 ("brightness_range", images(3, 6, 5, 1), (0.2, 0.8))):
        layer = layers.RandomBrightness((-0.4, 0.6), value_range=value_range)
        delta = keras.ops.convert_to_tensor(f.reshape(3, 1, 1, 1)) * (value_range[1] - value_range[0])
        case(lines, name, layer, x, f, {"rgb_delta": delta})


def shears(lines):
    x = images(3, 9, 11, 3)
    # x then y shear, the coin's sign applied; large shears reach the fill modes
    f = np.array([[0.3, -0.2], [-0.45, 0.6], [0.1, 0.0]], np.float32)
    for mode, interpolation in fill_cases():
        layer = layers.RandomShear(0.5, 0.7, fill_mode=mode, interpolation=interpolation, fill_value=0.25)
        case(lines, "shear_%s_%s" % (mode, interpolation), layer, x, f, {"shear_factor": f, "input_shape": x.shape})


def grayscales(lines):
    """should_apply as RandomGrayscale's get_random_transformation makes it:
    the draw below the factor; a grey image passes through."""
    u = np.array([[0.3], [0.7], [0.45]], np.float32)
    for name, x in (("grayscale", images(3, 5, 6, 3, 255.0)), ("grayscale_grey", images(3, 5, 6, 1))):
        layer = layers.RandomGrayscale(0.5)
        case(lines, name, layer, x, u, (u < 0.5).reshape(3, 1, 1, 1))


def inverts(lines):
    """apply_inversion as RandomInvert's get_random_transformation makes it:
    the uniform below the drawn chance; the complement is value_range's
    second value minus x, whatever its first."""
    d = np.array([[0.6, 0.2], [0.3, 0.8], [0.9, 0.9]], np.float32)  # {p, u}
    for name, x, value_range in (("invert", images(3, 5, 6, 3, 255.0), (0, 255)),
                                 ("invert_range", images(3, 5, 6, 1), (0.5, 1.0))):
        layer = layers.RandomInvert((0.2, 0.9), value_range=value_range)
        case(lines, name, layer, x, d, {"apply_inversion": d[:, 1] < d[:, 0]})


def solarizations(lines):
    """additions and thresholds as Solarization's get_random_transformation
    makes them (per image, on the [0, 255] scale)."""
    d = np.array([[0.0, 128.0], [40.5, 200.25], [100.0, 0.0]], np.float32)  # {addition, threshold}
    for name, x, value_range in (("solarize", images(3, 5, 6, 3, 255.0), (0, 255)),
                                 ("solarize_range", images(3, 5, 6, 2), (1.0, -1.0))):
        layer = layers.Solarization(addition_factor=0.5, threshold_factor=(0.1, 0.9), value_range=value_range)
        case(lines, name, layer, x * 2 - 1 if value_range[0] == 1.0 else x, d,
             {"additions": d[:, :1].reshape(3, 1, 1, 1), "thresholds": d[:, 1:].reshape(3, 1, 1, 1)})


def degenerations(lines):
    """factor as RandomColorDegeneration's get_random_transformation makes it;
    negative factors move colours away from grey, and the clip then bites."""
    f = np.array([[0.6], [-0.8], [0.0]], np.float32)
    for name, x, value_range in (("degenerate", images(3, 5, 6, 3, 255.0), (0, 255)),
                                 ("degenerate_range", images(3, 5, 6, 3), (0.2, 0.9))):
        layer = layers.RandomColorDegeneration((-0.9, 0.7), value_range=value_range)
        case(lines, name, layer, x, f, {"factor": f.reshape(3, 1, 1, 1)})


def posterizations(lines):
    """shift_factor as RandomPosterization's get_random_transformation makes
    it: 8 minus the drawn bit count."""
    b = np.array([[1], [4], [7]], np.float32)
    for name, x, value_range in (("posterize", images(3, 5, 6, 3, 255.0), (0, 255)),
                                 ("posterize_range", images(3, 5, 6, 2), (0, 1))):
        layer = layers.RandomPosterization((1, 8), value_range=value_range)
        case(lines, name, layer, x, b, {"shift_factor": (8 - b[:, 0]).astype(np.uint8)})


def auto_contrasts(lines):
    """AutoContrast draws nothing and works in training and at inference
    alike; a channel of one value (NaN in its arithmetic) keeps its values."""
    none = np.zeros((2, 0), np.float32)
    for name, x, value_range in (("auto_contrast", images(2, 5, 6, 3, 200.0) + 20.0, (0, 255)),
                                 ("auto_contrast_range", images(2, 5, 6, 2) * 0.5 + 0.25, (1, 0))):
        x[1, :, :, 1] = x[1, 0, 0, 1]  # the second image's second channel flat
        for training in (True, False):
            case(lines, "%s_%d" % (name, int(training)), layers.AutoContrast(value_range=value_range), x, none, None,
                 training)


def sharpnesses(lines):
    """factor as RandomSharpness' get_random_transformation makes it (the
    layer doubles it): below 0.5 blurs, above sharpens, and the clip bites."""
    f = np.array([[0.1], [0.5], [0.95]], np.float32)
    for name, x, value_range in (("sharpness", images(3, 5, 6, 3, 255.0), (0, 255)),
                                 ("sharpness_range", images(3, 6, 4, 2), (1, 0))):
        layer = layers.RandomSharpness((0.05, 1.0), value_range=value_range)
        case(lines, name, layer, x, f, {"factor": f[:, 0]})


def hsv_edges(x, top):
    """Pixels that take RGBToHSV's other branches: black, grey, and ties
    for the largest channel."""
    x[0, 0, 0] = 0.0
    x[0, 0, 1] = 0.5 * top
    x[0, 0, 2] = [0.75 * top, 0.75 * top, 0.25 * top]
    x[0, 0, 3] = [0.2 * top, 0.6 * top, 0.6 * top]
    return x


def saturations(lines):
    """factor as RandomSaturation's get_random_transformation makes it,
    u / (1 - u + epsilon) in float32: 0.5 keeps the image, a negative u
    greys it, and with value_range [0, 1] the clip bites."""
    u = np.array([[0.5], [0.2], [0.9], [-0.4]], np.float32)
    f = u / (np.float32(1) - u + np.float32(keras.backend.epsilon()))
    for name, x, value_range in (("saturation", hsv_edges(images(4, 4, 5, 3, 255.0), 255.0), (0, 255)),
                                 ("saturation_range", hsv_edges(images(4, 4, 5, 3), 1.0), (1, 0))):
        layer = layers.RandomSaturation((-0.5, 0.95), value_range=value_range)
        case(lines, name, layer, x, f, {"factor": f[:, 0]})


def hues(lines):
    """factor as RandomHue's get_random_transformation makes it: the signed
    half of the draw; shifts past 1 and below 0 wrap."""
    d = np.array([[0.3], [-0.45], [0.05], [-0.02]], np.float32)
    for name, x, value_range in (("hue", hsv_edges(images(4, 4, 5, 3, 255.0), 255.0), (0, 255)),
                                 ("hue_unit", hsv_edges(images(4, 4, 5, 3), 1.0), (0, 1)),
                                 ("hue_range", hsv_edges(images(4, 4, 5, 3), 1.0) * 2 - 1, (-1, 1))):
        layer = layers.RandomHue((0.02, 0.9), value_range=value_range)
        case(lines, name, layer, x, d, {"factor": d[:, 0]})


def jitters(lines):
    """RandomColorJitter's steps on fixed draws (each sub-layer's
    get_random_transformation replaced by them): brightness u, contrast
    factor, saturation multiplier, hue shift, in that order."""
    d = np.array([[0.1, 1.2, 1.5, 0.2], [-0.15, 0.8, 0.25, -0.35], [0.0, 1.0, 1.0, 0.0]], np.float32)
    for name, x, kwargs in (
            ("jitter", images(3, 4, 5, 3, 255.0),
             dict(brightness_factor=0.2, contrast_factor=0.3, saturation_factor=(0.2, 0.8), hue_factor=0.4)),
            ("jitter_grey", images(3, 4, 5, 1),
             dict(value_range=(0, 1), brightness_factor=(-0.2, 0.1), contrast_factor=0.3))):
        layer = layers.RandomColorJitter(**kwargs)
        m, _ = model_json(layer, x.shape[1:])
        lay = m.layers[0]
        n, top = x.shape[0], lay.value_range[1] - lay.value_range[0]
        steps = (("random_brightness", lambda: {"rgb_delta": (d[:, 0] * np.float32(top)).reshape(n, 1, 1, 1)}),
                 ("random_contrast", lambda: {"contrast_factor": d[:, 1].reshape(n, 1, 1, 1)}),
                 ("random_saturation", lambda: {"factor": d[:, 2]}),
                 ("random_hue", lambda: {"factor": d[:, 3]}))
        for attr, fixed in steps:
            if getattr(lay, attr) is not None:
                getattr(lay, attr).get_random_transformation = lambda *a, fixed=fixed, **k: fixed()
        y = np.asarray(lay.transform_images(x, None, training=True))
        case(lines, name, layer, x, d, None, expect=y)


def blurs(lines):
    """should_apply_blur and blur_factor as RandomGaussianBlur's
    get_random_transformation makes them: a chance and a uniform per image,
    two sigmas (+ 1e-6) for the batch; every image clipped, blurred or not;
    a kernel of two sizes read as Keras reshapes its outer product."""
    for name, x, kwargs, sig in (
            ("blur", images(3, 5, 6, 3, 300.0) - 20.0, dict(kernel_size=3, sigma=(0.5, 1.5)), (0.8, 1.3)),
            ("blur_wide", images(3, 6, 7, 1), dict(kernel_size=(3, 5), sigma=(0.2, 2.0), value_range=(0, 1)),
             (0.5, 1.7)),
            ("blur_five", images(3, 7, 7, 2, 255.0), dict(kernel_size=5, sigma=0.9), (0.9, 0.3))):
        layer = layers.RandomGaussianBlur(factor=(0.2, 0.9), **kwargs)
        s = np.array(sig, np.float32) + np.float32(1e-6)
        d = np.array([[0.6, 0.2, s[0], s[1]], [0.3, 0.8, s[0], s[1]], [0.9, 0.5, s[0], s[1]]], np.float32)
        case(lines, name, layer, x, d, {"should_apply_blur": d[:, 1] < d[:, 0], "blur_factor": s})


def resizes(lines):
    """Resizing and CenterCrop draw nothing: the same images in training and at inference."""
    none = np.zeros((2, 0), np.float32)  # no draws
    small, large = images(2, 5, 7, 2), images(2, 9, 12, 3)
    for training in (True, False):
        for interpolation in ("bilinear", "nearest"):
            for x, hw in ((small, (9, 11)), (large, (4, 5)), (large, (7, 16))):
                case(lines, "resize_%s_%dx%d_%d" % ((interpolation,) + hw + (int(training),)),
                     layers.Resizing(*hw, interpolation=interpolation), x, none, None, training)
            for hw in ((6, 6), (5, 8)):
                case(lines, "resize_crop_%s_%dx%d_%d" % ((interpolation,) + hw + (int(training),)),
                     layers.Resizing(*hw, interpolation=interpolation, crop_to_aspect_ratio=True), large, none, None,
                     training)
        # at least as large both ways: the centre window; else smart_resize
        for x, hw in ((large, (5, 7)), (large, (8, 12)), (large, (10, 6)), (small, (8, 9))):
            case(lines, "center_crop_%dx%d_%d" % (hw + (int(training),)), layers.CenterCrop(*hw), x, none, None,
                 training)


def main():
    lines = ["# tools/tf-goldens/augment_goldens.py, Keras %s" % keras.__version__]
    for f in (flips, translations, rotations, zooms, crops, contrasts, resizes, brightnesses, shears, grayscales,
              inverts, solarizations, degenerations, posterizations, auto_contrasts, sharpnesses, saturations, hues,
              jitters, blurs):
        f(lines)
    with open(OUT, "w") as out:
        out.write("\n".join(lines) + "\n")
    print("wrote", len(lines) - 1, "cases to", os.path.normpath(OUT))


if __name__ == "__main__":
    main()
