#!/usr/bin/env python3
"""The outputs the docs show are what the programs print.

A block of shown output is a fenced code block preceded by a marker line:

    <!-- shown output: stderr, exit 2, toy plugin noconv -->
    ```
    $ axon-train --device toy:0 --strict-placement -q
    axon-train: error: --strict-placement: 3 kernels ...
    ```

Each `$ COMMAND` line in the block is run (through sh, with the build's
bin folder first in PATH and `build/bin/` meaning it, in an empty folder,
without AXON_*, OPENBLAS_*, CUDA_* or MPI launcher variables); the lines
after it, up to the next `$` line, must be what it printed on the stream the
marker names, masked as follows and nothing else:

  - figures: a number standing alone (not part of a name such as conv2d_1 or
    /device:CPU:0), with a unit of time or a speedup's x, matches any number,
    and the spaces that align it in a column any run of spaces;
  - the CPU's model, with its thread count, `Intel(R) Xeon(R) Processor (2
    threads)` in the docs (the development machine), matches this machine's;
  - the build folder is `build`;
  - a line `...` matches any lines (none included), and `...` within a line
    any text.

Marker words, separated by commas: `stdout` (the default) or `stderr`;
`exit N` (default 0); `toy plugin VARIANT` (tests/errors' TOY plugin of that
variant through AXON_PLUGIN_PATH); `test plugin FOLDER` (a folder of
tests/core's plugins); `needs cuda without driver` (the block shows the
CUDA plugin loaded on a machine without a driver: skipped elsewhere);
`needs no gpu` (the block shows a run or listing without a GPU);
`long` (runs only with --long, and only those run then).

With --keep-output DIR (and --long), the one long command's stdout, once it
matched, is left in DIR/stdout.txt and its peak memory in DIR/peak_mib.txt (the
largest process the test ran; no file when every block was skipped): the
5-epoch default run is trained once for the docs, the trainer's accuracy test
and the strategies' baseline (the ctest fixture default_run).

Usage:
  shown_output_test.py DOC... --bin DIR --toy-plugins DIR --test-plugins DIR [--long [--keep-output DIR]]
  shown_output_test.py --log-sources DOC SOURCE_ROOT
Exit 0 when every block matches, 1 on a mismatch (with a diff), 77 when every
block was skipped."""
import argparse
import difflib
import json
import os
import re
import resource
import subprocess
import sys
import tempfile

DOC_CPU_MODEL = "Intel(R) Xeon(R) Processor"  # the CPU of the machine the docs were written on
CPU_MASK = "<the CPU model (N threads)>"
MARKER = re.compile(r"^<!-- shown output: (.*) -->$")
FENCE = re.compile(r"^(`{3,})[\w+-]*$")
NUMBER = r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?"
# A number standing alone in the docs' text: not after a letter, digit, '_', '.' or ':' (conv2d_1,
# /device:CPU:0, v4.1.4), and followed by nothing but a unit of time, a speedup's x, or no letter
# at all (28x28 stays as it is).
DOC_NUMBER = re.compile(r"(?<![\w.:])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?=(?:ms|us|s|x)?(?![\w.]))")


def fail(message):
    print("FAILED: " + message)
    sys.exit(1)


def log_sources(doc, root):
    """Every source of log lines in the code is in the doc's table, and every
    source the table names is in the code (or is a plugin's name)."""
    text = open(doc, encoding="utf-8").read()
    section = text[text.index("### Log lines"):]
    section = section[:section.index("\n## ")]
    documented = set(re.findall(r"^\| `([\w-]+)` \|", section, re.M))
    in_code = {}
    call = re.compile(r'log::(?:debug|info|warning|error)\(\s*"([^"]+)"')
    for folder in ("core", "apps", "mpi"):
        for base, _, files in os.walk(os.path.join(root, folder)):
            for name in files:
                if not name.endswith((".cpp", ".hpp")):
                    continue
                path = os.path.join(base, name)
                code = open(path, encoding="utf-8").read()
                tags = set(call.findall(code))
                tags |= set(re.findall(r'constexpr const char\* kTag = "([^"]+)"', code))
                tags |= set(re.findall(r'plugin_name \? plugin_name : "([^"]+)"', code))  # a plugin without a name
                for tag in tags:
                    in_code.setdefault(tag, os.path.relpath(path, root))
    if len(in_code) < 5:
        fail("found only %s as log sources in the code: the scan no longer sees the log calls" % sorted(in_code))
    missing = sorted(t for t in in_code if t not in documented)
    if missing:
        fail("log sources missing from %s's table: %s" % (doc, ", ".join("%s (%s)" % (t, in_code[t]) for t in missing)))
    stale = sorted(documented - set(in_code))
    if stale:
        fail("%s's table names log sources the code no longer has: %s" % (doc, ", ".join(stale)))
    print("ok: %s lists every log source: %s" % (doc, ", ".join(sorted(in_code))))


