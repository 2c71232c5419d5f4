#!/usr/bin/env python3
"""A doc shows a table exactly as a program prints it, between the markers
`<!-- NAME begin ...` and `<!-- NAME end -->` (docs/ops.md: `axon-devices
--op-table`; docs/training.md: `axon-train --layer-table`), and the program
prints at least MIN_ROWS rows.

Usage: generated_table_doc_test.py EXE FLAG DOC NAME MIN_ROWS"""
import os
import subprocess
import sys

exe, flag, doc, name, min_rows = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
program = f"{os.path.basename(exe)} {flag}"
table = subprocess.run([exe, flag], capture_output=True, text=True, check=True).stdout
text = open(doc, encoding="utf-8").read()
begin = text.index(f"<!-- {name} begin")
begin = text.index("\n", begin) + 1
end = text.index(f"<!-- {name} end -->")
if text[begin:end] != table:
    sys.exit(f"FAILED: {doc}'s {name} differs from `{program}`; regenerate it:\n{table}")
rows = table.count("\n") - 2  # less the header and its rule
if rows < min_rows:
    sys.exit(f"FAILED: {program} printed {rows} rows, fewer than {min_rows}")
print(f"ok: {doc} shows the {name} ({rows} rows)")
