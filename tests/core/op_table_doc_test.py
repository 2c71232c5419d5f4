#!/usr/bin/env python3
"""docs/ops.md shows the op table exactly as `axon-devices --op-table` prints
it, between its begin and end markers."""
import subprocess
import sys

exe, doc = sys.argv[1], sys.argv[2]
table = subprocess.run([exe, "--op-table"], capture_output=True, text=True, check=True).stdout
text = open(doc, encoding="utf-8").read()
begin = text.index("<!-- op-table begin")
begin = text.index("\n", begin) + 1
end = text.index("<!-- op-table end -->")
if text[begin:end] != table:
    sys.exit(f"FAILED: {doc}'s op table differs from `axon-devices --op-table`; regenerate it:\n{table}")
if table.count("\n") < 3:
    sys.exit("FAILED: axon-devices --op-table printed no rows")
print(f"ok: {doc} shows the op table ({table.count(chr(10)) - 2} ops)")
