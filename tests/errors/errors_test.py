#!/usr/bin/env python3
"""Errors reach axon-train (docs/training.md, "When training fails"): each
case runs axon-train on a TOY test plugin that plants one fault and checks
the exit code, the one error line, and that an earlier --save file, the
metrics CSV and the checkpoints hold nothing of the failed step.

  async_sync        a queued kernel fails, seen only by synchronize(): exit 1
                    naming the device and the op, --save and --metrics-csv untouched
  async_replicas    the same on the second replica of --strategy mirrored
  async_checkpoint  the failure stops the run at the next checkpoint, unwritten
  nan_loss          a Relu writes NaN: the run stops at that step (exit 1)
  nan_weights       a NaN reaches the weights with the loss finite: stopped at
                    the next checkpoint, or after the epoch's last step
  check_numerics    --check-numerics (and AXON_CHECK_NUMERICS=1) stop at the op
  check_numerics_setting  the flag and variable reach get_config; a bad value exits 2
  failed_init       --device toy:0 / --visible-devices toy:0 when the plugin's
                    init failed: exit 2 with its message; axon-devices lists it
  failed_open       the same when open_device fails
  no_devices        a plugin offering no device: the CPU fallback names its reason
  dry_run           --dry-run on a TOY without Conv2D and its gradients lists
                    exactly those three as missing, what moves along inside
                    the fused ops, and trains nothing
  strict_placement  --strict-placement names all three at once (exit 2); with
                    every kernel there it trains
  placement_log     --log-device-placement lines carry the layer
  lowered_fused_ops the ResNet's BatchNormalization + ReLU pairs and
                    BatchNormalization + Add + ReLU block ends on a TOY
                    without the fused ops run as the ops' parts there, its
                    block inputs' gradients are summed by AddN where the
                    reference adds into them (_Conv2DBackpropInputAccumulate),
                    and both give the same weights, bit for bit

Usage: errors_test.py CASE AXON_TRAIN AXON_DEVICES PLUGIN_DIRS"""
import hashlib
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reliability"))
from app_util import check, clean_env, run, write_dataset  # noqa: E402

case, TRAIN, DEVICES, PLUGIN_DIRS = sys.argv[1:5]

BATCH = 8
TRAIN_N, TEST_N = 64, 16  # 8 steps an epoch
STEPS = TRAIN_N // BATCH
# The core may name the plugin's status after its message: "... (AXON_INTERNAL)".
STATUS = r"(?: \(AXON_[A-Z_]+\))?"


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def error_lines(r):
    return [line for line in r.err.splitlines() if line.startswith("axon-train: error:")]


def check_one_error(r, code, pattern, what):
    """Exit `code`, and stderr's error is one line matching `pattern` (other
    stderr lines may only be axon's own log lines)."""
    errors = error_lines(r)
    others = [line for line in r.err.splitlines() if not line.startswith("axon-train: error:")
              and not line.startswith("axon: ")]
    check(r.code == code, "%s: exit %d" % (what, code), r)
    check(len(errors) == 1 and not others, "%s: one error line on stderr" % what, r)
    check(re.fullmatch(pattern, errors[0]) is not None,
          "%s: the line reads %s" % (what, pattern), errors[0])
    return errors[0]


class Run:
    def __init__(self, tmp):
        self.tmp = tmp
        self.data = os.path.join(tmp, "data")
        write_dataset(self.data, TRAIN_N, TEST_N)

    def train(self, variant, args, env=None, plugin=True):
        cmd = [TRAIN, "--data", self.data, "--batch-size", str(BATCH), "--threads", "1"]
        if plugin:
            cmd += ["--plugin-dir", os.path.join(PLUGIN_DIRS, variant)]
        return run(cmd + args, env=clean_env(env), cwd=self.tmp, timeout=240)

    def saved_first(self, name, args=()):
        """A --save file (and CSV) from a clean run on the TOY device, to be
        left byte-identical by a failing run."""
        save = os.path.join(self.tmp, name)
        csv = save + ".csv"
        r = self.train("clean", ["--device", "toy:0", "--epochs", "1", "--save", save, "--metrics-csv", csv] +
                       list(args))
        check(r.code == 0 and os.path.isfile(save) and os.path.isfile(csv),
              "a clean run on the TOY device saves %s" % name, r)
        check("Training on /device:TOY:0" in r.out, "it trained on /device:TOY:0", r)
        return save, csv, digest(save), digest(csv)


