#!/usr/bin/env python3
"""axon-train and axon-devices against hostile and clumsy input: flags beyond
their limits, lying data files, output paths that are not files, broken
stdout, signals. Each bad case ends with exit 2 (usage or input) or 1
(runtime) and one line on stderr, in well under 200 MB, leaving no file
behind and replacing none.
Usage: hostile_input_test.py CASE AXON_TRAIN AXON_DEVICES"""
import gzip
import os
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from app_util import check, check_peak, clean_env, idx, listing, one_line, run, write_dataset  # noqa: E402

case, TRAIN, DEVICES = sys.argv[1], sys.argv[2], sys.argv[3]


def expect_refused(cmd, code, needles, cwd, env=None, what=None):
    """cmd must exit `code` with one line on stderr holding every needle,
    within the memory limit, leaving cwd as it was."""
    before = listing(cwd)
    t0 = time.monotonic()
    r = run(cmd, env=env, cwd=cwd)
    took = time.monotonic() - t0
    label = what or " ".join(os.path.basename(c) if i == 0 else c for i, c in enumerate(cmd))
    check(r.code == code, "%s: exit %d" % (label, code), r)
    check(one_line(r.err) and r.err.startswith(os.path.basename(cmd[0]) + ": error: "), label + ": one error line", r)
    for n in needles:
        check(n in r.err, "%s: the message says %r" % (label, n), r)
    check_peak(r, label)
    check(listing(cwd) == before, label + ": no file left behind", sorted(listing(cwd) - before))
    return r, took


def tiny(folder):
    write_dataset(folder, 64, 32)
    return ["--data", folder, "--epochs", "1", "-q"]


def limits(tmp):
    data = os.path.join(tmp, "data")
    base = [TRAIN] + tiny(data)
    expect_refused(base + ["--threads", "5000"], 2, ["--threads", "1024", "5000"], tmp)
    expect_refused([DEVICES, "--threads", "5000"], 2, ["1024"], tmp)
    expect_refused([DEVICES], 2, ["AXON_NUM_THREADS='5000'", "1024"], tmp, env=clean_env({"AXON_NUM_THREADS": "5000"}))
    _, took = expect_refused(base + ["--cpu-devices", "2147483647"], 2, ["--cpu-devices", "256", "2147483647"], tmp)
    check(took < 5, "--cpu-devices 2147483647 is refused at once (%.1f s)" % took)
    expect_refused([TRAIN, "--data", data, "-q", "--cpu-devices", "4", "--threads", "1"], 2,
                   ["1 CPU thread in all", "cannot run 4 logical CPU devices"], tmp)
    for batch in ("100000000", "9223372036854775807"):
        expect_refused(base + ["--batch-size", batch], 2, ["--batch-size " + batch, "limit of 65536"], tmp)
    expect_refused(base + ["--batch-size", "99999999999999999999"], 2, ["batch-size"], tmp)


def thread_creation_fails(tmp):
    # The system refuses threads past `ulimit -u 150` (RLIMIT_NPROC). Root is
    # exempt from it, so as root the programs run as nobody.
    os.chmod(tmp, 0o755)
    data = os.path.join(tmp, "data")
    user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
    limited = user + ["bash", "-c", "ulimit -u 150; exec \"$@\"", "sh"]
    r = run(limited + [TRAIN] + tiny(data) + ["--threads", "1000"], cwd=tmp)
    check(r.code == 1, "ulimit -u 150, --threads 1000: exit 1, no abort (134)", r)
    check(one_line(r.err) and "cannot start thread" in r.err, "one line saying a thread could not start", r)
    r = run(limited + [DEVICES, "--ops"], env=clean_env({"AXON_NUM_THREADS": "1000"}), cwd=tmp)
    check(r.code == 0 and "cannot start thread" in r.out, "AXON_NUM_THREADS=1000 axon-devices --ops lists the "
          "device it could not open, saying why, no abort", r)


