#!/usr/bin/env python3
"""axon-train is one user of the C++ API: its run of the built-in CNN and the
same run written with the API alone (cnn_through_api.cpp: same data, seed,
batch, optimizer, loss) save the same weights, byte for byte, and the same
metrics CSV but for the time columns.

  app_equals_api_test.py CASE AXON_TRAIN CNN_THROUGH_API

CASE: default (the default device), mirrored (two logical CPU devices) or
multi-worker (two workers started by mpirun, one thread each).
Exit 0 pass, 1 fail, 77 skipped (multi-worker without mpirun).
"""
import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile

DATA = "/usr/share/datasets/fashion-mnist"
RUN = ["--data", DATA, "--train-limit", "256", "--test-limit", "200", "--epochs", "2", "--batch-size", "64",
       "--seed", "7"]
TIME_COLUMNS = {"seconds", "samples_per_second", "input_wait_seconds"}


def run(cmd, env):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=600)
    if p.returncode != 0:
        sys.exit("FAIL: %s exited %d\n%s%s" % (" ".join(cmd), p.returncode, p.stdout, p.stderr))


def csv_without_times(path):
    rows = list(csv.DictReader(io.StringIO(open(path).read())))
    if not rows:
        sys.exit("FAIL: %s has no rows" % path)
    return [{k: v for k, v in r.items() if k not in TIME_COLUMNS} for r in rows]


def main():
    case, app, api = sys.argv[1], sys.argv[2], sys.argv[3]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AXON_")}
    app_flags = ["--threads", "2", "--quiet"]
    api_env = dict(env, AXON_NUM_THREADS="2")
    app_cmd, api_cmd = [app], [api]
    if case == "mirrored":
        app_flags += ["--strategy", "mirrored", "--cpu-devices", "2"]
        api_env.update(AXON_CPU_DEVICE_COUNT="2")
    elif case == "multi-worker":
        if shutil.which("mpirun") is None:
            print("SKIP: no mpirun")
            sys.exit(77)
        if os.geteuid() == 0:  # Open MPI refuses root unless told; CI and containers run as root
            env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        # --oversubscribe: two ranks on however many cores; one thread each.
        mpirun = ["mpirun", "-np", "2", "--oversubscribe"]
        app_cmd, api_cmd = mpirun + [app], mpirun + ["-x", "AXON_NUM_THREADS", api]
        app_flags = ["--threads", "1", "--quiet", "--strategy", "multi-worker"]
        api_env = dict(env, AXON_NUM_THREADS="1")
    elif case != "default":
        sys.exit("unknown case " + case)
    with tempfile.TemporaryDirectory() as tmp:
        files = {who: (os.path.join(tmp, who + ".weights"), os.path.join(tmp, who + ".csv")) for who in ("app", "api")}
        run(app_cmd + RUN + app_flags + ["--save", files["app"][0], "--metrics-csv", files["app"][1]], env)
        run(api_cmd + RUN + (["--strategy", case] if case != "default" else []) +
            ["--save", files["api"][0], "--metrics-csv", files["api"][1]], api_env)
        app_weights, api_weights = (open(files[w][0], "rb").read() for w in ("app", "api"))
        if len(app_weights) < 100000:
            sys.exit("FAIL: axon-train's weights file is only %d bytes" % len(app_weights))
        if app_weights != api_weights:
            diff = next(i for i, (a, b) in enumerate(zip(app_weights, api_weights)) if a != b) \
                if len(app_weights) == len(api_weights) else min(len(app_weights), len(api_weights))
            sys.exit("FAIL: the weights differ (%d and %d bytes; first difference at byte %d)" %
                     (len(app_weights), len(api_weights), diff))
        app_rows, api_rows = csv_without_times(files["app"][1]), csv_without_times(files["api"][1])
        if len(app_rows) != 2:
            sys.exit("FAIL: axon-train's CSV has %d rows, not one per epoch (2)" % len(app_rows))
        if app_rows != api_rows:
            sys.exit("FAIL: the metrics CSVs differ:\n%s\n%s" % (app_rows, api_rows))
        print("%s: %d weight bytes and %d CSV rows (%s) equal" % (case, len(app_weights), len(app_rows),
                                                                   ", ".join(app_rows[0].keys())))


if __name__ == "__main__":
    main()