def check_survived(save, csv, save_digest, csv_digest, what):
    check(digest(save) == save_digest, "%s: the earlier --save file is byte-identical" % what)
    check(digest(csv) == csv_digest, "%s: the earlier --metrics-csv file is byte-identical" % what)
    leftovers = [n for n in os.listdir(os.path.dirname(save)) if ".tmp." in n]
    check(not leftovers, "%s: no temporary file left beside them" % what, leftovers)


def async_sync(t):
    save, csv, s0, c0 = t.saved_first("model.axw")
    # The fault in step 3's ApplyAdam; nothing reads it back but synchronize().
    r = t.train("async", ["--device", "toy:0", "--epochs", "1", "--save", save, "--metrics-csv", csv],
                env={"TOY_FAULT_CALL": "3"})
    check_one_error(r, 1, r"axon-train: error: synchronize /device:TOY:0: queued kernel failed: ApplyAdam call 3 "
                          r"on toy device 0: planted asynchronous fault" + STATUS, "a queued kernel's failure")
    check("Saved weights" not in r.out, "nothing says the weights were saved", r)
    check_survived(save, csv, s0, c0, "a queued kernel's failure")
    # The same plugin without reaching the fault trains and saves: the check can tell.
    r = t.train("async", ["--device", "toy:0", "--epochs", "1", "--save", save], env={"TOY_FAULT_CALL": "1000"})
    check(r.code == 0 and "Saved weights" in r.out, "without the fault the same plugin trains and saves", r)


def async_replicas(t):
    save, csv, s0, c0 = t.saved_first("model.safetensors")
    r = t.train("async", ["--strategy", "mirrored", "--epochs", "2", "--save", save, "--metrics-csv", csv],
                env={"TOY_FAULT_CALL": "2", "TOY_FAULT_DEVICE": "1"})
    check("Using MirroredStrategy with 2 replicas" in r.out, "two TOY replicas", r)
    check_one_error(r, 1, r"axon-train: error: synchronize /device:TOY:1: queued kernel failed: ApplyAdam call 2 "
                          r"on toy device 1: planted asynchronous fault" + STATUS, "a failure on the second replica")
    check("Epoch 1/2" in r.out and "Epoch 2/2" not in r.out, "it stopped within the first epoch", r)
    check_survived(save, csv, s0, c0, "a failure on the second replica")


def async_checkpoint(t):
    ckpt = os.path.join(t.tmp, "ckpt")
    r = t.train("async", ["--device", "toy:0", "--epochs", "1", "--checkpoint-dir", ckpt, "--checkpoint-every", "1",
                          "--keep-checkpoints", "10"], env={"TOY_FAULT_CALL": "3"})
    check_one_error(r, 1, r"axon-train: error: synchronize /device:TOY:0: queued kernel failed: ApplyAdam call 3 .*",
                    "a queued failure before a checkpoint")
    names = sorted(os.listdir(ckpt))
    check(names == ["ckpt-0000000001.safetensors", "ckpt-0000000002.safetensors"],
          "the checkpoints of steps 1 and 2 are there, none of step 3 or later", names)


