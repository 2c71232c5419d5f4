#!/usr/bin/env python3
"""Plants plausible bugs in a copy of the tree, one at a time, and says which
tests catch each. Never touches the checkout it is run from: the copy is a
git worktree (of HEAD, or --rev) under --work, built once in its own build
folder and rebuilt incrementally for each mutation.

    python3 tools/mutate/run.py [--work /tmp/axon-mutate] [--rev HEAD] [--only NAME ...]
                                [--noop-sweep] [--check] [--targets T ...] [--baseline]
                                [--table FILE] [-j N]

Each mutation edits exact text: each `old` must occur exactly once in the
file at --rev. Every selected mutation is checked against the tree before
anything is built, and one whose text is not there (a file gone, the code
rewritten) stops the run with its name: no mutation is ever skipped. Then
each is planted, rebuilt, its tests run with ctest, and reverted. A
mutation is caught when at least one of its tests fails. The table
(markdown, as in docs/testing.md) lists every mutation with the tests that
caught it. --noop-sweep adds one mutation per kernel the CPU and reference
plugins register (add<OpId::X, fn>): fn returns at once, leaving its outputs
as they were; a registered kernel whose definition is not found stops the
run too. --check only checks the text of the selected mutations at --rev
(no worktree, no build). --targets builds only the targets named (and what
they need) instead of everything: faster, for mutations whose tests need
nothing else. --baseline (implied by --targets) first runs the selected
mutations' tests on the unmutated copy and stops if any fails, since a test
failing anyway would be counted as a catch. Exit 0 when every mutation is caught, 1 otherwise.
Slow (minutes per mutation on two cores): not part of CI.
"""
import argparse
import os
import re
import subprocess
import sys
import time

CPU = "plugins/cpu"
REF_DIR = "sdk/examples/reference-plugin"
REF = f"{REF_DIR}/kernels.cpp"
REF_LAYERS = f"{REF_DIR}/kernels_layers.cpp"
REF_ELEMENTWISE = f"{REF_DIR}/kernels_elementwise.cpp"
# TensorFlow's window geometry, written once for the host's validation and
# every plugin (CPU, reference, CUDA): a bug planted here moves them all.
GEOMETRY = "sdk/include/axon/op_geometry.hpp"

# The tests a mutation of the kernels may trip: the kernel tests (each ISA),
# the goldens, the layer gradchecks and model tests, the contract tests.
KERNEL_TESTS = r"^(kernels|goldens|train\.gradcheck|train\.model|cuda_kernels_driver_on_cpu)"
# The layer kernels (ABI 1.4): their CPU-vs-reference tests and goldens.
LAYER_TESTS = r"^(kernels|goldens\.(cpu|reference))"
# ... and, for the shared geometry, the op table's hand-worked window sizes
# and shapes (tests/core/test_op_table.cpp).
GEOMETRY_TESTS = r"^(kernels|goldens|train\.gradcheck|train\.model|cuda_kernels_driver_on_cpu|core\.unit\.)"

