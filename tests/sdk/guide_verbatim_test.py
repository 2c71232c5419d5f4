#!/usr/bin/env python3
"""docs/plugin-guide.md shows every file of the minimal example verbatim.

A file is shown by a marker line naming it, relative to the repository root,
followed by a fenced code block holding exactly the file's text:

    <!-- file: sdk/examples/minimal-plugin/plugin.cpp -->
    ```cpp
    ...
    ```

Fails when a file of the example folder has no such block, when a block
differs from its file, or when a marker names a file that does not exist."""
import difflib
import os
import re
import sys

if len(sys.argv) != 4:
    sys.exit("usage: guide_verbatim_test.py <guide.md> <example folder> <repository root>")
guide_path, example_dir, root = sys.argv[1:]
lines = open(guide_path, encoding="utf-8").read().split("\n")

marker = re.compile(r"^<!-- file: (\S+) -->$")
fence_open = re.compile(r"^(`{3,}|~{3,})[\w+-]*$")
failures = []
shown = {}  # repository-relative path -> guide line of its marker
i = 0
while i < len(lines):
    m = marker.match(lines[i])
    if not m:
        i += 1
        continue
    rel, where = m.group(1), i + 1
    j = i + 1
    while j < len(lines) and lines[j].strip() == "":
        j += 1
    f = fence_open.match(lines[j]) if j < len(lines) else None
    if not f:
        failures.append(f"{guide_path}:{where}: the marker for {rel} is not followed by a fenced code block")
        i = j
        continue
    fence = f.group(1)
    close = re.compile("^" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
    k = j + 1
    while k < len(lines) and not close.match(lines[k]):
        k += 1
    if k == len(lines):
        failures.append(f"{guide_path}:{where}: the code block for {rel} is never closed")
        break
    block = "\n".join(lines[j + 1:k]) + "\n"
    if rel in shown:
        failures.append(f"{guide_path}:{where}: {rel} is shown twice (also at line {shown[rel]})")
    shown[rel] = where
    path = os.path.join(root, rel)
    if not os.path.isfile(path):
        failures.append(f"{guide_path}:{where}: the marker names {rel}, which does not exist")
    else:
        text = open(path, encoding="utf-8").read()
        if text != block:
            diff = "".join(difflib.unified_diff(text.splitlines(True), block.splitlines(True),
                                                rel, f"{guide_path}:{where}"))
            failures.append(f"{guide_path}:{where}: the block differs from {rel}:\n{diff}")
        else:
            print(f"ok: {rel} is shown verbatim at {guide_path}:{where}")
    i = k + 1

for name in sorted(os.listdir(example_dir)):
    path = os.path.join(example_dir, name)
    if not os.path.isfile(path) or name.startswith("."):
        continue
    rel = os.path.relpath(os.path.realpath(path), os.path.realpath(root))
    if rel not in shown:
        failures.append(f"{rel} is not shown in {guide_path} (expected a '<!-- file: {rel} -->' line before its code block)")

if failures:
    sys.exit("FAILED:\n" + "\n".join(failures))
print(f"the guide shows all {len(shown)} files verbatim")