def nan_loss(t):
    save, csv, s0, c0 = t.saved_first("model.axw")
    ckpt = os.path.join(t.tmp, "ckpt")
    # Relu calls go conv2d, conv2d_1, conv2d_2, dense each step: call 12 is
    # the dense layer's in step 3, and its NaN reaches the logits.
    r = t.train("nan", ["--device", "toy:0", "--epochs", "2", "--save", save, "--metrics-csv", csv,
                        "--checkpoint-dir", ckpt, "--checkpoint-every", "1", "--keep-checkpoints", "10"],
                env={"TOY_NAN_CALL": "12"})
    line = check_one_error(r, 1, r"axon-train: error: loss is nan at epoch 1/2, step 3/%d \(global step 3\): "
                                 r"stopping; weights not saved to .*model\.axw; the newest checkpoint, "
                                 r".*ckpt-0000000002\.safetensors, is from before it" % STEPS, "a NaN loss")
    check_survived(save, csv, s0, c0, "a NaN loss")
    names = sorted(os.listdir(ckpt))
    check(names == ["ckpt-0000000001.safetensors", "ckpt-0000000002.safetensors"],
          "checkpoints of steps 1 and 2 only: none holds the NaN", names)
    # The step named is the one poisoned: four Relu calls later is step 4.
    r = t.train("nan", ["--device", "toy:0", "--epochs", "1"], env={"TOY_NAN_CALL": "16"})
    check_one_error(r, 1, r"axon-train: error: loss is nan at epoch 1/1, step 4/%d \(global step 4\): "
                          r"stopping; weights not saved" % STEPS, "a NaN loss a step later")
    print("message: " + line)


def nan_weights(t):
    save, csv, s0, c0 = t.saved_first("model.safetensors")
    ckpt = os.path.join(t.tmp, "ckpt")
    # Call 10 is conv2d_1's Relu in step 3. The next Relu turns the NaN into
    # zeros, so the loss stays finite while the gradients put NaN in conv2d_2.
    r = t.train("nan", ["--device", "toy:0", "--epochs", "2", "--save", save, "--metrics-csv", csv,
                        "--checkpoint-dir", ckpt, "--checkpoint-every", "1", "--keep-checkpoints", "10"],
                env={"TOY_NAN_CALL": "10"})
    check_one_error(r, 1, r"axon-train: error: weights are not finite at epoch 1/2, step 3/%d \(global step 3\) "
                          r"\(conv2d_2/kernel holds nan at element \d+\), so no checkpoint of it was written: "
                          r"stopping; weights not saved to .*model\.safetensors; the newest checkpoint, "
                          r".*ckpt-0000000002\.safetensors, is from before it" % STEPS, "NaN weights, checkpointed")
    check_survived(save, csv, s0, c0, "NaN weights, checkpointed")
    check(sorted(os.listdir(ckpt)) == ["ckpt-0000000001.safetensors", "ckpt-0000000002.safetensors"],
          "no checkpoint holds the NaN", os.listdir(ckpt))
    # Without checkpoints the weights are looked at after each epoch's last step.
    r = t.train("nan", ["--device", "toy:0", "--epochs", "2", "--save", save, "--metrics-csv", csv],
                env={"TOY_NAN_CALL": "10"})
    check_one_error(r, 1, r"axon-train: error: weights are not finite at the end of epoch 1/2 \(global step %d\) "
                          r"\(\w+/(?:kernel|bias) holds nan at element \d+\): stopping; weights not saved to "
                          r".*model\.safetensors" % STEPS, "NaN weights at the epoch's end")
    check("val_loss" not in r.out, "before validation", r)
    check_survived(save, csv, s0, c0, "NaN weights at the epoch's end")


def check_numerics(t):
    save, csv, s0, c0 = t.saved_first("model.axw")
    expected = (r"axon-train: error: check-numerics: op Relu \(layer conv2d_1\) on /device:TOY:0 produced nan in "
                r"output 0 \(\w+\) at element 0")
    for how, args, env in (("--check-numerics", ["--check-numerics"], {}),
                           ("AXON_CHECK_NUMERICS=1", [], {"AXON_CHECK_NUMERICS": "1"})):
        r = t.train("nan", ["--device", "toy:0", "--epochs", "1", "--save", save, "--metrics-csv", csv] + args,
                    env=dict(env, TOY_NAN_CALL="10"))
        check_one_error(r, 1, expected, how)
        check_survived(save, csv, s0, c0, how)
    # A clean run passes every check and saves.
    r = t.train("clean", ["--device", "toy:0", "--epochs", "1", "--check-numerics", "--save", save])
    check(r.code == 0 and "Saved weights" in r.out, "--check-numerics on a sound run trains and saves", r)


