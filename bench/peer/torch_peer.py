#!/usr/bin/env python3
"""The training loop of the PyTorch speed peers (torch_cnn.py,
torch_resnet.py): the same IDX files as axon-train, Adam(1e-3, eps 1e-7 as
Keras), cross-entropy on logits, accuracy counted each step as Keras' fit
does. The first few batches are not timed; each timed epoch prints
`peer torch epoch E: S samples in T s`. `--device cuda` makes it a GPU
peer (PyTorch's defaults: eager, cuDNN without benchmark mode). Not part
of the build; needs
PyTorch (e.g. the venv /tmp/torchenv). PyPI's torch for Linux is the CUDA
build and imports only with its CUDA libraries, even without a GPU; on a
machine with the CUDA toolkit installed, torch 2.15.0 imported after
`pip install --no-deps torch` plus its pure-Python dependencies (filelock,
typing-extensions, sympy, networkx, jinja2, fsspec, numpy) and
`nvidia-cusparselt-cu13==0.8.1 nvidia-nvshmem-cu13==3.7.2 nvidia-cufile
nvidia-nccl-cu13==2.30.7` (the versions its metadata names)."""
import argparse
import time

import numpy as np

from idx_data import training_set


def run(build):
    """Trains build(torch.nn), a model of [N, 1, 28, 28] images, as the flags say."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--samples", type=int, default=0, help="samples per timed epoch (0: all 60000)")
    ap.add_argument("--epochs", type=int, default=1, help="timed epochs")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--memory-format", choices=["channels_last", "contiguous"], default="channels_last")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu", help="cpu, or cuda: the GPU peer (batches copied over one by one, "
                    "as axon-train does; cuDNN at its defaults)")
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
    dev = torch.device(args.device)
    model = build(nn).to(device=dev, memory_format=fmt)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    b = args.batch_size
    gen = torch.Generator().manual_seed(args.seed)

    def epoch(order):
        correct = torch.zeros((), dtype=torch.int64, device=dev)
        total = torch.zeros((), device=dev)
        for i in range(0, len(order), b):
            idx = order[i:i + b]
            xb = x[idx].contiguous(memory_format=fmt).to(dev)
            yb = y[idx].to(dev)
            opt.zero_grad(set_to_none=True)
            logits = model(xb)
            loss = loss_fn(logits, yb)
            loss.backward()
            opt.step()
            with torch.no_grad():
                correct += (logits.argmax(1) == yb).sum()
                total += loss.detach() * len(idx)
        return correct.item(), total.item()  # on a GPU: waits for the epoch's last kernels

    epoch(torch.arange(10 * b) % len(x))  # warm-up: allocator, kernels' first calls
    where = torch.cuda.get_device_name(dev) if dev.type == "cuda" else f"{torch.get_num_threads()} threads"
    print(f"peer torch: PyTorch {torch.__version__}, {where}, {args.memory_format}, "
          f"{sum(p.numel() for p in model.parameters())} parameters", flush=True)
    for e in range(1, args.epochs + 1):
        order = torch.randperm(len(x), generator=gen)
        t0 = time.perf_counter()
        epoch(order)
        t = time.perf_counter() - t0
        print(f"peer torch epoch {e}: {len(x)} samples in {t:.3f} s", flush=True)
