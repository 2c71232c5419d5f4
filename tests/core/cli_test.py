#!/usr/bin/env python3
"""axon-devices from the outside: exit codes, messages, --json, flags and
environment variables. Usage: cli_test.py CASE AXON_DEVICES TEST_PLUGIN_DIRS
Each case asserts; a failed assertion exits non-zero, which fails the test."""
import json
import os
import re
import subprocess
import sys

case, exe, plugin_dirs = sys.argv[1], sys.argv[2], sys.argv[3]

# A clean environment: no AXON_* from the caller.
BASE_ENV = {k: v for k, v in os.environ.items() if not k.startswith("AXON_")}


def run(*args, env=None):
    e = dict(BASE_ENV)
    e.update(env or {})
    p = subprocess.run([exe, *args], env=e, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def check(cond, what, out="", err=""):
    if not cond:
        print(f"FAILED: {what}\n--- stdout ---\n{out}\n--- stderr ---\n{err}")
        sys.exit(1)
    print(f"ok: {what}")


def listing_json(*args, env=None):
    rc, out, err = run("--json", *args, env=env)
    check(rc == 0, f"--json {' '.join(args)} exits 0", out, err)
    return json.loads(out), err


if case == "listing":
    rc, out, err = run()
    check(rc == 0, "exit code 0", out, err)
    data, _ = listing_json()
    n = data["num_gpus"]
    lines = out.splitlines()
    check(lines[-1] == f"Num GPUs Available: {n}", "last line is 'Num GPUs Available: N'", out, err)
    check(n == sum(d["type"] == "GPU" for d in data["devices"]), "N counts the GPU devices", out, err)
    check(re.search(r"^  /device:CPU:0  ", out, re.M) is not None, "/device:CPU:0 is listed", out, err)
    check(re.search(r"type CPU, plugin cpu \(priority 100\), physical id 0", out) is not None,
          "type, plugin and physical id are shown", out, err)
    check("Plugins (" in out and "libaxon-plugin-cpu.so" in out, "plugins are listed with their paths", out, err)
    check(err == "", "nothing on stderr", out, err)
    rc, out, err = run("--timing")
    check(rc == 0 and re.search(r"loaded in [0-9.]+ ms", out) and "Start-up" in out, "--timing shows load times",
          out, err)
    rc, out, err = run("--help")
    check(rc == 0 and "--visible-devices" in out and "--json" in out, "--help lists the flags", out, err)

elif case == "json":
    data, err = listing_json()
    for key in ("devices", "excluded_devices", "plugins", "skipped_plugins", "num_gpus", "startup_ms"):
        check(key in data, f"--json has '{key}'")
    cpu = [d for d in data["devices"] if d["name"] == "/device:CPU:0"]
    check(len(cpu) == 1, "CPU:0 in --json", json.dumps(data), err)
    for key in ("type", "plugin", "physical_id", "physical_name", "memory_total", "priority", "properties"):
        check(key in cpu[0], f"device has '{key}'")
    check(all(p["load_ms"] > 0 for p in data["plugins"]), "every plugin reports load_ms > 0", json.dumps(data))
    rc, out, err = run("--json")
    p = subprocess.run([sys.executable, "-m", "json.tool"], input=out, capture_output=True, text=True)
    check(p.returncode == 0, "python3 -m json.tool accepts --json", out, p.stderr)

elif case == "cpu_devices":
    data, err = listing_json(env={"AXON_CPU_DEVICE_COUNT": "2"})
    cpus = [d["name"] for d in data["devices"] if d["type"] == "CPU"]
    check(cpus == ["/device:CPU:0", "/device:CPU:1"], "AXON_CPU_DEVICE_COUNT=2 gives CPU:0 and CPU:1", str(cpus), err)
    data, err = listing_json("--cpu-devices", "3", env={"AXON_CPU_DEVICE_COUNT": "2"})
    cpus = [d["name"] for d in data["devices"] if d["type"] == "CPU"]
    check(len(cpus) == 3, "--cpu-devices 3 wins over the variable", str(cpus), err)
    # docs/cli.md: more logical CPU devices than cores share them, and the CPU plugin says so once.
    cores = len(os.sched_getaffinity(0))
    rc, out, err = run("--cpu-devices", str(cores + 1))
    on = f"{cores} core{'' if cores == 1 else 's'}"
    check(rc == 0 and err == f"axon: W cpu: {cores + 1} logical CPU devices on {on}: "
          "each device runs at least one thread, so they share the cores and each runs slower than on a core of its "
          "own\n", f"--cpu-devices {cores + 1} on {cores} cores: one warning", out, err)
    rc, out, err = run("--cpu-devices", str(cores))
    check(rc == 0 and err == "", f"--cpu-devices {cores} on {cores} cores: no warning", out, err)

elif case in ("visible_flag", "visible_env"):
    if case == "visible_flag":
        data, err = listing_json("--cpu-devices", "2", "--visible-devices", "cpu:1")
        source = "--visible-devices"
        rc, out, err2 = run("--cpu-devices", "2", "--visible-devices", "cpu:1")
    else:
        env = {"AXON_CPU_DEVICE_COUNT": "2", "AXON_VISIBLE_DEVICES": "cpu:1"}
        data, err = listing_json(env=env)
        source = "AXON_VISIBLE_DEVICES"
        rc, out, err2 = run(env=env)
    cpus = [d for d in data["devices"] if d["type"] == "CPU"]
    check(len(cpus) == 1 and cpus[0]["name"] == "/device:CPU:0" and cpus[0]["physical_name"] == "/device:CPU:1"
          and cpus[0]["physical_id"] == 1, "only CPU:1 is visible, renumbered CPU:0", json.dumps(data), err)
    ex = [e for e in data["excluded_devices"] if e["name"] == "/device:CPU:0"]
    check(len(ex) == 1 and ex[0]["reason"] == f"filtered by {source}", f"CPU:0 excluded, 'filtered by {source}'",
          json.dumps(data), err)
    check("  /device:CPU:0 -> /device:CPU:1 (cpu physical id 1)" in out, "the logical -> physical map is printed",
          out, err2)
    check(f"/device:CPU:0 (plugin cpu, physical id 0): filtered by {source}" in out, "the excluded line has the reason",
          out, err2)

elif case == "visible_unknown":
    # The message names the device, says why it is not there, and lists the devices there are.
    data, _ = listing_json()
    cpus = [d["name"] for d in data["devices"] if d["type"] == "CPU"]
    gpu_plugins = [p for p in data["plugins"] if p["device_type"] == "GPU"]
    if not gpu_plugins:
        gpu_why = "no plugin provides GPU devices"
    elif gpu_plugins[0]["device_count"] == 0:  # its own reason: "cuda: CUDA driver not found (...)"
        gpu_why = "%s: %s" % (gpu_plugins[0]["name"], gpu_plugins[0]["unavailable_reason"])
    else:
        gpu_why = "only %d GPU device" % gpu_plugins[0]["device_count"]
    for args, env, source, name, why in (
            (["--visible-devices", "gpu:99"], {}, "--visible-devices", "/device:GPU:99", gpu_why),
            (["--visible-devices", "cpu:3"], {}, "--visible-devices", "/device:CPU:3",
             "only %d CPU device%s: %s" % (len(cpus), "" if len(cpus) == 1 else "s", ", ".join(cpus))),
            ([], {"AXON_VISIBLE_DEVICES": "cpu:0,tpu:1"}, "AXON_VISIBLE_DEVICES", "/device:TPU:1",
             "no plugin provides TPU devices")):
        rc, out, err = run(*args, env=env)
        check(rc == 2, f"{source} naming a missing device exits 2", out, err)
        lines = err.strip().splitlines()
        check(len(lines) == 1, "one line on stderr", out, err)
        check(lines[0].startswith(f"axon-devices: error: {source} names {name}, which does not exist ({why}")
              and re.search(r"\); devices: .*/device:CPU:0", lines[0]) is not None,
              f"it names {name}, says why ({why}) and lists the devices there are", out, err)
        check(out == "", "nothing on stdout", out, err)

elif case == "bad_usage":
    for args, env, what in ((["--no-such-flag"], {}, "an unknown flag"),
                            (["--cpu-devices", "two"], {}, "a non-numeric --cpu-devices"),
                            (["--cpu-devices", "0"], {}, "--cpu-devices 0"),
                            (["--visible-devices", "gpu:x"], {}, "a malformed device name"),
                            ([], {"AXON_CPU_DEVICE_COUNT": "lots"}, "a malformed AXON_CPU_DEVICE_COUNT"),
                            ([], {"AXON_LOG_LEVEL": "chatty"}, "a malformed AXON_LOG_LEVEL")):
        rc, out, err = run(*args, env=env)
        lines = err.strip().splitlines()
        check(rc == 2 and len(lines) == 1 and lines[0].startswith("axon-devices: error: "),
              f"{what}: exit 2 with one 'axon-devices: error:' line", out, err)

elif case == "faulty_plugins":
    faulty = os.path.join(plugin_dirs, "faulty")
    rc, out, err = run("--plugin-dir", faulty, "--json")
    check(rc == 0, "faulty plugins do not stop axon-devices", out, err)
    data = json.loads(out)
    expected = {"notelf": "cannot load", "noentry": "no entry symbol", "wrongabi": "built for ABI major 3",
                "noopen": "'open_device' field",
                "initfails": "axon_plugin_get_api failed (AXON_UNAVAILABLE): fake: the test device is switched off"}
    for stem, reason in expected.items():
        path = os.path.join(faulty, f"libaxon-plugin-{stem}.so")
        lines = [l for l in err.splitlines() if path in l]
        check(len(lines) == 1 and lines[0].startswith(f"axon: W loader: skipping plugin {path}: ") and reason in lines[0],
              f"one warning line for {stem} naming file and reason", out, err)
        check(any(s["path"] == path and reason in s["reason"] for s in data["skipped_plugins"]),
              f"{stem} listed as skipped in --json", out, err)
    names = [d["name"] for d in data["devices"]]
    check("/device:CPU:0" in names and "/device:OLD:0" in names, "CPU and the old-table plugin's device remain",
          str(names), err)
    rc, out, err = run("--plugin-dir", faulty, "--ops")
    check(rc == 0 and re.search(r"/device:OLD:0.*\n(.*\n)*?\s+ops \(1\): Relu", out) is not None,
          "the old-table device opens and lists its kernels", out, err)
    check("Skipped plugins (5):" in out, "the listing shows the 5 skipped plugins", out, err)

else:
    print(f"unknown case {case}")
    sys.exit(1)
