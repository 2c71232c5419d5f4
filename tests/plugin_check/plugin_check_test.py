#!/usr/bin/env python3
"""axon-plugin-check from the outside, one scenario per run:

  fault CHECK PLUGIN NAME         exit 1 and exactly one failed check, NAME (--json and the lines)
  passes CHECK PLUGIN [ARGS]      exit 0 and no failed check (--min-cases=K,B: at least K kernel
                                  cases and B bad inputs passed; 20,10 unless given)
  usage CHECK PLUGIN              bad command lines: exit 2, one line on stderr, nothing on stdout
  training_fails CHECK PLUGIN DIR the training comparison fails when the runs disagree (a stand-in
                                  axon-train next to a copy of the checker in DIR)
  load_fails CHECK PLUGIN TEXT    exit 1 and one check, the failed load, whose detail holds TEXT
  misnamed CHECK PLUGIN DIR       a copy not named libaxon-plugin-*.so fails to load, saying so
  gpu CHECK PLUGIN [ARGS]         as passes; exit 77 (skipped) when the driver reports no device
"""
import json
import os
import shutil
import stat
import subprocess
import sys

SANITIZED = bool(os.environ.get("AXON_TEST_SANITIZED"))


def run(cmd, timeout=600, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def check(cond, what, detail=""):
    if not cond:
        sys.exit(f"FAILED: {what}\n{detail}")
    print("ok:", what)


def run_json(checker, args):
    code, out, err = run([checker, "--json"] + args)
    try:
        doc = json.loads(out)
    except ValueError:
        sys.exit(f"FAILED: --json printed no JSON (exit {code})\nstdout:\n{out}\nstderr:\n{err}")
    return code, doc, err


def failed(doc):
    return [c for c in doc["checks"] if c["status"] == "fail"]


def summary_matches(doc):
    s = doc["summary"]
    counts = {st: sum(1 for c in doc["checks"] if c["status"] == st) for st in ("pass", "fail", "skip")}
    return s == {"passed": counts["pass"], "failed": counts["fail"], "skipped": counts["skip"]}


def fault(checker, plugin, name):
    code, doc, err = run_json(checker, [plugin, "--no-train"])
    fails = failed(doc)
    check(code == 1, f"exit 1 (got {code})", err)
    check([c["name"] for c in fails] == [name], f"exactly one failed check, '{name}'",
          json.dumps(fails, indent=1))
    check(fails[0]["detail"] != "", "the failure says why", fails[0]["detail"])
    print("   ", fails[0]["detail"])
    check(summary_matches(doc) and doc["summary"]["passed"] > 100, "the summary counts the checks", str(doc["summary"]))
    # The lines say the same: one FAIL line naming the check, the summary last.
    code, out, err = run([checker, plugin, "--no-train"])
    lines = out.splitlines()
    fail_lines = [l for l in lines if l.startswith("FAIL ")]
    check(code == 1 and len(fail_lines) == 1 and fail_lines[0].startswith(f"FAIL {name}: "),
          "the text output has that one FAIL line", out + err)
    s = doc["summary"]
    check(lines[-1] == f"{s['passed']} passed, {s['failed']} failed, {s['skipped']} skipped",
          "the text output ends with the summary", lines[-1])
    check(all(l[:5] in ("PASS ", "FAIL ", "SKIP ") for l in lines[:-1]), "one line per check", out)


def passes(checker, plugin, args):
    # --min-cases=K,B (the driver's, not the checker's): kernel cases and bad inputs a small plugin passes.
    want_kernels, want_bad = 20, 10
    for a in [a for a in args if a.startswith("--min-cases=")]:
        want_kernels, want_bad = (int(v) for v in a.split("=", 1)[1].split(","))
        args = [b for b in args if b != a]
    train = "--no-train" not in args
    # The reference kernels are naive loops: under the sanitizers only the CPU trains.
    if SANITIZED and train and "libaxon-plugin-cpu.so" not in plugin:
        args = args + ["--no-train"]
        train = False
    code, doc, err = run_json(checker, [plugin] + args)
    check(code == 0 and not failed(doc), f"exit 0 and no failed check (exit {code})",
          json.dumps(failed(doc), indent=1) + "\n" + err)
    check(summary_matches(doc), "the summary counts the checks", str(doc["summary"]))
    names = [c["name"] for c in doc["checks"]]
    check(len(names) == len(set(names)), "every check has its own name")
    check(doc["plugin"]["path"] == os.path.abspath(plugin) and doc["device"], "the plugin and device are named",
          json.dumps(doc["plugin"]))
    kernels = [c for c in doc["checks"] if c["name"].startswith("kernel[") and c["status"] == "pass"]
    bad = [c for c in doc["checks"] if c["name"].startswith("bad input: ")]
    check(len(kernels) >= want_kernels and len(bad) >= want_bad,
          f"{len(kernels)} kernel cases and {len(bad)} bad inputs passed")
    training = [c for c in doc["checks"] if c["name"].startswith("training: ")]
    check(len(training) == 1, "one training check", json.dumps(training))
    if train and os.path.exists("/usr/share/datasets/fashion-mnist"):
        check(training[0]["status"] == "pass", "the training run agrees with the CPU's", json.dumps(training[0]))
    print(f"    {doc['summary']} in {doc['seconds']} s")


def usage(checker, plugin):
    folder = os.path.dirname(plugin)
    cases = [[], ["/nonexistent/libaxon-plugin-x.so"], [folder], ["--bogus", plugin], ["--op", "NoSuchOp", plugin],
             [plugin, plugin], ["--device", "7", plugin], ["--device", "x", plugin], ["--sum-ulps", "0", plugin]]
    for args in cases:
        code, out, err = run([checker] + args)
        lines = err.splitlines()
        check(code == 2 and out == "" and len(lines) == 1 and lines[0].startswith("axon-plugin-check: error: "),
              f"{args}: exit 2, one line: {err.strip()}", f"exit {code}\nstdout:\n{out}\nstderr:\n{err}")
    code, out, err = run([checker, "--help"])
    check(code == 0 and "Usage: axon-plugin-check" in out, "--help", out + err)


FAKE_TRAIN = """#!/usr/bin/env python3
# Stands in for axon-train: the device's run ends with a higher loss than the CPU's.
import sys
a = sys.argv
device, csv = a[a.index("--device") + 1], a[a.index("--metrics-csv") + 1]
kind, index = device.split(":")
print(f"Training on /device:{kind.upper()}:{index} (stand-in)")
loss = "2.0" if kind == "cpu" else "2.5"
with open(csv, "w") as f:
    f.write("epoch,loss,accuracy,val_loss,val_accuracy,seconds,samples_per_second,input_wait_seconds\\n")
    f.write(f"1,{loss},0.3,{loss},0.4,1,640,0\\n")
"""


def training_fails(checker, plugin, work):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "bin"))
    data = os.path.join(work, "data")
    os.makedirs(data)
    for stem in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                 "t10k-labels-idx1-ubyte"):
        open(os.path.join(data, stem), "w").close()
    copy = os.path.join(work, "bin", "axon-plugin-check")
    shutil.copy2(checker, copy)
    train = os.path.join(work, "bin", "axon-train")
    with open(train, "w") as f:
        f.write(FAKE_TRAIN)
    os.chmod(train, os.stat(train).st_mode | stat.S_IXUSR)
    code, doc, err = run_json(copy, [plugin, "--data", data])
    fails = failed(doc)
    check(code == 1 and [c["name"] for c in fails] == ["training: /device:CHK:0 against /device:CPU:0"],
          "only the training check fails", json.dumps(fails, indent=1) + err)
    check("loss 2.5000 (CPU 2.0000)" in fails[0]["detail"], "it shows both losses", fails[0]["detail"])