def lying_data(tmp):
    base_data = os.path.join(tmp, "good")
    write_dataset(base_data, 64, 32, gz=True)

    def folder_with(name, content):
        d = tempfile.mkdtemp(dir=tmp)
        for f in os.listdir(base_data):
            with open(os.path.join(base_data, f), "rb") as src, open(os.path.join(d, f), "wb") as dst:
                dst.write(src.read())
        with open(os.path.join(d, name), "wb") as f:
            f.write(content)
        return d

    # 37 bytes of gzip whose IDX header (262000 images of 64x64, just under
    # the 1 GiB limit) and trailer (forged: the size field is modulo 2^32)
    # both claim a gigabyte; the labels are real.
    n = 262000
    lie = bytearray(gzip.compress(idx([n, 64, 64], b"\7" * 4), mtime=0))
    lie[-4:] = struct.pack("<I", (n * 64 * 64 + 16) % (1 << 32))
    d = folder_with("train-images-idx3-ubyte.gz", bytes(lie))
    with gzip.open(os.path.join(d, "train-labels-idx1-ubyte.gz"), "wb") as f:
        f.write(idx([n], bytes(i % 10 for i in range(n))))
    expect_refused([TRAIN, "--data", d], 2, ["train-images-idx3-ubyte.gz", "gzip data"], tmp,
                   what="a %d-byte gzip claiming 1 GiB" % len(lie))
    # One 4096x4096 image in a 16 KiB file.
    big = gzip.compress(idx([1, 4096, 4096], b"\0" * (4096 * 4096)), compresslevel=9, mtime=0)
    check(len(big) < 20 * 1024, "the 4096x4096 image compresses to %d bytes" % len(big))
    d = folder_with("train-images-idx3-ubyte.gz", big)
    with gzip.open(os.path.join(d, "train-labels-idx1-ubyte.gz"), "wb") as f:
        f.write(idx([1], b"\3"))
    expect_refused([TRAIN, "--data", d], 2, ["4096x4096", "limit of 64x64"], tmp, what="a 4096x4096 image")
    # Dimensions whose product wraps 64 bits (4 x 2^31 x 2^31 = 2^64).
    d = folder_with("train-images-idx3-ubyte.gz", gzip.compress(idx([4, 1 << 31, 1 << 31], b"")))
    expect_refused([TRAIN, "--data", d], 2, ["train-images-idx3-ubyte.gz", "limit for one IDX file"], tmp,
                   what="IDX dimensions 4 x 2^31 x 2^31")
    # A valid file of two gzip members (cat a.gz b.gz) trains.
    whole = idx([64, 28, 28], bytes((i * 7) % 256 for i in range(64 * 784)))
    d = folder_with("train-images-idx3-ubyte.gz", gzip.compress(whole[:1000]) + gzip.compress(whole[1000:]))
    r = run([TRAIN, "--data", d, "--epochs", "1", "-q"], cwd=tmp)
    check(r.code == 0 and r.err == "", "a gzip file of two members is read whole and trains", r)


def output_targets(tmp):
    data = os.path.join(tmp, "data")
    base = [TRAIN] + tiny(data)
    out = os.path.join(tmp, "out")
    os.mkdir(out)
    expect_refused(base + ["--save", ""], 2, ["--save: the file name is empty"], out)
    expect_refused(base + ["--metrics-csv", out], 2, ["--metrics-csv " + out, "a folder"], out)
    expect_refused(base + ["--save", "same.axw", "--metrics-csv", "./same.axw"], 2, ["name the same file"], out)
    fifo = os.path.join(out, "pipe")
    os.mkfifo(fifo)
    link = os.path.join(out, "to-pipe")
    os.symlink(fifo, link)
    expect_refused(base + ["--save", fifo], 2, ["a FIFO", "regular files only"], out)
    expect_refused(base + ["--metrics-csv", link], 2, ["a FIFO"], out)
    check(stat.S_ISFIFO(os.stat(fifo).st_mode) and os.path.islink(link), "the FIFO and the link are untouched")
    # A character device like /dev/null (made here, so that a failure could
    # never replace the real one).
    dev = os.path.join(out, "null")
    try:
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        dev = None
    if dev:
        expect_refused(base + ["--save", dev], 2, ["a character device"], out)
        check(stat.S_ISCHR(os.stat(dev).st_mode), "the device node is still a device")
    # A folder that takes no new file is found before training, not after it.
    r, took = expect_refused(base[:-1] + ["--save", "/proc/axon-weights.axw"], 2, ["--save /proc/axon-weights.axw"],
                             out)
    check("Epoch" not in r.out, "a target that cannot be written is found before the first epoch", r)
    # What works: a link to a regular file is written through (the link
    # stays), a 250-character name, and a killed writer's leftover is removed.
    real = os.path.join(out, "real.csv")
    open(real, "w").write("old")
    os.symlink(real, os.path.join(out, "metrics.csv"))
    long_name = "w" * 246 + ".axw"
    stale = os.path.join(out, "." + long_name[:231] + ".tmp.2147483646")
    open(stale, "w").write("half")
    r = run(base + ["--metrics-csv", "metrics.csv", "--save", long_name], cwd=out)
    check(r.code == 0, "a 250-character --save and a linked --metrics-csv", r)
    check(os.path.islink(os.path.join(out, "metrics.csv")) and open(real).read().startswith("epoch,"),
          "the link still links, its file holds the metrics")
    check(open(os.path.join(out, long_name), "rb").read(8) == b"AXONWTS1", "the 250-character file holds the weights")
    check(not os.path.exists(stale), "the killed writer's temporary is gone")
    check(not [n for n in os.listdir(out) if ".tmp." in n], "no temporary left", os.listdir(out))


