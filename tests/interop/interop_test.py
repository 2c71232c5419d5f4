"""axon's files read and written by the reference tools of their formats:
weights through the `safetensors` package and a NumPy forward pass, Keras
model JSON files made by real Keras, hostile weights and model files, and
TensorBoard event files through TensorBoard's own reader. Each case is its
own ctest entry: interop_test.py CASE AXON_TRAIN."""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

import numpy as np
import safetensors.numpy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "reliability")]
import numpy_cnn  # noqa: E402
from app_util import SANITIZED, check  # noqa: E402

DATA = "/usr/share/datasets/fashion-mnist"
MODELS = os.path.join(HERE, "..", "data")
TRAIN = None
# Test images the NumPy comparisons use (of 10,000): a fifth keeps them quick.
# Under ASan (the sanitize preset) runs are several times slower and there
# to find memory errors: they train and test on a tenth, and the accuracy
# floors (which need the full runs) are left to the other builds.
TEST_LIMIT = 500 if SANITIZED else 2000
TRAIN_LIMIT = 640 if SANITIZED else 6000


def axon(args, cwd):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AXON_")}
    return subprocess.run([TRAIN] + args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def ok(args, cwd, what):
    p = axon(args, cwd)
    check(p.returncode == 0, what, p.stdout[-3000:], p.stderr[-3000:])
    return p.stdout


def last_val_accuracy(out):
    found = re.findall(r"val_accuracy: ([0-9.]+)", out)
    check(found, "axon printed a val_accuracy", out)
    return float(found[-1])


def evaluated_accuracy(out):
    m = re.search(r"Evaluated .* test images: loss: [0-9.]+ - accuracy: ([0-9.]+)", out)
    check(m is not None, "axon printed the evaluation", out)
    return float(m.group(1))


def refused(args, cwd, what, *must_contain):
    """Exit 2, one line on stderr holding each of must_contain, no file added to cwd."""
    before = set(os.listdir(cwd))
    p = axon(args, cwd)
    lines = p.stderr.splitlines()
    check(p.returncode == 2 and len(lines) == 1 and all(s in p.stderr for s in must_contain),
          "%s: exit 2 and one line naming %s" % (what, ", ".join(must_contain)),
          "exit %d" % p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    check("Epoch" not in p.stdout and "Evaluated" not in p.stdout, what + ": nothing trained or evaluated", p.stdout)
    check(set(os.listdir(cwd)) == before, what + ": no file written", sorted(set(os.listdir(cwd)) - before))
    return p


# --- weights ---------------------------------------------------------------

def weights_numpy(tmp):
    """The guide's Keras model (tests/data/keras_guide_cnn.json) trains one
    epoch to a sensible accuracy; its --save FILE.safetensors read back with
    the safetensors package and run in NumPy gives the test accuracy axon
    printed; NumPy's weights given back to axon: the accuracy NumPy computes
    for them."""
    saved = os.path.join(tmp, "cnn.safetensors")
    out = ok(["--model", os.path.join(MODELS, "keras_guide_cnn.json"), "--epochs", "1", "--train-limit",
              str(TRAIN_LIMIT), "--test-limit", str(TEST_LIMIT), "--save", saved], tmp,
             "one epoch of keras_guide_cnn.json, saved as safetensors")
    printed = last_val_accuracy(out)
    accuracy_floor("keras_guide_cnn.json", printed)
    weights = safetensors.numpy.load_file(saved)
    shapes = {k: v.shape for k, v in weights.items()}
    check(shapes == {"conv2d/kernel": (3, 3, 1, 32), "conv2d/bias": (32,), "conv2d_1/kernel": (3, 3, 32, 64),
                     "conv2d_1/bias": (64,), "conv2d_2/kernel": (3, 3, 64, 64), "conv2d_2/bias": (64,),
                     "dense/kernel": (576, 64), "dense/bias": (64,), "dense_1/kernel": (64, 10),
                     "dense_1/bias": (10,)} and all(v.dtype == np.float32 for v in weights.values()),
          "Keras' names, HWIO and (in, out) shapes, float32", shapes)
    from safetensors import safe_open
    with safe_open(saved, "np") as f:
        meta = f.metadata()
    model_json = meta["model"]
    check(meta["batch_size"] == "64" and meta["optimizer"] == "Adam" and meta["epochs"] == "1"
          and json.loads(model_json)["class_name"] == "Sequential",
          "metadata: the model JSON and the training settings", meta)
    x, y = numpy_cnn.load_test_set(DATA, TEST_LIMIT)
    out_logits = numpy_cnn.logits(model_json, weights, x)
    acc = numpy_cnn.accuracy_of(out_logits, y)
    check(abs(acc - printed) <= 0.001, "NumPy's test accuracy %.4f is axon's printed %.4f (within 0.1 point)"
          % (acc, printed))

    # Other weights, written by NumPy alone (no axon metadata, no checksum):
    # classes 0 and 6 (T-shirt and shirt) swapped in the output layer, which
    # swaps those two logits.
    other = dict(weights)
    for name in ("dense_1/kernel", "dense_1/bias"):
        w = other[name].copy()
        w[..., [0, 6]] = w[..., [6, 0]]
        other[name] = w
    theirs = os.path.join(tmp, "numpy.safetensors")
    safetensors.numpy.save_file(other, theirs)
    expected = numpy_cnn.accuracy_of(out_logits[:, [6, 1, 2, 3, 4, 5, 0, 7, 8, 9]], y)
    check(expected != acc, "the swapped weights score differently in NumPy (%.4f)" % expected)
    got = evaluated_accuracy(ok(["--initial-weights", theirs, "--epochs", "0", "--test-limit", str(TEST_LIMIT)], tmp,
                                "--epochs 0 evaluates"))
    check(abs(got - expected) <= 0.001, "axon evaluates NumPy's weights at %.4f, NumPy says %.4f" % (got, expected))

    # Training starts from them: one step at a negligible learning rate
    # validates as the weights themselves.
    trained = last_val_accuracy(ok(["--initial-weights", theirs, "--epochs", "1", "--train-limit", "64",
                                    "--learning-rate", "1e-12", "--test-limit", str(TEST_LIMIT)], tmp,
                                   "one step from NumPy's weights"))
    check(trained == got, "training starts from --initial-weights (%.4f after one step of lr 1e-12)" % trained)

    # And the same weights through axon's own format.
    axw = os.path.join(tmp, "numpy.axw")
    ok(["--initial-weights", theirs, "--epochs", "0", "--test-limit", "10", "--save", axw, "-q"], tmp,
       "converted to .axw")
    again = evaluated_accuracy(ok(["--initial-weights", axw, "--epochs", "0", "--test-limit", str(TEST_LIMIT)], tmp,
                                  ".axw evaluates"))
    check(again == got, "the .axw copy evaluates the same (%.4f)" % again)


def safetensors_bytes(tensors, metadata=None):
    """A safetensors file built by hand (so it can lie): tensors are
    (name, dtype, shape, raw bytes)."""
    header, data = {}, b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + data


def tiny_data(folder):
    """An MNIST-format folder of 64 training and 64 test images of 28x28 (noise):
    loads at once, for runs whose training does not matter."""
    os.makedirs(folder)
    rng = np.random.default_rng(0)
    for stem in ("train", "t10k"):
        with open(os.path.join(folder, stem + "-images-idx3-ubyte"), "wb") as f:
            f.write(struct.pack(">IIII", 0x803, 64, 28, 28) + rng.integers(0, 256, 64 * 784, np.uint8).tobytes())
        with open(os.path.join(folder, stem + "-labels-idx1-ubyte"), "wb") as f:
            f.write(struct.pack(">II", 0x801, 64) + (np.arange(64) % 10).astype(np.uint8).tobytes())
    return folder


def lying_offsets(good):
    """The file with conv2d/bias's offsets pointing into conv2d/kernel's bytes."""
    (n,) = struct.unpack("<Q", good[:8])
    header = json.loads(good[8:8 + n])
    begin = header["conv2d/kernel"]["data_offsets"][0]
    header["conv2d/bias"]["data_offsets"] = [begin, begin + 128]
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + good[8 + n:]


def hostile_weights(tmp):
    """Files that are not the model's weights: exit 2, one line naming the
    file and the fault, nothing printed or written (--save is given and must
    not appear)."""
    data = tiny_data(os.path.join(tmp, "data"))
    good_path = os.path.join(tmp, "good.safetensors")
    ok(["--data", data, "--epochs", "1", "-q", "--save", good_path], tmp, "a small run")
    good = open(good_path, "rb").read()
    weights = safetensors.numpy.load_file(good_path)
    entries = [(k, "F32", list(v.shape), v.tobytes()) for k, v in weights.items()]
    (n,) = struct.unpack("<Q", good[:8])

    def with_entry(name, replacement):
        return [replacement if e[0] == name else e for e in entries]

    k = weights["conv2d/kernel"]
    cases = [
        ("truncated", good[:len(good) - 1000], "do not fit the data section"),
        ("header length past the end", struct.pack("<Q", len(good)) + good[8:], "claims a header of"),
        ("oversized header length", struct.pack("<Q", 1 << 62) + good[8:], "more than the limit"),
        ("header not JSON", struct.pack("<Q", n) + b"{" * n + good[8 + n:], "not valid JSON"),
        ("overlapping offsets", lying_offsets(good), "overlapping"),
        ("a tensor renamed", safetensors_bytes(with_entry("conv2d/kernel",
                                                          ("conv2d/kernal", "F32", list(k.shape), k.tobytes()))),
         "conv2d/kernel"),
        ("a tensor of another shape", safetensors_bytes(with_entry("conv2d/kernel",
                                                                   ("conv2d/kernel", "F32", [3, 3, 2, 16], k.tobytes()))),
         "shape"),
        ("float64 values", safetensors_bytes(with_entry("conv2d/kernel", ("conv2d/kernel", "F64", list(k.shape),
                                                                          k.astype(np.float64).tobytes()))),
         "F64"),
        ("a tensor the model lacks", safetensors_bytes(entries + [("dense_2/kernel", "F32", [1], b"\0" * 4)]),
         "dense_2/kernel"),
        ("an empty file", b"", "too short"),
        ("a file larger than this model's weights can be", None, "more than the"),
    ]
    for what, content, must in cases:
        path = os.path.join(tmp, "bad.safetensors")
        with open(path, "wb") as f:
            if content is None:
                f.truncate(64 << 20)  # sparse: costs no disk
            else:
                f.write(content)
        p = refused(["--data", data, "--initial-weights", "bad.safetensors", "--epochs", "0", "--save",
                     "out.safetensors"], tmp, what, "bad.safetensors", must)
        check(p.stdout == "", what + ": nothing on stdout (refused before any work)", p.stdout)
        os.remove(path)


# --- Keras model JSON ------------------------------------------------------

def guide_json_identical(tmp):
    """--model with the guide's CNN as Keras wrote it trains bit-identically
    to the built-in model; so does the model JSON axon keeps in the weights'
    metadata, and the Keras 2 layout of the same model."""
    base = ["--epochs", "1", "--train-limit", "320" if SANITIZED else "1280", "--test-limit", "200", "-q"]
    ok(base + ["--save", "builtin.safetensors"], tmp, "the built-in CNN")
    runs = [("keras3.safetensors", os.path.join(MODELS, "keras_guide_cnn.json")),
            ("keras2.safetensors", os.path.join(MODELS, "keras2_guide_cnn.json"))]
    from safetensors import safe_open
    with safe_open(os.path.join(tmp, "builtin.safetensors"), "np") as f:
        with open(os.path.join(tmp, "from_metadata.json"), "w") as out:
            out.write(f.metadata()["model"])
    runs.append(("metadata.safetensors", os.path.join(tmp, "from_metadata.json")))
    builtin = open(os.path.join(tmp, "builtin.safetensors"), "rb").read()
    for saved, model in runs:
        ok(base + ["--model", model, "--save", saved], tmp, "--model " + os.path.basename(model))
        check(open(os.path.join(tmp, saved), "rb").read() == builtin,
              "--model %s: the same file, byte for byte, as the built-in model's" % os.path.basename(model))


def resume_other_model(tmp):
    """A checkpoint names its model: resuming it with another --model is
    refused and the checkpoint kept (not taken for damage); with the same
    model as Keras JSON it resumes."""
    data = tiny_data(os.path.join(tmp, "data"))
    base = ["--data", data, "-q", "--checkpoint-dir", "ckpt"]
    ok(base + ["--epochs", "1"], tmp, "one epoch of the built-in CNN with checkpoints")
    before = sorted(os.listdir(os.path.join(tmp, "ckpt")))
    refused(base + ["--epochs", "2", "--resume", "--model", os.path.join(MODELS, "keras_wide_cnn.json")], tmp,
            "resumed with another model", "another model")
    check(sorted(os.listdir(os.path.join(tmp, "ckpt"))) == before, "the checkpoint is kept as it was", before)
    ok(base + ["--epochs", "2", "--resume", "--model", os.path.join(MODELS, "keras_guide_cnn.json")], tmp,
       "resumed with the same model as Keras JSON")


def accuracy_floor(name, acc):
    """One epoch of TRAIN_LIMIT images reaches 0.65: chance is 0.10, the runs
    here give 0.73 and 0.74, and another instruction set or thread count
    moves that by tenths of a point."""
    if SANITIZED:
        print("skipped under ASan: %s: the accuracy floor (%.4f after %d images)" % (name, acc, TRAIN_LIMIT))
    else:
        check(acc >= 0.65, "%s: validation accuracy %.4f after one epoch of %d images (>= 0.65)"
              % (name, acc, TRAIN_LIMIT))


def wide_model_trains(tmp):
    """The wide Keras model (padding='same', strides, a bias-less conv, a ReLU
    layer, Dropout, a softmax output) trains one epoch to a sensible accuracy,
    and NumPy reading its weights gets the accuracy axon printed."""
    name = "keras_wide_cnn.json"
    out = ok(["--model", os.path.join(MODELS, name), "--epochs", "1", "--train-limit", str(TRAIN_LIMIT),
              "--test-limit", "1000", "--save", "w.safetensors"], tmp, "train " + name)
    acc = last_val_accuracy(out)
    accuracy_floor(name, acc)
    x, y = numpy_cnn.load_test_set(DATA, 1000)
    with open(os.path.join(MODELS, name)) as f:
        model_json = f.read()
    npacc = numpy_cnn.accuracy(model_json, safetensors.numpy.load_file(os.path.join(tmp, "w.safetensors")), x, y)
    check(abs(npacc - acc) <= 0.001, "%s in NumPy: %.4f, axon printed %.4f" % (name, npacc, acc))


def layer(cls, **config):
    return {"class_name": cls, "config": config}


def sequential(*layers, input_layer=True):
    first = [layer("InputLayer", batch_shape=[None, 28, 28, 1], name="input_layer")] if input_layer else []
    return {"class_name": "Sequential", "config": {"name": "sequential", "layers": first + list(layers)}}


def conv(name="conv2d", **kw):
    c = dict(name=name, filters=8, kernel_size=[3, 3], strides=[1, 1], padding="valid", activation="relu")
    c.update(kw)
    return layer("Conv2D", **c)


def dense(name="dense", units=10, **kw):
    return layer("Dense", name=name, units=units, activation="linear", **kw)


def malformed_models(tmp):
    """Model files axon cannot train: exit 2 with one line that says why."""
    flat = layer("Flatten", name="flatten")
    cases = [
        ("not JSON", "{\"class_name\": \"Sequential\",", ["not valid JSON"]),
        ("a functional model without layers", {"class_name": "Functional", "config": {}}, ["Functional", "config.layers"]),
        ("an unsupported layer", sequential(conv(), layer("LSTM", name="lstm", units=4), flat, dense()),
         ["layers[2]", "LSTM", "lstm", "supported: InputLayer, ", "Conv2D"]),
        ("no input shape", sequential(conv(), flat, dense(), input_layer=False), ["no input shape"]),
        ("Dense on an image", sequential(conv(), dense()), ["layers[2]", "Flatten"]),
        ("an unknown activation", sequential(conv(), flat, layer("Dense", name="dense", units=32, activation="celu"),
                                             dense("dense_1")), ["layers[3]", "celu", "supported"]),
        ("strides with dilation", sequential(conv(strides=[2, 2], dilation_rate=[2, 2]), flat, dense()), ["dilation_rate"]),
        ("channels_first", sequential(conv(data_format="channels_first"), flat, dense()), ["channels_last"]),
        ("grouped convolution", sequential(conv(groups=2), flat, dense()), ["groups"]),
        ("two layers of one name", sequential(conv(), conv(), flat, dense()), ["layers[2]", "earlier layer"]),
        ("too many units", sequential(conv(filters=64), flat, dense(units=65536)), ["parameters", "limit"]),
        ("nested 100 deep", "[" * 100 + "]" * 100, ["deeper"]),
    ]
    for what, content, must in cases:
        with open(os.path.join(tmp, "bad.json"), "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        p = refused(["--model", "bad.json", "--save", "out.safetensors"], tmp, what, "bad.json", *must)
        check(p.stdout == "", what + ": nothing on stdout (refused before any work)", p.stdout)
        os.remove(os.path.join(tmp, "bad.json"))


# --- TensorBoard -----------------------------------------------------------

def scalars(folder):
    """{tag: [(step, value)]} of a run folder, read by TensorBoard's own
    event reader (which checks every record's CRC-32C)."""
    from tensorboard.backend.event_processing import event_accumulator
    acc = event_accumulator.EventAccumulator(folder, size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def close(a, b):
    return abs(a - b) <= 1e-6 * max(abs(a), abs(b), 1e-30)


def tensorboard_scalars(tmp):
    """Every scalar of a run, read back by TensorBoard, with its step and
    value: the epoch scalars equal --metrics-csv's, the batch scalars fall
    every N steps and the last of an epoch equals the epoch's."""
    ok(["--epochs", "2", "--train-limit", "1280", "--test-limit", "200", "-q", "--tensorboard", "tb",
        "--tensorboard-every", "5", "--metrics-csv", "m.csv"], tmp, "two epochs with --tensorboard")
    s = scalars(os.path.join(tmp, "tb"))
    check(sorted(s) == ["batch/accuracy", "batch/learning_rate", "batch/loss", "batch/samples_per_second",
                        "epoch/accuracy", "epoch/learning_rate", "epoch/loss", "epoch/samples_per_second",
                        "epoch/val_accuracy", "epoch/val_loss"], "the tags", sorted(s))
    rows = [line.split(",") for line in open(os.path.join(tmp, "m.csv")).read().splitlines()]
    header, rows = rows[0], rows[1:]
    for tag, column in (("loss", "loss"), ("accuracy", "accuracy"), ("val_loss", "val_loss"),
                        ("val_accuracy", "val_accuracy"), ("samples_per_second", "samples_per_second"),
                        ("learning_rate", "learning_rate")):
        want = [(int(r[0]), float(r[header.index(column)])) for r in rows]
        got = s["epoch/" + tag]
        check([st for st, _ in got] == [1, 2] and all(close(v, np.float32(w)) for (_, v), (_, w) in zip(got, want)),
              "epoch/%s per epoch (steps 1, 2) as --metrics-csv has it" % tag, got, want)
    for tag in ("batch/loss", "batch/accuracy", "batch/samples_per_second", "batch/learning_rate"):
        check([st for st, _ in s[tag]] == list(range(5, 41, 5)), tag + " every 5 steps (global steps 5 to 40)", s[tag])
    check(all(v > 0 for _, v in s["batch/samples_per_second"]), "samples/s are positive")
    for epoch, step in ((1, 20), (2, 40)):
        for tag in ("loss", "accuracy"):
            b = dict(s["batch/" + tag])[step]
            e = dict(s["epoch/" + tag])[epoch]
            check(close(b, e), "batch/%s at step %d (the epoch's last) is epoch/%s of epoch %d" % (tag, step, tag, epoch),
                  b, e)


def tensorboard_live(tmp):
    """Events are written as they happen: TensorBoard reads epoch 1 while
    later epochs train (20 of them: time enough to look on a busy machine;
    the trainer is killed once seen), and they stay after the kill."""
    import signal
    import time
    from tensorboard.backend.event_processing import event_file_loader
    env = {k: v for k, v in os.environ.items() if not k.startswith("AXON_")}
    p = subprocess.Popen([TRAIN, "--epochs", "20", "--train-limit", "1280" if SANITIZED else "6400", "--test-limit",
                          "200", "-q", "--tensorboard", "tb", "--tensorboard-every", "10"], cwd=tmp, env=env)
    seen, deadline = False, time.time() + 120
    try:
        while not seen and time.time() < deadline and p.poll() is None:
            time.sleep(0.2)
            for name in os.listdir(os.path.join(tmp, "tb")) if os.path.isdir(os.path.join(tmp, "tb")) else []:
                for event in event_file_loader.EventFileLoader(os.path.join(tmp, "tb", name)).Load():
                    seen = seen or any(v.tag == "epoch/val_accuracy" for v in event.summary.value)
        running = p.poll() is None
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    check(seen and running, "TensorBoard read epoch 1's scalars while the trainer was still running")
    s = scalars(os.path.join(tmp, "tb"))
    check(s["epoch/val_accuracy"][0][0] == 1 and s["batch/loss"][0][0] == 10,
          "after SIGKILL the file holds them, readable to its last record", s.get("epoch/val_accuracy"))


def tensorboard_compare(tmp):
    """--compare writes one run per device."""
    ok(["--compare", "cpu:0,ref:0", "--epochs", "1", "--train-limit", "64" if SANITIZED else "256", "--test-limit",
        "64", "-q", "--tensorboard", "tb"], tmp, "--compare cpu:0,ref:0 with --tensorboard")
    from tensorboard.backend.event_processing import plugin_event_multiplexer
    mux = plugin_event_multiplexer.EventMultiplexer()
    mux.AddRunsFromDirectory(os.path.join(tmp, "tb"))
    mux.Reload()
    check(sorted(mux.Runs()) == ["CPU_0", "REF_0"], "TensorBoard finds one run per device", sorted(mux.Runs()))
    for run in ("CPU_0", "REF_0"):
        s = scalars(os.path.join(tmp, "tb", run))
        check([st for st, _ in s["epoch/val_accuracy"]] == [1], run + ": its epoch scalars", s)


def tensorboard_multi_worker(tmp):
    """Under multi-worker only the chief writes events."""
    import shutil
    mpirun = shutil.which("mpirun")
    check(mpirun is not None, "mpirun is there (tools/install-deps installs openmpi-bin)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AXON_")}
    if os.geteuid() == 0:  # Open MPI refuses root unless told; CI and containers run as root
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.run([mpirun, "-np", "2", "--oversubscribe", TRAIN, "--strategy", "multi-worker", "--threads", "1",
                        "--epochs", "1", "--train-limit", "256", "--test-limit", "64", "-q", "--tensorboard", "mw"],
                       cwd=tmp, env=env, capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, "two workers with --tensorboard", p.stdout[-2000:], p.stderr[-2000:])
    files = os.listdir(os.path.join(tmp, "mw"))
    check(len(files) == 1 and [st for st, _ in scalars(os.path.join(tmp, "mw"))["epoch/loss"]] == [1],
          "one event file, the chief's", files)


CASES = {f.__name__: f for f in (weights_numpy, hostile_weights, guide_json_identical, resume_other_model,
                                 wide_model_trains, malformed_models, tensorboard_scalars, tensorboard_live,
                                 tensorboard_compare, tensorboard_multi_worker)}

if __name__ == "__main__":
    case, TRAIN = sys.argv[1], os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        CASES[case](tmp)
