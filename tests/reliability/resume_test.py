#!/usr/bin/env python3
"""Checkpoints and resume through axon-train: killed with SIGKILL or stopped
with SIGTERM mid-epoch and resumed with --resume, a run ends with the weights
of a run never interrupted, bit for bit (CPU); resumed at 2 logical CPU
devices from a 1-device checkpoint, within 0.5 accuracy points; damaged,
lying and oversized checkpoints are passed over (or, with no other, refused
with exit 2), never overwritten; NumPy reads the files; a model with
augmentation layers resumes bit-identically too, and a run with compiled
metrics to the same CSV.
Usage: resume_test.py CASE AXON_TRAIN"""
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from app_util import DEFAULT_DATA, SANITIZED, check, check_peak, clean_env, one_line, run  # noqa: E402

case, TRAIN = sys.argv[1], sys.argv[2]


def have_default_data():
    return os.path.exists(os.path.join(DEFAULT_DATA, "train-images-idx3-ubyte.gz")) or \
        os.path.exists(os.path.join(DEFAULT_DATA, "train-images-idx3-ubyte"))


# Steps per epoch of the short runs, and test images. What is checked is the
# code each path runs, not how long it runs: 100 steps leave a signal sent
# mid-epoch 2 most of a second before the epoch ends; under ASan and UBSan a
# step takes about 30 times longer, and a tenth of the steps do there.
STEPS = 10 if SANITIZED else 100
TEST_IMAGES = 200 if SANITIZED else 1000


def short_run():
    """STEPS steps per epoch of batch 64 on Fashion-MNIST (tools/install-deps installs it)."""
    check(have_default_data(), "the data set is installed (tools/install-deps)")
    return ["--data", DEFAULT_DATA, "--train-limit", str(64 * STEPS), "--test-limit", str(TEST_IMAGES), "--seed", "7",
            "--threads", "2"]


def ckpt_name(step):
    return "ckpt-%010d.safetensors" % step


def train(args, tmp, what):
    r = run([TRAIN] + args, cwd=tmp)
    check(r.code == 0, what, r)
    return r


def csv_rows(path):
    lines = open(path).read().splitlines()
    return [line.split(",") for line in lines[1:]]


def metrics_of(path):
    # Every column but the epoch's times (they differ by nature): loss,
    # accuracy, the compiled metrics and their val_ forms, learning_rate.
    return [row[1:-4] + row[-1:] for row in csv_rows(path)]


def checkpoint_steps(folder):
    out = []
    for name in os.listdir(folder):
        if name.startswith("ckpt-") and name.endswith(".safetensors"):
            out.append(int(name[5:-12]))
    return sorted(out)


def start_and_wait_for(args, tmp, ckpt, after_step):
    """Starts a training run and returns once it wrote a checkpoint past `after_step`."""
    p = subprocess.Popen([TRAIN] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         env=clean_env(), cwd=tmp)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if os.path.isdir(ckpt) and any(s > after_step for s in checkpoint_steps(ckpt)):
            return p
        if p.poll() is not None:
            check(False, "the run is still training when its checkpoint is awaited", p.stderr.read())
        time.sleep(0.005)
    p.kill()
    check(False, "a checkpoint past step %d within 240 s" % after_step)