def contract(tmp):
    data = os.path.join(tmp, "data")
    base = [TRAIN] + tiny(data)
    expect_refused(base + ["stray", "words"], 2, ["unexpected argument 'stray'"], tmp)
    expect_refused([DEVICES, "extra"], 2, ["unexpected argument 'extra'"], tmp)
    for off in ("false", "off", "no", "0"):
        r = run(base + ["--log-device-placement"], env=clean_env({"AXON_FUSED_OPS": off}), cwd=tmp)
        check(r.code == 0 and "Executing op Conv2D" in r.err and "_Fused" not in r.err,
              "AXON_FUSED_OPS=%s runs the separate ops" % off, r)
    r = run(base + ["--log-device-placement"], env=clean_env({"AXON_FUSED_OPS": "on"}), cwd=tmp)
    check(r.code == 0 and "_FusedConv2D" in r.err, "AXON_FUSED_OPS=on runs the fused ops", r)
    expect_refused(base, 2, ["AXON_FUSED_OPS='maybe'", "not a boolean"], tmp, env=clean_env({"AXON_FUSED_OPS": "maybe"}))
    with open("/dev/full", "w") as full:
        r = run([DEVICES], stdout_file=full, cwd=tmp)
        check(r.code == 1 and one_line(r.err) and "cannot write to standard output" in r.err,
              "axon-devices > /dev/full: exit 1 with one line", r)
        r = run(base[:-1], stdout_file=full, cwd=tmp)
        check(r.code == 1 and one_line(r.err) and "cannot write to standard output" in r.err,
              "axon-train > /dev/full: exit 1 with one line", r)


