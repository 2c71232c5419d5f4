#!/usr/bin/env python3
"""tests/data/keras_resnet.json's ResNet written in PyTorch (eager), trained
on the same IDX files as axon-train: a speed peer. Not part of the build;
needs PyTorch (e.g. the venv /tmp/torchenv).

    python bench/peer/torch_resnet.py [--samples 12800] [--epochs 2] [--threads 2] [--memory-format channels_last]

The architecture of tools/tf-goldens/keras_models.py's resnet(): a 3x3
convolution of 16 filters, then blocks of (16, stride 1), (32, 2), (64, 2),
each conv3x3-BN-ReLU-conv3x3-BN plus a shortcut (a strided 1x1 convolution
and BN where the shape changes), added, ReLU; global average pooling and a
Dense of 10. No convolution has a bias; batch normalization with Keras'
settings (eps 1e-3, momentum 0.99, i.e. PyTorch's momentum 0.01). Keras'
SAME padding of a stride-2 3x3 convolution on an even size pads one row and
column at the end, PyTorch's padding=1 one at each side: the same shapes and
FLOPs. Trained by torch_peer.py's loop."""
from torch_peer import run


def build(nn):
    def conv_bn(cin, cout, k, stride):
        return [nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, bias=False),
                nn.BatchNorm2d(cout, eps=1e-3, momentum=0.01)]

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.body = nn.Sequential(*conv_bn(cin, cout, 3, stride), nn.ReLU(inplace=True), *conv_bn(cout, cout, 3, 1))
            self.shortcut = (nn.Sequential(*conv_bn(cin, cout, 1, stride)) if stride != 1 or cin != cout
                             else nn.Identity())
            self.relu = nn.ReLU(inplace=True)

        def forward(self, x):
            return self.relu(self.shortcut(x) + self.body(x))

    return nn.Sequential(*conv_bn(1, 16, 3, 1), nn.ReLU(inplace=True), Block(16, 16, 1), Block(16, 32, 2),
                         Block(32, 64, 2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))


if __name__ == "__main__":
    run(build)
