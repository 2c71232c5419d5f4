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
FLOPs. Adam(1e-3, eps 1e-7 as Keras), cross-entropy on logits, accuracy
counted each step as Keras' fit does. The first few batches are not timed;
each timed epoch prints `peer torch epoch E: S samples in T s`."""
import argparse
import time

import numpy as np

from idx_data import training_set


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--samples", type=int, default=0, help="samples per timed epoch (0: all 60000)")
    ap.add_argument("--epochs", type=int, default=1, help="timed epochs")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--memory-format", choices=["channels_last", "contiguous"], default="channels_last")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--flush-denormal", type=int, default=1, help="1: flush denormals to zero (TensorFlow does)")
    args = ap.parse_args()

    import torch
    from torch import nn
    torch.set_num_threads(args.threads)
    if args.flush_denormal:
        torch.set_flush_denormal(True)
    torch.manual_seed(args.seed)
    fmt = torch.channels_last if args.memory_format == "channels_last" else torch.contiguous_format
    x, y = training_set(args.data, args.samples)
    x = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2))).contiguous(memory_format=fmt)
    y = torch.from_numpy(y)
    model = build(nn).to(memory_format=fmt)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    b = args.batch_size
    gen = torch.Generator().manual_seed(args.seed)

    def epoch(order):
        correct = torch.zeros((), dtype=torch.int64)
        total = torch.zeros(())
        for i in range(0, len(order), b):
            idx = order[i:i + b]
            xb = x[idx].contiguous(memory_format=fmt)
            yb = y[idx]
            opt.zero_grad(set_to_none=True)
            logits = model(xb)
            loss = loss_fn(logits, yb)
            loss.backward()
            opt.step()
            with torch.no_grad():
                correct += (logits.argmax(1) == yb).sum()
                total += loss.detach() * len(idx)
        return correct.item(), total.item()

    epoch(torch.arange(10 * b) % len(x))  # warm-up: allocator, kernels' first calls
    print(f"peer torch: PyTorch {torch.__version__}, {torch.get_num_threads()} threads, {args.memory_format}, "
          f"{sum(p.numel() for p in model.parameters())} parameters", flush=True)
    for e in range(1, args.epochs + 1):
        order = torch.randperm(len(x), generator=gen)
        t0 = time.perf_counter()
        epoch(order)
        t = time.perf_counter() - t0
        print(f"peer torch epoch {e}: {len(x)} samples in {t:.3f} s", flush=True)


if __name__ == "__main__":
    main()
