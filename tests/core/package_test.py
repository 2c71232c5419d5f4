#!/usr/bin/env python3
"""The installed package works for a third party: install this build into a
fresh prefix, build the reference plugin out of tree against it with
find_package(axon), build a program linking axon::core, and check that the
installed axon-devices lists the REF device found through AXON_PLUGIN_PATH
(and the installed CPU plugin found through the install layout)."""
import argparse
import json
import os
import shutil
import subprocess
import sys

ap = argparse.ArgumentParser()
for a in ("--build-dir", "--source-dir", "--work-dir", "--cmake", "--generator"):
    ap.add_argument(a, required=True)
args = ap.parse_args()

work = os.path.abspath(args.work_dir)
prefix = os.path.join(work, "prefix")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
env = {k: v for k, v in os.environ.items() if not k.startswith("AXON_")}


def sh(*cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
        sys.exit(f"FAILED: {' '.join(cmd)} exited {p.returncode}")
    return p


def check(cond, what, detail=""):
    if not cond:
        sys.exit(f"FAILED: {what}\n{detail}")
    print("ok:", what)


sh(args.cmake, "--install", args.build_dir, "--prefix", prefix)
for rel in ("include/axon/plugin_abi.h", "include/axon/plugin.hpp", "include/axon/runtime.hpp",
            "lib/libaxon-core.so", "lib/cmake/axon/axonConfig.cmake", "lib/cmake/axon/axonConfigVersion.cmake",
            "lib/cmake/axon/axonTargets.cmake", "lib/axon/plugins/libaxon-plugin-cpu.so", "bin/axon-devices",
            "bin/axon-train", "bin/axon-predict"):
    check(os.path.exists(os.path.join(prefix, rel)), f"installed {rel}")
# The install ships the reference plugin as example sources, not as a device.
check(not os.path.exists(os.path.join(prefix, "lib/axon/plugins/libaxon-plugin-reference.so")),
      "the install has no reference device")
example = os.path.join(prefix, "share/axon/examples/reference-plugin")
check(os.path.exists(os.path.join(example, "CMakeLists.txt")), "installed the reference plugin's sources")

# Built from the installed sources against the installed package alone.
ref_build = os.path.join(work, "reference-plugin")
sh(args.cmake, "-S", example, "-B", ref_build,
   "-G", args.generator, "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_PREFIX_PATH={prefix}", env=env)
sh(args.cmake, "--build", ref_build, env=env)
ref_so = os.path.join(ref_build, "libaxon-plugin-reference.so")
check(os.path.exists(ref_so), "the reference plugin built out of tree")

consumer_build = os.path.join(work, "consumer")
sh(args.cmake, "-S", os.path.join(args.source_dir, "tests/core/package_consumer"), "-B", consumer_build,
   "-G", args.generator, "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_PREFIX_PATH={prefix}", env=env)
sh(args.cmake, "--build", consumer_build, env=env)

devices = os.path.join(prefix, "bin/axon-devices")
data = json.loads(sh(devices, "--json", env=env).stdout)
names = [d["name"] for d in data["devices"]]
check("/device:REF:0" not in names, "without AXON_PLUGIN_PATH there is no REF device", str(names))
cpu_plugin = [p for p in data["plugins"] if p["name"] == "cpu"]
check(len(cpu_plugin) == 1 and cpu_plugin[0]["path"].startswith(prefix + "/lib/axon/plugins/"),
      "the installed axon-devices loads the installed CPU plugin", json.dumps(data["plugins"], indent=1))

with_ref = dict(env, AXON_PLUGIN_PATH=ref_build)
data = json.loads(sh(devices, "--json", env=with_ref).stdout)
ref = [d for d in data["devices"] if d["name"] == "/device:REF:0"]
check(len(ref) == 1 and ref[0]["plugin"] == "reference", "AXON_PLUGIN_PATH adds /device:REF:0",
      json.dumps(data, indent=1))
ref_plugin = [p for p in data["plugins"] if p["name"] == "reference"]
check(ref_plugin and ref_plugin[0]["path"] == ref_so, "REF comes from the out-of-tree build", json.dumps(ref_plugin))
text = sh(devices, env=with_ref).stdout
check("/device:REF:0" in text and text.splitlines()[-1].startswith("Num GPUs Available: "),
      "the listing shows REF and ends with 'Num GPUs Available: N'", text)

out = sh(os.path.join(consumer_build, "axon-consumer"), env=with_ref).stdout
check("/device:REF:0 relu(-1,2) = 0,2" in out and "/device:CPU:0 relu(-1,2) = 0,2" in out,
      "a program linking axon::core runs ops on REF and CPU", out)

# ---- axon-plugin-check, installed: the reference plugin built above from the
# installed sources passes every check, its training run against the
# installed CPU plugin included (when the data set is there).
plugin_check = os.path.join(prefix, "bin/axon-plugin-check")
check(os.path.exists(plugin_check), "installed bin/axon-plugin-check")
pc = subprocess.run([plugin_check, "--json", ref_so], capture_output=True, text=True, env=env, timeout=600)
try:
    pc_doc = json.loads(pc.stdout)
except ValueError:
    pc_doc = None
check(pc.returncode == 0 and pc_doc is not None and pc_doc["summary"]["failed"] == 0,
      "the installed axon-plugin-check passes the out-of-tree reference plugin",
      f"exit {pc.returncode}\n{pc.stdout[-4000:]}\n{pc.stderr[-2000:]}")
pc_train = [c for c in pc_doc["checks"] if c["name"].startswith("training: ")]
check(len(pc_train) == 1 and (pc_train[0]["status"] == "pass" or
                              not os.path.isdir("/usr/share/datasets/fashion-mnist")),
      "its training run (the installed axon-train next to it) agrees with the CPU's", json.dumps(pc_train))
# ---- end of axon-plugin-check

print("package test passed")
