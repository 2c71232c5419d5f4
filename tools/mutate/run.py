#!/usr/bin/env python3
"""Plants plausible bugs in a copy of the tree, one at a time, and says which
tests catch each. Never touches the checkout it is run from: the copy is a
git worktree (of HEAD, or --rev) under --work, built once in its own build
folder and rebuilt incrementally for each mutation.

    python3 tools/mutate/run.py [--work /tmp/axon-mutate] [--rev HEAD] [--only NAME ...]
                                [--noop-sweep] [--table FILE] [-j N]

Each mutation edits exact text (each `old` must occur exactly once, or the
mutation is reported as stale), rebuilds, runs its tests with ctest, and is
reverted. A mutation is caught when at least one of its tests fails. The
table (markdown, as in docs/testing.md) lists every mutation with the tests
that caught it. --noop-sweep adds one mutation per kernel of the CPU and
reference plugins: the kernel returns at once, leaving its outputs as they
were. Exit 0 when every mutation is caught, 1 otherwise. Slow (minutes per
mutation on two cores): not part of CI.
"""
import argparse
import os
import re
import subprocess
import sys
import time

CPU = "plugins/cpu"
REF = "sdk/examples/reference-plugin/kernels.cpp"

# The tests a mutation of the kernels may trip: the kernel tests (each ISA),
# the goldens, the layer gradchecks and model tests, the contract tests.
KERNEL_TESTS = r"^(kernels|goldens|train\.gradcheck|train\.model|cuda_kernels_driver_on_cpu)"

