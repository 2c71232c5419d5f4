#!/usr/bin/env python3
"""axon-train's learning-rate schedules and Keras callbacks end to end:
EarlyStopping stops an overfitting run where Keras' rule says on its own
loss history and restores the best epoch's weights; ModelCheckpoint keeps the
best epoch's; ReduceLROnPlateau's rates follow the history; all of them
survive a SIGKILL and --resume bit for bit; a cosine schedule with warmup
gives each epoch's last step Keras' rate; a .keras file's compile config
(SGD with momentum on a cosine schedule) is what trains; bad settings exit 2
with one line.
Usage: keras_training_test.py CASE AXON_TRAIN"""
import json
import math
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reliability"))
from app_util import DEFAULT_DATA, SANITIZED, check, clean_env, one_line, run  # noqa: E402

case, TRAIN = sys.argv[1], sys.argv[2]
DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
# A small training set overfits within a few epochs; under the sanitizers fewer steps.
OVERFIT = ["--data", DEFAULT_DATA, "--train-limit", "128" if SANITIZED else "256", "--test-limit", "300",
           "--epochs", "12" if SANITIZED else "40", "--seed", "5", "--threads", "2"]
CALLBACKS = ["--early-stopping", "patience=2,restore_best_weights=true", "--reduce-lr-on-plateau",
             "factor=0.5,patience=1", "--model-checkpoint", "filepath=best.safetensors"]


def train(args, tmp, what):
    r = run([TRAIN] + args, cwd=tmp)
    check(r.code == 0, what, r)
    return r


def csv(path):
    lines = open(path).read().splitlines()
    header = lines[0].split(",")
    return [dict(zip(header, line.split(","))) for line in lines[1:]]


def evaluated_loss(weights, tmp):
    r = train(["--data", DEFAULT_DATA, "--initial-weights", weights, "--epochs", "0", "--test-limit", "300"], tmp,
              "evaluate " + os.path.basename(weights))
    return float(r.out.split("loss: ")[1].split()[0])


def keras_early_stopping(val_losses, patience):
    """Keras 3's EarlyStopping(patience) on val_loss (min_delta 0): the epoch (0-based) it stops after, and the best."""
    best, best_epoch, wait = None, 0, 0
    for epoch, v in enumerate(val_losses):
        wait += 1
        if best is None or v < best:
            best, best_epoch, wait = v, epoch, 0
            continue
        if wait >= patience and epoch > 0:
            return epoch, best_epoch
    return None, best_epoch


def early_stopping(tmp):
    r = train(OVERFIT + CALLBACKS + ["--metrics-csv", "m.csv", "--save", "final.safetensors"], tmp, "an overfitting run")
    rows = csv(os.path.join(tmp, "m.csv"))
    losses = [float(row["val_loss"]) for row in rows]
    stopped, best = keras_early_stopping(losses, 2)
    epochs = int(OVERFIT[OVERFIT.index("--epochs") + 1])
    if SANITIZED and stopped is None:  # the short run may end before it overfits
        check(len(rows) == epochs and "early stopping" not in r.out, "no stop where Keras' rule makes none", losses)
    else:
        check(stopped is not None and len(rows) == stopped + 1,
              "EarlyStopping(patience=2) stopped after epoch %s, where Keras' rule stops on this history" %
              (None if stopped is None else stopped + 1), losses)
        check("Epoch %d: early stopping" % (stopped + 1) in r.out, "Keras' line", r.out)
    check("Restoring model weights from the end of the best epoch: %d." % (best + 1) in r.out, "Keras' line", r.out)
    final = evaluated_loss(os.path.join(tmp, "final.safetensors"), tmp)
    check(abs(final - losses[best]) < 1e-4, "the saved weights are the best epoch's (val_loss %.4f, best %.6f)" %
          (final, losses[best]))
    kept = evaluated_loss(os.path.join(tmp, "best.safetensors"), tmp)
    check(abs(kept - losses[best]) < 1e-4, "ModelCheckpoint kept the best epoch's weights (%.4f)" % kept)
    # ReduceLROnPlateau(factor=0.5, patience=1, min_delta=1e-4): each rate from the history before it.
    lr, best_v, wait = 1e-3, None, 0
    for row, v in zip(rows, losses):
        check(abs(float(row["learning_rate"]) - lr) <= 1e-7 * lr, "epoch %s trained at %.9g" % (row["epoch"], lr),
              row)
        if best_v is None or v + 1e-4 < best_v:
            best_v, wait = v, 0
        else:
            wait += 1
            if wait >= 1:
                lr, wait = lr * 0.5, 0


def checkpoint_steps(folder):
    return sorted(int(n[5:-12]) for n in os.listdir(folder) if n.startswith("ckpt-") and n.endswith(".safetensors"))


