// Dispatch benchmark: nanoseconds per op call through axon's dispatch
// (ops::scale, ops::matmul, ops::conv2d on tiny tensors, so the kernel itself
// costs little) next to the same kernel function called straight through the
// C ABI with a prepared axon_kernel_call. The difference is the host's
// overhead per op. Rounds alternate the two ways and the best round of each
// is reported (the machine is shared). Prints figures; asserts nothing.
// Usage: axon-bench-dispatch [CALLS_PER_ROUND] [ROUNDS]
#include <axon/ops.hpp>
#include <axon/runtime.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

using namespace axon;

namespace {

double ns_per_call(long calls, const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) f();
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
         static_cast<double>(calls);
}

struct Case {
  const char* name;
  std::function<void()> via_dispatch;
  std::function<void()> direct;
};

// The kernel of (op, dtype) on `d`, called the way dispatch calls it.
std::function<void()> direct_call(Device& d, const char* op, std::vector<axon_tensor> in, std::vector<axon_tensor> out,
                                  const void* attrs) {
  const axon_device_api& api = d.api();
  axon_kernel_fn fn = api.get_kernel(api.device_ctx, op, in.empty() ? out[0].dtype : in[0].dtype);
  if (fn == nullptr) {
    std::fprintf(stderr, "axon-bench-dispatch: %s has no kernel for %s\n", d.name().c_str(), op);
    std::exit(1);
  }
  return [=, &api]() mutable {
    axon_kernel_call kc{};
    kc.struct_size = sizeof kc;
    kc.op = op;
    kc.num_inputs = static_cast<int32_t>(in.size());
    kc.inputs = in.data();
    kc.num_outputs = static_cast<int32_t>(out.size());
    kc.outputs = out.data();
    kc.attrs = attrs;
    axon_error err{};
    if (fn(api.device_ctx, &kc, &err) != AXON_OK) {
      std::fprintf(stderr, "axon-bench-dispatch: %s failed: %s\n", op, err.message);
      std::exit(1);
    }
  };
}

}  // namespace

int main(int argc, char** argv) {
  const long calls = argc > 1 ? std::atol(argv[1]) : 200000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  if (calls <= 0 || rounds <= 0) {
    std::fprintf(stderr, "usage: axon-bench-dispatch [CALLS_PER_ROUND > 0] [ROUNDS > 0]\n");
    return 2;
  }
  Config config = Config::from_environment();
  config.threads = 1;  // one thread: the figure is the host's, not a pool's wake-up
  Runtime& rt = Runtime::init(config);
  Device& d = rt.default_device();
  DeviceScope scope(d);

  const float one = 1.0f;
  Tensor x = Tensor::from_vector<float>(d, AXON_FLOAT32, {1}, std::span<const float>(&one, 1));
  Tensor y(d, AXON_FLOAT32, {1});
  Tensor a = Tensor::from_vector<float>(d, AXON_FLOAT32, {1, 1}, std::span<const float>(&one, 1));
  Tensor c(d, AXON_FLOAT32, {1, 1});
  Tensor img = Tensor::from_vector<float>(d, AXON_FLOAT32, {1, 1, 1, 1}, std::span<const float>(&one, 1));
  Tensor filt = Tensor::from_vector<float>(d, AXON_FLOAT32, {1, 1, 1, 1}, std::span<const float>(&one, 1));
  Tensor conv_out(d, AXON_FLOAT32, {1, 1, 1, 1});

  static axon_scale_attrs scale_attrs{sizeof(axon_scale_attrs), 0.5f};
  static axon_matmul_attrs mm_attrs{sizeof(axon_matmul_attrs), 0, 0};
  static const axon_conv2d_attrs conv_attrs = ops::conv2d_attrs(1, AXON_PADDING_VALID);

  std::vector<Case> cases;
  cases.push_back({"Scale [1]", [&] { ops::scale(x, y, 0.5f, "bench"); },
                   direct_call(d, "Scale", {x.c_view()}, {y.c_view()}, &scale_attrs)});
  cases.push_back({"MatMul [1,1]x[1,1]", [&] { ops::matmul(a, a, c, false, false, "bench"); },
                   direct_call(d, "MatMul", {a.c_view(), a.c_view()}, {c.c_view()}, &mm_attrs)});
  cases.push_back({"Conv2D 1x1x1x1", [&] { ops::conv2d(img, filt, conv_out, conv_attrs, "bench"); },
                   direct_call(d, "Conv2D", {img.c_view(), filt.c_view()}, {conv_out.c_view()}, &conv_attrs)});

  std::printf("device %s, %ld calls per round, best of %d rounds\n", d.name().c_str(), calls, rounds);
  std::printf("%-22s %14s %14s %16s\n", "op", "dispatch ns", "direct ns", "overhead ns/call");
  for (const Case& k : cases) {
    double best_dispatch = 1e300, best_direct = 1e300;
    for (int r = 0; r < rounds; ++r) {  // alternate, so drift hits both alike
      best_dispatch = std::min(best_dispatch, ns_per_call(calls, k.via_dispatch));
      best_direct = std::min(best_direct, ns_per_call(calls, k.direct));
    }
    std::printf("%-22s %14.1f %14.1f %16.1f\n", k.name, best_dispatch, best_direct, best_dispatch - best_direct);
  }
  return 0;
}
