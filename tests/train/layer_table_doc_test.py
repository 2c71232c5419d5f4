#!/usr/bin/env python3
"""docs/training.md shows the Keras layers axon reads exactly as
`axon-train --layer-table` prints them from the layer registry, between its
begin and end markers."""
import subprocess
import sys

exe, doc = sys.argv[1], sys.argv[2]
table = subprocess.run([exe, "--layer-table"], capture_output=True, text=True, check=True).stdout
text = open(doc, encoding="utf-8").read()
begin = text.index("<!-- layer-table begin")
begin = text.index("\n", begin) + 1
end = text.index("<!-- layer-table end -->")
if text[begin:end] != table:
    sys.exit(f"FAILED: {doc}'s layer table differs from `axon-train --layer-table`; regenerate it:\n{table}")
if table.count("\n") < 10:
    sys.exit("FAILED: axon-train --layer-table printed too few rows")
print(f"ok: {doc} shows the layer table ({table.count(chr(10)) - 2} layers)")