def check_numerics_setting(t):
    def seen(args, env=None):
        r = t.train("clean", ["--device", "toy:0", "--epochs", "1", "--train-limit", "8", "--test-limit", "8",
                              "--log-level", "info"] + args, env=env)
        check(r.code == 0, "a run with %s %s" % (args, env), r)
        m = re.search(r"device 0: check-numerics=(\S+)", r.err)
        check(m is not None, "the plugin read get_config(\"check-numerics\")", r)
        return m.group(1)
    check(seen([]) == "0", "off by default")
    check(seen(["--check-numerics"]) == "1", "--check-numerics reaches the plugins as 1")
    check(seen([], {"AXON_CHECK_NUMERICS": "yes"}) == "1", "AXON_CHECK_NUMERICS=yes too")
    check(seen([], {"AXON_CHECK_NUMERICS": "0"}) == "0", "AXON_CHECK_NUMERICS=0 leaves it off")
    r = t.train("clean", ["--epochs", "1"], env={"AXON_CHECK_NUMERICS": "maybe"})
    check_one_error(r, 2, r"axon-train: error: AXON_CHECK_NUMERICS='maybe' .*", "a malformed AXON_CHECK_NUMERICS")
    check(r.out == "", "nothing on stdout", r)


def failed_start(t, variant, message):
    save, csv, s0, c0 = t.saved_first("model.axw")
    for args, env, prefix in (
            (["--device", "toy:0"], {}, r"--device toy:0: "),
            (["--visible-devices", "toy:0"], {}, r"--visible-devices names /device:TOY:0, but "),
            ([], {"AXON_VISIBLE_DEVICES": "toy:0"}, r"AXON_VISIBLE_DEVICES names /device:TOY:0, but "),
            (["--strategy", "mirrored", "--visible-devices", "toy:0"], {},
             r"--visible-devices names /device:TOY:0, but ")):
        what = " ".join(args + ["%s=%s" % kv for kv in env.items()])
        r = t.train(variant, args + ["--epochs", "1", "--save", save, "--metrics-csv", csv], env=env)
        check_one_error(r, 2, r"axon-train: error: " + prefix + r"plugin toy failed to start: " + re.escape(message) + STATUS,
                        what)
        check("Training on" not in r.out and "Epoch" not in r.out, "%s: nothing trained" % what, r)
        check_survived(save, csv, s0, c0, what)
    r = t.train(variant, ["--compare", "cpu:0,toy:0", "--epochs", "1"])
    check_one_error(r, 2, r"axon-train: error: --compare toy:0: plugin toy failed to start: " + re.escape(message) + STATUS,
                    "--compare cpu:0,toy:0")
    # Without the plugin the same flags say the device does not exist.
    r = t.train(variant, ["--device", "toy:0", "--epochs", "1", "--strict-placement"], plugin=False)
    check_one_error(r, 2, r"axon-train: error: --device toy:0: /device:TOY:0 is not available \(no plugin provides "
                          r"TOY devices\).*", "no TOY plugin at all")


def failed_init(t):
    message = "the toy accelerator did not answer (planted init failure)"
    failed_start(t, "failinit", message)
    # axon-devices lists it as skipped, saying why, as before.
    folder = os.path.join(PLUGIN_DIRS, "failinit")
    r = run([DEVICES, "--json", "--plugin-dir", folder])
    check(r.code == 0, "axon-devices runs", r)
    skipped = [s for s in json.loads(r.out)["skipped_plugins"] if os.path.dirname(s["path"]) == folder]
    check(len(skipped) == 1 and message in skipped[0]["reason"], "axon-devices lists the skipped plugin and why",
          skipped)


