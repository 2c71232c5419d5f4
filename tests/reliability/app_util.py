"""What the reliability drivers share: running a program and measuring it
(exit code, output, its own peak memory through wait4), checks that print
what failed, data folders written as IDX files."""
import gzip
import json
import os
import struct
import subprocess
import sys
import tempfile
import threading
import zipfile

DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"


def check(cond, what, *details):
    if not cond:
        print("FAILED: " + what)
        for d in details:
            print(d)
        sys.exit(1)
    print("ok: " + what)


class Result:
    def __init__(self, code, out, err, peak_mib):
        self.code, self.out, self.err, self.peak_mib = code, out, err, peak_mib

    def __str__(self):
        return "exit %s, peak %.1f MiB\n--- stdout ---\n%s\n--- stderr ---\n%s" % (
            self.code, self.peak_mib, self.out[-3000:], self.err[-3000:])


def clean_env(extra=None):
    """The caller's environment without AXON_* settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AXON_")}
    env.update(extra or {})
    return env


def run(cmd, env=None, cwd=None, timeout=300, stdout_file=None):
    """Runs cmd to its end; its peak resident memory comes from wait4 on that
    child alone. A negative code is the signal that ended it. stdout_file:
    where its stdout goes instead of being captured."""
    with tempfile.TemporaryFile("w+") as out_f, tempfile.TemporaryFile("w+") as err_f:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=stdout_file or out_f, stderr=err_f,
                             env=env if env is not None else clean_env(), cwd=cwd)
        timer = threading.Timer(timeout, p.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(p.pid, 0)
        finally:
            timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        out_f.seek(0)
        err_f.seek(0)
        return Result(p.returncode, "" if stdout_file else out_f.read(), err_f.read(), usage.ru_maxrss / 1024.0)


# Under ASan (the sanitize preset) a process holds shadow memory and a
# quarantine: its peak says nothing of axon's, so it is checked in the
# other builds only.
SANITIZED = bool(os.environ.get("AXON_TEST_SANITIZED"))
PEAK_LIMIT_MIB = 200


def check_peak(r, what):
    if SANITIZED:
        print("skipped under ASan: %s: peak memory (%.0f MiB here)" % (what, r.peak_mib))
        return
    check(r.peak_mib < PEAK_LIMIT_MIB, "%s: peak memory %.0f MiB < %d" % (what, r.peak_mib, PEAK_LIMIT_MIB), r)


def one_line(text):
    return len(text.splitlines()) == 1


def idx(dims, payload):
    return struct.pack(">BBBB", 0, 0, 8, len(dims)) + b"".join(struct.pack(">I", d) for d in dims) + bytes(payload)


def write_dataset(folder, n_train=64, n_test=32, rows=28, cols=28, gz=False):
    """A small valid MNIST-format folder (labels i % 10)."""
    os.makedirs(folder, exist_ok=True)
    for split, n in (("train", n_train), ("t10k", n_test)):
        px = bytes((i * 7) % 256 for i in range(n * rows * cols))
        lb = bytes(i % 10 for i in range(n))
        for stem, data in ((split + "-images-idx3-ubyte", idx([n, rows, cols], px)),
                           (split + "-labels-idx1-ubyte", idx([n], lb))):
            if gz:
                with gzip.open(os.path.join(folder, stem + ".gz"), "wb") as f:
                    f.write(data)
            else:
                with open(os.path.join(folder, stem), "wb") as f:
                    f.write(data)


def listing(folder):
    """Every name under folder (to see that nothing was left behind)."""
    out = set()
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            out.add(os.path.relpath(os.path.join(root, name), folder))
    return out


def with_compile_config(src, path, **changes):
    """A copy of the .keras file `src` at `path` with keys of its config.json's compile_config replaced."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(path, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "config.json":
                config = json.loads(data)
                config["compile_config"].update(changes)
                data = json.dumps(config).encode()
            zout.writestr(item, data)
    return path
