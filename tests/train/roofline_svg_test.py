#!/usr/bin/env python3
"""axon-bench-train --roofline-svg on a small generated MNIST-format folder:
the roofline table has a row per profiled op and bound (compute, memory
or call, under a memory roof that is the faster of the STREAM figures taken
before and after the profiled steps and a measured call floor with the cold
calls' times beside it;
an op whose layers fall under two bounds has a row for each, its name
followed by the bound), the step's total line is printed, and the SVG is well-formed XML with one labelled point per op of
the table. A folder that cannot take the file is refused before anything
runs. Times are printed by the benchmark, never checked."""
import os
import re
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def write_idx(path, dims, payload):
    with open(path, "wb") as f:
        f.write(struct.pack(">BBBB", 0, 0, 0x08, len(dims)))
        for d in dims:
            f.write(struct.pack(">I", d))
        f.write(bytes(payload))


def write_mnist(folder, n):
    for split in ("train", "t10k"):
        images = [(i * 7 + k) % 256 for i in range(n) for k in range(28 * 28)]
        write_idx(os.path.join(folder, f"{split}-images-idx3-ubyte"), [n, 28, 28], images)
        write_idx(os.path.join(folder, f"{split}-labels-idx1-ubyte"), [n], [i % 10 for i in range(n)])


def table_ops(stdout, heading="roofline over the profiled steps"):
    """The row names of the roofline table under `heading`, checking each row's bound."""
    lines = stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(heading))
    if heading.startswith("roofline"):
        # The memory roof: STREAM taken before and after the profiled steps, the faster of each kept.
        roof = re.search(r"STREAM copy ([\d.]+) GB/s, triad ([\d.]+) GB/s$", lines[start])
        both = re.search(r"copy ([\d.]+) and ([\d.]+), triad ([\d.]+) and ([\d.]+);$", lines[start + 1])
        if not roof or not both:
            sys.exit(f"FAILED: no STREAM figures before and after in the roofline's header: {lines[start:start + 2]!r}")
        copy, triad = float(roof.group(1)), float(roof.group(2))
        seen = [float(v) for v in both.groups()]
        if min(seen) <= 0 or copy != max(seen[:2]) or triad != max(seen[2:]):
            sys.exit(f"FAILED: the roof is not the faster of the STREAM figures before and after: {lines[start:start + 2]!r}")
        floor = lines[start + 3].split()
        if floor[:2] != ["call", "floor"] or not float(floor[2]) > 0:
            sys.exit(f"FAILED: no measured call floor under the roofline's header: {lines[start + 3]!r}")
        # The cold calls: a median of calls after cache sweeps is never below the fastest hot call.
        cold = re.search(r"that Scale ([\d.]+) us, the loss of 64 x 10 logits ([\d.]+) us$", lines[start + 3])
        if not cold or float(cold.group(1)) < float(floor[2]) or not float(cold.group(2)) > 0:
            sys.exit(f"FAILED: no cold calls measured beside the call floor: {lines[start + 3]!r}")
        start += 4  # the header's four lines
    else:
        start += 1
    ops = []
    for line in lines[start + 1:]:  # after the column names
        if not line.startswith("  ") or line.strip().startswith("(bound"):  # the legend, or the table's end
            break
        fields = line.split()  # the name (an op, with its bound in brackets where it has several), 8 columns
        name, bound = " ".join(fields[:-8]), fields[-3]
        if bound not in ("compute", "memory", "call"):
            sys.exit(f"FAILED: a roofline row without its bound: {line!r}")
        if heading.startswith("roofline") and " " in name and name.split(" ", 1)[1] != f"({bound})":
            sys.exit(f"FAILED: a row named for another bound than its own: {line!r}")
        ops.append(name)
    return ops


def main():
    exe = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="axon-roofline-") as tmp:
        write_mnist(tmp, 96)
        svg = os.path.join(tmp, "roofline.svg")
        common = [exe, "--data", tmp, "--train-limit", "96", "--batch-size", "32", "--epochs", "1",
                  "--profile-steps", "2", "--sgemm-size", "64", "--stream-mib", "8"]

        bad = subprocess.run(common + ["--roofline-svg", os.path.join(tmp, "no-such-folder", "r.svg")],
                             capture_output=True, text=True)
        if bad.returncode == 0 or "--roofline-svg" not in bad.stderr:
            sys.exit(f"FAILED: a folder that does not exist was not refused naming --roofline-svg:\n{bad.stderr}")

        bad = subprocess.run(common[:-6] + ["--profile-steps", "0", "--roofline-layers"], capture_output=True,
                             text=True)
        if bad.returncode != 2 or "--roofline-layers needs profiled steps" not in bad.stderr:
            sys.exit(f"FAILED: --roofline-layers without profiled steps was not refused:\n{bad.stderr}")

        run = subprocess.run(common + ["--roofline-svg", svg, "--roofline-layers"], capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"FAILED: axon-bench-train exited with {run.returncode}:\n{run.stdout}\n{run.stderr}")
        ops = table_ops(run.stdout)
        if len(ops) < 5 or len(set(ops)) != len(ops):
            sys.exit(f"FAILED: expected the CNN's ops once each in the roofline table, got {ops}")
        if "this step could take" not in run.stdout:
            sys.exit("FAILED: no step total in the report")
        layers = table_ops(run.stdout, "per op and layer:")
        if not any(name.startswith("Conv2D") and len(name.split()) == 2 for name in layers):
            sys.exit(f"FAILED: no row of a convolution's layer in the per-layer table: {layers}")

        root = ET.parse(svg).getroot()  # raises on malformed XML
        if root.tag != SVG + "svg":
            sys.exit(f"FAILED: the root element is {root.tag}, not svg")
        points = {}
        for g in root.iter(SVG + "g"):
            if g.get("class") != "op":
                continue
            if g.find(SVG + "circle") is None or g.find(SVG + "text") is None:
                sys.exit(f"FAILED: the point of {g.get('data-op')} lacks its circle or label")
            points[g.get("data-op")] = points.get(g.get("data-op"), 0) + 1
        if points != {op: 1 for op in ops}:
            sys.exit(f"FAILED: the SVG's points {sorted(points)} are not the table's ops {sorted(ops)}")
        if not any(p.get("class") == "roof" for p in root.iter(SVG + "polyline")):
            sys.exit("FAILED: the SVG has no roof")
        leftovers = [f for f in os.listdir(tmp) if f.startswith(".roofline.svg.tmp")]
        if leftovers:
            sys.exit(f"FAILED: temporary files left behind: {leftovers}")
        print(f"ok: the roofline SVG parses and has one point per op ({len(ops)} ops)")


main()
