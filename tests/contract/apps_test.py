#!/usr/bin/env python3
"""What docs/cli.md and docs/training.md promise of axon-devices and
axon-train, checked from the outside, one case per ctest entry:

  apps_test.py CASE --bin BUILD_BIN --lib BUILD_LIB --test-plugins DIR [--fake-driver DIR]

Cases: ops_json, open_error, search_order, openblas_coretype,
visible_hides_fallback, quiet_verbose, profile, progress_terminal, reasons, help_placement_line, no_prefetch.
Each failed check prints what was expected and the output, and exits 1;
exit 77 (skipped) only where a case needs what the build lacks.
"""
import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

a = argparse.ArgumentParser()
a.add_argument("case")
a.add_argument("--bin", required=True)
a.add_argument("--lib", required=True)
a.add_argument("--test-plugins", required=True)
a.add_argument("--fake-driver")
args = a.parse_args()

BASE_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("AXON_", "OPENBLAS_", "CUDA_", "FAKE_CUDA"))}
DEVICES = os.path.join(args.bin, "axon-devices")
TRAIN = os.path.join(args.bin, "axon-train")
tmp = tempfile.mkdtemp(prefix="axon-contract-")

# Every op of the ABI (sdk/include/axon/plugin_abi.h).
ABI_OPS = {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPool", "MaxPoolGrad", "Relu", "ReluGrad",
           "MatMul", "BiasAdd", "BiasAddGrad", "SparseSoftmaxCrossEntropyWithLogits", "ApplyAdam", "InTopK", "Sum",
           "Fill", "Scale", "AddN", "NormalizeImage", "Identity", "_FusedConv2D", "_FusedMatMul",
           "_FusedReluGradBiasAddGrad", "_FusedConv2DMaxPool", "_FusedConv2DMaxPoolGrad", "_SparseCategoricalAccuracy"}


def run(cmd, env=None, timeout=120):
    e = dict(BASE_ENV)
    e.update(env or {})
    p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def check(cond, what, out="", err=""):
    if not cond:
        print(f"FAILED: {what}\n--- stdout ---\n{out}\n--- stderr ---\n{err}")
        shutil.rmtree(tmp, ignore_errors=True)
        sys.exit(1)
    print(f"ok: {what}")


def skip(why):
    print(f"SKIP: {why}")
    shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(77)