MUTATIONS = [
    {
        "name": "SAME split reversed",
        "what": "SAME padding puts the larger half before (CPU and reference)",
        "edits": [
            (f"{CPU}/checks.cpp", "return {out, std::max<int64_t>((out - 1) * stride + eff - in, 0) / 2};",
             "return {out, (std::max<int64_t>((out - 1) * stride + eff - in, 0) + 1) / 2};"),
            (REF, "return {out, total / 2};", "return {out, (total + 1) / 2};"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "Adam epsilon inside the root",
        "what": "var -= lr_t m / sqrt(v + eps) (CPU and reference)",
        "edits": [
            (f"{CPU}/math.cpp", "var[i] -= s.lr_t * mi / (std::sqrt(vi) + s.eps);",
             "var[i] -= s.lr_t * mi / std::sqrt(vi + s.eps);"),
            (REF, "lr_t * mi / (std::sqrt(vi) + a.epsilon)", "lr_t * mi / std::sqrt(vi + a.epsilon)"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "MaxPoolGrad tie to the last maximum",
        "what": "a window's gradient goes to its last maximum (CPU and reference)",
        "edits": [
            (f"{CPU}/pool.cpp", "const I more = v > best;", "const I more = v >= best;"),
            (f"{CPU}/pool.cpp", "if (image[tap(ih, iw) + c] > image[best]) best = tap(ih, iw) + c;",
             "if (image[tap(ih, iw) + c] >= image[best]) best = tap(ih, iw) + c;"),
            (REF, "if (best < 0 || x[i] > x[best]) {", "if (best < 0 || x[i] >= x[best]) {"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "all-reduce MEAN on one replica only",
        "what": "the CPU all-reduce scales the sum after copying it, so only replica 0 gets the mean",
        "edits": [
            (f"{CPU}/plugin.cpp",
             """    if (op == AXON_REDUCE_MEAN) {
      const float scale = 1.0f / static_cast<float>(n);
      for (int64_t j = 0; j < count; ++j) out[j] *= scale;
    }
    for (int i = 1; i < n; ++i)
      if (count > 0) std::memcpy(buffers[i], out, sizeof(float) * static_cast<size_t>(count));""",
             """    for (int i = 1; i < n; ++i)
      if (count > 0) std::memcpy(buffers[i], out, sizeof(float) * static_cast<size_t>(count));
    if (op == AXON_REDUCE_MEAN) {
      const float scale = 1.0f / static_cast<float>(n);
      for (int64_t j = 0; j < count; ++j) out[j] *= scale;
    }"""),
        ],
        "tests": r"^kernels",
    },
    {
        "name": "MatMul transposed index",
        "what": "transpose_b ignored: B indexed as [k, n] (CPU and reference)",
        "edits": [
            (f"{CPU}/math.cpp", "sgemm(ta, tb, r1 - r0, n, k, a0, ta ? m : k, bp, tb ? k : n,",
             "sgemm(ta, false, r1 - r0, n, k, a0, ta ? m : k, bp, n,"),
            (REF, "(tb ? bp[j * k + p] : bp[p * n + j])", "(tb ? bp[p * n + j] : bp[p * n + j])"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "stride off by one",
        "what": "VALID output size (in - k + 1) / stride + 1 (CPU and reference)",
        "edits": [
            (f"{CPU}/checks.cpp", "return {(in - eff) / stride + 1, 0};", "return {(in - eff + 1) / stride + 1, 0};"),
            (REF, "return {(in - eff) / stride + 1, 0};", "return {(in - eff + 1) / stride + 1, 0};"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "bias left out",
        "what": "_FusedConv2D adds no bias (CPU and reference)",
        "edits": [
            (f"{CPU}/conv.cpp", "ep.bias = g.oc > 0 ? bias.data<float>() : nullptr;", "ep.bias = nullptr;"),
            (REF, """  run_step<conv2d>(d, c, {c.input(0).c(), c.input(1).c()}, y.c(), &a.conv);
  run_step<bias_add>(d, c, {y.c(), c.input(2).c()}, y.c(), nullptr);""",
             """  run_step<conv2d>(d, c, {c.input(0).c(), c.input(1).c()}, y.c(), &a.conv);"""),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "last batch element ignored",
        "what": "Conv2DBackpropFilter leaves out the batch's last image (CPU and reference)",
        "edits": [
            (f"{CPU}/conv.cpp", "conv2d_backprop_filter_into(d, g, x.data<float>(), dy.data<float>(), df.data<float>());",
             "conv2d_backprop_filter_into(d, [&] { ConvGeom h = g; h.n -= h.n > 1; return h; }(), x.data<float>(), "
             "dy.data<float>(), df.data<float>());"),
            (REF, "acc[static_cast<size_t>(((kh * g.kw + kw) * g.c + ci) * g.oc + o)] += double(xp[xi + ci]) * d[o];",
             "if (n != g.n - 1) acc[static_cast<size_t>(((kh * g.kw + kw) * g.c + ci) * g.oc + o)] += "
             "double(xp[xi + ci]) * d[o];"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "InTopK ties to the lower index",
        "what": "InTopK as argmax == label, Keras' accuracy (CPU and reference)",
        "edits": [
            (f"{CPU}/math.cpp", "o[i] = finite && greater == 0 ? 1.0f : 0.0f;",
             "o[i] = finite && greater == 0 && std::find(row, row + k, target) == row + lb[i] ? 1.0f : 0.0f;"),
            (REF, "in_top = std::isfinite(row[j]) && !(row[j] > row[lb[i]]);",
             "in_top = std::isfinite(row[j]) && !(row[j] > row[lb[i]]) && !(j < lb[i] && row[j] == row[lb[i]]);"),
        ],
        "tests": KERNEL_TESTS,
    },
]


# Subjects other than kernels, each made to do nothing or the wrong thing.
MUTATIONS += [
    {
        "name": "AXON_CPU_ISA ignored",
        "what": "the CPU plugin never lowers its SIMD level, so the kernels[base] and kernels[avx2] runs repeat the first",
        "edits": [(f"{CPU}/simd.hpp", 'const char* cap = std::getenv("AXON_CPU_ISA");', "const char* cap = nullptr;")],
        "tests": r"^(kernels|goldens\.cpu)\[",
    },
    {
        "name": "training accuracy counts ties",
        "what": "the metric looks for a misspelt op, so it always takes InTopK",
        "edits": [("core/src/nn/metrics.cpp", 'has_kernel("_SparseCategoricalAccuracy", logits.dtype())',
                   'has_kernel("_SparseCategoricalAcuracy", logits.dtype())')],
        "tests": r"^train\.model",
    },
    {
        "name": "OPENBLAS_CORETYPE not set",
        "what": "the CPU plugin says it picked a core type but does not set it",
        "edits": [(f"{CPU}/openblas.hpp", "    setenv(\"OPENBLAS_CORETYPE\", core, 0);  // read by OpenBLAS's constructor, below\n", "")],
        "tests": r"^contract\.apps\.openblas",
    },
    {
        "name": "plugin search step 4 dropped",
        "what": "the loader no longer looks in <program>/../lib/axon/plugins",
        "edits": [("core/src/loader.cpp",
                   '    if (!ec) dirs.push_back((exe.parent_path() / ".." / "lib" / "axon" / "plugins").string());\n', "")],
        "tests": r"^contract\.apps\.search_order",
    },
    {
        "name": ".gz preferred over raw",
        "what": "the data reader takes a file's .gz when the raw file is there too",
        "edits": [("core/src/data/mnist.cpp", 'for (const std::string& candidate : {name, name + ".gz"})',
                   'for (const std::string& candidate : {name + ".gz", name})')],
        "tests": r"^(contract\.files|train\.data)",
    },
    {
        "name": "--profile prints no rows",
        "what": "axon-train --profile prints the table's header only",
        "edits": [("apps/axon-train/run.cpp", "      for (const OpTime& t : op_times())\n        std::printf(",
                   "      for (const OpTime& t : std::vector<OpTime>{})\n        std::printf(")],
        "tests": r"^contract\.apps\.profile",
    },
    {
        "name": "CUDA_VISIBLE_DEVICES not named",
        "what": "with no device after CUDA_VISIBLE_DEVICES, the reason leaves the variable out",
        "edits": [("plugins/cuda/src/probe.cpp", 'r.reason = "cuInit failed: " + d.error_text(e) + visibility_note();',
                   'r.reason = "cuInit failed: " + d.error_text(e);')],
        "tests": r"^cuda_fake_driver",
    },
]


def sh(cmd, cwd, log=None, timeout=None):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if log is not None:
        with open(log, "a") as f:
            f.write(f"$ {' '.join(cmd)}\n{p.stdout}{p.stderr}\n")
    return p


def kernel_functions(path, table_call):
    """Names of the kernel functions a file registers (k<fn> / cpu_kernel<fn>)."""
    text = open(path).read()
    return sorted(set(re.findall(table_call, text)))


def noop_mutations(tree):
    """One mutation per kernel of the CPU and reference plugins: it returns at once."""
    out = []
    for rel, call, sig in [(REF, r"k<(\w+)>", r"void {}\(Device&[^)]*\) \{{\n"),
                           (f"{CPU}/math.cpp", r"k<(\w+)>", r"void {}\(CpuDevice&[^)]*\) \{{\n"),
                           (f"{CPU}/conv.cpp", r"cpu_kernel<(\w+)>", r"void {}\(CpuDevice&[^)]*\) \{{\n"),
                           (f"{CPU}/pool.cpp", r"cpu_kernel<(\w+)>", r"void {}\(CpuDevice&[^)]*\) \{{\n"),
                           (f"{CPU}/conv_pool.cpp", r"cpu_kernel<(\w+)>", r"void {}\(CpuDevice&[^)]*\) \{{\n")]:
        path = os.path.join(tree, rel)
        if not os.path.exists(path):
            continue
        text = open(path).read()
        for fn in kernel_functions(path, call):
            m = re.search(sig.format(fn), text)
            if not m:
                continue
            head = m.group(0)
            plugin = "reference" if rel == REF else "cpu"
            out.append({"name": f"no-op {plugin} {fn}", "what": f"the {plugin} plugin's {fn} returns at once",
                        "edits": [(rel, head, head + "  return;  // mutation: a no-op kernel\n")],
                        # the kernel tests once (all of them, baseline SIMD), the goldens, the model tests
                        "tests": r"^(kernels\[base\]|goldens\.(cpu|reference)$|goldens\.cnn_adam$|train\.model)"})
    return out


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", default="/tmp/axon-mutate")
    p.add_argument("--rev", default="HEAD")
    p.add_argument("--only", nargs="*")
    p.add_argument("--noop-sweep", action="store_true")
    p.add_argument("--table")
    p.add_argument("-j", type=int, default=os.cpu_count() or 2)
    a = p.parse_args()

    tree = os.path.join(a.work, "tree")
    build = os.path.join(tree, "build-mutate")
    log = os.path.join(a.work, "mutate.log")
    os.makedirs(a.work, exist_ok=True)
    rev = sh(["git", "rev-parse", a.rev], root).stdout.strip()
    if not os.path.isdir(tree):
        r = sh(["git", "worktree", "add", "--detach", tree, rev], root, log)
        if r.returncode != 0:
            sys.exit(f"run.py: cannot make the worktree {tree}: {r.stderr}")
    else:
        sh(["git", "checkout", "--force", "--detach", rev], tree, log)
    if os.path.realpath(tree) == os.path.realpath(root):
        sys.exit("run.py: the copy must not be the checkout itself")
    if not os.path.isdir(build):
        sh(["cmake", "--preset", "default", "-B", build], tree, log)
    print(f"tree {tree} at {rev[:12]}; building (log: {log})", flush=True)
    if sh(["cmake", "--build", build, f"-j{a.j}"], tree, log).returncode != 0:
        sys.exit(f"run.py: the unmutated tree does not build; see {log}")

    mutations = [m for m in MUTATIONS if not a.only or m["name"] in a.only]
    if a.noop_sweep:
        mutations += noop_mutations(tree)
    rows, missed = [], 0
    for m in mutations:
        t0 = time.time()
        originals, stale = {}, None
        for rel, old, new in m["edits"]:
            path = os.path.join(tree, rel)
            current = open(path).read()
            originals.setdefault(rel, current)
            if current.count(old) != 1:
                stale = f"{rel}: the text to change occurs {current.count(old)} times"
                break
            with open(path, "w") as f:
                f.write(current.replace(old, new))
        caught, verdict = [], ""
        if stale:
            verdict = f"stale ({stale})"
        elif sh(["cmake", "--build", build, f"-j{a.j}"], tree, log).returncode != 0:
            verdict = "caught by the build"
            caught = ["(build)"]
        else:
            r = sh(["ctest", "--test-dir", build, "-R", m["tests"], f"-j{a.j}", "--timeout", "300"], tree, log)
            caught = sorted(set(re.findall(r"^\s*\d+ - (\S+(?: \S+)*?) \((?:Failed|Timeout|SEGFAULT|Subprocess aborted|Exception|Child aborted)\)",
                                           r.stdout, re.M)))
            verdict = "caught" if caught else "MISSED"
        for rel, text in originals.items():
            with open(os.path.join(tree, rel), "w") as f:
                f.write(text)
        if verdict == "MISSED" or verdict.startswith("stale"):
            missed += 1
        rows.append((m["name"], m["what"], caught, verdict))
        print(f"{verdict:>8}  {m['name']}: {', '.join(caught) or '-'} ({time.time() - t0:.0f} s)", flush=True)
    sh(["cmake", "--build", build, f"-j{a.j}"], tree, log)  # leave the copy built unmutated

    lines = [f"Mutation run of {rev[:12]}, {time.strftime('%Y-%m-%d')}: {len(rows) - missed} of {len(rows)} caught.",
             "", "| mutation | what | caught by |", "| --- | --- | --- |"]
    for name, what, caught, verdict in rows:
        shown = ", ".join(f"`{c}`" for c in caught[:6]) + (f" and {len(caught) - 6} more" if len(caught) > 6 else "")
        lines.append(f"| {name} | {what} | {shown if caught else '**' + verdict + '**'} |")
    table = "\n".join(lines) + "\n"
    print("\n" + table)
    if a.table:
        with open(a.table, "w") as f:
            f.write(table)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