def blocks(doc):
    """(line number, marker words, block lines) of every shown-output block."""
    lines = open(doc, encoding="utf-8").read().split("\n")
    out = []
    for i, line in enumerate(lines):
        m = MARKER.match(line)
        if not m:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        f = FENCE.match(lines[j]) if j < len(lines) else None
        if not f:
            fail("%s:%d: the marker is not followed by a fenced code block" % (doc, i + 1))
        k = j + 1
        while k < len(lines) and lines[k].strip() != f.group(1):
            k += 1
        if k == len(lines):
            fail("%s:%d: the code block is never closed" % (doc, j + 1))
        words = [w.strip() for w in m.group(1).split(",")]
        for w in words:
            if not re.fullmatch(r"stdout|stderr|exit \d+|(toy|test) plugin [\w-]+|needs (cuda without driver|no gpu)"
                                r"|long", w):
                fail("%s:%d: unknown marker word %r" % (doc, i + 1, w))
        out.append((i + 1, words, lines[j + 1:k]))
    return out


def line_pattern(line):
    """A doc line as a regular expression: its figures any number (the spaces
    that align a column before one, any run of them), '...' any text."""
    out, pos = "", 0
    for m in re.finditer(r"\.\.\.|" + DOC_NUMBER.pattern, line):
        text = line[pos:m.start()]
        if m.group(0) == "...":
            out += re.escape(text) + ".*?"
        elif text.endswith(" "):
            out += re.escape(text.rstrip(" ")) + " +" + NUMBER
        else:
            out += re.escape(text) + NUMBER
        pos = m.end()
    return out + re.escape(line[pos:])


def block_pattern(lines):
    parts = []
    for line in lines:
        parts.append(r"(?:[^\n]*\n)*?" if line.strip() == "..." else line_pattern(line) + r"\n")
    return "".join(parts)


class Machine:
    def __init__(self, args):
        self.args = args
        self.bin = os.path.realpath(args.bin)
        self.build = os.path.dirname(self.bin)
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("AXON_", "OPENBLAS_", "CUDA_", "OMPI_", "PMIX_", "PMI_"))}
        self.env["PATH"] = self.bin + os.pathsep + self.env.get("PATH", "")
        listing = subprocess.run([os.path.join(self.bin, "axon-devices"), "--json"], env=self.env,
                                 capture_output=True, text=True, timeout=60)
        self.devices = json.loads(listing.stdout)
        cpu = [d for d in self.devices["devices"] if d["name"] == "/device:CPU:0"]
        self.cpu_model = re.sub(r" \(\d+ threads?\)$", "", cpu[0]["description"]) if cpu else None
        self.cache = {}
        self.raw_stdout = {}  # unmasked, by the cache's key

    def missing(self, words):
        """Why this machine cannot show the block, or None."""
        if "needs no gpu" in words and self.devices["num_gpus"] > 0:
            return "the block shows a machine without a GPU"
        if "needs cuda without driver" in words:
            cuda = [p for p in self.devices["plugins"] if p["name"] == "cuda"]
            if not cuda or cuda[0]["device_count"] != 0 or \
                    not cuda[0]["unavailable_reason"].startswith("CUDA driver not found"):
                return "the block shows the CUDA plugin without a driver, and this build or machine differs"
        return None

    def run(self, command, words):
        env = dict(self.env)
        for w in words:
            if w.startswith("toy plugin "):
                env["AXON_PLUGIN_PATH"] = os.path.join(os.path.realpath(self.args.toy_plugins), w.split()[-1])
            elif w.startswith("test plugin "):
                env["AXON_PLUGIN_PATH"] = os.path.join(os.path.realpath(self.args.test_plugins), w.split()[-1])
        key = (command.replace("build/bin/", ""), env.get("AXON_PLUGIN_PATH"))  # the same program either way
        if key not in self.cache:
            with tempfile.TemporaryDirectory(prefix="axon-shown-") as cwd:
                p = subprocess.run(["sh", "-c", command.replace("build/bin/", self.bin + "/")], env=env, cwd=cwd,
                                   capture_output=True, text=True, timeout=1200)
                self.cache[key] = (p.returncode, self.masked(p.stdout, cwd), self.masked(p.stderr, cwd))
                self.raw_stdout[key] = p.stdout
        return self.cache[key]

    def masked(self, text, cwd):
        text = text.replace(os.path.realpath(cwd) + "/", "").replace(self.build + "/", "build/")
        if self.cpu_model:
            text = re.sub(re.escape(self.cpu_model) + r" \(\d+ threads?\)", CPU_MASK, text)
        return text