def clean_text(text):
    """Nothing that moves a terminal's cursor, colours it or ends a line
    early: no control character but the line ends, no C1, no bidi override."""
    return not any((ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f or c in "\u2028\u2029\u202e" for c in text)


def echoes(tmp):
    # docs/cli.md: every value echoed, flag or file name, is one printable line;
    # values are cut to 64 characters, file names shown whole.
    data = os.path.join(tmp, "data")
    write_dataset(data, 64, 32)
    hostile = "ab\x01\ncd\x1b[2J\u202e"
    shown = "ab??cd?[2J?"
    cases = [
        (["--strategy", hostile], "unknown strategy '%s'" % shown),
        (["--strategy", "s" * 5000], "unknown strategy '" + "s" * 64 + "...'"),
        (["--data", os.path.join(tmp, hostile)], "data folder %s/%s does not exist" % (tmp, shown)),
        (["--model", os.path.join(tmp, hostile + ".json")], "%s/%s.json: cannot open" % (tmp, shown)),
        (["--initial-weights", os.path.join(tmp, hostile)], "%s/%s" % (tmp, shown)),
        (["--save", os.path.join(tmp, hostile, "w.axw")], "%s/%s" % (tmp, shown)),
        (["--metrics-csv", os.path.join(tmp, hostile, "m.csv")], "%s/%s" % (tmp, shown)),
        (["--checkpoint-dir", os.path.join(tmp, hostile, "c")], "%s/%s" % (tmp, shown)),
        (["--device", "cpu:\n0", "--strict-placement", "--visible-devices", "ref:0"], "--device cpu:?0: "),
        (["--compare", "cpu:0," + hostile], "'%s'" % shown),
        (["--seed", "1" + hostile], "('1%s')" % shown),
        (["--seed", "7" * 5000], "('" + "7" * 64 + "...')"),
        (["--nope" + hostile], "'--nope%s'" % shown),
        ([hostile], "unexpected argument '%s'" % shown),
    ]
    for args, needle in cases:
        r = run([TRAIN] + ([] if "--data" in args else ["--data", data]) + ["--epochs", "1", "-q"] + args, cwd=tmp)
        what = "axon-train %s" % " ".join(ascii(a)[:40] for a in args)
        check(r.code == 2 and one_line(r.err) and r.err.startswith("axon-train: error: "), what + ": one error line", r)
        check(clean_text(r.err) and len(r.err) < 2000, what + ": printable and short", ascii(r.err))
        check(needle in r.err, "%s: the line says %s" % (what, ascii(needle)), ascii(r.err))
    r = run([DEVICES, "--visible-devices", "cpu:\n9"], cwd=tmp)
    check(r.code == 2 and one_line(r.err) and clean_text(r.err) and "/device:CPU:9" in r.err,
          "axon-devices --visible-devices 'cpu:\\n9': one printable line", r)
    # On stdout: file names whole, UTF-8 kept, control characters as '?'.
    name = "donn\u00e9es-" + "x" * 100 + "\x1b[31m\n.axw"
    r = run([TRAIN, "--data", data, "--epochs", "1", "--save", os.path.join(tmp, name)], cwd=tmp)
    check(r.code == 0 and os.path.isfile(os.path.join(tmp, name)), "a --save file with an odd name is written", r)
    check(clean_text(r.out) and clean_text(r.err), "stdout and stderr stay printable", ascii(r.out), ascii(r.err))
    shown = "Saved weights to %s/donn\u00e9es-%s?[31m?.axw" % (tmp, "x" * 100)
    check(shown in r.out.splitlines(), "the name is shown whole, UTF-8 kept, ESC and the newline as '?'", r)
    r = run([TRAIN, "--data", data, "--epochs", "0", "--initial-weights", os.path.join(tmp, name)], cwd=tmp)
    check(r.code == 0 and "Evaluated %s/donn\u00e9es-%s?[31m?.axw on 32 test images" % (tmp, "x" * 100) in r.out,
          "--initial-weights is echoed the same way", r)


def signals(tmp):
    # Without --checkpoint-dir, SIGINT mid-epoch: exit 130 with one line, an
    # earlier --save intact.
    data = os.path.join(tmp, "data")
    write_dataset(data, 6400, 64)
    weights = os.path.join(tmp, "w.axw")
    r = run([TRAIN, "--data", data, "--epochs", "1", "--train-limit", "64", "-q", "--save", weights], cwd=tmp)
    check(r.code == 0, "a first run saves weights", r)
    saved = open(weights, "rb").read()
    p = subprocess.Popen([TRAIN, "--data", data, "--epochs", "3", "--threads", "2", "--save", weights],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env(), cwd=tmp)
    for line in p.stdout:
        if line.startswith("Epoch 1/3"):
            break
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    check(p.returncode == 130, "SIGINT mid-epoch: exit 130", out, err)
    check(one_line(err) and "stopped by SIGINT at epoch 1/3, step" in err and "nothing was saved" in err,
          "one line saying where it stopped and that nothing can resume", err)
    check(open(weights, "rb").read() == saved, "the earlier --save is intact")
    check(not [n for n in os.listdir(tmp) if ".tmp." in n], "no temporary left")


def named_wrongly(tmp):
    # Settings that were once passed over quietly.
    expect_refused([DEVICES], 2, ["AXON_CPU_ISA='garbage' is not base, avx2 or avx512"], tmp,
                   env=clean_env({"AXON_CPU_ISA": "garbage"}), what="AXON_CPU_ISA=garbage")
    expect_refused([DEVICES], 2, ["AXON_CPU_WAIT='spin' is not active or passive"], tmp,
                   env=clean_env({"AXON_CPU_WAIT": "spin"}), what="AXON_CPU_WAIT=spin")
    r = run([DEVICES, "--plugin-dir", "/nonexistent"], cwd=tmp)
    warnings = [line for line in r.err.splitlines() if "/nonexistent" in line]
    check(r.code == 0 and len(warnings) == 1 and "--plugin-dir /nonexistent does not exist" in warnings[0],
          "--plugin-dir /nonexistent: one warning line naming it", r)
    # A data file that is a FIFO, a symbolic link loop or a folder is reported as what it is, not as missing.
    for name, make, needle in (("fifo", lambda p: os.mkfifo(p), "is a FIFO"),
                               ("loop", lambda p: os.symlink(os.path.basename(p), p), "is a symbolic link loop"),
                               ("folder", lambda p: os.mkdir(p), "is a folder")):
        d = os.path.join(tmp, name)
        write_dataset(d, 64, 32)
        target = os.path.join(d, "train-labels-idx1-ubyte")
        os.unlink(target)
        make(target)
        r, _ = expect_refused([TRAIN, "--data", d, "--epochs", "1"], 2, ["train-labels-idx1-ubyte", needle], tmp,
                              what="a data file that " + needle)
        check("apt-get" not in r.err and "lacks" not in r.err, "no missing-file hint for a file that " + needle, r)


CASES = {f.__name__: f for f in (limits, thread_creation_fails, lying_data, output_targets, contract, echoes, signals,
                                 named_wrongly)}

if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="axon-hostile-") as tmp:
        CASES[case](tmp)