def load_fails(checker, plugin, text):
    for args in ([plugin, "--json"], [plugin]):
        code, out, err = run([checker] + args)
        check(code == 1, f"{args}: exit 1 (got {code})", out + err)
    doc = json.loads(run([checker, "--json", plugin])[1])
    name = "load " + os.path.basename(plugin)
    check([(c["name"], c["status"]) for c in doc["checks"]] == [(name, "fail")], f"one check, '{name}', failed",
          json.dumps(doc["checks"], indent=1))
    check(text in doc["checks"][0]["detail"], f"it gives the loader's reason ({text})", doc["checks"][0]["detail"])
    check(doc["plugin"] is None and doc["device"] is None, "no plugin or device is named", json.dumps(doc))
    print("   ", doc["checks"][0]["detail"])


def misnamed(checker, plugin, work):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    copy = os.path.join(work, "chk.so")
    shutil.copy2(plugin, copy)
    load_fails(checker, copy, "libaxon-plugin-<name>.so")


def gpu(checker, plugin, args):
    code, doc, err = run_json(checker, [plugin] + args)
    p = doc["plugin"]
    if p and p["device_count"] == 0 and not p["excluded_devices"]:
        print(f"SKIP: no CUDA device: {p['unavailable_reason']}")
        sys.exit(77)
    check(code == 0 and not failed(doc), f"exit 0 and no failed check (exit {code})",
          json.dumps(failed(doc), indent=1) + "\n" + err)
    print(f"    {doc['summary']} in {doc['seconds']} s")


def main():
    mode, checker, plugin, rest = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    if mode == "fault":
        fault(checker, plugin, rest[0])
    elif mode == "passes":
        passes(checker, plugin, rest)
    elif mode == "usage":
        usage(checker, plugin)
    elif mode == "training_fails":
        training_fails(checker, plugin, rest[0])
    elif mode == "load_fails":
        load_fails(checker, plugin, rest[0])
    elif mode == "misnamed":
        misnamed(checker, plugin, rest[0])
    elif mode == "gpu":
        gpu(checker, plugin, rest)
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