def check_docs(args):
    if args.keep_output:
        if not args.long:
            fail("--keep-output keeps a long command's output: give --long too")
        for name in ("stdout.txt", "peak_mib.txt"):  # a stale run must not stand in for this one
            if os.path.exists(os.path.join(args.keep_output, name)):
                os.remove(os.path.join(args.keep_output, name))
    machine = Machine(args)
    ran = skipped = 0
    for doc in args.docs:
        found = blocks(doc)
        if not found:
            fail("%s has no shown-output block" % doc)
        r, s = check_doc(machine, doc, found, args.long)
        ran, skipped = ran + r, skipped + s
    docs = " and ".join(args.docs)
    if ran == 0 and skipped == 0:
        fail("%s have no %sblock" % (docs, "long " if args.long else ""))
    if ran == 0:
        print("SKIP: every block of %s needs what this machine lacks" % docs)
        sys.exit(77)
    print("%s: %d commands' output as shown%s" % (docs, ran, ", %d blocks skipped" % skipped if skipped else ""))
    if args.keep_output:
        keep_output(machine, args.keep_output)


def keep_output(machine, folder):
    """Leaves the one command's stdout and peak memory for the tests that read them."""
    if len(machine.cache) != 1:
        fail("--keep-output: the long blocks ran %d different commands, not one" % len(machine.cache))
    key = next(iter(machine.cache))
    os.makedirs(folder, exist_ok=True)
    # ru_maxrss of the children waited for: KiB on Linux; this test's largest child is the training.
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    for name, text in (("stdout.txt", machine.raw_stdout[key]), ("peak_mib.txt", "%.1f\n" % peak_mib)):
        with open(os.path.join(folder, name + ".part"), "w") as f:
            f.write(text)
        os.replace(os.path.join(folder, name + ".part"), os.path.join(folder, name))
    print("kept `%s`'s stdout and peak memory (%.1f MiB) in %s" % (key[0], peak_mib, folder))


def check_doc(machine, doc, found, long_runs):
    """Runs the blocks of one doc: (commands checked, blocks skipped)."""
    ran = skipped = 0
    for where, words, lines in found:
        label = "%s:%d" % (os.path.basename(doc), where)
        if ("long" in words) != long_runs:
            continue
        why = machine.missing(words)
        if why:
            print("SKIP %s: %s" % (label, why))
            skipped += 1
            continue
        stream = "stderr" if "stderr" in words else "stdout"
        code = next((int(w.split()[1]) for w in words if w.startswith("exit ")), 0)
        if not lines or not lines[0].startswith("$ "):
            fail("%s: the block does not start with the '$ COMMAND' it shows" % label)
        i = 0
        while i < len(lines):
            command = lines[i][2:]
            j = i + 1
            while j < len(lines) and not lines[j].startswith("$ "):
                j += 1
            shown = [re.sub(re.escape(DOC_CPU_MODEL) + r" \(\d+ threads?\)", CPU_MASK, l) for l in lines[i + 1:j]]
            rc, out, err = machine.run(command, words)
            actual = out if stream == "stdout" else err
            if rc != code:
                fail("%s: `%s` exited %d, the docs say %d\n--- stdout ---\n%s--- stderr ---\n%s" %
                     (label, command, rc, code, out, err))
            if re.fullmatch(block_pattern(shown), actual) is None:
                diff = "".join(difflib.unified_diff([l + "\n" for l in shown], actual.splitlines(True),
                                                    "shown at " + label, "printed now"))
                fail("%s: `%s` printed on %s what the docs do not show (figures, the CPU model and the build folder "
                     "masked; '...' stands for anything):\n%s" % (label, command, stream, diff))
            print("ok: %s: `%s`, %s as shown" % (label, command, stream))
            ran += 1
            i = j
    return ran, skipped


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--log-sources":
        log_sources(sys.argv[2], sys.argv[3])
        return
    a = argparse.ArgumentParser()
    a.add_argument("docs", nargs="+")
    a.add_argument("--bin", required=True)
    a.add_argument("--toy-plugins", required=True)
    a.add_argument("--test-plugins", required=True)
    a.add_argument("--long", action="store_true")
    a.add_argument("--keep-output")
    check_docs(a.parse_args())


if __name__ == "__main__":
    main()
