#!/usr/bin/env python3
"""The plugin guide's example works as the guide says, from the installed
package alone: install this build into a fresh prefix, configure the
installed share/axon/examples/minimal-plugin without a build type (it must
build Release), check that only axon_plugin_get_api is exported, that the
installed axon-devices lists /device:TOY:0 through AXON_PLUGIN_PATH, that the
installed axon-train trains an epoch on it with ops on TOY and the rest on
the CPU, and that --gpu-memory-limit reaches it."""
import argparse
import gzip
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys

ap = argparse.ArgumentParser()
for a in ("--build-dir", "--source-dir", "--work-dir", "--cmake", "--generator"):
    ap.add_argument(a, required=True)
args = ap.parse_args()

work = os.path.abspath(args.work_dir)
prefix = os.path.join(work, "prefix")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
env = {k: v for k, v in os.environ.items() if not k.startswith("AXON_")}


def run(*cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def sh(*cmd, **kw):
    p = run(*cmd, **kw)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
        sys.exit(f"FAILED: {' '.join(cmd)} exited {p.returncode}")
    return p


def check(cond, what, detail=""):
    if not cond:
        sys.exit(f"FAILED: {what}\n{detail}")
    print("ok:", what)


def mnist_dir():
    """The installed Fashion-MNIST, or else random images in MNIST's format."""
    default = "/usr/share/datasets/fashion-mnist"
    if os.path.exists(os.path.join(default, "train-images-idx3-ubyte.gz")):
        return default
    d = os.path.join(work, "data")
    os.makedirs(d)
    rng = random.Random(1)
    for split, n in (("train", 256), ("t10k", 64)):
        with gzip.open(os.path.join(d, f"{split}-images-idx3-ubyte.gz"), "wb") as f:
            f.write(struct.pack(">IIII", 0x803, n, 28, 28) + bytes(rng.randrange(256) for _ in range(n * 784)))
        with gzip.open(os.path.join(d, f"{split}-labels-idx1-ubyte.gz"), "wb") as f:
            f.write(struct.pack(">II", 0x801, n) + bytes(rng.randrange(10) for _ in range(n)))
    return d


sh(args.cmake, "--install", args.build_dir, "--prefix", prefix)
example_src = os.path.join(args.source_dir, "sdk/examples/minimal-plugin")
example = os.path.join(prefix, "share/axon/examples/minimal-plugin")
for name in sorted(os.listdir(example_src)):
    installed = os.path.join(example, name)
    check(os.path.isfile(installed) and open(installed, "rb").read() == open(os.path.join(example_src, name), "rb").read(),
          f"installed the example's {name}")

# Configured as the guide says: no build type given.
build = os.path.join(work, "minimal-plugin")
sh(args.cmake, "-S", example, "-B", build, "-G", args.generator, f"-DCMAKE_PREFIX_PATH={prefix}", env=env)
cache = open(os.path.join(build, "CMakeCache.txt")).read()
check(re.search(r"^CMAKE_BUILD_TYPE:\w+=Release$", cache, re.M), "with no build type given the build is Release",
      "\n".join(l for l in cache.splitlines() if "BUILD_TYPE" in l))
out = sh(args.cmake, "--build", build, "--verbose", env=env).stdout
compiles = [l for l in out.splitlines() if " -c " in l and ("plugin.cpp" in l or "kernels.cpp" in l)]
check(len(compiles) == 2 and all(re.search(r" -O[23] ", l) for l in compiles), "both sources compile optimised",
      "\n".join(compiles) or out)
so = os.path.join(build, "libaxon-plugin-toy.so")
check(os.path.exists(so), "libaxon-plugin-toy.so built out of tree")
symbols = sh("nm", "-D", "--defined-only", so).stdout.split("\n")
exported = [l.split()[-1] for l in symbols if l.strip()]
check(exported == ["axon_plugin_get_api"], "only axon_plugin_get_api is exported", "\n".join(symbols))

with_toy = dict(env, AXON_PLUGIN_PATH=build)
devices = os.path.join(prefix, "bin/axon-devices")
data = json.loads(sh(devices, "--json", env=with_toy).stdout)
names = [d["name"] for d in data["devices"]]
toy = [d for d in data["devices"] if d["name"] == "/device:TOY:0"]
check(len(toy) == 1 and toy[0]["plugin"] == "toy", "AXON_PLUGIN_PATH adds /device:TOY:0", json.dumps(data, indent=1))
check("/device:CPU:0" in names and names.index("/device:TOY:0") < names.index("/device:CPU:0"),
      "TOY (priority 150) is placed before the CPU", str(names))
plugin = [p for p in data["plugins"] if p["name"] == "toy"]
check(plugin and plugin[0]["path"] == so and plugin[0]["priority"] == 150, "the toy plugin comes from the out-of-tree build",
      json.dumps(plugin))

train = os.path.join(prefix, "bin/axon-train")
common = ["--data", mnist_dir(), "--device", "toy:0", "--epochs", "1", "--train-limit", "256", "--test-limit", "64"]
p = sh(train, *common, "--log-device-placement", env=with_toy)
log = p.stdout + p.stderr
for op in ("MatMul", "BiasAdd", "Relu", "ReluGrad"):
    check(re.search(rf"^Executing op {op}\b.* in device /device:TOY:0$", log, re.M), f"{op} runs on /device:TOY:0", log)
check(re.search(r"op Conv2D has no kernel on /device:TOY:0 \(float32\); running it on /device:CPU:0", log),
      "Conv2D, which TOY lacks, falls back to the CPU with a warning", log)
check(re.search(r"^Executing op ApplyAdam\b.* in device /device:CPU:0$", log, re.M), "ApplyAdam runs on /device:CPU:0", log)
check("Trained 1 epoch on /device:TOY:0" in p.stdout, "axon-train trained an epoch on TOY", p.stdout)

# The GPU memory flags reach every device type, TOY included.
p = run(train, *common, "--gpu-memory-limit", "1", env=with_toy)
check(p.returncode == 1 and re.search(r"on /device:TOY:0: /device:TOY:0: out of memory: requested \d+ bytes, "
                                      r"limit 1048576 bytes, in use \d+ bytes", p.stderr),
      "--gpu-memory-limit 1 refuses TOY's allocations above 1 MiB (exit 1)", f"exit {p.returncode}\n{p.stdout}{p.stderr}")
p = sh(train, *common, "--gpu-memory-limit", "64", "--verbose", env=with_toy)
check(re.search(r"^Memory on /device:TOY:0: in use .*, limit 64\.0 MiB$", p.stdout, re.M),
      "with --gpu-memory-limit 64 TOY trains and reports the limit", p.stdout)
print("minimal plugin package test passed")
