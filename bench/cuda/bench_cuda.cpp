// Kernel-level GPU benchmark at the trainer's CNN shapes (batch 64), through the
// plugin's C ABI: time per op, enqueue time per op (host cost of a launch),
// achieved GFLOP/s, and a whole training step (forward, backward, Adam; 50
// kernel calls) timed as kernels queued back to back versus the sum of the
// single-op times. Prints figures, asserts nothing.
//
//   axon-bench-cuda [--plugin PATH] [--iters N]
//
// Timing: N calls are queued on the device's stream between two CUDA events
// (the plugin's axon.timing extension, recorded on the device's own stream):
// that is the GPU time per call. The wall time between two synchronize()
// calls and the host's enqueue time per call are printed beside it; when
// enqueue time is as large as GPU time the op is bound by launch overhead.
// Without the extension (another plugin) only wall times are shown.
// Exit: 0, 1 failure (also: a GPU the plugin cannot use, "FAIL: unusable CUDA
// device: <reason>"), 2 bad usage, 77 the driver reports no GPU ("SKIP: no CUDA
// device: <reason>").
#include "device_presence.hpp"
#include "plugin_harness.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <random>
#include <string>
#include <vector>

#ifndef AXON_CUDA_PLUGIN_PATH
#define AXON_CUDA_PLUGIN_PATH "libaxon-plugin-cuda.so"
#endif

using namespace axon::test;
using Clock = std::chrono::steady_clock;

namespace {

struct Bench {
  axon_device_api& api;
  std::mt19937 rng{7};
  std::vector<void*> owned;

  ~Bench() {
    for (void* p : owned) api.deallocate(api.device_ctx, p);
  }

  axon_tensor make(std::vector<int64_t> dims, axon_dtype dtype = AXON_FLOAT32, float lo = -1.f, float hi = 1.f) {
    axon_tensor t{};
    t.dtype = dtype;
    t.rank = static_cast<int32_t>(dims.size());
    int64_t n = 1;
    for (size_t i = 0; i < dims.size(); ++i) t.dims[i] = dims[i], n *= dims[i];
    const size_t bytes = static_cast<size_t>(n) * (dtype == AXON_UINT8 ? 1 : 4);
    axon_error err{};
    check(api.allocate(api.device_ctx, bytes, &t.data, &err), err, "allocate");
    owned.push_back(t.data);
    std::vector<unsigned char> host(bytes);
    if (dtype == AXON_FLOAT32) {
      std::uniform_real_distribution<float> u(lo, hi);
      for (int64_t i = 0; i < n; ++i) {
        float v = u(rng);
        std::memcpy(host.data() + 4 * i, &v, 4);
      }
    } else if (dtype == AXON_INT32) {
      std::uniform_int_distribution<int32_t> u(0, 9);
      for (int64_t i = 0; i < n; ++i) {
        int32_t v = u(rng);
        std::memcpy(host.data() + 4 * i, &v, 4);
      }
    } else {
      for (auto& b : host) b = static_cast<unsigned char>(rng() & 0xff);
    }
    check(api.copy_host_to_device(api.device_ctx, t.data, host.data(), bytes, &err), err, "h2d");
    return t;
  }

  static axon_tensor view(axon_tensor t, std::vector<int64_t> dims) {  // a reshape (Flatten)
    t.rank = static_cast<int32_t>(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) t.dims[i] = dims[i];
    return t;
  }

  long calls = 0;  // kernel calls made, to count a training step's

  void call(const char* op, std::vector<axon_tensor> in, std::vector<axon_tensor> out, const void* attrs = nullptr) {
    ++calls;
    axon_dtype dt = in.empty() ? out[0].dtype : in[0].dtype;
    axon_kernel_fn fn = api.get_kernel(api.device_ctx, op, dt);
    if (!fn) throw std::runtime_error(std::string("no kernel for ") + op);
    axon::client::call_kernel(api, fn, op, in, out, attrs, op);
  }

  void sync() {
    axon_error err{};
    check(api.synchronize(api.device_ctx, &err), err, "synchronize");
  }

  const axon_timing_extension* timing = nullptr;  // the plugin's axon.timing, if it has one

  struct Times {
    double gpu = -1;  // seconds per call from CUDA events, -1 when not measured
    double wall = 0;  // seconds per call between two synchronize() calls
    double enqueue = 0;
  };

