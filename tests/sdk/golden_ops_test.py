#!/usr/bin/env python3
"""Runs axon-golden-check on a plugin that has only some ops and checks that
exactly the ops it claims ran and passed: the golden check alone skips an op
without a kernel, so a plugin that lost a kernel would pass it.

    golden_ops_test.py <axon-golden-check> <plugin.so> <Op,Op,...> <file.axg>..."""
import re
import subprocess
import sys

if len(sys.argv) < 5:
    sys.exit("usage: golden_ops_test.py <axon-golden-check> <plugin.so> <Op,Op,...> <file.axg>...")
check, plugin, ops = sys.argv[1], sys.argv[2], set(sys.argv[3].split(","))
p = subprocess.run([check, plugin, *sys.argv[4:]], capture_output=True, text=True)
print(p.stdout, p.stderr, sep="")
if p.returncode != 0:
    sys.exit(f"FAILED: {check} exited {p.returncode}")
result = {}  # op -> set of verdicts
for line in p.stdout.splitlines():
    m = re.match(r"^(PASS|FAIL|SKIP)\s+(\S+)\s", line)
    if m:
        result.setdefault(m.group(2), set()).add(m.group(1))
failures = [f"{op}: no golden case ran" for op in sorted(ops) if "PASS" not in result.get(op, set())]
# A listed op may skip cases of another dtype (Identity/int32 on a float32 kernel).
failures += [f"{op}: a case failed" for op, v in sorted(result.items()) if "FAIL" in v]
failures += [f"{op}: has a kernel but is not in the list {sorted(ops)}" for op, v in sorted(result.items())
             if op not in ops and v != {"SKIP"}]
if failures:
    sys.exit("FAILED:\n" + "\n".join(failures))
print(f"all golden cases of {', '.join(sorted(ops))} passed")