def resume(tmp):
    # A plateau of less than 0.2 in val_loss: the rate drops within the first epochs.
    callbacks = CALLBACKS[:3] + ["factor=0.5,patience=1,min_delta=0.2"] + CALLBACKS[4:]
    base = OVERFIT + callbacks + ["--checkpoint-dir", "ckpt", "--checkpoint-every", "1", "-q"]
    ref = os.path.join(tmp, "ref")
    os.makedirs(ref)
    train(base + ["--save", "final.safetensors", "--metrics-csv", "m.csv"], ref, "the uninterrupted run")
    # Killed once the callbacks hold state that matters: after the first
    # epoch trained at a reduced rate (and so after a plateau), mid-epoch.
    rows = csv(os.path.join(ref, "m.csv"))
    reduced = [int(r["epoch"]) for r in rows if float(r["learning_rate"]) < 1e-3]
    check(len(reduced) > 0 and reduced[0] < len(rows) - 1, "the reference run reduced its rate before its last epochs",
          [r["learning_rate"] for r in rows])
    steps = 2 if SANITIZED else 4  # per epoch
    kill_after = reduced[0] * steps + steps // 2
    run_dir = os.path.join(tmp, "run")
    os.makedirs(run_dir)
    args = [TRAIN] + base + ["--save", "final.safetensors", "--metrics-csv", "m.csv"]
    p = subprocess.Popen(args, cwd=run_dir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=clean_env())
    ckpt = os.path.join(run_dir, "ckpt")
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and p.poll() is None:
        if os.path.isdir(ckpt) and any(s >= kill_after for s in checkpoint_steps(ckpt)):
            break
        time.sleep(0.01)
    check(p.poll() is None, "the run was still training when killed", p.poll())
    p.send_signal(signal.SIGKILL)
    p.wait()
    train(base + ["--save", "final.safetensors", "--metrics-csv", "m.csv", "--resume"], run_dir, "the resumed run")
    for name in ("final.safetensors", "best.safetensors", "m.csv"):
        a, b = open(os.path.join(ref, name), "rb").read(), open(os.path.join(run_dir, name), "rb").read()
        if name == "m.csv":  # times differ by nature: the loss, accuracy and rate columns
            cols = lambda t: [ln.split(",")[:5] + ln.split(",")[8:] for ln in t.decode().splitlines()]
            a, b = cols(a), cols(b)
        check(a == b, name + " of the resumed run equals the uninterrupted run's")


def cosine_rate(step, lr0, decay, warmup, target):
    """Keras 3's CosineDecay with warmup (in double: the run's float32 agrees within 1e-6)."""
    step = min(step, decay + warmup)
    if step < warmup:
        return (target - lr0) * (step / warmup) + lr0
    return target * 0.5 * (1 + math.cos(math.pi * (step - warmup) / decay))


def schedule(tmp):
    train(["--data", DEFAULT_DATA, "--train-limit", "640", "--test-limit", "100", "--epochs", "4", "--learning-rate",
           "1e-5", "--lr-schedule", "cosine:decay_steps=25,warmup_steps=6,warmup_target=0.01", "--metrics-csv", "m.csv",
           "-q"], tmp, "a run on a cosine schedule with warmup")
    for row in csv(os.path.join(tmp, "m.csv")):
        last_step = int(row["epoch"]) * 10 - 1  # 10 steps an epoch; the rate of its last update
        want = cosine_rate(last_step, 1e-5, 25, 6, 0.01)
        check(abs(float(row["learning_rate"]) - want) <= 1e-6 * max(want, 1e-3),
              "epoch %s's last step at Keras' rate %.9g" % (row["epoch"], want), row)


def checkpoint_metadata(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(n))["__metadata__"]


def compile_config(tmp):
    model = os.path.join(DATA_DIR, "keras_small.keras")
    train(["--data", DEFAULT_DATA, "--model", model, "--train-limit", "640", "--test-limit", "100", "--epochs", "2",
           "--metrics-csv", "m.csv", "--checkpoint-dir", "ckpt", "-q"], tmp, "keras_small.keras with its compile config")
    # The file's SGD goes on from its saved state, step 96 (Keras trained 96 steps).
    meta = checkpoint_metadata(os.path.join(tmp, "ckpt", "ckpt-%010d.safetensors" % (96 + 20)))
    check(meta["optimizer"] == "--optimizer sgd --momentum 0.9 --nesterov", "SGD with Nesterov momentum trained",
          meta["optimizer"])
    for row in csv(os.path.join(tmp, "m.csv")):
        step = 96 + int(row["epoch"]) * 10 - 1
        want = cosine_rate(step, 0.05, 1000, 0, 0.05)  # CosineDecay(0.05, 1000): no warmup
        check(abs(float(row["learning_rate"]) - want) <= 1e-6 * want, "on its CosineDecay (%.9g)" % want, row)


def refused(tmp):
    base = ["--data", DEFAULT_DATA, "--train-limit", "64"]
    for args, why in (
            (["--lr-schedule", "linear:decay_steps=5"], "--lr-schedule: unknown schedule 'linear'; axon has exponential"),
            (["--lr-schedule", "cosine:decay_steps=0"], "decay_steps"),
            (["--lr-schedule", "cosine:decay_steps=10,alfa=0.1"], "unknown setting 'alfa'; it takes decay_steps"),
            (["--lr-schedule", "cosine"], "--lr-schedule cosine: needs decay_steps"),
            (["--lr-schedule", "piecewise:boundaries=10/20,values=1/0.5"], "needs one more value than boundaries"),
            (["--early-stopping", "monitor=val_f1"], "cannot tell whether val_f1 should rise or fall"),
            (["--early-stopping", "patience=-1"], "--early-stopping patience"),
            (["--early-stopping", "patience"], "'patience' is not key=value"),
            (["--reduce-lr-on-plateau", "factor=1.5"], "factor must be from 0 to below 1"),
            (["--reduce-lr-on-plateau", "patience=1", "--lr-schedule", "cosine:decay_steps=9"], "both set the learning rate"),
            (["--model-checkpoint", "monitor=val_loss"], "--model-checkpoint: needs filepath=FILE"),
            (["--early-stopping", "patience=1", "--model", os.path.join(DATA_DIR, "keras_small.keras"), "--epochs", "0"],
             "--epochs 0 only evaluates")):
        r = run([TRAIN] + base + args + ([] if "--epochs" in args else ["--epochs", "1"]), cwd=tmp)
        check(r.code == 2 and one_line(r.err) and why in r.err, "%s: exit 2, one line: %s" % (" ".join(args), why), r)


CASES = {f.__name__: f for f in (early_stopping, resume, schedule, compile_config, refused)}

if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="axon-keras-training-") as tmp:
        CASES[case](tmp)