MUTATIONS = [
    {
        "name": "a gradient read twice keeps one path",
        "what": "the replica's backward keeps the first gradient of an output read by several layers and drops the "
                "others (Add's shortcut, Concatenate's branches)",
        "edits": [("core/src/nn/replica.cpp", "  if (!sum.defined()) {\n    sum = g;\n    return;\n  }",
                   "  if (true) {\n    if (!sum.defined()) sum = g;\n    return;\n  }")],
        "tests": r"^(train\.model|goldens\.keras_models)",
    },
    {
        "name": "moving statistics move the other way",
        "what": "BatchNormalization moves its moving statistics by momentum towards the batch and keeps 1 - momentum "
                "of the old (Keras' factors swapped)",
        "edits": [("core/src/nn/layers/batch_normalization.cpp",
                   "  const auto m = static_cast<float>(momentum_), w = static_cast<float>(1.0 - momentum_);",
                   "  const auto w = static_cast<float>(momentum_), m = static_cast<float>(1.0 - momentum_);")],
        "tests": r"^goldens\.keras_models",
    },
    {
        "name": "lowered fused op without its relu",
        "what": "dispatch runs _FusedConv2D / _FusedMatMul as their parts without the relu where a device lacks them",
        "edits": [("core/src/lowering.cpp", "      if (activation == AXON_ACTIVATION_RELU) ops::relu(z, y, layer);",
                   "      if (activation == AXON_ACTIVATION_RELU) ops::identity(z, y, layer);")],
        "tests": r"^(core\.package\.minimal_plugin|errors\.|plugin_check)",
    },
    {
        "name": "bucket ready before its gradients",
        "what": "a replica reports a plan step's gradients written before that step's backward runs, so the overlapped "
                "all-reduce may sum a bucket while backward still writes it",
        "edits": [("core/src/nn/replica.cpp",
                   "    dx.assign(n_in, Tensor());\n",
                   "    if (progress_ != nullptr) progress_->backward_ran(progress_index_, k);\n"
                   "    dx.assign(n_in, Tensor());\n"),
                  ("core/src/nn/replica.cpp",
                   "      if (need_[i]) accumulate(step.inputs[i], dx[i]);\n"
                   "    if (progress_ != nullptr) progress_->backward_ran(progress_index_, k);\n",
                   "      if (need_[i]) accumulate(step.inputs[i], dx[i]);\n")],
        "tests": r"^distribute\.",
    },
    {
        "name": "ABI 1 tensors without their shape",
        "what": "the ABI 1 translation layer copies a tensor's data pointer, dtype and rank into the old layout but "
                "not its dims",
        "edits": [("core/src/abi1_shim.cpp", "      std::memcpy(t[i].dims, s.dims, sizeof t[i].dims);\n", "")],
        "tests": r"^(core\.runtime\.|plugin_check\.passes\.abi_1_3)",
    },
    {
        "name": "bad input's event not checked",
        "what": "axon-plugin-check's bad-input probe never records an event after the call, so a device whose events "
                "lose the call's error passes",
        "edits": [("apps/axon-plugin-check/probes.cpp", "  if (s == AXON_OK && api.event_create != nullptr) {",
                   "  if (false) {")],
        "tests": r"^plugin_check\.",
    },
    {
        "name": "queued all-reduce sums nothing",
        "what": "the CPU plugin's all_reduce_async records its events and returns without summing",
        "edits": [("plugins/cpu/plugin.cpp", "  return all_reduce(ctx, n, ctxs, buffers, count, dtype, op, err);\n}",
                   "  (void)ctx, (void)n, (void)ctxs, (void)buffers, (void)count, (void)dtype, (void)op;\n"
                   "  return AXON_OK;\n}")],
        "tests": r"^distribute\.",
    },
    {
        "name": "declined call run anyway",
        "what": "dispatch ignores a device's supports(): a call it declines runs there all the same",
        "edits": [("core/src/dispatch.cpp", "  if (p.device != nullptr && !p.device->supports(v.kc)) {",
                   "  if (false && p.device != nullptr && !p.device->supports(v.kc)) {")],
        "tests": r"^core\.runtime\.",
    },
    {
        "name": "decline at launch is an error",
        "what": "a kernel's AXON_UNIMPLEMENTED fails the op instead of placing it on the CPU",
        "edits": [("core/src/device.cpp", "    if (st == AXON_UNIMPLEMENTED) throw KernelDeclined(what);\n", "")],
        "tests": r"^core\.runtime\.",
    },
    {
        "name": "synchronized statistics not reduced",
        "what": "synchronized BatchNormalization skips the all-reduce of its statistics: each replica normalises its own part",
        "edits": [("core/src/nn/layers/batch_normalization.cpp",
                   "  step_context()->all_reduce(sums, name() + \" statistics\");",
                   "  (void)sums;")],
        "tests": r"^distribute\.",
    },
    {
        "name": "SAME split reversed",
        "what": "SAME padding puts the larger half before (window_axis: the host's validation, CPU, reference and CUDA at once)",
        "edits": [
            (GEOMETRY, "w.pad_before = w.pad_total / 2;", "w.pad_before = (w.pad_total + 1) / 2;"),
        ],
        "tests": GEOMETRY_TESTS,
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
            (f"{CPU}/pool.cpp",
             "const V v = simd::load<V>(image + tap(ih, iw) + c0);\n            const auto more = v > best;",
             "const V v = simd::load<V>(image + tap(ih, iw) + c0);\n            const auto more = v >= best;"),
            (REF, "if (best < 0 || x[i] > x[best]) {", "if (best < 0 || x[i] >= x[best]) {"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "separable MaxPool past a NaN row",
        "what": "the CPU's separable MaxPool (windows overlapping down the rows) keeps its result where a row's maximum "
                "is NaN instead of handing the rows to the scan",
        "edits": [(f"{CPU}/pool.cpp", "  *exact = !nan_row;", "  *exact = true;")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "separable argmax without column offsets",
        "what": "the CPU's 3x3 stride-1 MaxPoolGrad names each window's winner by its row alone (the interior "
                "columns' offsets 0)",
        "edits": [(f"{CPU}/pool.cpp", "src[j] = in + (lo - p.pad_w + j) * ch, add[j] = j;",
                   "src[j] = in + (lo - p.pad_w + j) * ch, add[j] = 0;")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "sliding MaxPoolGrad stores every row's sums",
        "what": "the CPU's 3x3 stride-1 MaxPoolGrad stores each output row's sums into dx instead of adding all but "
                "the first",
        "edits": [(f"{CPU}/pool.cpp", "const bool first[3] = {oh == 0, oh == 0, true};",
                   "const bool first[3] = {true, true, true};")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "one-channel convolution sums taps column by column",
        "what": "the CPU's convolution of a one-channel image adds its taps' products in (kw, kh) order, not the "
                "gathered kernels' (kh, kw)",
        "edits": [(f"{CPU}/conv_one_channel.cpp",
                   """  for (int64_t kh = 0; kh < kh_n; ++kh) {
    const float* row = rows[kh] + ow0;
    for (int64_t kw = 0; kw < kw_n; ++kw)
      for (int i = 0; i < R; ++i) acc[i] = fma_splat(acc[i], row + kw + i, wt[kh * kw_n + kw]);
  }""",
                   """  for (int64_t kw = 0; kw < kw_n; ++kw)
    for (int64_t kh = 0; kh < kh_n; ++kh) {
      const float* row = rows[kh] + ow0;
      for (int i = 0; i < R; ++i) acc[i] = fma_splat(acc[i], row + kw + i, wt[kh * kw_n + kw]);
    }""")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "one-channel forward drops a row's last pixel",
        "what": "the CPU's convolution of a one-channel image leaves the last output pixel of each row past its blocks "
                "of 8 unwritten",
        "edits": [(f"{CPU}/conv_one_channel.cpp",
                   "      for (; ow < g.ow; ++ow) pixels<F, 1, KH, KW>(g, rows, wt, ow, c0, ep, out + ow * g.oc);",
                   "      for (; ow + 1 < g.ow; ++ow) pixels<F, 1, KH, KW>(g, rows, wt, ow, c0, ep, out + ow * g.oc);")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "four-column transposed product stored unpermuted",
        "what": "the CPU filter gradient into 4 channels stores its sums' lanes (o * L + p) as out's (p * N + o)",
        "edits": [
            (f"{CPU}/small_gemm.cpp", "constexpr auto to_out = [](size_t m) { return (m % N) * L + m / N; };",
             "constexpr auto to_out = [](size_t m) { return m; };"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "short-K MatMul reads B untransposed",
        "what": "the CPU MatMul with K < 32 and transpose_b hands B [n, k] to the register-blocked kernel as [k, n]",
        "edits": [
            (f"{CPU}/math.cpp", "const float* b_kn = !small_k ? nullptr : tb ? transposed(d, bp, n, k) : bp;",
             "const float* b_kn = !small_k ? nullptr : bp;"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "MatMul column blocks share the first block's bias",
        "what": "the CPU MatMul split in blocks of columns (a wide output) adds bias[0..] to every block, not the "
                "block's own columns' bias",
        "edits": [(f"{CPU}/math.cpp", "    if (part.bias != nullptr) part.bias += i0;\n", "")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "W^T transposed a block short",
        "what": "the CPU's transposed() (W^T for the register-blocked products) leaves the last row of each block of 16 "
                "rows of W out",
        "edits": [(f"{CPU}/conv.cpp", "      const int64_t e = std::min(p1, b + kRows);",
                   "      const int64_t e = std::min(p1, b + kRows - 1);")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "AvgPoolGrad copies a pixel's values short",
        "what": "the CPU AvgPoolGrad copies a pixel covered by the same windows as the one before it, or a row, all "
                "but its last float",
        "edits": [(f"{CPU}/pool.cpp", "    for (; i < floats; ++i) to[i] = from[i];",
                   "    for (; i + 1 < floats; ++i) to[i] = from[i];")],
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
            (f"{CPU}/math.cpp", "sgemm(ta, tb, i1 - i0, n, k, a0, ta ? m : k, bp, tb ? k : n,",
             "sgemm(ta, false, i1 - i0, n, k, a0, ta ? m : k, bp, n,"),
            (f"{CPU}/math.cpp",
             "const float* b0 = tb ? bp + i0 * k : bp + i0;\n    sgemm(ta, tb, m, i1 - i0, k, ap, ta ? m : k, b0, tb ? k : n,",
             "const float* b0 = bp + i0;\n    sgemm(ta, false, m, i1 - i0, k, ap, ta ? m : k, b0, n,"),
            (REF, "(tb ? bp[j * k + p] : bp[p * n + j])", "(tb ? bp[p * n + j] : bp[p * n + j])"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "stride off by one",
        "what": "VALID output size (in - k + 1) / stride + 1 (window_axis: the host's validation, CPU, reference and CUDA at once)",
        "edits": [
            (GEOMETRY, "w.out = in >= effective ? (in - effective) / stride + 1 : 0;",
             "w.out = in >= effective ? (in - effective + 1) / stride + 1 : 0;"),
        ],
        "tests": GEOMETRY_TESTS,
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
             "conv2d_backprop_filter_into(d, [&] { ConvGeometry h = g; h.n -= h.n > 1; return h; }(), x.data<float>(), "
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
            (f"{CPU}/math.cpp", "o[i] = finite && greater < top ? 1.0f : 0.0f;",
             "o[i] = finite && greater < top && std::find(row, row + k, target) == row + lb[i] ? 1.0f : 0.0f;"),
            (REF, "      if (row[j] > row[lb[i]]) ++greater;",
             "      if (row[j] > row[lb[i]] || (j < lb[i] && row[j] == row[lb[i]])) ++greater;"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "usage errors keep line breaks",
        "what": "a UsageError keeps its message as given, so a refusal quoting a file's line break spans lines",
        "edits": [("core/src/error.cpp",
                   "UsageError::UsageError(const std::string& message) : std::runtime_error(parse::one_line(message)) {}",
                   "UsageError::UsageError(const std::string& message) : std::runtime_error(message) {}")],
        "tests": r"^(reliability\.unit\.a UsageError|fuzz\.keras_file)",
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
        "what": "the metric calls InTopK instead of Keras' accuracy, so a tie for the largest logit counts as correct",
        "edits": [("core/src/nn/metrics.cpp", "    ops::sparse_categorical_accuracy(logits, labels, s.per_sample, \"metrics\");",
                   "    ops::in_top_k(logits, labels, s.per_sample, \"metrics\");")],
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
        "edits": [("apps/axon-train/run.cpp", "    for (const OpTime& t : op_times())\n      std::printf(",
                   "    for (const OpTime& t : std::vector<OpTime>{})\n      std::printf(")],
        "tests": r"^contract\.apps\.profile",
    },
    {
        "name": "CUDA_VISIBLE_DEVICES not named",
        "what": "with no device after CUDA_VISIBLE_DEVICES, the reason leaves the variable out",
        "edits": [("plugins/cuda/src/probe.cpp", 'r.reason = "cuInit failed: " + d.error_text(e) + visibility_note();',
                   'r.reason = "cuInit failed: " + d.error_text(e);')],
        "tests": r"^cuda_fake_driver",
    },
    {
        "name": "cuDNN tensor cores with TF32 off",
        "what": "the CUDA plugin's math policy lets a cuDNN engine noted TENSOR_CORE (TF32 for float32) run while "
                "TF32 is off",
        "edits": [("plugins/cuda/kernels/math_policy.hpp",
                   "    if (n == CUDNN_NUMERICAL_NOTE_TENSOR_CORE && !p.allow_tf32) return false;",
                   "    if (n == CUDNN_NUMERICAL_NOTE_TENSOR_CORE && p.allow_tf32 && !p.allow_tf32) return false;")],
        "tests": r"^cuda_(math_policy|failure_paths_cudnn)",
    },
    {
        "name": "cuDNN data gradient bound the wrong way round",
        "what": "the CUDA plugin's input gradient binds dy to the plan's image and dx to its output side",
        "edits": [("plugins/cuda/kernels/conv.cpp",
                   "  execute(d, p, kBackwardData, g, c.op(), out, w.get<float>(), dyin);",
                   "  execute(d, p, kBackwardData, g, c.op(), dyin, w.get<float>(), out);")],
        "tests": r"^cuda_failure_paths_cudnn",
    },
    {
        "name": "cuBLASLt in TF32 with TF32 off",
        "what": "the CUDA plugin's MatMul asks cuBLASLt for TF32 tensor-core compute whatever the setting",
        "edits": [("plugins/cuda/kernels/math_policy.hpp",
                   "  return p.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;",
                   "  return p.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F_FAST_TF32;")],
        "tests": r"^cuda_math_policy",
    },
    {
        "name": "pooling's 32-bit shape swaps its output sides",
        "what": "the CUDA pooling kernels' 32-bit index shape takes the output's width for its height and back",
        "edits": [("plugins/cuda/kernels/pool_math.hpp", "i(p.kh), i(p.kw), i(p.oh), i(p.ow),",
                   "i(p.kh), i(p.kw), i(p.ow), i(p.oh),")],
        "tests": r"^cuda_pool_math",
    },
]


# The host's side of the op table and of a training run: validation,
# dispatch, the placement recorder, check-numerics, synchronisation.
MUTATIONS += [
    # The SDK's host memory (host_blocks.hpp, HostMemoryDevice).
    {
        "name": "host blocks without huge pages",
        "what": "allocate_host_block (host_blocks.hpp) maps a megabyte or more without asking for transparent huge pages",
        "edits": [("sdk/include/axon/host_blocks.hpp",
                   "    madvise(p, length, MADV_HUGEPAGE);",
                   "    (void)length;")],
        "tests": r"^sdk\.host_blocks\.",
    },
    {
        "name": "host memory device off host blocks",
        "what": "HostMemoryDevice allocates every block from aligned_alloc and frees it with free, as before huge pages",
        "edits": [("sdk/include/axon/host_memory_device.hpp",
                   "    void* p = HostArena::serves(bytes) ? arena_.allocate(bytes) : allocate_host_block(bytes, kAlign);",
                   "    void* p = std::aligned_alloc(kAlign, bytes == 0 ? kAlign : (bytes + kAlign - 1) / kAlign * kAlign);"),
                  ("sdk/include/axon/host_memory_device.hpp",
                   """    if (HostArena::serves(it->second))
      arena_.free(p, it->second);
    else
      free_host_block(p, it->second, kAlign);""",
                   "    std::free(p);")],
        "tests": r"^sdk\.",
    },
    # Medium blocks packed into huge-page chunks (host_arena.hpp).
    {
        "name": "host memory device off the arena",
        "what": "HostMemoryDevice gives medium blocks (64 KiB to 1 MiB) from the C allocator, on 4 KiB pages, as before the arena",
        "edits": [("sdk/include/axon/host_memory_device.hpp",
                   "    void* p = HostArena::serves(bytes) ? arena_.allocate(bytes) : allocate_host_block(bytes, kAlign);",
                   "    void* p = false ? arena_.allocate(bytes) : allocate_host_block(bytes, kAlign);"),
                  ("sdk/include/axon/host_memory_device.hpp",
                   "    if (HostArena::serves(it->second))\n      arena_.free",
                   "    if (false)\n      arena_.free")],
        "tests": r"^sdk\.",
    },
    {
        "name": "arena never merges a freed range with the one after",
        "what": "HostArena::free keeps a freed block's range apart from the free range that follows it",
        "edits": [("sdk/include/axon/host_arena.hpp",
                   "    if (next != chunk.free.end() && offset + length == next->first) {",
                   "    if (false) {")],
        "tests": r"^sdk\.",
    },
    {
        "name": "arena keeps every empty chunk",
        "what": "HostArena never unmaps a chunk left empty, however many other empty chunks it holds",
        "edits": [("sdk/include/axon/host_arena.hpp",
                   "    if (it->second.used != 0) return;",
                   "    return;")],
        "tests": r"^sdk\.",
    },
    {
        "name": "Conv2D output shape unchecked",
        "what": "the host's validator (op_validate.hpp) checks Conv2D's input and filter but not y's shape",
        "edits": [("sdk/include/axon/op_validate.hpp",
                   'return v.conv(a, in[0], "x", in[1], "filter", &g) && v.shape_is(out[0], "y", {g.n, g.oh, g.ow, g.oc});',
                   'return v.conv(a, in[0], "x", in[1], "filter", &g);')],
        "tests": r"^core\.(unit|runtime)\.",
    },
    {
        "name": "in-place inputs not copied back",
        "what": "dispatch reads in_place_inputs as 0: ApplyAdam run on a fallback device leaves var, m and v as they were",
        "edits": [("core/src/dispatch.cpp",
                   "    for (int i = 0; i < schema.in_place_inputs && i < static_cast<int>(n_in); ++i)\n"
                   "      if (staged_in[i].defined()) {",
                   "    for (int i = 0; i < 0 && i < static_cast<int>(n_in); ++i)\n"
                   "      if (staged_in[i].defined()) {")],
        "tests": r"^core\.runtime\.",
    },
    {
        "name": "fused op listed as missing",
        "what": "the placement recorder lists a fused op that fell back as a missing kernel itself, not the parts it lacks",
        "edits": [("core/src/placement_plan.cpp", "if (s == nullptr || !op_is_optional(*s)) {",
                   "if (s == nullptr || !op_is_optional(*s) || true) {")],
        "tests": r"^(core\.runtime\.|errors\.(dry_run|strict_placement))",
    },
    {
        "name": "parts_missing not listed",
        "what": "a fused op that fell back lists no parts_missing, so the kernels it lacks are not reported",
        "edits": [("core/src/dispatch.cpp", "      planned.parts_missing.emplace_back(name);\n", "      (void)name;\n")],
        "tests": r"^(core\.runtime\.|errors\.(dry_run|strict_placement))",
    },
    {
        "name": "check-numerics never throws",
        "what": "check-numerics reads every output and finds nothing: a NaN or Inf goes on",
        "edits": [("core/src/dispatch.cpp", "      if (!std::isfinite(host[i])) {", "      if (false && !std::isfinite(host[i])) {")],
        "tests": r"^(core\.runtime\.|errors\.check_numerics)",
    },
    {
        "name": "epoch ends unsynchronised",
        "what": "TerminateOnNaN synchronises no replica after an epoch's last step or at its end: a queued failure "
                "surfaces only when training is over",
        "edits": [("core/src/train/terminate_on_nan.cpp",
                   "  // Before validation queues more work on a device that may have failed.\n  synchronize_replicas(model_);\n",
                   "  // Before validation queues more work on a device that may have failed.\n"),
                  ("core/src/train/terminate_on_nan.cpp",
                   "void TerminateOnNaN::on_epoch_end(const nn::EpochLogs&) { synchronize_replicas(model_); }",
                   "void TerminateOnNaN::on_epoch_end(const nn::EpochLogs&) {}")],
        "tests": r"^errors\.(async|nan)",
    },
    {
        "name": "batch variance unbiased",
        "what": "FusedBatchNormV3 normalises with the variance times n / (n - 1) (CPU and reference)",
        "edits": [
            (f"{CPU}/batch_norm.cpp", "var[k] = std::max(sq[k] / double(rows) - m * m, 0.0);",
             "var[k] = std::max(sq[k] / double(rows) - m * m, 0.0) * double(rows) / double(rows > 1 ? rows - 1 : 1);"),
            (REF_LAYERS, "var[static_cast<size_t>(k)] = q / double(rows);",
             "var[static_cast<size_t>(k)] = q / double(rows > 1 ? rows - 1 : 1);"),
        ],
        "tests": LAYER_TESTS,
    },
    {
        "name": "batch norm relu lets negatives through",
        "what": "_FusedBatchNormEx writes y without the relu (CPU, its vector and scalar rows alike)",
        "edits": [
            (f"{CPU}/batch_norm.cpp", "if constexpr (Relu) return v > T{} ? v : T{};", "if constexpr (Relu) return v;"),
        ],
        "tests": LAYER_TESTS,
    },
    {
        "name": "batch norm relu gradient sums unmasked",
        "what": "_FusedBatchNormGradEx sums dy where relu's output is 0 too (CPU vector loop; dx's pass still masks)",
        "edits": [
            (f"{CPU}/batch_norm.cpp",
             "if constexpr (Masked) av = simd::load<F>(mask + i * ch + c0 + j * W) > F{} ? av : F{};",
             "if constexpr (Masked) av = simd::load<F>(mask + i * ch + c0 + j * W) > F{} ? av : av;"),
        ],
        "tests": LAYER_TESTS,
    },
    {
        "name": "reference batch norm relu gradient unmasked",
        "what": "the reference's _FusedBatchNormGradEx masks dy only where y < 0, which relu's output never is",
        "edits": [
            (REF_LAYERS, "if (!(y.data<float>()[i] > 0.0f)) masked[i] = 0.0f;", "if (y.data<float>()[i] < 0.0f) masked[i] = 0.0f;"),
        ],
        "tests": LAYER_TESTS,
    },
    {
        "name": "padded conv rows at the image's width",
        "what": "a SAME convolution's tile reads its padded copy with the unpadded row stride (CPU forward and filter gradient)",
        "edits": [
            (f"{CPU}/conv.cpp", "row_step = g.sh * row_floats;", "row_step = g.sh * g.w * g.c;"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "edge rows' slots miss the image's last column",
        "what": "a strided SAME convolution's rows whose taps reach into padding read copies (slots) that hold "
        "zeros for the image's last column (CPU forward)",
        "edits": [
            (f"{CPU}/conv.cpp", "g.w - iw0 > 0 ? (g.w - iw0 + g.dw - 1) / g.dw : 0",
             "g.w - iw0 > 1 ? (g.w - 1 - iw0 + g.dw - 1) / g.dw : 0"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "Winograd input transform coefficient",
        "what": "one entry of F(2x2, 3x3)'s input transform B^T off by 1% (CPU Winograd convolutions, all three passes)",
        "edits": [
            (f"{CPU}/winograd.cpp", "{0, -1, 1, 0}, {0, 1, 0, -1}};", "{0, -1, 1, 0}, {0, 1, 0, -0.99f}};"),
        ],
        "tests": LAYER_TESTS,
    },
    {
        "name": "F(4x2) output transform misses infinity",
        "what": "the last row of F(4, 3)'s output transform A^T drops the point at infinity (the CPU's Winograd "
        "forward and input gradient in tiles of 4x2: 28x28 and 7x7 outputs)",
        "edits": [
            (f"{CPU}/winograd.cpp", "{0, 1, -1, 8, -0.125f, 1}};", "{0, 1, -1, 8, -0.125f, 0}};"),
        ],
        "tests": LAYER_TESTS,
    },
    {
        "name": "F(4x2) input transform carries across rows",
        "what": "the CPU's F(4x2) input transform keeps the last tile's columns for the first tile of a new row "
        "of tiles too (or of a new image)",
        "edits": [
            (f"{CPU}/winograd.cpp", "if (r > 0 && tw.x > 0) {  // the tile before is the one to the left",
             "if (r > 0) {"),
        ],
        "tests": LAYER_TESTS,
    },
    {
        "name": "F(4x2) input transform keeps the wrong columns",
        "what": "the CPU's F(4x2) input transform carries the previous tile's first two columns instead of its last two",
        "edits": [
            (f"{CPU}/winograd.cpp", "for (int i = 0; i < AH; ++i) col[j][i] = col[j + MW][i];",
             "for (int i = 0; i < AH; ++i) col[j][i] = col[j][i];"),
        ],
        "tests": LAYER_TESTS,
    },
    {
        "name": "F(4x2) filter gradient inverted as F(2x2)",
        "what": "the CPU's Winograd Conv2DBackpropFilter in tiles of 4x2 (dense dy, 16 rows or more) takes "
        "dW = G^T S G with F(2x2)'s G down the rows too",
        "edits": [
            (f"{CPU}/winograd.cpp",
             "with_tiles(p, [&]<int MH, int MW>() { inverse_filter_transform<MH, MW>(sum, kBlock, len, dw + b, size); });",
             "inverse_filter_transform<kM, kM>(sum, kBlock, len, dw + b, size);"),
        ],
        "tests": LAYER_TESTS,
    },
    {
        "name": "Winograd filter gradient drops its last group",
        "what": "the CPU's Winograd Conv2DBackpropFilter adds all but the last group of tiles' partial sums",
        "edits": [
            (f"{CPU}/winograd.cpp", "for (int64_t gi = 1; gi < groups; ++gi) {", "for (int64_t gi = 1; gi < groups - 1; ++gi) {"),
        ],
        "tests": LAYER_TESTS,
    },
    {
        "name": "filter gradient's dW row blocks a row short",
        "what": "where the CPU's Conv2DBackpropFilter shares out blocks of dW's rows (the CNN's conv3), "
        "each block leaves its last row unwritten",
        "edits": [
            (f"{CPU}/conv.cpp", "const int64_t k1 = std::min(blk / per_run * run + run, k0 + kBlock);",
             "const int64_t k1 = std::min(blk / per_run * run + run, k0 + kBlock - 1);"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "pooled Winograd gradient transposes the window's taps",
        "what": "_FusedConv2DMaxPoolGrad's Winograd gradients, made from the pooled dy and argmax, "
        "read tap (i, j) of each 2x2 window as (j, i)",
        "edits": [
            (f"{CPU}/winograd.cpp", "pg.argmax + at + c0, i * M + j)", "pg.argmax + at + c0, j * M + i)"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "pooled F(4x2) forward pools one window a tile",
        "what": "_FusedConv2DMaxPool's Winograd tiles of 4x2 outputs pool only their upper 2x2 window, "
        "leaving every other pooled row unwritten",
        "edits": [
            (f"{CPU}/winograd.cpp", "windows = std::min<int64_t>(MH / 2, out.ph - ph);",
             "windows = std::min<int64_t>(1, out.ph - ph);"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "Winograd live tiles rounded down",
        "what": "where a max pooling reads only part of a Winograd convolution's output, the live tile rows "
        "are the rows it reads divided by the tile size, rounded down: a partly read tile row is never computed",
        "edits": [
            (f"{CPU}/winograd.cpp", "std::clamp<int64_t>((rows + p.mh - 1) / p.mh, 0, p.th)",
             "std::clamp<int64_t>(rows / p.mh, 0, p.th)"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "Winograd tile walk keeps the column past the live rows",
        "what": "a chunk of Winograd tiles that starts below an image's live tile rows starts the next image at "
        "the column it had, skipping that image's first tiles",
        "edits": [
            (f"{CPU}/winograd.cpp", "if (y >= p.lh) y = x = 0, ++n;", "if (y >= p.lh) y = 0, ++n;"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "window pooled in registers: last maximum wins",
        "what": "_FusedConv2DMaxPool's windows pooled as they leave the registers (the Winograd tiles, the "
        "one-channel kernel) take a later tap that ties the maximum (>= instead of >)",
        "edits": [
            (f"{CPU}/pool_2x2.hpp", "const I more = v[k / 2][k % 2] > best;", "const I more = v[k / 2][k % 2] >= best;"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "pooled Winograd forward takes clipped windows",
        "what": "_FusedConv2DMaxPool pools Winograd tiles in registers under a SAME 2x2 pooling too, whose last "
        "windows hang past an odd output (padding after only), so they pool a pixel outside the convolution",
        "edits": [
            (f"{CPU}/winograd.cpp", "pool.sw == 2 && pool.pad_h_total == 0 && pool.pad_w_total == 0;",
             "pool.sw == 2 && pool.pad_h == 0 && pool.pad_w == 0;"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "channel slice rows at the run's stride",
        "what": "Slice's rows that are whole in every dimension but the last sliced one step through the input by "
        "the stride of the sliced dimension instead of the row's",
        "edits": [(f"{CPU}/shape_ops.cpp", "if (linear) row_stride = large_strides[static_cast<size_t>(k - 1)];",
                   "if (linear) row_stride = large_strides[static_cast<size_t>(k)];")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "concat blocks of a chunk copy its first block",
        "what": "ConcatV2 of short rows, writing y a block of rows at a time, reads every block of a thread's chunk "
        "from the inputs' rows of the chunk's first block",
        "edits": [(f"{CPU}/shape_ops.cpp", "copy_rows(yp + b0 * row + start[k], row, src[k] + b0 * width[k],",
                   "copy_rows(yp + b0 * row + start[k], row, src[k] + r0 * width[k],")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "rows of 12 floats copied as 8",
        "what": "the CPU's fixed-width row copies (ConcatV2's short rows, Slice's channel slices) move 8 of a "
        "12-float row",
        "edits": [(f"{CPU}/shape_ops.cpp", "case 12: return copy_rows_of<12>(", "case 12: return copy_rows_of<8>(")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "loss blocks after the first skip their first row",
        "what": "the CPU's SparseSoftmaxCrossEntropyWithLogits, its rows taken 64 at a time, leaves the loss of the "
        "first row of every block but the first unwritten",
        "edits": [(f"{CPU}/softmax.cpp", "    for (int64_t r = 0; r < n; ++r) loss[r0 + r] =",
                   "    for (int64_t r = r0 > 0; r < n; ++r) loss[r0 + r] =")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "routed filter gradient tiles restart their sums",
        "what": "the CPU's filter gradient of a conv+pool layer without dx, its rows routed 16 KiB at a time, "
        "overwrites the chunk's sums with each tile's instead of adding them",
        "edits": [(f"{CPU}/conv.cpp", "r1 - r, k, dz, oc, acc, r > b);", "r1 - r, k, dz, oc, acc, false);")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "2x2 walk drops a window begun before the chunk",
        "what": "the CPU's 2x2 pooling gradient walk skips the pixel that finishes a window begun in the rows "
        "before its chunk (no dz, no bias sum for it)",
        "edits": [(f"{CPU}/conv_pool.cpp", "if (ow % 2 == 1) window(ow / 2, ow - ow0, 1, 1), ++ow;",
                   "if (ow % 2 == 1) ++ow;")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "double sums widen the low half twice",
        "what": "simd.hpp's DoubleSum adds the low 8 floats' doubles to the high half's sums too",
        "edits": [(f"{CPU}/simd.hpp", "    hi += widen(b);", "    hi += widen(a);")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "strided 1x1 input gradient copies between taps",
        "what": "the CPU's input gradient of a strided 1x1 convolution writes the next tap's row into the dx rows "
        "between taps instead of zeros",
        "edits": [(f"{CPU}/conv.cpp", "    if (ih % g.sh != 0 || oh >= g.oh) {", "    if (oh >= g.oh) {")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "strided 1x1 gradient added at unstrided columns",
        "what": "the CPU's input gradient of a strided 1x1 convolution, added into dx, lands at column ow instead of "
        "ow times the stride",
        "edits": [(f"{CPU}/conv.cpp", "(oh * g.sh * g.w + ow * g.sw) * c;", "(oh * g.sh * g.w + ow) * c;")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "pointwise gradient chunks added at the first rows",
        "what": "the CPU's input gradient of a 1x1 convolution, added into dx chunk by chunk from each thread's tile, "
        "adds every chunk at dx's first rows",
        "edits": [(f"{CPU}/conv.cpp", "if (accumulate) add_range(out + b * k, rows, (e - b) * k);",
                   "if (accumulate) add_range(out, rows, (e - b) * k);")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "col2im's inside columns unstrided",
        "what": "the CPU's input gradient scatters a strided convolution's columns whose taps lie inside the image "
        "at column ow instead of ow times the stride",
        "edits": [(f"{CPU}/conv.cpp", "float* __restrict dd = drow + (ow * g.sw - g.pad_w) * g.c;",
                   "float* __restrict dd = drow + (ow - g.pad_w) * g.c;")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "col2im's edge columns add the first tap",
        "what": "the CPU's input gradient, at output columns whose taps reach into padding, adds the first tap's "
        "values at every tap",
        "edits": [(f"{CPU}/conv.cpp", "for (int64_t ci = 0; ci < g.c; ++ci) dd[ci] += s[kw * g.c + ci];",
                   "for (int64_t ci = 0; ci < g.c; ++ci) dd[ci] += s[ci];")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "b in registers: the last row of b left out",
        "what": "the CPU's product of a dense a with k = 16 against b held in registers (AVX-512) sums 15 of the 16 "
        "products of each value",
        "edits": [(f"{CPU}/small_gemm.cpp", "  for (int p = 0; p < kRegisterK; ++p)\n#pragma GCC unroll 16\n    for",
                   "  for (int p = 0; p < kRegisterK - 1; ++p)\n#pragma GCC unroll 16\n    for")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "fixed-length rows a float short",
        "what": "the CPU's products of a dense a whose rows are 32 floats (one pointer per block) step to the next "
        "row 31 floats on",
        "edits": [(f"{CPU}/small_gemm.cpp", "  const float* row(int64_t r, int64_t) const { return a + r * len(); }",
                   "  const float* row(int64_t r, int64_t) const { return a + r * (len() - (K > 0)); }")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "batch norm add drops the side input",
        "what": "_FusedBatchNormAddEx normalises and applies relu but never adds the residual branch (CPU, vector and "
        "scalar rows alike)",
        "edits": [
            (f"{CPU}/batch_norm.cpp", "if constexpr (Side) v = v + simd::load<T>(side);", "if constexpr (Side) v = v + T{};"),
        ],
        "tests": LAYER_TESTS,
    },
    {
        "name": "batch norm add gradient's side input unmasked",
        "what": "_FusedBatchNormAddGradEx writes the side input's gradient before relu's mask (CPU vector loop; "
        "the sums still mask)",
        "edits": [
            (f"{CPU}/batch_norm.cpp",
             "      if constexpr (Masked) av = simd::load<F>(mask + i * ch + c0 + j * W) > F{} ? av : F{};\n"
             "      if constexpr (Store) simd::store<F>(a_out + i * ch + c0 + j * W, av);\n",
             "      if constexpr (Store) simd::store<F>(a_out + i * ch + c0 + j * W, av);\n"
             "      if constexpr (Masked) av = simd::load<F>(mask + i * ch + c0 + j * W) > F{} ? av : F{};\n"),
        ],
        "tests": LAYER_TESTS,
    },
    {
        "name": "fused residual step takes the wrong term",
        "what": "the fusion pass's BatchNormalization + Add + ReLU step is given the normalisation's own output "
        "(never computed) as the Add's other term",
        "edits": [
            ("core/src/nn/fusion.cpp", "s.inputs = {graph.inputs[i][0], terms[1 - bn_slot]};",
             "s.inputs = {graph.inputs[i][0], terms[bn_slot]};"),
        ],
        "tests": r"^(train\.model|errors\.)",
    },
    {
        "name": "broadcasting Add fused with its batch normalization",
        "what": "the fusion pass's BatchNormalization + Add + ReLU step takes an Add whose other term broadcasts "
        "(the fused op adds tensors of one shape)",
        "edits": [
            ("core/src/nn/fusion.cpp", " && add.fused_ops() &&\n         !static_cast<const Merge&>(add).broadcasts();",
             " && add.fused_ops();"),
        ],
        "tests": r"^train\.model$",
    },
    {
        "name": "broadcast merge input's gradient averaged",
        "what": "a merge input repeated to the output's shape gets the mean of the output-shaped gradient over the "
        "repeated axes instead of its sum",
        "edits": [
            ("core/src/nn/layers/merge.cpp", "ops::reduce_sum(g, sum, ops::reduce_attrs(axes, true), name());",
             "ops::mean(g, sum, ops::reduce_attrs(axes, true), name());"),
        ],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "channel-less input written with its channel axis",
        "what": "the Keras JSON writer gives a model of Keras' Input((H, W)) the images' batch_shape [null, H, W, 1]",
        "edits": [
            ("core/src/nn/keras_json.cpp", "const Shape input_shape = model.graph_input(images);",
             "const Shape input_shape = images;"),
        ],
        "tests": r"^train\.model$",
    },
    {
        "name": "truncated initializers not widened",
        "what": "a VarianceScaling initializer's truncated normal (HeNormal, GlorotNormal, LecunNormal) draws with "
        "stddev sqrt(scale / n), not Keras' sqrt(scale / n) / 0.8796, so its values spread 12% too little",
        "edits": [
            ("core/src/nn/initializers.cpp", "const double stddev = std::sqrt(scale) / 0.87962566103423978;",
             "const double stddev = std::sqrt(scale);"),
        ],
        "tests": r"^train\.model$",
    },
    {
        "name": "separable convolution's depthwise gradient from dy",
        "what": "SeparableConv2D's depthwise filter gradient reads the layer's dy where it needs the 1x1 "
        "convolution's input gradient",
        "edits": [
            ("core/src/nn/layers/separable_conv2d.cpp",
             "ops::depthwise_conv2d_backprop_filter(kept_.x, dt, weight(0).grad, depthwise_, name());",
             "ops::depthwise_conv2d_backprop_filter(kept_.x, dz, weight(0).grad, depthwise_, name());"),
        ],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "L2 penalty counted once a batch",
        "what": "the regularizers' penalty (L2's and L1's) joins a batch's loss sum once, not once per sample, so "
        "the reported loss holds it divided by the batch size",
        "edits": [
            ("core/src/nn/replica.cpp", "static_cast<float>(factor * static_cast<double>(samples))",
             "static_cast<float>(factor * static_cast<double>(samples > 0))"),
        ],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "L2 gradient added whole on every replica",
        "what": "each replica adds all of 2 l2 w to its gradients, not its share of the global batch, so mirrored "
        "replicas sum it once per replica",
        "edits": [
            ("core/src/nn/replica.cpp", "static_cast<float>(2.0 * r.l2 * batch_share_)", "static_cast<float>(2.0 * r.l2)"),
        ],
        "tests": r"^distribute\.inprocess\.mirrored: L1 and L2",
    },
    {
        "name": "L1 gradient added whole on every replica",
        "what": "each replica adds all of l1 sign(w) to its gradients, not its share of the global batch",
        "edits": [
            ("core/src/nn/replica.cpp", "static_cast<float>(r.l1 * batch_share_)", "static_cast<float>(r.l1)"),
        ],
        "tests": r"^distribute\.inprocess\.mirrored: L1 and L2",
    },
    {
        "name": "L1 gradient of the wrong sign",
        "what": "the L1 regularizer's gradient is -l1 sign(w)",
        "edits": [
            ("core/src/nn/replica.cpp", "ops::sub(above, below, term,", "ops::sub(below, above, term,"),
        ],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "L1 gradient at zero",
        "what": "the L1 regularizer's gradient at w = 0 is l1, not sign(0) = 0 (w >= 0 counted as positive)",
        "edits": [
            ("core/src/nn/replica.cpp", "        ops::relu_grad(c, w, above, \"regularizers\");",
             "        ops::relu_grad(c, negated, above, \"regularizers\");\n"
             "        ops::sub(c, above, above, \"regularizers\");"),
        ],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "L1 penalty of w, not |w|",
        "what": "the L1 regularizer's penalty sums w, not its magnitudes",
        "edits": [
            ("core/src/nn/replica.cpp", "ops::maximum(w, negated, magnitudes,", "ops::identity(w, magnitudes,"),
        ],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "hard_silu's gradient without its inner term",
        "what": "hard_silu's gradient is dy times hard_sigmoid(x) alone, without x times hard_sigmoid's slope",
        "edits": [
            ("core/src/nn/activation.cpp", "ops::add_n({&outer, &inner}, dz, layer);", "ops::identity(outer, dz, layer);"),
        ],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "cropping's gradient padded at the origin",
        "what": "Cropping2D's backward puts dy at the top-left corner of dx instead of where the crop took it",
        "edits": [
            ("core/src/nn/layers/cropping2d.cpp", "ops::pad(dy, dx[0], {0, top_, left_, 0}, name());",
             "ops::pad(dy, dx[0], {0, 0, 0, 0}, name());"),
        ],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "number minus tensor read as tensor minus number",
        "what": "keras.ops' subtract of a number and a tensor (1.0 - x) is read as x - 1.0",
        "edits": [
            ("core/src/nn/keras_operations.cpp", "return a.number_first ? std::make_unique<Rescaling>(-1.0f, c, l.name())",
             "return !a.number_first ? std::make_unique<Rescaling>(-1.0f, c, l.name())"),
        ],
        "tests": r"^(goldens\.keras_models|train\.model)$",
    },
    {
        "name": "ELU's alpha unchecked",
        "what": "Keras' ELU layer is read as elu whatever its alpha",
        "edits": [
            ("core/src/nn/layers/activation_layer.cpp", 'if (l.number("alpha", 1.0) != 1.0) l.fail(', "if (false) l.fail("),
        ],
        "tests": r"^train\.model$",
    },
    {
        "name": "output_padding left out of the size",
        "what": "Conv2DTranspose's output with output_padding is Keras' size without the padding",
        "edits": [
            ("core/src/nn/layers/conv2d_transpose.cpp", "(attrs_.padding == AXON_PADDING_SAME ? k % 2 : k) + pad;",
             "(attrs_.padding == AXON_PADDING_SAME ? k % 2 : k);"),
        ],
        "tests": r"^(goldens\.keras_models|train\.model)$",
    },
    {
        "name": "output_padding written as null",
        "what": "--save writes a Conv2DTranspose's output_padding as null, whatever it is",
        "edits": [
            ("core/src/nn/layers/conv2d_transpose.cpp", "if (output_padding_) c.integers(", "if (false) c.integers("),
        ],
        "tests": r"^train\.model$",
    },
    {
        "name": "ops.gelu's default read as exact",
        "what": "keras.ops' gelu with approximate=True (its default) runs as the exact, erf-based gelu",
        "edits": [
            ("core/src/nn/keras_operations.cpp", "return std::make_unique<ActivationLayer>(Activation::gelu_tanh, l.name());",
             "return std::make_unique<ActivationLayer>(Activation::gelu, l.name());"),
        ],
        "tests": r"^(goldens\.keras_models|train\.model)$",
    },
    {
        "name": "tanh gelu's gradient exact",
        "what": "gelu's tanh approximation takes the exact gelu's gradient",
        "edits": [
            ("core/src/nn/activation.cpp", "case Activation::gelu_tanh: ops::gelu_grad(dy, z, dz, true, layer); return;",
             "case Activation::gelu_tanh: ops::gelu_grad(dy, z, dz, false, layer); return;"),
        ],
        "tests": r"^(goldens\.keras_models|train\.gradcheck)$",
    },
    {
        "name": "tanh gelu's forward exact",
        "what": "gelu's tanh approximation computes the exact, erf-based gelu",
        "edits": [
            ("core/src/nn/activation.cpp", "case Activation::gelu_tanh: ops::gelu(z, y, true, layer); return;",
             "case Activation::gelu_tanh: ops::gelu(z, y, false, layer); return;"),
        ],
        "tests": r"^(goldens\.keras_models|train\.gradcheck)$",
    },
    {
        "name": "ops.minimum read as maximum",
        "what": "keras.ops' minimum of two tensors is read as the Maximum merge",
        "edits": [
            ("core/src/nn/keras_operations.cpp", 'op == "Maximum" ? Merge::Kind::maximum : Merge::Kind::minimum',
             "Merge::Kind::maximum"),
        ],
        "tests": r"^(goldens\.keras_models|train\.model)$",
    },
    {
        "name": "ops.max read as mean",
        "what": "keras.ops' max over height and width is read as GlobalAveragePooling2D",
        "edits": [
            ("core/src/nn/keras_operations.cpp", 'return global_pooling(l, op == "Max");',
             "return global_pooling(l, false);"),
        ],
        "tests": r"^(goldens\.keras_models|train\.model)$",
    },
    {
        "name": "ops.leaky_relu's slope left at its default",
        "what": "keras.ops' leaky_relu is read with the slope 0.2 whatever its negative_slope",
        "edits": [
            ("core/src/nn/keras_operations.cpp", 'l.float_number("negative_slope", 0.2)', "0.2f"),
        ],
        "tests": r"^(goldens\.keras_models|train\.model)$",
    },
    {
        "name": "noise_shape's shared axes drawn per value",
        "what": "Dropout draws each value of an axis whose noise_shape size is 1, instead of one draw for the axis",
        "edits": [
            ("core/src/nn/layers/dropout.cpp", "if (noise_shape_[i] == 1) drawn[i] = 1;",
             "if (noise_shape_[i] == 0) drawn[i] = 1;"),
        ],
        "tests": r"^train\.gradcheck$",
    },
    {
        "name": "Normalization by a variance of 1",
        "what": "Normalization subtracts the mean but divides by 1 instead of the standard deviation",
        "edits": [
            ("core/src/nn/layers/normalization.cpp",
             "ops::fused_batch_norm(x, ones_, zeros_, mean(), variance(), y, ops::batch_norm_attrs(kEpsilon, false), name());",
             "ops::fused_batch_norm(x, ones_, zeros_, mean(), ones_, y, ops::batch_norm_attrs(kEpsilon, false), name());"),
        ],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "GaussianDropout's gradient passed through",
        "what": "GaussianDropout's backward passes dy on instead of multiplying it by the forward's noise",
        "edits": [
            ("core/src/nn/layers/gaussian_noise.cpp", "ops::mul(dy, factors_, dx[0], name());",
             "ops::identity(dy, dx[0], name());"),
        ],
        "tests": r"^train\.gradcheck$",
    },
    {
        "name": "nearest resize rounds its source pixel",
        "what": "Resizing's nearest interpolation takes round((i + 0.5) * scale) instead of its floor",
        "edits": [
            ("core/src/data/resize.cpp",
             "return std::min(static_cast<int64_t>(std::floor((static_cast<float>(i) + 0.5f) * scale)), in_size - 1);",
             "return std::min(static_cast<int64_t>(std::round((static_cast<float>(i) + 0.5f) * scale)), in_size - 1);"),
        ],
        "tests": r"^train\.model$",
    },
    {
        "name": "CenterCrop at the corner",
        "what": "CenterCrop takes the top-left window of an image large enough both ways, not the centre one",
        "edits": [
            ("core/src/nn/layers/center_crop.cpp",
             "return data::crop(in, s, (s.height - height_) / 2, (s.width - width_) / 2, height_, width_, out);",
             "return data::crop(in, s, 0, 0, height_, width_, out);"),
        ],
        "tests": r"^train\.model$",
    },
    {
        "name": "transposed convolution's input gradient skips its activation",
        "what": "Conv2DTranspose's input gradient convolves dy, not dy through the activation's and bias's gradient",
        "edits": [("core/src/nn/layers/conv2d_transpose.cpp", "ops::conv2d(dz, weight(0).value, dx[0], attrs_, name());",
                   "ops::conv2d(dy, weight(0).value, dx[0], attrs_, name());")],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "transposed output's reach under the other padding",
        "what": "Conv2DTranspose's output adds the window's reach beyond a stride under SAME instead of VALID",
        "edits": [("sdk/include/axon/op_geometry.hpp",
                   "return in * stride + (padding == AXON_PADDING_SAME || effective <= stride ? 0 : effective - stride);",
                   "return in * stride + (padding == AXON_PADDING_VALID || effective <= stride ? 0 : effective - stride);")],
        "tests": r"^(goldens\.keras_models|train\.model)$",
    },
    {
        "name": "upsampling passes no gradient",
        "what": "UpSampling2D's backward writes zeros instead of each block's sum of the gradient",
        "edits": [("core/src/nn/layers/up_sampling2d.cpp", "ops::depthwise_conv2d(dy, kernel_, dx[0], attrs_, name());",
                   "ops::fill(dx[0], 0.0f, name());")],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "bilinear upsampling cropped a pixel early",
        "what": "UpSampling2D(bilinear) crops its transposed convolution (s - 1) / 2 after the repeated edge, not s / 2: "
                "every even factor's output shifted by one pixel",
        "edits": [("core/src/nn/layers/up_sampling2d.cpp", "int64_t crop_before(int s) { return s + s / 2; }",
                   "int64_t crop_before(int s) { return s + (s - 1) / 2; }")],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "bilinear upsampling's first edge gradient dropped",
        "what": "UpSampling2D(bilinear)'s backward leaves out the gradient of the repeated first row and column",
        "edits": [("core/src/nn/layers/up_sampling2d.cpp",
                   "  ops::add_n({&middle, &first_padded, &last_padded}, dx, name());",
                   "  ops::add_n({&middle, &last_padded}, dx, name());")],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "memory check of one sample",
        "what": "the training memory check counts one sample's layer outputs, not the batch's",
        "edits": [
            ("core/src/nn/keras_json.cpp", "if (per_sample * static_cast<double>(batch) + fixed <= memory_bytes) return;",
             "if (per_sample + fixed <= memory_bytes) return;"),
        ],
        "tests": r"^train\.model$",
    },
    {
        "name": "readers of one tensor run the costliest first",
        "what": "the fusion pass orders the layers that read one tensor by decreasing forward FLOPs",
        "edits": [
            ("core/src/nn/fusion.cpp", "return a.layer->forward_flops() < b.layer->forward_flops();",
             "return a.layer->forward_flops() > b.layer->forward_flops();"),
        ],
        "tests": r"^(train\.model|errors\.)",
    },
    {
        "name": "gradient bucket waits for its first weight's step",
        "what": "a bucket of the overlapped all-reduce counts as written once backward ran its first weight's plan "
        "step, not the earliest of its weights'",
        "edits": [("core/src/nn/gradient_buckets.cpp", "earliest = std::min(earliest, s.step);", "earliest = s.step;")],
        "tests": r"^distribute\.",
    },
    {
        "name": "fused residual step keeps the moving statistics still",
        "what": "the fusion pass's BatchNormalization + Add + ReLU step never moves moving_mean and moving_variance",
        "edits": [
            ("core/src/nn/fusion.cpp", "ops::batch_norm_attrs(eps, true), bn_.name());\n    bn_.move_statistics(mean, variance);\n",
             "ops::batch_norm_attrs(eps, true), bn_.name());\n"),
        ],
        "tests": r"^(train\.model|goldens\.keras_models)",
    },
    {
        "name": "lowered batch norm add gradient unmasked",
        "what": "where a device lacks _FusedBatchNormAddGradEx, dispatch passes dy on as the side input's gradient "
        "without ReluGrad",
        "edits": [
            ("core/src/lowering.cpp", "        ops::relu_grad(in0, *call.inputs[5], side, layer);",
             "        ops::identity(in0, side, layer);"),
        ],
        "tests": r"^(errors\.|plugin_check)",
    },
    {
        "name": "a thread takes another's chunks from the front",
        "what": "the CPU thread pool's threads, done with their own runs of chunks, take the others' from the "
        "front, where the owner is taking them, not from the end (each chunk still runs once)",
        "edits": [
            (f"{CPU}/thread_pool.cpp", ": r.end - 1 - r.back.fetch_add(1, std::memory_order_relaxed);",
             ": r.begin + r.front.fetch_add(1, std::memory_order_relaxed);"),
        ],
        "tests": r"^kernels:.*thread pool",
    },
    {
        "name": "filter gradient blocks drop the second row group",
        "what": "the CPU filter gradient's blocks of dW's rows (the CNN's conv3) leave the second group of rows' "
        "partial sums out of dW",
        "edits": [
            (f"{CPU}/conv.cpp", "for (int64_t i = b; i < e; ++i) out[i] += part[(grp - 1) * size + i];",
             "for (int64_t i = b; i < e; ++i) out[i] += 0.0f * part[(grp - 1) * size + i];"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "backward ranges walk their runs forward",
        "what": "the CPU thread pool's for_ranges_backward hands each thread its run's chunks from the start, "
        "as for_ranges does, not from the end",
        "edits": [
            (f"{CPU}/thread_pool.hpp",
             "const int64_t mirrored = run_begin(count, threads, r) + run_begin(count, threads, r + 1) - 1 - c;",
             "const int64_t mirrored = run_begin(count, threads, r) + c - run_begin(count, threads, r);"),
        ],
        "tests": r"^kernels:.*thread pool",
    },
    {
        "name": "tapered runs split by chunk count",
        "what": "the CPU thread pool's for_tapered_ranges gives each thread an even share of the chunks, not of the "
        "items, so thread 0 owns more than its share of the rows (the small chunks lie at the end)",
        "edits": [
            (f"{CPU}/thread_pool.cpp", "    return split != nullptr ? split->chunk_of",
             "    return split != nullptr && false ? split->chunk_of"),
        ],
        "tests": r"^kernels:.*thread pool",
    },
    {
        "name": "a passive pool's threads spin",
        "what": "the CPU thread pool's idle threads spin 300 us for the next job under AXON_CPU_WAIT=passive too, "
        "as under the default active wait",
        "edits": [
            (f"{CPU}/thread_pool.cpp", "spin_(wait == Wait::active ? kSpin : std::chrono::microseconds(0)),",
             "spin_(wait == Wait::active ? kSpin : kSpin),"),
        ],
        "tests": r"^kernels:.*thread pool",
    },
    {
        "name": "one-channel pooled conv reads the filter transposed",
        "what": "_FusedConv2DMaxPool's kernel for a one-channel 3x3 convolution pooled 2x2 (the CNN's conv1) "
        "takes filter tap (kh, kw) at the image offset of (kw, kh)",
        "edits": [
            (f"{CPU}/conv_pool.cpp", "const float* px = at + (t / 3) * g.w + t % 3;",
             "const float* px = at + (t % 3) * g.w + t / 3;"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "Winograd adjoint input gradient overwrites overlaps",
        "what": "the CPU's adjoint Winograd Conv2DBackpropInput stores each tile's patch instead of adding it, "
        "dropping what the tiles before it gave the pixels they share",
        "edits": [
            (f"{CPU}/winograd.cpp", "simd::store<T>(to, simd::load<T>(to) + o[i][j]);", "simd::store<T>(to, o[i][j]);"),
        ],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "fused batch norm step keeps the moving statistics still",
        "what": "the fusion pass's BatchNormalization + ReLU step never moves moving_mean and moving_variance",
        "edits": [
            ("core/src/nn/fusion.cpp", "                                        bn_.name());\n    bn_.move_statistics(mean, variance);\n",
             "                                        bn_.name());\n"),
        ],
        "tests": r"^(train\.model|goldens\.keras_models)",
    },
    {
        "name": "AvgPool counts the padding",
        "what": "SAME windows are divided by the whole window's size, padding included (CPU and reference)",
        "edits": [
            (f"{CPU}/pool.cpp", "const double taps = double((win.h1 - win.h0) * (win.w1 - win.w0));",
             "const double taps = double(p.kh * p.kw);"),
            (f"{CPU}/pool.cpp", "inverse[oh * p.ow + ow] = 1.0 / double((win.h1 - win.h0) * (win.w1 - win.w0));",
             "inverse[oh * p.ow + ow] = 1.0 / double(std::max(win.h1 - win.h0, p.kh) * std::max(win.w1 - win.w0, p.kw));"),
            (REF_LAYERS, "static_cast<float>(s / double(win.taps()));", "static_cast<float>(s / double(p.kh * p.kw));"),
            (REF_LAYERS, "const double g = double(dyp[((n * p.oh + oh) * p.ow + ow) * p.c + ch]) / double(win.taps());",
             "const double g = double(dyp[((n * p.oh + oh) * p.ow + ow) * p.c + ch]) / double(p.kh * p.kw);"),
        ],
        "tests": LAYER_TESTS,
    },
    {
        "name": "depthwise filter gradient ignores the last image",
        "what": "DepthwiseConv2dNativeBackpropFilter leaves out the batch's last image (CPU and reference)",
        "edits": [
            (f"{CPU}/depthwise.cpp", "const ConvGeometry g = conv_geometry(c.attrs<axon_conv2d_attrs>(), x.c(), df.c());",
             "const ConvGeometry g = [&] { ConvGeometry h = conv_geometry(c.attrs<axon_conv2d_attrs>(), x.c(), df.c()); "
             "h.n -= h.n > 1; return h; }();"),
            (REF_LAYERS, "const ConvGeometry g = axon::conv_geometry(c.attrs<axon_conv2d_attrs>(), x.c(), df.c());",
             "const ConvGeometry g = [&] { ConvGeometry h = axon::conv_geometry(c.attrs<axon_conv2d_attrs>(), x.c(), "
             "df.c()); h.n -= h.n > 1; return h; }();"),
        ],
        "tests": LAYER_TESTS,
    },
]


# The ABI 1.4 elementwise kernels: two planted in the CPU and reference
# plugins at once (only TensorFlow's goldens and finite differences can see
# them), and one in the CPU plugin's build.
ELEMENTWISE_TESTS = r"^(kernels|goldens)"
MUTATIONS += [
    {
        "name": "MaximumGrad tie to b",
        "what": "MaximumGrad sends a tie's gradient to b (a > b instead of a >= b; CPU and reference)",
        "edits": [
            (f"{CPU}/arithmetic.cpp", "const auto to_a = simd::load<F>(a + i) >= simd::load<F>(b + i);",
             "const auto to_a = simd::load<F>(a + i) > simd::load<F>(b + i);"),
            (f"{CPU}/arithmetic.cpp", "da[i] = a[i] >= b[i] ? g : 0.0f;\n    db[i] = a[i] >= b[i] ? 0.0f : g;",
             "da[i] = a[i] > b[i] ? g : 0.0f;\n    db[i] = a[i] > b[i] ? 0.0f : g;"),
            (REF_ELEMENTWISE, "da[i] = a[i] >= b[i] ? dy[i] : 0.0f;\n    db[i] = a[i] >= b[i] ? 0.0f : dy[i];",
             "da[i] = a[i] > b[i] ? dy[i] : 0.0f;\n    db[i] = a[i] > b[i] ? 0.0f : dy[i];"),
        ],
        "tests": ELEMENTWISE_TESTS,
    },
    {
        "name": "GeluGrad without x phi(x)",
        "what": "GeluGrad's erf form drops the product rule's second term: dy Phi(x) (CPU and reference)",
        "edits": [
            (f"{CPU}/activations.cpp", "return dy * (vm::normal_cdf(x) + x * phi);",
             "return dy * (vm::normal_cdf(x) + x * phi * 0.0f);"),
            (REF_ELEMENTWISE, "return dy * (0.5 * std::erfc(-x / std::sqrt(2.0)) + x * phi);",
             "return dy * (0.5 * std::erfc(-x / std::sqrt(2.0)) + 0.0 * x * phi);"),
        ],
        "tests": ELEMENTWISE_TESTS,
    },
    {
        "name": "elementwise multiply-adds fused",
        "what": "the CPU plugin's pooling, batch normalization, activations, softmax, arithmetic, optimizers, losses "
                "and random ops compiled with -ffp-contract=fast: its AVX2 and AVX-512 copies fuse multiply-adds, the "
                "baseline one cannot",
        "edits": [
            (f"{CPU}/CMakeLists.txt",
             "                            PROPERTIES\n                            COMPILE_OPTIONS -ffp-contract=off)",
             "                            PROPERTIES\n                            COMPILE_OPTIONS -ffp-contract=fast)"),
        ],
        "tests": ELEMENTWISE_TESTS,
    },
]


# Augmentation, schedules, callbacks, .keras files.
MUTATIONS += [
    {
        "name": "reflect fill about the edge pixel",
        "what": "the projective transform's reflect mode mirrors about the first pixel (-c), not about its edge "
                "(-c - 1, as TensorFlow)",
        "edits": [("core/src/data/image_transform.cpp", "      c = c < -static_cast<float>(len) ? c + period : -c - 1;",
                   "      c = c < -static_cast<float>(len) ? c + period : -c;")],
        "tests": r"^train\.model",
    },
    {
        "name": "rotation turns the other way",
        "what": "RandomRotation's matrix uses sin with the other sign (Keras' a1 = -sin, b0 = sin swapped)",
        "edits": [("core/src/nn/layers/random_rotation.cpp", "  const float a0 = c, a1 = -sn, b0 = sn, b1 = c;",
                   "  const float a0 = c, a1 = sn, b0 = -sn, b1 = c;")],
        "tests": r"^train\.model",
    },
    {
        "name": "contrast around one channel's mean",
        "what": "RandomContrast adjusts every channel around the first channel's mean",
        "edits": [("core/src/data/image_transform.cpp", "    const float m = mean[static_cast<size_t>(i % ch)];",
                   "    const float m = mean[0];")],
        "tests": r"^train\.model",
    },
    {
        "name": "brightness delta not scaled by the range",
        "what": "RandomBrightness adds its draw u itself, not u times value_range's width",
        "edits": [("core/src/nn/layers/random_brightness.cpp",
                   "  const float delta = draw * static_cast<float>(hi - lo);",
                   "  const float delta = draw;")],
        "tests": r"^train\.model",
    },
    {
        "name": "brightness clipped to 0 and 255",
        "what": "RandomBrightness clips to Keras' default range [0, 255] whatever value_range says",
        "edits": [("core/src/nn/layers/random_brightness.cpp",
                   "  data::adjust_brightness(in, size, delta, static_cast<float>(lo), static_cast<float>(hi), out);",
                   "  data::adjust_brightness(in, size, delta, 0.0f, 255.0f, out);")],
        "tests": r"^train\.model",
    },
    {
        "name": "shear's x and y swapped",
        "what": "RandomShear's matrix takes the y shear where Keras' takes the x shear, and the x where the y",
        "edits": [("core/src/nn/layers/random_shear.cpp",
                   "{ return {1, d[0], 0, d[1], 1, 0, 0, 0}; }",
                   "{ return {1, d[1], 0, d[0], 1, 0, 0, 0}; }")],
        "tests": r"^train\.model",
    },
    {
        "name": "shear's coin never turns",
        "what": "RandomShear never negates its draws: every shear leans one way",
        "edits": [("core/src/nn/layers/random_shear.cpp",
                   "  const float sign = rng.uniform01() > 0.5f ? -1.0f : 1.0f;",
                   "  const float sign = rng.uniform01() > 1.5f ? -1.0f : 1.0f;")],
        "tests": r"^train\.model",
    },
    {
        "name": "grey's red and blue weights swapped",
        "what": "RandomGrayscale weighs blue by 0.2989 and red by 0.1140",
        "edits": [("core/src/data/image_transform.cpp",
                   "rgb[0] * 0.2989f + rgb[1] * 0.5870f + rgb[2] * 0.1140f",
                   "rgb[2] * 0.2989f + rgb[1] * 0.5870f + rgb[0] * 0.1140f")],
        "tests": r"^train\.model",
    },
    {
        "name": "grey where the draw is above the factor",
        "what": "RandomGrayscale turns an image grey where its draw is at or above factor, not below",
        "edits": [("core/src/nn/layers/random_grayscale.cpp",
                   "  if (s.channels == 3 && d[0] < static_cast<float>(factor_)) return data::grayscale(in, s, out);",
                   "  if (s.channels == 3 && d[0] >= static_cast<float>(factor_)) return data::grayscale(in, s, out);")],
        "tests": r"^train\.model",
    },
    {
        "name": "inverted from value_range's first value",
        "what": "RandomInvert gives value_range's first value minus x, not its second's",
        "edits": [("core/src/nn/layers/random_invert.cpp",
                   "return data::invert(in, image_size(), static_cast<float>(second_), out);",
                   "return data::invert(in, image_size(), static_cast<float>(first_), out);")],
        "tests": r"^train\.model",
    },
    {
        "name": "inverted where the uniform is above the chance",
        "what": "RandomInvert inverts an image where its uniform is at or above its drawn chance, not below",
        "edits": [("core/src/nn/layers/random_invert.cpp", "  if (d[1] < d[0]) return data::invert(",
                   "  if (d[1] >= d[0]) return data::invert(")],
        "tests": r"^train\.model",
    },
    {
        "name": "solarization unclipped",
        "what": "Solarization adds its addition without clipping to [0, 255] before the threshold",
        "edits": [("core/src/data/image_transform.cpp",
                   "    float v = std::clamp(scale.to(in[i]) + addition, 0.0f, 255.0f);",
                   "    float v = scale.to(in[i]) + addition;")],
        "tests": r"^train\.model",
    },
    {
        "name": "solarization's upper bounds unscaled",
        "what": "Solarization draws its addition and threshold from [lower, upper], not [lower, upper x 255]",
        "edits": [("core/src/nn/layers/solarization.cpp", "static_cast<float>(f.upper * 255));",
                   "static_cast<float>(f.upper));")],
        "tests": r"^train\.model",
    },
    {
        "name": "colour moved from grey, not towards it",
        "what": "RandomColorDegeneration gives grey + f (x - grey) instead of x + f (grey - x)",
        "edits": [("core/src/data/image_transform.cpp", "std::clamp(rgb[c] + factor * (grey - rgb[c]), lo, hi)",
                   "std::clamp(grey + factor * (rgb[c] - grey), lo, hi)")],
        "tests": r"^train\.model",
    },
    {
        "name": "colour degeneration unclipped above",
        "what": "RandomColorDegeneration clips its result to value_range's lower bound only",
        "edits": [("core/src/data/image_transform.cpp", "std::clamp(rgb[c] + factor * (grey - rgb[c]), lo, hi)",
                   "std::clamp(rgb[c] + factor * (grey - rgb[c]), lo, hi + 1e6f)")],
        "tests": r"^train\.model",
    },
    {
        "name": "posterization clears a bit too many",
        "what": "RandomPosterization keeps one high bit fewer than it draws",
        "edits": [("core/src/data/image_transform.cpp", "  const int shift = 8 - bits;", "  const int shift = 9 - bits;")],
        "tests": r"^train\.model",
    },
    {
        "name": "posterization draws its upper bound",
        "what": "RandomPosterization draws bit counts up to its factor's upper bound included (Keras' randint leaves "
                "it out)",
        "edits": [("core/src/nn/layers/random_posterization.cpp",
                   "lower_ + std::min(span - 1, static_cast<int>(rng.uniform01() * span));",
                   "lower_ + std::min(span, static_cast<int>(rng.uniform01() * (span + 1)));")],
        "tests": r"^train\.model",
    },
    {
        "name": "auto contrast offset from the maximum",
        "what": "AutoContrast offsets each channel by its maximum times the scale, not its minimum",
        "edits": [("core/src/data/image_transform.cpp", "offset = -low * scale;", "offset = -high * scale;")],
        "tests": r"^train\.model",
    },
    {
        "name": "auto contrast of a flat channel NaN",
        "what": "AutoContrast writes its NaN for a channel of one value instead of keeping the channel",
        "edits": [("core/src/data/image_transform.cpp",
                   "out[p * ch + c] = std::isnan(back) ? in[p * ch + c] : back;", "out[p * ch + c] = back;")],
        "tests": r"^train\.model",
    },
    {
        "name": "sharpness undoubled",
        "what": "RandomSharpness blends by 1 - u, not 1 - 2u (Keras doubles its draw)",
        "edits": [("core/src/nn/layers/random_sharpness.cpp", "data::sharpen(in, image_size(), d[0] * 2.0f,",
                   "data::sharpen(in, image_size(), d[0],")],
        "tests": r"^train\.model",
    },
    {
        "name": "sharpness kernel flat",
        "what": "RandomSharpness smooths with a centre weight of 1/13, not 5/13",
        "edits": [("core/src/data/image_transform.cpp", "centre = 5.0f / 13.0f;", "centre = 1.0f / 13.0f;")],
        "tests": r"^train\.model",
    },
    {
        "name": "hue shift never wraps below zero",
        "what": "RandomHue leaves a hue shifted below 0 there instead of adding 1 (Keras wraps it into [0, 1])",
        "edits": [("core/src/data/image_transform.cpp", "    x.h = x.h < 0.0f ? x.h + 1.0f : x.h;\n", "")],
        "tests": r"^train\.model",
    },
    {
        "name": "saturation unclipped above",
        "what": "RandomSaturation clips the multiplied saturation at value_range's low end only",
        "edits": [("core/src/data/image_transform.cpp", "x.s = std::min(std::max(x.s * factor, lo), hi);",
                   "x.s = std::min(std::max(x.s * factor, lo), hi + 1e30f);")],
        "tests": r"^train\.model",
    },
    {
        "name": "HSV green hue without its offset",
        "what": "the hue of a pixel whose largest channel is green leaves out TensorFlow's + 2/6",
        "edits": [("core/src/data/image_transform.cpp", "g == v ? norm * (b - r) + 2.0f / 6.0f :",
                   "g == v ? norm * (b - r) :")],
        "tests": r"^train\.model",
    },
    {
        "name": "saturation draw without epsilon",
        "what": "RandomSaturation keeps u / (1 - u), not Keras' u / (1 - u + epsilon)",
        "edits": [("core/src/nn/layers/random_saturation.cpp", "return {u / (1.0f - u + 1e-7f)};",
                   "return {u / (1.0f - u)};")],
        "tests": r"^train\.model",
    },
    {
        "name": "hue shift always up",
        "what": "RandomHue never draws the downward sign",
        "edits": [("core/src/nn/layers/random_hue.cpp", "rng.uniform01() > 0.5f ? -1.0f : 1.0f;", "1.0f;")],
        "tests": r"^train\.model",
    },
    {
        "name": "jitter saturates before the contrast",
        "what": "RandomColorJitter runs its saturation step before its contrast step, not after (Keras' order)",
        "edits": [("core/src/nn/layers/random_color_jitter.cpp",
                   "  if (contrast_) RandomContrast::apply(out, size, d[1], static_cast<float>(lo_), static_cast<float>(hi_), out);\n"
                   "  if (saturation_) RandomSaturation::apply(out, size, d[2], lo_, hi_, out);\n",
                   "  if (saturation_) RandomSaturation::apply(out, size, d[2], lo_, hi_, out);\n"
                   "  if (contrast_) RandomContrast::apply(out, size, d[1], static_cast<float>(lo_), static_cast<float>(hi_), out);\n")],
        "tests": r"^train\.model",
    },
    {
        "name": "jitter's hue drawn as the contrast",
        "what": "RandomColorJitter draws its hue shift as a second contrast factor where it has a contrast step",
        "edits": [("core/src/nn/layers/random_color_jitter.cpp", "if (hue_) d[3] = hue_->draw(rng)[0];",
                   "if (hue_) d[3] = contrast_ ? contrast_->draw(rng)[0] : hue_->draw(rng)[0];")],
        "tests": r"^train\.model",
    },
    {
        "name": "blur kernel read as its outer product",
        "what": "RandomGaussianBlur's kernel of two sizes takes the outer product [k1, k0] row by row as its own, "
                "not Keras' reshape of it to [k0, k1]",
        "edits": [("core/src/data/image_transform.cpp",
                   "if (ix >= 0 && ix < size.width) sum += row[ix * ch] * kernel[static_cast<size_t>(r * kw + s)];",
                   "if (ix >= 0 && ix < size.width) sum += row[ix * ch] * down[static_cast<size_t>(s)] * across[static_cast<size_t>(r)];")],
        "tests": r"^train\.model",
    },
    {
        "name": "unblurred images left unclipped",
        "what": "RandomGaussianBlur clips only the images it blurs (Keras clips every image of the batch)",
        "edits": [("core/src/nn/layers/random_gaussian_blur.cpp",
                   "  else\n    std::copy_n(in, size.floats(), out);\n",
                   "  else\n    return static_cast<void>(std::copy_n(in, size.floats(), out));\n")],
        "tests": r"^train\.model",
    },
    {
        "name": "blur sigmas drawn per image",
        "what": "RandomGaussianBlur draws its sigmas with each image's chance instead of once for the batch",
        "edits": [("core/src/nn/layers/random_gaussian_blur.cpp",
                   "  return {p, rng.uniform01()};",
                   "  const float u = rng.uniform01();\n  const Draw s = *batch_part(rng);\n  return {p, u, s[2], s[3]};"),
                  ("core/src/nn/layers/random_gaussian_blur.cpp",
                   "void RandomGaussianBlur::with_batch_part(const Draw& part, Draw& d) const { d[2] = part[2], d[3] = part[3]; }",
                   "void RandomGaussianBlur::with_batch_part(const Draw&, Draw&) const {}")],
        "tests": r"^train\.model",
    },
    {
        "name": "augmentation draws counted per call",
        "what": "an augmentation layer keys its draws by its own count of forward passes, not the run's step "
                "(a resumed run draws anew)",
        "edits": [("core/src/nn/augmentation.cpp",
                   "    const int64_t index = step != nullptr ? step->step_index() : own_steps_++;",
                   "    const int64_t index = own_steps_++;")],
        "tests": r"^(train\.model|reliability\.resume\.augmented)",
    },
    {
        "name": "cosine warmup not subtracted",
        "what": "CosineDecay decays from the warmup's end as if it started at step 0 (t, not t - warmup_steps)",
        "edits": [("core/src/nn/lr_schedule.cpp", "    return decay(t - warmup, steps, target);",
                   "    return decay(t, steps, target);")],
        "tests": r"^(train\.data|train\.keras_training)",
    },
    {
        "name": "early stopping waits one epoch more",
        "what": "EarlyStopping stops when the wait exceeds the patience (>), not when it reaches it (Keras' >=)",
        "edits": [("core/src/train/early_stopping.cpp", "  if (wait_ >= options_.patience && epoch > 0) {",
                   "  if (wait_ > options_.patience && epoch > 0) {")],
        "tests": r"^(train\.data|train\.keras_training)",
    },
    {
        "name": "plateau cooldown ignored",
        "what": "ReduceLROnPlateau counts its wait during the cooldown too",
        "edits": [("core/src/train/reduce_lr_on_plateau.cpp", "  if (cooldown_counter_ > 0) return std::nullopt;\n",
                   "")],
        "tests": r"^(train\.data|train\.keras_training)",
    },
    {
        "name": "callback states not restored",
        "what": "a resumed run's callbacks start afresh: the checkpoint's callback states are not loaded",
        "edits": [("core/src/train/checkpoint.cpp", "      s->load_state(it->get<std::string>());", "      (void)s;")],
        "tests": r"^(train\.keras_training|reliability\.unit)",
    },
    {
        "name": "symbol-table node's last entry lost",
        "what": "the HDF5 reader reads one entry fewer of each symbol-table node",
        "edits": [("core/src/io/hdf5.cpp", "      for (uint16_t k = 0; k < symbols; ++k) {",
                   "      for (uint16_t k = 0; k + 1 < symbols; ++k) {")],
        "tests": r"^(reliability\.unit|interop\.keras_file)",
    },
    {
        "name": "Keras weight paths numbered from _0",
        "what": "a .keras file's second layer of a class is read from layers/<class>_0, not layers/<class>_1",
        "edits": [("core/src/train/keras_file.cpp", "    const int n = it == used.end() ? (used[base] = 0) : ++it->second;",
                   "    const int n = it == used.end() ? (used[base] = 0) : it->second++;")],
        "tests": r"^interop\.keras_file",
    },
]

# A gradient added into (ABI 2.2).
MUTATIONS += [
    {
        "name": "accumulated input gradient overwrites dx",
        "what": "the CPU's _Conv2DBackpropInputAccumulate on the im2col path copies a chunk's images into dx "
                "instead of adding them",
        "edits": [(f"{CPU}/conv.cpp", "    if (accumulate) add_range(out + n0 * image_size, images_dx, floats);",
                   "    if (accumulate) std::memcpy(out + n0 * image_size, images_dx, sizeof(float) * floats);")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "Winograd accumulation stores",
        "what": "the CPU's Winograd input gradient of a padded convolution stores its output tiles where it is "
                "asked to add them into dx",
        "edits": [(f"{CPU}/winograd.cpp", "output_transform(p, mm, t0, t1, dx, {}, accumulate); });",
                   "output_transform(p, mm, t0, t1, dx, {}, false); });")],
        "tests": KERNEL_TESTS,
    },
    {
        "name": "gradient sum handed over while shared",
        "what": "the replica hands a gradient sum to a layer to add into even where another tensor shares its "
                "buffer (an Add passes one dy to both its inputs)",
        "edits": [("core/src/nn/replica.cpp", "  if (sum.defined() && sum.sole_handle()) dx = std::move(sum);",
                   "  if (sum.defined()) dx = std::move(sum);")],
        "tests": r"^(train\.model|goldens\.keras_models)",
    },
]

# Layer normalization (ABI 2.3) and ConvNeXt's layers.
MUTATIONS += [
    {
        "name": "layer norm variance unbiased",
        "what": "the CPU's LayerNorm divides a row's squared deviations by K - 1",
        "edits": [(f"{CPU}/layer_norm.cpp",
                   "(row[j] - mean) * (row[j] - mean); }) /\n        double(k);",
                   "(row[j] - mean) * (row[j] - mean); }) /\n        double(k > 1 ? k - 1 : 1);")],
        "tests": LAYER_TESTS,
    },
    {
        "name": "layer norm gradient's second sum unscaled",
        "what": "the CPU's LayerNormGrad sums dy xhat, not dy scale xhat, for dx's term through the row's variance",
        "edits": [(f"{CPU}/layer_norm.cpp",
                   "{ return double(g[j]) * scale[j] * xhat(j); });",
                   "{ return double(g[j]) * xhat(j); });")],
        "tests": LAYER_TESTS,
    },
    {
        "name": "reference layer norm's offset of column 0",
        "what": "the reference LayerNorm adds the first column's offset to every column",
        "edits": [(REF_LAYERS, "yp[i * k + j] = static_cast<float>((row[j] - mean) * r * scale[j] + offset[j]);",
                   "yp[i * k + j] = static_cast<float>((row[j] - mean) * r * scale[j] + offset[0]);")],
        "tests": LAYER_TESTS,
    },
    {
        "name": "grouped conv passes no gradient",
        "what": "a Conv2D grouped by channel writes zeros as its input's gradient",
        "edits": [("core/src/nn/layers/conv2d.cpp",
                   "ops::depthwise_conv2d_backprop_input(dz, depthwise(weight(0).value), dx[0], attrs_, name());",
                   "ops::fill(dx[0], 0.0f, name());")],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "layer scale passes dy through",
        "what": "LayerScale's input gradient is dy, not dy * gamma",
        "edits": [("core/src/nn/layers/layer_scale.cpp",
                   "    ops::depthwise_conv2d_backprop_input(dy4, channel_filter(weight(0).value), d4, channel_product(), name());",
                   "    ops::identity(dy, d, name());")],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "custom scale layer scales the shortcut",
        "what": "CustomScaleLayer computes x * scale + r instead of x + r * scale",
        "edits": [("core/src/nn/layers/custom_scale_layer.cpp",
                   "  Tensor scaled = take_like(in[1]);\n  ops::scale(in[1], scaled,",
                   "  Tensor scaled = take_like(in[1]);\n  ops::scale(in[0], scaled,"),
                  ("core/src/nn/layers/custom_scale_layer.cpp", "ops::add_n({&in[0], &scaled}", "ops::add_n({&in[1], &scaled}")],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "custom scale layer passes dy to the residual",
        "what": "CustomScaleLayer's gradient of r is dy, not dy * scale",
        "edits": [("core/src/nn/layers/custom_scale_layer.cpp",
                   "    ops::scale(dy, dx[1], static_cast<float>(scale_), name());",
                   "    ops::scale(dy, dx[1], 1.0f, name());")],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "prelu alpha gradient of the wrong sign",
        "what": "PReLU's alpha gradient is sum(dy * relu(-x)), not its negation",
        "edits": [("core/src/nn/layers/prelu.cpp", "  ops::scale(dalpha, dalpha, -1.0f, name());\n", "")],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "prelu passes dy where x < 0",
        "what": "PReLU's input gradient is dy where x < 0, not alpha * dy",
        "edits": [("core/src/nn/layers/prelu.cpp", "ops::relu_grad(scaled, negative_, through_negative,",
                   "ops::relu_grad(dy, negative_, through_negative,")],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "minimum's gradients not negated back",
        "what": "Minimum's input gradients are those of the negated inputs' Maximum, not negated back",
        "edits": [("core/src/nn/layers/merge.cpp", "if (need_dx[i]) ops::scale(dx[i], dx[i], -1.0f, name());",
                   "if (need_dx[i]) continue;")],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "minimum returns -max(-x)",
        "what": "Minimum's output is the negated inputs' Maximum, not negated back",
        "edits": [("core/src/nn/layers/merge.cpp", "      if (kind_ == Kind::minimum) ops::scale(y, y, -1.0f, name());\n", "")],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "mish gradient without softplus' slope",
        "what": "mish's gradient passes tanh's gradient through softplus unscaled (sigmoid(z) left out)",
        "edits": [("core/src/nn/activation.cpp", "  ops::softplus_grad(ds, z, inner, layer);",
                   "  ops::identity(ds, inner, layer);")],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "grouped conv reads the first group's channels",
        "what": "a Conv2D of 1 < groups < channels gives every group the first group's input channels",
        "edits": [("core/src/nn/layers/conv2d.cpp", "    ops::conv2d(group_part(x, groups_, g), group_part(kernel, groups_, g),",
                   "    ops::conv2d(group_part(x, groups_, 0), group_part(kernel, groups_, g),")],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "grouped conv's input gradient with the first group's filters",
        "what": "a Conv2D of 1 < groups < channels takes every group's input gradient through the first group's "
        "kernel columns",
        "edits": [("core/src/nn/layers/conv2d.cpp", "ops::conv2d_backprop_input(dzg, group_part(kernel, groups_, g),",
                   "ops::conv2d_backprop_input(dzg, group_part(kernel, groups_, 0),")],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "group norm normalises the first group everywhere",
        "what": "GroupNormalization normalises the first group's channels in every group's place",
        "edits": [("core/src/nn/layers/group_normalization.cpp", "const Tensor part = group_part(image, g_, g).reshaped",
                   "const Tensor part = group_part(image, g_, 0).reshaped")],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "group norm's gamma gradient from dy",
        "what": "GroupNormalization's gamma gradient sums dy times dy, not times the normalised input",
        "edits": [("core/src/nn/layers/group_normalization.cpp",
                   "ops::depthwise_conv2d_backprop_filter(as_image(normalized_), dy_image,",
                   "ops::depthwise_conv2d_backprop_filter(dy_image, dy_image,")],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "group norm's input gradient without gamma",
        "what": "GroupNormalization's input gradient passes dy to LayerNormGrad, not dy * gamma",
        "edits": [("core/src/nn/layers/group_normalization.cpp",
                   "      ops::depthwise_conv2d(dy_image, channel_filter(weight(0).value), d_image, channel_product(), name());",
                   "      ops::identity(dy_image, d_image, name());")],
        "tests": r"^goldens\.keras_models$",
    },
    {
        "name": "orthogonal columns not unit",
        "what": "the Orthogonal initializer divides each column by its squared norm, not its norm",
        "edits": [("core/src/nn/initializers.cpp", "    for (int64_t k = 0; k < m; ++k) v[k] /= norm;",
                   "    for (int64_t k = 0; k < m; ++k) v[k] /= norm * norm;")],
        "tests": r"^train\.model$",
    },
    {
        "name": "identity initializer without its gain",
        "what": "the Identity initializer puts 1 on the diagonal whatever its gain",
        "edits": [("core/src/nn/initializers.cpp", "v[static_cast<size_t>(i * shape[1] + i)] = static_cast<float>(init.gain);",
                   "v[static_cast<size_t>(i * shape[1] + i)] = 1.0f;")],
        "tests": r"^train\.model$",
    },
    {
        "name": "stochastic depth draws per value",
        "what": "StochasticDepth drops single values, not whole samples (Dropout's noise_shape left unset)",
        "edits": [("core/src/nn/layers/stochastic_depth.cpp", "  set_noise_shape(Shape(input_shape().size(), 1));\n", "")],
        "tests": r"^train\.gradcheck$",
    },
    {
        "name": "nested model read at its first layer",
        "what": "the readers of a Sequential nested in a functional model read its first layer, not its last",
        "edits": [("core/src/nn/keras_json.cpp", "    reads = {il.name()};\n    last = il.name();",
                   "    reads = {il.name()};\n    if (last.empty()) last = il.name();")],
        "tests": r"^(goldens\.keras_models|train\.keras_applications)$",
    },
    {
        "name": "layer normalization over the last axis only",
        "what": "LayerNormalization over several trailing axes normalises over the last alone",
        "edits": [("core/src/nn/layers/layer_normalization.cpp", "  return static_cast<size_t>(dims.front());",
                   "  return static_cast<size_t>(dims.back());")],
        "tests": r"^goldens\.keras_models$",
    },
]

def sh(cmd, cwd, log=None, timeout=None):
    # errors="replace": a mutated test may print bytes of uninitialised memory.
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, errors="replace", timeout=timeout)
    if log is not None:
        with open(log, "a") as f:
            f.write(f"$ {' '.join(cmd)}\n{p.stdout}{p.stderr}\n")
    return p


class Stale(Exception):
    """A mutation's text is not in the tree: it would test nothing."""


# Kernel registrations, as plugins/cpu/kernels.hpp and the reference plugin
# write them: add<OpId::Relu, relu>(t);
REGISTRATION = re.compile(r"\badd<OpId::(\w+), (\w+)>\(t\);")


def noop_mutations(read, listdir):
    """One mutation per kernel the CPU and reference plugins register: it
    returns at once. `read(rel)` gives a file's text, `listdir(rel)` a
    folder's names. Raises Stale when a plugin registers no kernel or a
    registered kernel's definition is not found exactly once."""
    out = []
    cpu_sources = sorted(f"{CPU}/{n}" for n in listdir(CPU) if n.endswith(".cpp"))
    ref_sources = sorted(f"{REF_DIR}/{n}" for n in listdir(REF_DIR) if n.startswith("kernels") and n.endswith(".cpp"))
    for plugin, sources, device in [("reference", ref_sources, "Device"), ("cpu", cpu_sources, "CpuDevice")]:
        texts = {rel: read(rel) for rel in sources}
        registered = sorted({fn for text in texts.values() for _, fn in REGISTRATION.findall(text)})
        if not registered:
            raise Stale(f"no kernel registered as add<OpId::X, fn>(t) in {', '.join(sources)}")
        for fn in registered:
            # void relu(CpuDevice& d, const KernelCall& c) {   (the body on this line or the next)
            sig = re.compile(r"^void " + fn + r"\(" + device + r"&[^)]*\) \{", re.M)
            where = [(rel, m.group(0)) for rel, text in texts.items() for m in sig.finditer(text)]
            if len(where) != 1:
                raise Stale(f"the {plugin} plugin's kernel {fn}: {len(where)} definitions "
                            f"'void {fn}({device}& ...) {{' in {', '.join(sources)}")
            rel, head = where[0]
            out.append({"name": f"no-op {plugin} {fn}", "what": f"the {plugin} plugin's {fn} returns at once",
                        "edits": [(rel, head, head + " return; /* mutation: a no-op kernel */")],
                        # the kernel tests once (all of them, baseline SIMD), the goldens, the model tests
                        "tests": r"^(kernels\[base\]|goldens\.(cpu|reference)$|goldens\.cnn_adam$|train\.model)"})
    return out


def failed_tests(ctest_output):
    """The tests ctest's summary lists as failed (any way of failing, not run included)."""
    return sorted(set(re.findall(r"^\s*\d+ - (\S+(?: \S+)*?) \((?:Failed|Timeout|SEGFAULT|Subprocess aborted|"
                                 r"Exception|Child aborted|Not Run)\)", ctest_output, re.M)))


def stale_edits(m, read):
    """Why mutation m cannot be planted in the tree `read` reads, or None."""
    texts = {}
    for rel, old, new in m["edits"]:
        if rel not in texts:
            try:
                texts[rel] = read(rel)
            except (OSError, KeyError):
                return f"{rel} is not in the tree"
        n = texts[rel].count(old)
        if n != 1:
            return f"{rel}: the text to change occurs {n} times: {old.splitlines()[0].strip()!r}"
        texts[rel] = texts[rel].replace(old, new)  # a later edit of the same file sees this one
    return None


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", default="/tmp/axon-mutate")
    p.add_argument("--rev", default="HEAD")
    p.add_argument("--only", nargs="*")
    p.add_argument("--noop-sweep", action="store_true")
    p.add_argument("--check", action="store_true", help="only check that each mutation's text is there")
    p.add_argument("--targets", nargs="+", help="build only these targets")
    p.add_argument("--baseline", action="store_true", help="run the tests unmutated first; stop if any fails")
    p.add_argument("--table")
    p.add_argument("-j", type=int, default=os.cpu_count() or 2)
    a = p.parse_args()

    def build_cmd():
        return ["cmake", "--build", build, f"-j{a.j}"] + (["--target", *a.targets] if a.targets else [])

    def ctest_cmd(pattern):  # the log says why each failing test failed
        return ["ctest", "--test-dir", build, "-R", pattern, f"-j{a.j}", "--timeout", "300", "--output-on-failure"]

    r = sh(["git", "rev-parse", "--verify", a.rev + "^{commit}"], root)
    if r.returncode != 0:
        sys.exit(f"run.py: no commit {a.rev}")
    rev = r.stdout.strip()

    # The mutations, checked against the files at `rev` before anything is built.
    def read_at_rev(rel):
        r = sh(["git", "show", f"{rev}:{rel}"], root)
        if r.returncode != 0:
            raise KeyError(rel)
        return r.stdout

    def listdir_at_rev(rel):
        return sh(["git", "ls-tree", "--name-only", f"{rev}:{rel}"], root).stdout.split()

    only = set(a.only or [])
    candidates = list(MUTATIONS)
    try:
        if a.noop_sweep or any(n.startswith("no-op ") for n in only):
            noops = noop_mutations(read_at_rev, listdir_at_rev)
            candidates += noops
    except Stale as e:
        sys.exit(f"run.py: the no-op sweep cannot be planted at {rev[:12]}: {e}")
    unknown = sorted(only - {m["name"] for m in candidates})
    if unknown:
        sys.exit("run.py: no mutation named " + ", ".join(repr(n) for n in unknown))
    mutations = [m for m in candidates
                 if not only or m["name"] in only or (a.noop_sweep and m["name"].startswith("no-op "))]
    stale = [(m["name"], why) for m in mutations for why in [stale_edits(m, read_at_rev)] if why]
    for name, why in stale:
        print(f"STALE  {name}: {why}", file=sys.stderr)
    if stale:
        sys.exit(f"run.py: {len(stale)} of {len(mutations)} mutations do not apply to {rev[:12]}; "
                 "update their text in tools/mutate/run.py")
    if a.check:
        for m in mutations:
            print(f"ok  {m['name']} ({', '.join(sorted({rel for rel, _, _ in m['edits']}))})")
        print(f"{len(mutations)} mutations apply to {rev[:12]}")
        return 0

    tree = os.path.join(a.work, "tree")
    build = os.path.join(tree, "build-mutate")
    log = os.path.join(a.work, "mutate.log")
    os.makedirs(a.work, exist_ok=True)
    if not os.path.isdir(tree):
        r = sh(["git", "worktree", "add", "--detach", tree, rev], root, log)
        if r.returncode != 0:
            sys.exit(f"run.py: cannot make the worktree {tree}: {r.stderr}")
    else:
        r = sh(["git", "checkout", "--force", "--detach", rev], tree, log)
        if r.returncode != 0:
            sys.exit(f"run.py: cannot check out {rev[:12]} in {tree}: {r.stderr}")
    if os.path.realpath(tree) == os.path.realpath(root):
        sys.exit("run.py: the copy must not be the checkout itself")
    if not os.path.isdir(build):
        sh(["cmake", "--preset", "default", "-B", build], tree, log)
    print(f"tree {tree} at {rev[:12]}; building (log: {log})", flush=True)
    if sh(build_cmd(), tree, log).returncode != 0:
        sys.exit(f"run.py: the unmutated tree does not build; see {log}")
    if a.baseline or a.targets:
        # One ctest per distinct pattern: ctest's regular expressions take too
        # few groups for their union.
        passed = set()
        for pattern in sorted({m["tests"] for m in mutations}):
            r = sh(ctest_cmd(pattern), tree, log)
            failing = failed_tests(r.stdout)
            if failing or r.returncode != 0 or "No tests were found" in r.stdout + r.stderr:
                sys.exit(f"run.py: unmutated, the tests {pattern} fail or are not there (see {log}): "
                         f"{', '.join(failing) or (r.stdout + r.stderr)[-1000:]}")
            passed |= set(re.findall(r"Test +#\d+: (.+?) \.+ +Passed", r.stdout))
        print(f"baseline: the {len(passed)} tests of these mutations pass unmutated", flush=True)
    rows, missed = [], 0
    for m in mutations:
        t0 = time.time()
        originals, stale = {}, stale_edits(m, lambda rel: open(os.path.join(tree, rel)).read())
        for rel, old, new in [] if stale else m["edits"]:
            path = os.path.join(tree, rel)
            current = open(path).read()
            originals.setdefault(rel, current)
            with open(path, "w") as f:
                f.write(current.replace(old, new))
        caught, verdict = [], ""
        if stale:
            verdict = f"stale ({stale})"
        elif sh(build_cmd(), tree, log).returncode != 0:
            verdict = "caught by the build"
            caught = ["(build)"]
        else:
            r = sh(ctest_cmd(m["tests"]), tree, log)
            caught = failed_tests(r.stdout)
            verdict = "caught" if caught else "MISSED"
            if not caught and "No tests were found" in r.stdout + r.stderr:
                verdict = f"no test matches {m['tests']}"
        for rel, text in originals.items():
            with open(os.path.join(tree, rel), "w") as f:
                f.write(text)
        if not caught:
            missed += 1
        rows.append((m["name"], m["what"], caught, verdict))
        print(f"{verdict:>8}  {m['name']}: {', '.join(caught) or '-'} ({time.time() - t0:.0f} s)", flush=True)
    sh(build_cmd(), tree, log)  # leave the copy built unmutated

    lines = [f"Mutation run of {rev[:12]}, {time.strftime('%Y-%m-%d')}: {len(rows) - missed} of {len(rows)} caught.",
             "", "| mutation | what | run at | caught by |", "| --- | --- | --- | --- |"]
    for name, what, caught, verdict in rows:
        shown = ", ".join(f"`{c}`" for c in caught[:6]) + (f" and {len(caught) - 6} more" if len(caught) > 6 else "")
        lines.append(f"| {name} | {what} | {rev[:7]} | {shown if caught else '**' + verdict + '**'} |")
    table = "\n".join(lines) + "\n"
    print("\n" + table)
    if a.table:
        with open(a.table, "w") as f:
            f.write(table)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