def failed_open(t):
    failed_start(t, "failopen", "device 0 failed its self-test (planted open failure)")
    # Nobody named it: the highest-priority device fails to open, a runtime error.
    r = t.train("failopen", ["--epochs", "1"])
    check_one_error(r, 1, r"axon-train: error: cannot open /device:TOY:0 \(plugin toy\): device 0 failed its "
                          r"self-test \(planted open failure\)" + STATUS, "the default device fails to open")
    r = run([DEVICES, "--json", "--plugin-dir", os.path.join(PLUGIN_DIRS, "failopen")])
    check(r.code == 0 and any(d["name"] == "/device:TOY:0" for d in json.loads(r.out)["devices"]),
          "axon-devices lists /device:TOY:0 (it opens nothing)", r)


def no_devices(t):
    reason = "no toy accelerator is plugged in (planted)"
    r = t.train("nodevices", ["--device", "toy:0", "--epochs", "1", "--train-limit", "16"])
    check(r.code == 0 and "Training on /device:CPU:0" in r.out, "a plugin offering no device: the CPU trains", r)
    check(reason in r.err and "falling back to /device:CPU:0" in r.err, "the warning gives the plugin's reason", r)
    r = t.train("nodevices", ["--device", "toy:0", "--epochs", "1", "--strict-placement"])
    check_one_error(r, 2, r"axon-train: error: --device toy:0: /device:TOY:0 is not available \(toy: " +
                    re.escape(reason) + r"\).*", "--strict-placement")


NO_CONV = ["Conv2D float32", "Conv2DBackpropFilter float32", "Conv2DBackpropInput float32"]


def missing_of(line):
    """The (op dtype) list of '3 kernels this model needs are missing on D: A (layers); B (layers)'."""
    m = re.search(r"(\d+) kernels? this model needs (?:is|are) missing on /device:TOY:0: (.*?)\.?$", line)
    if m is None:
        return None
    items = [re.sub(r" \(.*\)$", "", item) for item in m.group(2).split("; ")]
    check(int(m.group(1)) == len(items), "the count matches the list", line)
    return sorted(items)


def dry_run(t):
    r = t.train("noconv", ["--device", "toy:0", "--dry-run"])
    check(r.code == 0, "--dry-run exits 0", r)
    check("Epoch" not in r.out and "Saved" not in r.out, "--dry-run trains nothing", r)
    lines = r.out.splitlines()
    last = [line for line in lines if "missing on /device:TOY:0" in line]
    check(len(last) == 1 and missing_of(last[0]) == NO_CONV, "--dry-run lists exactly the three missing kernels", r)
    # Each layer's fused path went to the CPU for Conv2D alone: the rest moved along.
    check(re.search(r"^  _FusedConv2DMaxPool +float32 +conv2d +/device:CPU:0 \(fallback: no kernel on /device:TOY:0\)$",
                    r.out, re.M) is not None, "the fused forward is shown falling back", r)
    check("moves BiasAdd, Relu, MaxPool along: /device:TOY:0 has them, but they run inside _FusedConv2DMaxPool" in r.out,
          "what moved along with it is named", r)
    check(re.search(r"^  MatMul +float32 +dense +/device:TOY:0$", r.out, re.M) is not None,
          "ops TOY has stay on TOY", r)
    # The same listing under --strict-placement: nothing else has to run it.
    r = t.train("noconv", ["--device", "toy:0", "--dry-run", "--strict-placement"])
    check(r.code == 2, "--dry-run --strict-placement with kernels missing exits 2", r)
    listed = [line for line in r.out.splitlines() if "missing on /device:TOY:0" in line]
    check(len(listed) == 1 and missing_of(listed[0]) == NO_CONV, "and lists the same three", r)
    r = t.train("clean", ["--device", "toy:0", "--dry-run"])
    check(r.code == 0 and "Every kernel this model needs is on /device:TOY:0." in r.out,
          "a TOY with every plain kernel: nothing missing", r)


def strict_placement(t):
    r = t.train("noconv", ["--device", "toy:0", "--epochs", "1", "--strict-placement"])
    line = check_one_error(r, 2, r"axon-train: error: --strict-placement: 3 kernels this model needs are missing on "
                                 r"/device:TOY:0: .*", "--strict-placement")
    check(missing_of(line) == NO_CONV, "all three named at once, not only the first", line)
    check("Epoch" not in r.out, "nothing trained", r)
    r = t.train("clean", ["--device", "toy:0", "--epochs", "1", "--strict-placement"])
    check(r.code == 0 and "Epoch 1/1" in r.out, "with every kernel on TOY, --strict-placement trains", r)


