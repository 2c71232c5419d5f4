#!/usr/bin/env python3
"""The guide's CNN (tests/data/keras_guide_cnn.json, axon-train's built-in
model) written in PyTorch (eager), trained on the same IDX files as
axon-train: a speed peer. Not part of the build; needs PyTorch (e.g. the
venv /tmp/torchenv).

    python bench/peer/torch_cnn.py [--samples 12800] [--epochs 2] [--threads 2] [--memory-format channels_last]

Conv2D(32, 3x3, relu) - MaxPooling2D(2) - Conv2D(64, 3x3, relu) -
MaxPooling2D(2) - Conv2D(64, 3x3, relu) - Flatten - Dense(64, relu) -
Dense(10) on 28x28x1 images, VALID padding and biases as Keras' defaults.
Trained by torch_peer.py's loop."""
from torch_peer import run


def build(nn):
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                         nn.Conv2d(64, 64, 3), nn.ReLU(inplace=True),
                         nn.Flatten(), nn.Linear(3 * 3 * 64, 64), nn.ReLU(inplace=True), nn.Linear(64, 10))


if __name__ == "__main__":
    run(build)