  // Times f over `iters` calls: wall and enqueue time, then GPU time by events.
  template <class F>
  Times time(F&& f, int iters) {
    for (int i = 0; i < 3; ++i) f();  // warm-up: algorithm choice, caches
    sync();
    Times t;
    auto t0 = Clock::now();
    for (int i = 0; i < iters; ++i) f();
    auto t1 = Clock::now();
    sync();
    auto t2 = Clock::now();
    t.wall = std::chrono::duration<double>(t2 - t0).count() / iters;
    t.enqueue = std::chrono::duration<double>(t1 - t0).count() / iters;
    if (timing != nullptr) {
      struct Ctx {
        std::function<void()> f;
        std::string error;
      } ctx{std::function<void()>(f), {}};
      // No exception may cross into the kernel library: errors are kept and rethrown here.
      auto enqueue = [](void* p) {
        auto* c = static_cast<Ctx*>(p);
        if (!c->error.empty()) return;
        try {
          c->f();
        } catch (const std::exception& e) {
          c->error = e.what();
        }
      };
      float ms = 0;
      axon_error err{};
      check(timing->time_on_stream(api.device_ctx, enqueue, &ctx, iters, &ms, &err), err, "time_on_stream");
      if (!ctx.error.empty()) throw std::runtime_error(ctx.error);
      t.gpu = ms / 1e3 / iters;
    }
    return t;
  }
};

axon_conv2d_attrs conv_attrs() {
  axon_conv2d_attrs a{};
  a.struct_size = sizeof a;
  a.stride_h = a.stride_w = a.dilation_h = a.dilation_w = 1;
  a.padding = AXON_PADDING_VALID;
  return a;
}

axon_pool_attrs pool_attrs() {
  axon_pool_attrs a{};
  a.struct_size = sizeof a;
  a.window_h = a.window_w = a.stride_h = a.stride_w = 2;
  a.padding = AXON_PADDING_VALID;
  return a;
}

axon_matmul_attrs mm(bool ta, bool tb) {
  axon_matmul_attrs a{};
  a.struct_size = sizeof a;
  a.transpose_a = ta;
  a.transpose_b = tb;
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  std::string plugin_path = AXON_CUDA_PLUGIN_PATH;
  int iters = 200;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--plugin" && i + 1 < argc) {
      plugin_path = argv[++i];
    } else if (a == "--iters" && i + 1 < argc) {
      iters = std::atoi(argv[++i]);
      if (iters < 1) {
        std::fprintf(stderr, "axon-bench-cuda: --iters needs a positive number\n");
        return 2;
      }
    } else {
      std::fprintf(stderr, "usage: axon-bench-cuda [--plugin PATH] [--iters N]\n");
      return 2;
    }
  }
  try {
    LoadedPlugin cuda(plugin_path);
    if (auto code = exit_without_device(cuda, "CUDA device")) return *code;
    axon_device_props props{};
    props.struct_size = sizeof props;
    axon_error err{};
    check(cuda.api.get_device_props(cuda.api.plugin_ctx, 0, &props, &err), err, "props");
    std::printf("device: %s (compute %d.%d, %.1f GiB), %s\n", props.name, props.compute_major, props.compute_minor,
                props.memory_total / 1073741824.0, props.description);
    std::printf("TF32: %s (AXON_TEST_ALLOW_TF32)\n", std::getenv("AXON_TEST_ALLOW_TF32") ? std::getenv("AXON_TEST_ALLOW_TF32") : "off");
    TestDevice dev(cuda, 0);
    Bench b{dev.api};
    b.timing = axon::client::extension<axon_timing_extension>(cuda.api, AXON_EXTENSION_TIMING, 1);
    std::printf("timing: %s\n", b.timing ? "the plugin's axon.timing extension (the device's clock: CUDA events on a "
                                           "GPU), wall and enqueue time per call"
                                         : "wall and enqueue time only (the plugin has no axon.timing extension)");
    const int64_t N = 64;

    // The trainer's CNN (apps/axon-train): conv 3x3x32 on 28x28 -> relu -> pool 2
    // -> conv 3x3x64 on 13x13 -> relu -> pool 2 -> conv 3x3x64 on 5x5 -> relu ->
    // flatten 576 -> dense 64 -> relu -> dense 10.
    axon_tensor img = b.make({N, 28, 28, 1}, AXON_UINT8), labels = b.make({N}, AXON_INT32);
    axon_tensor x = b.make({N, 28, 28, 1});
    axon_tensor w1 = b.make({3, 3, 1, 32}), b1 = b.make({32}), w2 = b.make({3, 3, 32, 64}), b2 = b.make({64}),
                w3 = b.make({3, 3, 64, 64}), b3 = b.make({64}), w4 = b.make({576, 64}), b4 = b.make({64}),
                w5 = b.make({64, 10}), b5 = b.make({10});
    axon_tensor c1 = b.make({N, 26, 26, 32}), p1 = b.make({N, 13, 13, 32}), c2 = b.make({N, 11, 11, 64}),
                p2 = b.make({N, 5, 5, 64}), c3 = b.make({N, 3, 3, 64}), h = b.make({N, 64}), logits = b.make({N, 10}),
                loss = b.make({N}), dlogits = b.make({N, 10}), correct = b.make({N}), scalar = b.make({1});
    axon_tensor dw1 = b.make({3, 3, 1, 32}), db1 = b.make({32}), dw2 = b.make({3, 3, 32, 64}), db2 = b.make({64}),
                dw3 = b.make({3, 3, 64, 64}), db3 = b.make({64}), dw4 = b.make({576, 64}), db4 = b.make({64}),
                dw5 = b.make({64, 10}), db5 = b.make({10}), dh = b.make({N, 64}), dc3 = b.make({N, 3, 3, 64}),
                dp2 = b.make({N, 5, 5, 64}), dc2 = b.make({N, 11, 11, 64}), dp1 = b.make({N, 13, 13, 32}),
                dc1 = b.make({N, 26, 26, 32});
    std::vector<axon_tensor> params = {w1, b1, w2, b2, w3, b3, w4, b4, w5, b5},
                             grads = {dw1, db1, dw2, db2, dw3, db3, dw4, db4, dw5, db5}, ms, vs;
    for (auto& p : params) {
      std::vector<int64_t> d(p.dims, p.dims + p.rank);
      ms.push_back(b.make(d, AXON_FLOAT32, -0.01f, 0.01f));
      vs.push_back(b.make(d, AXON_FLOAT32, 0.f, 0.001f));
    }
    const axon_tensor c3f = Bench::view(c3, {N, 576}), dc3f = Bench::view(dc3, {N, 576});
    auto ca = conv_attrs();
    auto pa = pool_attrs();
    auto m_nn = mm(false, false), m_tn = mm(true, false), m_nt = mm(false, true);
    axon_adam_attrs adam{};
    adam.struct_size = sizeof adam;
    adam.learning_rate = 1e-3f;
    adam.beta_1 = 0.9f;
    adam.beta_2 = 0.999f;
    adam.epsilon = 1e-7f;
    adam.step = 1;

    struct Op {
      const char* name;
      std::string shape;
      double flops;  // per call, 0 if not meaningful
      std::function<void()> f;
    };
    const double conv1 = 2.0 * N * 26 * 26 * 32 * 9 * 1, conv2 = 2.0 * N * 11 * 11 * 64 * 9 * 32,
                 conv3 = 2.0 * N * 3 * 3 * 64 * 9 * 64, dense1 = 2.0 * N * 576 * 64, dense2 = 2.0 * N * 64 * 10;
    std::vector<Op> ops = {
        {"NormalizeImage", "[64,28,28,1] u8", 0, [&] { b.call("NormalizeImage", {img}, {x}); }},
        {"Conv2D", "x[64,28,28,1] f[3,3,1,32]", conv1, [&] { b.call("Conv2D", {x, w1}, {c1}, &ca); }},
        {"Conv2D", "x[64,13,13,32] f[3,3,32,64]", conv2, [&] { b.call("Conv2D", {p1, w2}, {c2}, &ca); }},
        {"Conv2D", "x[64,5,5,64] f[3,3,64,64]", conv3, [&] { b.call("Conv2D", {p2, w3}, {c3}, &ca); }},
        {"Conv2DBackpropInput", "dy[64,3,3,64] f[3,3,64,64]", conv3, [&] { b.call("Conv2DBackpropInput", {dc3, w3}, {dp2}, &ca); }},
        {"Conv2DBackpropFilter", "x[64,5,5,64] dy[64,3,3,64]", conv3, [&] { b.call("Conv2DBackpropFilter", {p2, dc3}, {dw3}, &ca); }},
        {"Conv2DBackpropInput", "dy[64,11,11,64] f[3,3,32,64]", conv2, [&] { b.call("Conv2DBackpropInput", {dc2, w2}, {dp1}, &ca); }},
        {"Conv2DBackpropFilter", "x[64,13,13,32] dy[64,11,11,64]", conv2, [&] { b.call("Conv2DBackpropFilter", {p1, dc2}, {dw2}, &ca); }},
        {"Conv2DBackpropFilter", "x[64,28,28,1] dy[64,26,26,32]", conv1, [&] { b.call("Conv2DBackpropFilter", {x, dc1}, {dw1}, &ca); }},
        {"BiasAdd", "[64,26,26,32]", 0, [&] { b.call("BiasAdd", {c1, b1}, {c1}); }},
        {"Relu", "[64,26,26,32]", 0, [&] { b.call("Relu", {c1}, {c1}); }},
        {"MaxPool", "[64,26,26,32] 2x2", 0, [&] { b.call("MaxPool", {c1}, {p1}, &pa); }},
        {"MaxPoolGrad", "[64,26,26,32] 2x2", 0, [&] { b.call("MaxPoolGrad", {c1, p1, dp1}, {dc1}, &pa); }},
        {"ReluGrad", "[64,26,26,32]", 0, [&] { b.call("ReluGrad", {dc1, c1}, {dc1}); }},
        {"BiasAddGrad", "[64,26,26,32]", 0, [&] { b.call("BiasAddGrad", {dc1}, {db1}); }},
        {"MatMul", "[64,576] x [576,64]", dense1, [&] { b.call("MatMul", {c3f, w4}, {h}, &m_nn); }},
        {"MatMul", "x^T [64,576]^T x dy [64,64]", dense1, [&] { b.call("MatMul", {c3f, dh}, {dw4}, &m_tn); }},
        {"MatMul", "dy [64,64] x W^T [576,64]^T", dense1, [&] { b.call("MatMul", {dh, w4}, {dc3f}, &m_nt); }},
        {"MatMul", "[64,64] x [64,10]", dense2, [&] { b.call("MatMul", {h, w5}, {logits}, &m_nn); }},
        {"MatMul", "x^T [64,64]^T x dy [64,10]", dense2, [&] { b.call("MatMul", {h, dlogits}, {dw5}, &m_tn); }},
        {"MatMul", "dy [64,10] x W^T [64,10]^T", dense2, [&] { b.call("MatMul", {dlogits, w5}, {dh}, &m_nt); }},
        {"SparseSoftmaxXent", "[64,10]", 0, [&] { b.call("SparseSoftmaxCrossEntropyWithLogits", {logits, labels}, {loss, dlogits}); }},
        {"_SparseCategoricalAccuracy", "[64,10]", 0, [&] { b.call("_SparseCategoricalAccuracy", {logits, labels}, {correct}); }},
        {"Sum", "[64]", 0, [&] { b.call("Sum", {loss}, {scalar}); }},
        {"ApplyAdam", "[576,64]", 0, [&] { b.call("ApplyAdam", {w4, ms[6], vs[6], dw4}, {}, &adam); }},
    };

    std::printf("\n%-22s %-34s %10s %10s %10s %10s\n", "op", "shape (batch 64)", "gpu us", "wall us", "enqueue us",
                "GFLOP/s");
    double sum_of_ops = 0;
    for (auto& op : ops) {
      Bench::Times t = b.time(op.f, iters);
      const double per = t.gpu >= 0 ? t.gpu : t.wall;
      sum_of_ops += per;
      char gflops[32] = "-", gpu[32] = "-";
      if (op.flops > 0) std::snprintf(gflops, sizeof gflops, "%.1f", op.flops / per / 1e9);
      if (t.gpu >= 0) std::snprintf(gpu, sizeof gpu, "%.2f", t.gpu * 1e6);
      std::printf("%-22s %-34s %10s %10.2f %10.2f %10s\n", op.name, op.shape.c_str(), gpu, t.wall * 1e6, t.enqueue * 1e6,
                  gflops);
    }

    // One training step, queued back to back as the trainer does.
    auto step = [&] {
      b.call("NormalizeImage", {img}, {x});
      b.call("Conv2D", {x, w1}, {c1}, &ca);
      b.call("BiasAdd", {c1, b1}, {c1});
      b.call("Relu", {c1}, {c1});
      b.call("MaxPool", {c1}, {p1}, &pa);
      b.call("Conv2D", {p1, w2}, {c2}, &ca);
      b.call("BiasAdd", {c2, b2}, {c2});
      b.call("Relu", {c2}, {c2});
      b.call("MaxPool", {c2}, {p2}, &pa);
      b.call("Conv2D", {p2, w3}, {c3}, &ca);
      b.call("BiasAdd", {c3, b3}, {c3});
      b.call("Relu", {c3}, {c3});
      b.call("MatMul", {c3f, w4}, {h}, &m_nn);
      b.call("BiasAdd", {h, b4}, {h});
      b.call("Relu", {h}, {h});
      b.call("MatMul", {h, w5}, {logits}, &m_nn);
      b.call("BiasAdd", {logits, b5}, {logits});
      b.call("SparseSoftmaxCrossEntropyWithLogits", {logits, labels}, {loss, dlogits});
      b.call("Sum", {loss}, {scalar});
      b.call("_SparseCategoricalAccuracy", {logits, labels}, {correct});
      b.call("BiasAddGrad", {dlogits}, {db5});
      b.call("MatMul", {h, dlogits}, {dw5}, &m_tn);
      b.call("MatMul", {dlogits, w5}, {dh}, &m_nt);
      b.call("ReluGrad", {dh, h}, {dh});
      b.call("BiasAddGrad", {dh}, {db4});
      b.call("MatMul", {c3f, dh}, {dw4}, &m_tn);
      b.call("MatMul", {dh, w4}, {dc3f}, &m_nt);
      b.call("ReluGrad", {dc3, c3}, {dc3});
      b.call("BiasAddGrad", {dc3}, {db3});
      b.call("Conv2DBackpropFilter", {p2, dc3}, {dw3}, &ca);
      b.call("Conv2DBackpropInput", {dc3, w3}, {dp2}, &ca);
      b.call("MaxPoolGrad", {c2, p2, dp2}, {dc2}, &pa);
      b.call("ReluGrad", {dc2, c2}, {dc2});
      b.call("BiasAddGrad", {dc2}, {db2});
      b.call("Conv2DBackpropFilter", {p1, dc2}, {dw2}, &ca);
      b.call("Conv2DBackpropInput", {dc2, w2}, {dp1}, &ca);
      b.call("MaxPoolGrad", {c1, p1, dp1}, {dc1}, &pa);
      b.call("ReluGrad", {dc1, c1}, {dc1});
      b.call("BiasAddGrad", {dc1}, {db1});
      b.call("Conv2DBackpropFilter", {x, dc1}, {dw1}, &ca);
      for (size_t i = 0; i < params.size(); ++i) b.call("ApplyAdam", {params[i], ms[i], vs[i], grads[i]}, {}, &adam);
      ++adam.step;
    };
    b.calls = 0;
    step();
    const long calls_per_step = b.calls;
    Bench::Times st = b.time(step, std::max(10, iters / 4));
    std::printf("\nSTEP (forward + backward + Adam, batch 64, %ld kernel calls): wall %.1f us, enqueue %.1f us per step, "
                "%.0f samples/s\n",
                calls_per_step, st.wall * 1e6, st.enqueue * 1e6, N / st.wall);
    if (st.gpu >= 0)
      std::printf("STEP: GPU (kernel) time %.1f us per step = %.0f%% of the wall time\n", st.gpu * 1e6,
                  100.0 * st.gpu / st.wall);
    std::printf("STEP: sum of the single-op times above %.1f us (not every op is in a step, some are twice); %s\n",
                sum_of_ops * 1e6,
                st.enqueue > 0.8 * st.wall ? "bound by host enqueue cost (launch overhead)" : "the device is the bound");
    axon_memory_info m{};
    m.struct_size = sizeof m;
    check(dev.api.memory_info(dev.api.device_ctx, &m, &err), err, "memory_info");
    std::printf("MEMORY: in use %.1f MiB, peak %.1f MiB, reserved %.1f MiB (growth mode)\n", m.in_use / 1048576.0,
                m.peak_in_use / 1048576.0, m.reserved / 1048576.0);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "axon-bench-cuda: %s\n", e.what());
    return 1;
  }
}
