#!/usr/bin/env python3
"""Plugin search paths that could degrade or subvert a run: a broken file
named like the CPU plugin earlier in the path must not shadow the real one
(which loads, with one warning naming both); plugins in world-writable
folders or files are not loaded unless --allow-insecure-plugin-path says so
(then with one warning naming the path).
Usage: plugin_path_test.py CASE AXON_TRAIN AXON_DEVICES FAKE_PLUGIN"""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from app_util import check, run, write_dataset  # noqa: E402

case, TRAIN, DEVICES, FAKE = sys.argv[1:5]


def devices(args):
    r = run([DEVICES, "--json"] + args)
    check(r.code == 0, "axon-devices --json %s" % " ".join(args), r)
    return json.loads(r.out), r.err


def broken_shadow(tmp):
    bad = os.path.join(tmp, "early")
    os.mkdir(bad)
    bad_file = os.path.join(bad, "libaxon-plugin-cpu.so")
    open(bad_file, "w").write("not a shared library\n")
    data, err = devices(["--plugin-dir", bad])
    cpu = [p for p in data["plugins"] if p["name"] == "cpu"]
    check(len(cpu) == 1 and cpu[0]["path"] != bad_file, "the real CPU plugin loads", data["plugins"])
    check(any(d["name"] == "/device:CPU:0" for d in data["devices"]), "/device:CPU:0 is there")
    warn = [line for line in err.splitlines() if bad_file in line]
    check(len(warn) == 1 and cpu[0]["path"] in warn[0] and "instead" in warn[0],
          "one warning naming the broken file and the plugin loaded instead", err)
    folder = os.path.join(tmp, "data")
    write_dataset(folder, 64, 32)
    r = run([TRAIN, "--data", folder, "--epochs", "1", "--plugin-dir", bad])
    check(r.code == 0 and "Training on /device:CPU:0" in r.out, "axon-train trains on the CPU, not the reference", r)


def world_writable(tmp):
    for kind in ("folder", "file"):
        d = os.path.join(tmp, kind)
        os.mkdir(d)
        plugin = os.path.join(d, os.path.basename(FAKE))
        shutil.copy(FAKE, plugin)
        os.chmod(d, 0o777 if kind == "folder" else 0o755)
        os.chmod(plugin, 0o666 if kind == "file" else 0o644)
        data, err = devices(["--plugin-dir", d])
        check(not any(d_["type"] == "FAKE" for d_ in data["devices"]),
              "a plugin in a world-writable %s is not loaded" % kind, data["devices"])
        skipped = [s for s in data["skipped_plugins"] if s["path"] == plugin]
        check(len(skipped) == 1 and "world-writable" in skipped[0]["reason"] and
              "--allow-insecure-plugin-path" in skipped[0]["reason"], "and is listed as skipped, saying why", skipped)
        data, err = devices(["--plugin-dir", d, "--allow-insecure-plugin-path"])
        check(any(d_["type"] == "FAKE" for d_ in data["devices"]),
              "--allow-insecure-plugin-path loads the %s's plugin" % kind, data["devices"])
        warn = [line for line in err.splitlines() if "world-writable" in line]
        check(len(warn) == 1 and (d if kind == "folder" else plugin) in warn[0], "with one warning naming it", err)


CASES = {f.__name__: f for f in (broken_shadow, world_writable)}

if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="axon-plugins-") as tmp:
        CASES[case](tmp)