def write_dataset(folder, n_train=640, n_test=128):
    """A small MNIST-format set (raw IDX files): class k is a bright square at
    a class-specific place on a dim, varying background."""
    os.makedirs(folder, exist_ok=True)
    for split, n in (("train", n_train), ("t10k", n_test)):
        images, labels = bytearray(), bytearray()
        for i in range(n):
            k = (i * 7) % 10
            img = bytearray((i * 31 + p * 7) % 60 for p in range(784))
            top, left = 2 + (k // 5) * 12, 1 + (k % 5) * 5
            for r in range(top, top + 6):
                for c in range(left, left + 6):
                    img[r * 28 + c] = 220
            images += img
            labels.append(k)
        with open(os.path.join(folder, f"{split}-images-idx3-ubyte"), "wb") as f:
            f.write(bytes([0, 0, 8, 3]) + struct.pack(">III", n, 28, 28) + images)
        with open(os.path.join(folder, f"{split}-labels-idx1-ubyte"), "wb") as f:
            f.write(bytes([0, 0, 8, 1]) + struct.pack(">I", n) + labels)
    return folder


def devices_json(*extra, env=None):
    rc, out, err = run([DEVICES, "--json", *extra], env=env)
    check(rc == 0, f"axon-devices --json {' '.join(extra)} exits 0", out, err)
    return json.loads(out), err


case = args.case

if case == "ops_json":
    # docs/cli.md: with --ops each device has "ops": [...].
    data, err = devices_json("--ops")
    by_name = {d["name"]: d for d in data["devices"]}
    for name in ("/device:CPU:0", "/device:REF:0"):
        check(name in by_name, f"{name} is listed", json.dumps(data), err)
        ops = by_name[name].get("ops")
        check(isinstance(ops, list), f"{name} has an 'ops' list", json.dumps(by_name[name]), err)
        check(ABI_OPS <= set(ops), f"{name} has a kernel for every op of the ABI (missing: {sorted(ABI_OPS - set(ops))})",
              json.dumps(ops))
        check("open_error" not in by_name[name], f"{name} opened without error", json.dumps(by_name[name]))
    data, _ = devices_json()
    check(all("ops" not in d for d in data["devices"]), "without --ops no device lists ops (none is opened)",
          json.dumps(data))

elif case == "open_error":
    # docs/cli.md: a device that cannot be opened has "ops": null and "open_error". The
    # fake CUDA driver shows an H200 that cudart cannot use.
    if not args.fake_driver:
        skip("the CUDA plugin is not built")
    env = {"LD_LIBRARY_PATH": args.fake_driver, "FAKE_CUDA_DEVICES": "NVIDIA H200:9.0:150000000000"}
    data, err = devices_json("--ops", env=env)
    gpu = [d for d in data["devices"] if d["name"] == "/device:GPU:0"]
    check(len(gpu) == 1, "the fake driver's GPU is listed", json.dumps(data), err)
    check(gpu[0].get("ops", "absent") is None, "its 'ops' is null", json.dumps(gpu[0]))
    check(isinstance(gpu[0].get("open_error"), str) and len(gpu[0]["open_error"]) > 10,
          "its 'open_error' says why", json.dumps(gpu[0]))
    cpu = [d for d in data["devices"] if d["name"] == "/device:CPU:0"]
    check(len(cpu) == 1 and isinstance(cpu[0].get("ops"), list), "the CPU still lists its ops", json.dumps(data))

elif case == "search_order":
    # docs/cli.md, plugin search order: step 3 is <folder of libaxon-core.so>/axon/plugins,
    # step 4 <folder of the program>/../lib/axon/plugins "when that is another folder"; a
    # folder that does not exist is passed over (logged at debug). libaxon-core.so is copied
    # to a folder of its own (found first through LD_LIBRARY_PATH), so step 3 names a folder
    # that does not exist and only step 4 finds the build's plugins.
    lib = os.path.join(tmp, "lib")
    os.makedirs(lib)
    for f in os.listdir(args.lib):
        if f.startswith("libaxon-core.so"):
            shutil.copy2(os.path.join(args.lib, f), lib, follow_symlinks=False)
    env = {"LD_LIBRARY_PATH": lib}
    missing_dir = os.path.join(tmp, "no-such-folder")
    data, err = devices_json("--log-level", "debug", "--plugin-dir", missing_dir, env=env)
    plugins = {p["name"]: p["path"] for p in data["plugins"]}
    step4 = os.path.join(os.path.dirname(os.path.abspath(args.bin)), "lib", "axon", "plugins")
    check("cpu" in plugins and os.path.realpath(os.path.dirname(plugins["cpu"])) == os.path.realpath(step4),
          f"the CPU plugin comes from step 4, {step4}", json.dumps(data), err)
    check("/device:CPU:0" in [d["name"] for d in data["devices"]], "the CPU device is there", json.dumps(data), err)
    for folder in (missing_dir, os.path.join(lib, "axon", "plugins")):
        check(f"plugin folder {folder} does not exist; skipped" in err, f"the missing folder {folder} is passed over",
              "", err)
    check(re.search(r"searching .*plugins: [0-9]+ plugin file\(s\)", err) is not None, "the searched folders are logged",
          "", err)
    # The same core without libaxon-mpi.so beside it: docs/distributed.md, "a build without
    # Open MPI lacks the library, and multi-worker exits 2 saying so". Started as mpirun
    # starts its ranks (OMPI_COMM_WORLD_SIZE set), so that it reaches for MPI.
    data_dir = write_dataset(os.path.join(tmp, "data"), 64, 64)
    rc, out, err = run([TRAIN, "--data", data_dir, "--strategy", "multi-worker", "--epochs", "1"],
                       env=dict(env, OMPI_COMM_WORLD_SIZE="1"))
    lines = err.strip().splitlines()
    check(rc == 2 and len(lines) == 1 and "axon-train: error: --strategy multi-worker needs MPI" in lines[0] and
          os.path.join(lib, "libaxon-mpi.so") in lines[0], "multi-worker without libaxon-mpi.so exits 2 saying so",
          out, err)

elif case == "openblas_coretype":
    # docs/cli.md: unset, the CPU plugin picks SkylakeX on AVX-512 and Haswell on AVX2 CPUs;
    # a value the user sets is kept. The CPU's features are read here from /proc/cpuinfo.
    flags = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl", "fma"} <= flags:
        want = "SkylakeX"
    elif {"avx2", "fma"} <= flags:
        want = "Haswell"
    else:
        skip("this CPU has neither AVX-512 nor AVX2, where the plugin leaves OpenBLAS's choice alone")

    def cpu_properties(env):
        data, err = devices_json(env=env)
        cpu = [d for d in data["devices"] if d["name"] == "/device:CPU:0"]
        check(len(cpu) == 1, "the CPU device is listed", json.dumps(data), err)
        return cpu[0]["properties"]

    def openblas_core(props):
        # "blas=OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY SkylakeX MAX_THREADS=64, ...": the
        # words of OpenBLAS's own configuration string, which names the kernels it chose.
        m = re.search(r"blas=(OpenBLAS[^,]*)", props)
        check(m is not None, "the description quotes OpenBLAS's configuration", props)
        return m.group(1).split()

    props = cpu_properties({})
    check(f"OPENBLAS_CORETYPE={want} (set by axon" in props, f"unset, the plugin picks {want}", props)
    check(want in openblas_core(props), f"and OpenBLAS runs {want}'s kernels", props)
    other = "Haswell" if want == "SkylakeX" else "Sandybridge"
    props = cpu_properties({"OPENBLAS_CORETYPE": other})
    check(f"OPENBLAS_CORETYPE={other} (set by the user)" in props, f"OPENBLAS_CORETYPE={other} is kept", props)
    check(other in openblas_core(props), f"and OpenBLAS runs {other}'s kernels", props)

elif case == "visible_hides_fallback":
    # docs/cli.md: "--visible-devices gpu:0 hides the CPU, and with it the soft placement
    # fallback; write gpu:0,cpu:0 to keep it". A FAKE device with only Relu stands in for the GPU.
    data_dir = write_dataset(os.path.join(tmp, "data"), 64, 64)
    fake = os.path.join(args.test_plugins, "placement")
    common = [TRAIN, "--data", data_dir, "--plugin-dir", fake, "--epochs", "1"]
    rc, out, err = run(common + ["--visible-devices", "fake:0"])
    check(rc == 1 and re.search(r"axon-train: error: op \w+ has no \w+ kernel on /device:FAKE:0 and no CPU device to fall "
                                r"back to", err) is not None, "with only FAKE:0 visible, an op it lacks has no fallback",
          out, err)
    rc, out, err = run(common + ["--visible-devices", "fake:0,cpu:0"])
    check(rc == 0, "with FAKE:0 and CPU:0 visible, training runs", out, err)
    check(re.search(r"has no kernel on /device:FAKE:0 \(\w+\); running it on /device:CPU:0 instead", err) is not None,
          "the ops FAKE:0 lacks fall back to the CPU, with the warning", out, err)

elif case == "quiet_verbose":
    data_dir = write_dataset(os.path.join(tmp, "data"))
    common = [TRAIN, "--data", data_dir, "--epochs", "1", "--threads", "2"]
    # -q: nothing on stdout; warnings and errors still on stderr (a --device that is not
    # there falls back to the CPU with a warning).
    rc, out, err = run(common + ["-q", "--device", "cpu:7"])
    check(rc == 0 and out == "", "-q: nothing on stdout", out, err)
    check("/device:CPU:7" in err or "cpu:7" in err, "-q: the fallback warning is still on stderr", out, err)
    rc, out, err = run(common + ["--quiet", "--epochs", "0"])
    check(rc == 2 and out == "" and err.startswith("axon-train: error: "), "--quiet: an error still on stderr", out, err)
    # -v: the model summary, each replica's time per epoch, device memory and peak resident memory.
    rc, out, err = run(common + ["-v"])
    check(rc == 0, "-v runs", out, err)
    check("93,322" in out and "conv2d_1 (Conv2D)" in out, "-v: the model summary", out, err)
    check(re.search(r"Epoch 1 time by replica \(s\)", out) is not None and "/device:CPU:0" in out,
          "-v: each replica's time per epoch", out, err)
    check(re.search(r"Memory on /device:CPU:0: in use [0-9.]+ MiB, peak [0-9.]+ MiB", out) is not None,
          "-v: the device's memory", out, err)
    check(re.search(r"Peak resident memory: [0-9.]+ MiB", out) is not None, "-v: the peak resident memory", out, err)
    rc, out2, err = run(common)
    check(rc == 0 and "93,322" not in out2 and "Peak resident memory" not in out2,
          "without -v none of that is printed", out2, err)

elif case == "profile":
    # docs/training.md: --profile prints a per-op time table at the end.
    data_dir = write_dataset(os.path.join(tmp, "data"))
    rc, out, err = run([TRAIN, "--data", data_dir, "--epochs", "1", "--threads", "2", "--profile"])
    check(rc == 0, "--profile runs", out, err)
    lines = out.splitlines()
    head = [i for i, l in enumerate(lines) if re.match(r"^op\s+device\s+calls\s+seconds\s+share$", l)]
    check(len(head) == 1, "one table header: op, device, calls, seconds, share", out, err)
    rows = []
    for l in lines[head[0] + 1:]:
        m = re.match(r"^(\S+)\s+(/device:\S+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)%$", l)
        if not m:
            break
        rows.append((m.group(1), m.group(2), int(m.group(3)), float(m.group(4)), float(m.group(5))))
    ops = {r[0]: r for r in rows}
    check({"ApplyAdam", "NormalizeImage", "SparseSoftmaxCrossEntropyWithLogits"} <= set(ops),
          "the table has a row per op the run used", out, err)
    check(all(r[1] == "/device:CPU:0" for r in rows), "each on the device that ran it", out, err)
    check(ops["ApplyAdam"][2] == 640 // 64, "ApplyAdam: one call per step (10)", out, err)
    check(abs(sum(r[4] for r in rows) - 100) < 1, "the shares add up to 100%", out, err)
    check([r[3] for r in rows] == sorted((r[3] for r in rows), reverse=True), "rows sorted by time, largest first",
          out, err)
    rc, out, err = run([TRAIN, "--data", data_dir, "--epochs", "1", "--threads", "2"])
    check(rc == 0 and not re.search(r"^op\s+device\s+calls", out, re.M), "without --profile no table", out, err)
    # -q: nothing but the table, which is the output asked for.
    rc, out, err = run([TRAIN, "--data", data_dir, "--epochs", "1", "--threads", "2", "--profile", "-q"])
    lines = out.splitlines()
    check(rc == 0 and len(lines) == len(rows) + 1 and re.match(r"^op\s+device\s+calls\s+seconds\s+share$", lines[0]) and
          all(re.match(r"^\S+\s+/device:CPU:0\s+\d+\s+[0-9.]+\s+[0-9.]+%$", l) for l in lines[1:]),
          "--profile -q prints the table and nothing else", out, err)

elif case == "progress_terminal":
    # docs/training.md: on a terminal the bar is redrawn in place; under an MPI launcher
    # (which hands its ranks a terminal even when its output goes to a file) and off a
    # terminal, one line per epoch; AXON_PROGRESS_BAR=1/0 says otherwise.
    import pty
    import select
    # An epoch long enough for the bar to be redrawn (every 0.1 s): 200 steps,
    # 20 under the sanitizers (each 20 times slower, about 0.2 s; eight runs).
    samples = 640 if os.environ.get("AXON_TEST_SANITIZED") else 6400
    steps = samples // 32
    data_dir = write_dataset(os.path.join(tmp, "data"), samples, 64)
    cmd = [TRAIN, "--data", data_dir, "--epochs", "1", "--threads", "2", "--batch-size", "32"]

    def on_terminal(env):
        master, slave = pty.openpty()
        e = dict(BASE_ENV)
        e.update(env)
        p = subprocess.Popen(cmd, stdout=slave, stderr=subprocess.PIPE, env=e)
        os.close(slave)
        out = b""
        # Read until the run has gone (EIO); an epoch may print nothing for
        # minutes under the sanitizers, so silence alone does not end it.
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 5)
            if not ready:
                continue
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the last writer has gone
                chunk = b""
            if not chunk:
                break
            out += chunk
        else:
            p.kill()
        os.close(master)
        err = p.communicate(timeout=120)[1]
        check(p.returncode == 0, f"a run on a terminal with {env or 'no launcher'}", out.decode(), err.decode())
        return out.decode()

    def redrawn(text):  # a carriage return that is not a terminal's line end (\r\n)
        return re.search("\r(?!\n)", text) is not None

    out = on_terminal({})
    check(redrawn(out), "on a terminal the bar is redrawn in place", out)
    for var in ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"):
        out = on_terminal({var: "1"})
        check(not redrawn(out) and out.count(f"{steps}/{steps} [") == 1,
              f"with {var} set (an MPI launcher's rank), one line per epoch on the terminal too", repr(out))
    out = on_terminal({"OMPI_COMM_WORLD_SIZE": "1", "AXON_PROGRESS_BAR": "1"})
    check(redrawn(out), "AXON_PROGRESS_BAR=1 redraws under a launcher", repr(out))
    out = on_terminal({"AXON_PROGRESS_BAR": "off"})
    check(not redrawn(out), "AXON_PROGRESS_BAR=off: one line per epoch on a terminal", repr(out))
    for env, want in (({"AXON_PROGRESS_BAR": "1"}, True), ({}, False)):
        p = subprocess.run(cmd, env=dict(BASE_ENV, **env), capture_output=True, timeout=120)  # bytes: \r kept
        out = p.stdout.decode()
        check(p.returncode == 0 and redrawn(out) == want,
              "into a pipe: " + ("AXON_PROGRESS_BAR=1 redraws" if want else "one line per epoch"), repr(out))
    rc, out, err = run(cmd, env={"AXON_PROGRESS_BAR": "sometimes"})
    check(rc == 2 and err == "axon-train: error: AXON_PROGRESS_BAR='sometimes' is not a boolean (1/0, true/false, "
          "yes/no, on/off)\n", "a bad AXON_PROGRESS_BAR: exit 2, one line", out, err)

elif case == "reasons":
    # docs/cli.md and docs/training.md: each message gives the real reason.
    data_dir = write_dataset(os.path.join(tmp, "data"), 64, 64)
    common = [TRAIN, "--data", data_dir, "--epochs", "1", "--threads", "2", "-q"]
    data, _ = devices_json()
    cpus = [d["name"] for d in data["devices"] if d["type"] == "CPU"]
    rc, out, err = run(common + ["--device", "cpu:5"])
    only = "only %d visible CPU device%s: %s" % (len(cpus), "" if len(cpus) == 1 else "s", ", ".join(cpus))
    check(rc == 0 and err == "axon: W axon-train: --device cpu:5: /device:CPU:5 is not available (%s); falling back "
          "to /device:CPU:0\n" % only,
          "--device cpu:5 with CPU:0 there: 'only N visible CPU devices', not 'no visible CPU device'", out, err)
    # A GPU that is not there: --device (falling back, or under --strict-placement) and
    # --visible-devices give the same reason, the plugin's own.
    if data["num_gpus"] > 0:
        skip("this machine has a GPU")
    gpu = [p for p in data["plugins"] if p["device_type"] == "GPU"]
    why = "%s: %s" % (gpu[0]["name"], gpu[0]["unavailable_reason"]) if gpu else "no plugin provides GPU devices"
    rc, out, err = run(common + ["--device", "gpu:0"])
    check(rc == 0 and "--device gpu:0: /device:GPU:0 is not available (%s); falling back to /device:CPU:0" % why in err,
          "--device gpu:0 falls back, saying why: " + why, out, err)
    rc, out, err = run(common + ["--device", "gpu:0", "--strict-placement"])
    check(rc == 2 and "/device:GPU:0 is not available (%s); devices: " % why in err,
          "--device gpu:0 --strict-placement: exit 2 with the same reason", out, err)
    rc, out, err = run(common + ["--visible-devices", "gpu:0"])
    check(rc == 2 and err.startswith("axon-train: error: --visible-devices names /device:GPU:0, which does not exist "
                                     "(%s); devices: " % why), "--visible-devices gpu:0: exit 2 with the same reason",
          out, err)
    # Numbers as they were given, not rounded to six decimals.
    rc, out, err = run(common + ["--learning-rate", "-1e-9"])
    check(rc == 2 and err == "axon-train: error: --learning-rate must be a positive number, got -1e-09\n",
          "--learning-rate -1e-9 is echoed as -1e-09, not -0.000000", out, err)
    # --epochs 0 evaluates: it says so.
    w = os.path.join(tmp, "w.axw")
    rc, out, err = run(common[:-1] + ["--save", w])
    check(rc == 0, "a run saves weights", out, err)
    rc, out, err = run([TRAIN, "--data", data_dir, "--threads", "2", "--epochs", "0", "--initial-weights", w])
    check(rc == 0 and re.search(r"^Evaluating on /device:CPU:0 ", out, re.M) and "Training on" not in out and
          "Evaluated %s on 64 test images: loss: " % w in out, "--epochs 0: 'Evaluating on', never 'Training on'",
          out, err)

elif case == "help_placement_line":
    # The placement line as docs/cli.md shows it, as both programs' --help show it, and as
    # the log prints it.
    doc = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "cli.md")).read()
    m = re.search(r"\| `--log-device-placement` \|.*?print `(Executing op OP \(LAYER\) in device DEV)`", doc)
    check(m is not None, "docs/cli.md shows the line as 'Executing op OP (LAYER) in device DEV'")
    for exe in (TRAIN, DEVICES):
        rc, out, err = run([exe, "--help"])
        flat = " ".join(out.split())  # Boost wraps the help's columns
        check(rc == 0 and "print '%s' once per op, layer and device" % m.group(1) in flat,
              "%s --help shows '%s'" % (os.path.basename(exe), m.group(1)), out, err)
    data_dir = write_dataset(os.path.join(tmp, "data"), 64, 64)
    rc, out, err = run([TRAIN, "--data", data_dir, "--epochs", "1", "-q", "--log-device-placement"])
    logged = [l for l in err.splitlines() if l.startswith("Executing op ")]
    form = re.compile(r"Executing op \w+ \(\w+\) in device /device:\w+:\d+")
    check(rc == 0 and logged and all(form.fullmatch(l) for l in logged), "and every logged line has that form", out, err)

elif case == "no_prefetch":
    # docs/training.md: batches prepared on the training thread give identical results.
    data_dir = write_dataset(os.path.join(tmp, "data"))
    results = []
    for extra in ([], ["--no-prefetch"]):
        csv, w = os.path.join(tmp, "m%d.csv" % len(results)), os.path.join(tmp, "w%d.axw" % len(results))
        rc, out, err = run([TRAIN, "--data", data_dir, "--epochs", "2", "--threads", "2", "-q", "--metrics-csv", csv,
                            "--save", w] + extra)
        check(rc == 0, f"a run with {extra or 'prefetch'}", out, err)
        rows = [l.split(",")[:5] for l in open(csv).read().splitlines()]
        results.append((rows, open(w, "rb").read()))
    check(results[0][0] == results[1][0], "--no-prefetch: the same loss and accuracy, epoch by epoch",
          str(results[0][0]), str(results[1][0]))
    check(results[0][1] == results[1][1], "--no-prefetch: the same weights, bit for bit")

else:
    print(f"unknown case {case}")
    sys.exit(2)

shutil.rmtree(tmp, ignore_errors=True)