def placement_log(t):
    r = t.train("clean", ["--device", "toy:0", "--epochs", "1", "--log-device-placement"])
    check(r.code == 0, "a run with the placement log", r)
    for line in ("Executing op ApplyAdam (adam) in device /device:TOY:0",
                 "Executing op Conv2D (conv2d_1) in device /device:TOY:0",
                 "Executing op MatMul (dense_1) in device /device:TOY:0"):
        check(r.err.splitlines().count(line) == 1, "once: " + line, r)


def lowered_fused_ops(t):
    # The TOY's kernels are the reference's without the optional ops, so
    # _FusedBatchNormEx and _FusedBatchNormGradEx run there as FusedBatchNormV3
    # + Relu and ReluGrad + FusedBatchNormGradV3, which is how the reference
    # computes its own fused ops: the same weights.
    model = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "keras_resnet.json")
    weights = {}
    for device in ("toy:0", "ref:0"):
        save = os.path.join(t.tmp, device.replace(":", "") + ".axw")
        r = t.train("clean", ["--device", device, "--model", model, "--epochs", "1", "--train-limit", "16",
                              "--test-limit", "8", "--save", save, "--log-device-placement"])
        check(r.code == 0, "the ResNet trains on " + device, r)
        check("Fusing batch_normalization + re_lu -> _FusedBatchNormEx, _FusedBatchNormGradEx" in r.err,
              "the fusion pass paired batch_normalization and re_lu for " + device, r)
        check("Fusing batch_normalization_2 + add + re_lu_2 -> _FusedBatchNormAddEx, _FusedBatchNormAddGradEx" in r.err,
              "the fusion pass joined batch_normalization_2, add and re_lu_2 for " + device, r)
        weights[device] = digest(save)
        log = r.err.splitlines()
        if device == "toy:0":
            for line in ("Executing op FusedBatchNormV3 (batch_normalization) in device /device:TOY:0",
                         "Executing op Relu (batch_normalization) in device /device:TOY:0",
                         "Executing op ReluGrad (batch_normalization) in device /device:TOY:0",
                         "Executing op FusedBatchNormGradV3 (batch_normalization) in device /device:TOY:0",
                         "Executing op AddN (batch_normalization_2) in device /device:TOY:0",
                         "Executing op Relu (batch_normalization_2) in device /device:TOY:0",
                         "Executing op ReluGrad (batch_normalization_2) in device /device:TOY:0",
                         "Executing op AddN (re_lu_2) in device /device:TOY:0"):
                check(line in log, "the parts run on the TOY: " + line, r)
            check(not any("_FusedBatchNorm" in line and line.startswith("Executing") for line in log),
                  "no fused batch normalization op runs anywhere", r)
        else:
            check("Executing op _FusedBatchNormEx (batch_normalization) in device /device:REF:0" in log,
                  "the reference runs the fused op itself", r)
            check("Executing op _FusedBatchNormAddGradEx (batch_normalization_2) in device /device:REF:0" in log,
                  "the reference runs the fused residual op itself", r)
            check("Executing op _Conv2DBackpropInputAccumulate (conv2d_5) in device /device:REF:0" in log,
                  "the reference adds conv2d_5's input gradient into re_lu_2's", r)
    check(weights["toy:0"] == weights["ref:0"], "the TOY's parts give the reference's weights, bit for bit",
          weights)


CASES = {f.__name__: f for f in (async_sync, async_replicas, async_checkpoint, nan_loss, nan_weights, check_numerics,
                                  check_numerics_setting, failed_init, failed_open, no_devices, dry_run,
                                  strict_placement, placement_log, lowered_fused_ops)}

with tempfile.TemporaryDirectory(prefix="axon-errors-") as tmp:
    CASES[case](Run(tmp))
print("PASS " + case)
