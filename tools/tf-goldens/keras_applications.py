#!/usr/bin/env python3
"""Writes Keras' own applications (keras.applications, weights=None, 10
classes, small inputs) as model.to_json() for axon's test that reads them,
with what Keras counts of each. Needs TensorFlow and Keras from PyPI;
nothing in axon's build or CI runs it. Usage:

    python3 tools/tf-goldens/keras_applications.py

Writes tests/data/keras_applications/NAME.json.gz and counts.json (per
model: trainable and non-trainable parameters, input and output shapes).
"""
import gzip
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import keras  # noqa: E402

A = keras.applications


def convnext_tiny_drop_path(**kwargs):
    """ConvNeXtTiny as keras.applications builds it, but with Keras'
    drop_path_rate (its StochasticDepth layers), which the application
    functions leave at 0."""
    from keras.src.applications.convnext import ConvNeXt
    return ConvNeXt(depths=[3, 3, 9, 3], projection_dims=[96, 192, 384, 768], drop_path_rate=0.1,
                    name="convnext_tiny_drop_path", **kwargs)


# name: (constructor, input side): the smallest side each accepts, or 32.
APPLICATIONS = {
    "convnext_tiny": (A.ConvNeXtTiny, 32),
    "convnext_tiny_drop_path": (convnext_tiny_drop_path, 32),
    "densenet121": (A.DenseNet121, 32),
    "efficientnet_b0": (A.EfficientNetB0, 32),
    "efficientnet_v2_b0": (A.EfficientNetV2B0, 32),
    "inception_resnet_v2": (A.InceptionResNetV2, 75),
    "inception_v3": (A.InceptionV3, 75),
    "mobilenet": (A.MobileNet, 32),
    "mobilenet_v2": (A.MobileNetV2, 32),
    "mobilenet_v3_small": (A.MobileNetV3Small, 32),
    "mobilenet_v3_large": (A.MobileNetV3Large, 32),
    "nasnet_mobile": (A.NASNetMobile, 32),
    "resnet50": (A.ResNet50, 32),
    "resnet50_v2": (A.ResNet50V2, 32),
    "vgg16": (A.VGG16, 32),
    "xception": (A.Xception, 71),
}


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = os.path.join(root, "tests", "data", "keras_applications")
    os.makedirs(out, exist_ok=True)
    counts = {}
    print(f"Keras {keras.__version__}")
    for name, (make, side) in APPLICATIONS.items():
        keras.backend.clear_session()
        model = make(weights=None, input_shape=(side, side, 3), classes=10)
        trainable = sum(int(w.numpy().size) for w in model.trainable_weights)
        fixed = sum(int(w.numpy().size) for w in model.non_trainable_weights)
        counts[name] = {"trainable": trainable, "non_trainable": fixed,
                        "input": [side, side, 3], "output": [int(d) for d in model.output.shape[1:]]}
        # mtime 0: the same model gives the same bytes.
        with gzip.GzipFile(os.path.join(out, f"{name}.json.gz"), "wb", mtime=0) as f:
            f.write(model.to_json().encode())
        print(f"  {name}: {counts[name]}")
    with open(os.path.join(out, "counts.json"), "w") as f:
        json.dump(counts, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