def interrupted_then_resumed(tmp, sig, epochs=3, extra=()):
    """Reference run, then a run hit by `sig` mid-epoch 2, then --resume.
    Returns (reference folder files, resumed run's output)."""
    base = short_run() + ["--epochs", str(epochs)] + list(extra)
    ref_w, ref_csv = os.path.join(tmp, "ref.axw"), os.path.join(tmp, "ref.csv")
    train(base + ["-q", "--save", ref_w, "--metrics-csv", ref_csv], tmp, "the uninterrupted run")

    ckpt = os.path.join(tmp, "ckpt")
    w, csv = os.path.join(tmp, "w.axw"), os.path.join(tmp, "m.csv")
    every = STEPS // 8
    args = base + ["--save", w, "--metrics-csv", csv, "--checkpoint-dir", ckpt, "--checkpoint-every", str(every)]
    p = start_and_wait_for(args + ["-q"], tmp, ckpt, STEPS + every)  # epoch 2 is steps STEPS+1..2 STEPS
    p.send_signal(sig)
    _, err = p.communicate(timeout=120)
    if sig == signal.SIGKILL:
        check(p.returncode == -signal.SIGKILL, "SIGKILL ends the run", p.returncode, err)
    else:
        check(p.returncode == 128 + sig, "SIGTERM: exit %d" % (128 + sig), p.returncode, err)
        check(one_line(err) and "stopped by SIGTERM at epoch 2/%d, step " % epochs in err and
              "--resume --checkpoint-dir " + ckpt in err, "one line saying where to resume from", err)
    check(not os.path.exists(w), "no --save from the interrupted run")

    r = train(args + ["--resume"], tmp, "the resumed run")
    check("Resuming from " + ckpt in r.out and ": epoch 2/%d, step " % epochs in r.out,
          "it resumes mid-epoch 2 from the newest checkpoint", r)
    check(open(w, "rb").read() == open(ref_w, "rb").read(),
          "the resumed run's weights are bit-identical to the uninterrupted run's")
    check(metrics_of(csv) == metrics_of(ref_csv), "and so is every epoch's loss and accuracy in the CSV",
          open(csv).read(), open(ref_csv).read())
    check(len(checkpoint_steps(ckpt)) == 3, "the newest 3 checkpoints are kept", checkpoint_steps(ckpt))
    check(not [n for n in os.listdir(ckpt) if n.startswith(".")], "no temporary left in the folder", os.listdir(ckpt))
    return r


def sigkill(tmp):
    interrupted_then_resumed(tmp, signal.SIGKILL)


def sigterm(tmp):
    interrupted_then_resumed(tmp, signal.SIGTERM)


def augmented(tmp):
    """Keras' six augmentation layers before the CNN: their draws are keyed
    by step and sample, so the resumed run augments as the uninterrupted one."""
    model = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "keras_augmented_cnn.json")
    interrupted_then_resumed(tmp, signal.SIGKILL, epochs=2, extra=["--model", model])


def metrics(tmp):
    """Compiled metrics besides accuracy: their running sums ride in the
    checkpoint, so the resumed epoch's figures are the uninterrupted run's;
    resuming with other metrics is refused."""
    compiled = ["--metrics", "mse", "--metrics", "sparse_top_k_categorical_accuracy:k=3,name=top3"]
    interrupted_then_resumed(tmp, signal.SIGKILL, epochs=2, extra=compiled)
    check(csv_rows(os.path.join(tmp, "m.csv"))[0][3:5] != ["", ""], "the CSV holds the metrics",
          open(os.path.join(tmp, "m.csv")).read())
    r = run([TRAIN] + short_run() + ["--epochs", "3", "--checkpoint-dir", "ckpt", "--resume", "--metrics", "mae"],
            cwd=tmp)
    check(r.code == 2 and one_line(r.err) and "written with the metrics" in r.err and '"mae"' in r.err,
          "resuming with other metrics: exit 2, one line naming both", r)


def two_devices(tmp):
    """A 1-device checkpoint resumed on 2 logical CPU devices (mirrored, same
    global batch): within 0.5 accuracy points of the run never interrupted.
    Half an epoch of sums in another order moves the validation accuracy:
    0.30 points (30 of 10,000 images) on a 2-core AVX-512 EPYC, where
    OpenBLAS picks other kernels than on an AVX2 one."""
    check(have_default_data(), "the data set is installed (tools/install-deps)")
    base = ["--data", DEFAULT_DATA, "--epochs", "2", "--seed", "7", "--threads", "2"]
    ref_csv = os.path.join(tmp, "ref.csv")
    train(base + ["-q", "--metrics-csv", ref_csv], tmp, "the uninterrupted 1-device run")
    ckpt, csv = os.path.join(tmp, "ckpt"), os.path.join(tmp, "m.csv")
    # 938 steps per epoch: the checkpoint at step 1407 is halfway through
    # epoch 2, and the next comes 469 steps (seconds) later, so the run
    # resumes from 1407 every time.
    args = base + ["--metrics-csv", csv, "--checkpoint-dir", ckpt, "--checkpoint-every", "469"]
    p = start_and_wait_for(args + ["-q"], tmp, ckpt, 938)
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=120)
    r = train(args + ["--resume", "--strategy", "mirrored", "--cpu-devices", "2"], tmp,
              "resumed with --strategy mirrored --cpu-devices 2")
    check("epoch 2/2, step 469/938 (global step 1407)" in r.out, "it resumes halfway through epoch 2", r)
    check(sum(row[0] != "" for row in csv_rows(csv)) == 2, "the CSV holds both epochs", open(csv).read())
    ref = float(csv_rows(ref_csv)[-1][4])
    got = float(csv_rows(csv)[-1][4])
    print("validation accuracy after 2 epochs: uninterrupted %.4f, resumed on 2 devices %.4f" % (ref, got))
    check(abs(ref - got) <= 0.005, "within 0.5 points (%.2f)" % (100 * abs(ref - got)), r)


def damaged(tmp):
    """The newest checkpoint truncated, flipped, lying or oversized: the one
    before it is used (the run still ends bit-identical), the damaged one is
    kept aside, not overwritten; with no other, exit 2 and nothing written."""
    base = short_run()
    ref_w = os.path.join(tmp, "ref.axw")
    train(base + ["--epochs", "2", "-q", "--save", ref_w], tmp, "the uninterrupted 2-epoch run")
    ckpt = os.path.join(tmp, "ckpt")
    # One epoch with checkpoints halfway and at its end.
    half = STEPS // 2
    train(base + ["--epochs", "1", "-q", "--checkpoint-dir", ckpt, "--checkpoint-every", str(half)], tmp,
          "a 1-epoch run with checkpoints")
    check(checkpoint_steps(ckpt) == [half, STEPS], "checkpoints at steps %d and %d" % (half, STEPS),
          checkpoint_steps(ckpt))
    newest = os.path.join(ckpt, ckpt_name(STEPS))
    good = open(newest, "rb").read()

    def lying(b):
        n = struct.unpack("<Q", b[:8])[0]
        header = b[8:8 + n].replace(b'"shape":[3,3,1,32]', b'"shape":[3,3,9,32]', 1)
        return b[:8] + header + b[8 + n:]

    damages = {
        "truncated": lambda b: b[:len(b) // 2],
        "a flipped byte": lambda b: b[:-5000] + bytes([b[-5000] ^ 0x40]) + b[-4999:],
        "a lying header": lying,
        "oversized": None,
    }
    for what, damage in damages.items():
        d = os.path.join(tmp, "ckpt-" + what.replace(" ", "-"))
        shutil.copytree(ckpt, d)
        bad = os.path.join(d, ckpt_name(STEPS))
        if damage is None:
            with open(bad, "r+b") as f:
                f.truncate(2 << 30)  # sparse
        else:
            open(bad, "wb").write(damage(good))
        bad_bytes_size = os.path.getsize(bad)
        w = os.path.join(tmp, "w-%s.axw" % what.replace(" ", "-"))
        r = run([TRAIN] + base + ["--epochs", "2", "--save", w, "--checkpoint-dir", d, "--checkpoint-every",
                                  str(half), "--resume"], cwd=tmp)
        check(r.code == 0, "%s newest checkpoint: the run goes on" % what, r)
        check(one_line(r.err) and bad in r.err and "used an older checkpoint" in r.err,
              "%s: one warning naming the damaged file" % what, r)
        check("Resuming from " + os.path.join(d, ckpt_name(half)) in r.out,
              "%s: it resumes from the checkpoint before" % what, r)
        check_peak(r, what)
        check(open(w, "rb").read() == open(ref_w, "rb").read(), "%s: and still ends bit-identical" % what)
        kept = bad + ".damaged"
        check(os.path.exists(kept) and os.path.getsize(kept) == bad_bytes_size,
              "%s: the damaged file is kept as %s, not overwritten" % (what, os.path.basename(kept)))

        # With no older checkpoint: exit 2, one line, nothing written or moved.
        solo = os.path.join(tmp, "solo-" + what.replace(" ", "-"))
        os.mkdir(solo)
        shutil.move(kept, os.path.join(solo, ckpt_name(STEPS)))
        before = {n: os.path.getsize(os.path.join(solo, n)) for n in os.listdir(solo)}
        w2 = os.path.join(tmp, "never.axw")
        r = run([TRAIN] + base + ["--epochs", "2", "--save", w2, "--checkpoint-dir", solo, "--resume"], cwd=tmp)
        check(r.code == 2 and one_line(r.err) and "no usable checkpoint in " + solo in r.err,
              "%s and alone: exit 2 with one line" % what, r)
        check_peak(r, what + " and alone")
        after = {n: os.path.getsize(os.path.join(solo, n)) for n in os.listdir(solo)}
        check(after == before and not os.path.exists(w2), "%s and alone: no file written, moved or replaced" % what,
              before, after)


def guards(tmp):
    """--checkpoint-dir over another run's checkpoints needs --resume; a
    checkpoint of another run (another batch size) is refused."""
    base = short_run() + ["--epochs", "1", "-q"]
    ckpt = os.path.join(tmp, "ckpt")
    train(base + ["--checkpoint-dir", ckpt], tmp, "a run with checkpoints")
    files = checkpoint_steps(ckpt)
    r = run([TRAIN] + base + ["--checkpoint-dir", ckpt], cwd=tmp)
    check(r.code == 2 and one_line(r.err) and "already holds checkpoints" in r.err and "--resume" in r.err,
          "a second run into the same folder without --resume: exit 2", r)
    r = run([TRAIN] + base + ["--checkpoint-dir", ckpt, "--resume", "--batch-size", "32"], cwd=tmp)
    check(r.code == 2 and one_line(r.err) and "was written with --batch-size 64, this run has 32" in r.err,
          "resuming another batch size: exit 2 naming both", r)
    check(checkpoint_steps(ckpt) == files, "the checkpoints are untouched", checkpoint_steps(ckpt))
    r = run([TRAIN] + base + ["--resume"], cwd=tmp)
    check(r.code == 2 and "--resume needs --checkpoint-dir" in r.err, "--resume without a folder: exit 2", r)
    r = run([TRAIN] + base + ["--checkpoint-dir", os.path.join(tmp, "absent", "c")], cwd=tmp)
    check(r.code == 2 and "does not exist" in r.err, "a checkpoint folder whose parent is missing: exit 2", r)
    train(base + ["--checkpoint-dir", os.path.join(tmp, "fresh"), "--resume"], tmp, "--resume with no checkpoint yet")


def finished(tmp):
    """--resume from the checkpoint at the run's end trains nothing, and still
    writes --metrics-csv (the checkpoint's rows) and --save."""
    base = short_run() + ["--epochs", "2", "-q"]
    ckpt, ref_csv = os.path.join(tmp, "ckpt"), os.path.join(tmp, "ref.csv")
    train(base + ["--checkpoint-dir", ckpt, "--metrics-csv", ref_csv], tmp, "a run to its end, with checkpoints")
    for name in ("m.csv", "w.axw"):
        check(not os.path.exists(os.path.join(tmp, name)), name + " is not there yet")
    csv, w = os.path.join(tmp, "m.csv"), os.path.join(tmp, "w.axw")
    r = train(base[:-1] + ["--checkpoint-dir", ckpt, "--resume", "--metrics-csv", csv, "--save", w], tmp,
              "--resume from the last checkpoint")
    check("Resuming from " in r.out and "the end of epoch 2/2" in r.out and "Epoch " not in r.out,
          "it resumes at the end and trains nothing", r)
    check(os.path.isfile(csv) and open(csv).read() == open(ref_csv).read(),
          "--metrics-csv holds the checkpoint's two rows, as the first run wrote them",
          open(csv).read() if os.path.isfile(csv) else "(no file)", open(ref_csv).read())
    check(os.path.isfile(w), "--save is written")


def ranks_of(parent, exe):
    """The processes of `exe` whose parent is `parent` (mpirun's ranks)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            ppid = int(open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()[1])
            if ppid == parent and os.path.realpath("/proc/%s/exe" % pid) == os.path.realpath(exe):
                out.append(int(pid))
        except (OSError, IndexError, ValueError):
            pass
    return out


def multi_worker(tmp):
    """Two mpirun workers stopped with SIGTERM mid-epoch (a scheduler's
    preemption reaches every rank) stop at one step; rank 0 writes the
    checkpoint; two workers resume and end bit-identical to an uninterrupted
    two-worker run."""
    env = clean_env()
    if os.geteuid() == 0:  # Open MPI refuses root unless told; CI and containers run as root
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    mpirun = ["mpirun", "-np", "2", "--oversubscribe", TRAIN, "--strategy", "multi-worker"]
    check(have_default_data(), "the data set is installed (tools/install-deps)")
    # One thread per rank. Workers agree on a stop every 16 steps of an
    # epoch, so the signal (sent once a checkpoint past steps + every is
    # there) must come before the epoch's last such step.
    steps = 40 if SANITIZED else 100
    every = steps // 4
    base = ["--data", DEFAULT_DATA, "--train-limit", str(64 * steps), "--test-limit", str(TEST_IMAGES // 2), "--seed", "7",
            "--threads", "1", "--epochs", "2", "-q"]
    ref_w = os.path.join(tmp, "ref.axw")
    r = run(mpirun + base + ["--save", ref_w], env=env, cwd=tmp)
    check(r.code == 0, "the uninterrupted 2-worker run", r)
    ckpt, w = os.path.join(tmp, "ckpt"), os.path.join(tmp, "w.axw")
    args = base + ["--save", w, "--checkpoint-dir", ckpt, "--checkpoint-every", str(every)]
    p = subprocess.Popen(mpirun + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                         cwd=tmp)
    deadline = time.monotonic() + 240
    while not (os.path.isdir(ckpt) and any(s > steps + every for s in checkpoint_steps(ckpt))):
        if p.poll() is not None or time.monotonic() > deadline:
            check(False, "the workers reach epoch 2", p.returncode)
        time.sleep(0.005)
    ranks = ranks_of(p.pid, TRAIN)
    check(len(ranks) == 2, "two ranks under mpirun", ranks)
    for pid in ranks:
        os.kill(pid, signal.SIGTERM)
    _, err = p.communicate(timeout=120)
    lines = [line for line in err.splitlines() if line.startswith("axon-train")]
    check(p.returncode != 0 and len(lines) == 1 and "stopped by SIGTERM at epoch 2/2, step " in lines[0],
          "one line, from rank 0, saying where they stopped", p.returncode, err)
    r = run(mpirun + args + ["--resume"], env=env, cwd=tmp)
    check(r.code == 0, "two workers resume", r)
    check(open(w, "rb").read() == open(ref_w, "rb").read(),
          "and end bit-identical to the uninterrupted two-worker run")


def numpy_python():
    for exe in (sys.executable, "/usr/bin/python3"):
        if exe and os.path.exists(exe) and subprocess.run([exe, "-c", "import numpy"],
                                                          capture_output=True).returncode == 0:
            return exe
    check(False, "a python3 with NumPy (tools/install-deps installs python3-numpy)")


NUMPY_READER = r'''
import json, struct, sys
import numpy as np
ckpt, weights = sys.argv[1], sys.argv[2]
b = open(ckpt, "rb").read()
n = struct.unpack("<Q", b[:8])[0]
header = json.loads(b[8:8 + n])
data = b[8 + n:]
meta = header.pop("__metadata__")
tensors = {k: np.frombuffer(data, dtype="<f4", count=int(np.prod(v["shape"], dtype=np.int64)),
                            offset=v["data_offsets"][0]).reshape(v["shape"])
           for k, v in header.items() if v["dtype"] == "F32"}
# The --save file of the same run: AXONWTS1, version, count, then per tensor
# name, dtype, rank, dims and float32 values.
w = open(weights, "rb").read()
pos = 16
count = struct.unpack_from("<I", w, 12)[0]
for _ in range(count):
    (length,) = struct.unpack_from("<I", w, pos); pos += 4
    name = w[pos:pos + length].decode(); pos += length
    _, rank = struct.unpack_from("<II", w, pos); pos += 8
    dims = struct.unpack_from("<%dq" % rank, w, pos); pos += 8 * rank
    values = np.frombuffer(w, dtype="<f4", count=int(np.prod(dims)), offset=pos).reshape(dims)
    pos += 4 * values.size
    assert np.array_equal(tensors[name], values), name
    assert tensors["optimizer/v/" + name].min() >= 0, name
print(meta["format"], meta["epochs_done"], len(tensors), "tensors")
'''


def numpy_reads(tmp):
    base = short_run() + ["--epochs", "1", "-q"]
    ckpt, w = os.path.join(tmp, "ckpt"), os.path.join(tmp, "w.axw")
    train(base + ["--checkpoint-dir", ckpt, "--save", w], tmp, "a run with a checkpoint and --save")
    py = numpy_python()
    newest = os.path.join(ckpt, "ckpt-%010d.safetensors" % checkpoint_steps(ckpt)[-1])
    p = subprocess.run([py, "-c", NUMPY_READER, newest, w], capture_output=True, text=True)
    check(p.returncode == 0 and p.stdout.strip() == "axon-checkpoint 1 31 tensors",
          "NumPy reads the checkpoint: its weights are the --save file's", p.stdout, p.stderr)


CASES = {f.__name__: f for f in (sigkill, sigterm, augmented, metrics, two_devices, damaged, guards, finished, multi_worker, numpy_reads)}

if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="axon-resume-") as tmp:
        CASES[case](tmp)
