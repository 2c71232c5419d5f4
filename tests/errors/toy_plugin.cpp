// TOY: a test device above the CPU (priority 300) that runs the reference
// plugin's kernels on host memory and plants one fault, chosen when it is
// built, so the tests can see each kind of failure reach axon-train:
//
//   TOY_FAULT_ASYNC  the TOY_FAULT_CALL-th call (default 1) of op TOY_FAULT_OP
//                    (default ApplyAdam, once a step) on device TOY_FAULT_DEVICE
//                    (default 0) runs, then records a failure and returns
//                    AXON_OK, as a queued GPU kernel would; the next
//                    synchronize() reports it. Copies do not.
//   TOY_FAULT_NAN    the TOY_NAN_CALL-th Relu call (default 3) fills its output
//                    with NaN.
//   TOY_FAIL_INIT    axon_plugin_get_api fails.
//   TOY_FAIL_OPEN    open_device fails.
//   TOY_NO_DEVICES   device_count is 0, with an unavailable reason.
//   TOY_NO_CONV      no Conv2D, Conv2DBackpropInput or Conv2DBackpropFilter
//                    kernel (for placement planning: --dry-run,
//                    --strict-placement).
//
// (TOY_* above in upper case are compile definitions; the numbers come from
// environment variables of the same names.) The fused ops (_Fused*, the
// leading underscore) are left out, so the layers call Conv2D, BiasAdd,
// Relu, ... one by one and a fault lands in a known op and layer.
#include "kernels.hpp"

#include <axon/plugin.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

namespace toy {

using namespace axon::sdk;

constexpr int kDevices = 2;

int64_t env_number(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoll(v) : fallback;
}

axon_dtype dtype_of(const axon_kernel_call& c) {
  return c.num_inputs > 0 ? c.inputs[0].dtype : c.outputs[0].dtype;
}

class ToyDevice final : public Device {
 public:
  explicit ToyDevice(int id) : id_(id) {}

  void* allocate(size_t bytes) override {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    if (p == nullptr) fail(AXON_OUT_OF_MEMORY, format("toy: cannot allocate %zu bytes", bytes));
    return p;
  }
  void deallocate(void* p) noexcept override { std::free(p); }
  void copy_host_to_device(void* dst, const void* src, size_t n) override { copy(dst, src, n); }
  void copy_device_to_host(void* dst, const void* src, size_t n) override { copy(dst, src, n); }
  void copy_device_to_device(void* dst, const void* src, size_t n) override { copy(dst, src, n); }

  // What a queued kernel's failure looks like: reported here, once.
  void synchronize() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_.empty()) return;
    const std::string message = pending_;
    pending_.clear();
    fail(AXON_INTERNAL, "queued kernel failed: " + message);
  }

  axon_kernel_fn get_kernel(const char* op, axon_dtype dtype) override {
    const axon::OpSchema* s = op == nullptr ? nullptr : axon::find_op(op);
    if (s == nullptr || axon::op_is_optional(*s) || ref::kernel_table().find(op, dtype) == nullptr) return nullptr;
#if defined(TOY_NO_CONV)
    if (s->id == axon::OpId::Conv2D || s->id == axon::OpId::Conv2DBackpropInput ||
        s->id == axon::OpId::Conv2DBackpropFilter)
      return nullptr;
#endif
    return &run;
  }
  const char* const* list_ops() override { return ops(); }

 private:
  static void copy(void* dst, const void* src, size_t n) {
    if (n > 0) std::memmove(dst, src, n);
  }

  // Every kernel: the reference one, then the planted fault.
  static axon_status run(void* ctx, const axon_kernel_call* call, axon_error* err) {
    auto& self = *static_cast<ToyDevice*>(static_cast<Device*>(ctx));
    const axon_status st = ref::kernel_table().find(call->op, dtype_of(*call))(ctx, call, err);
    if (st != AXON_OK) return st;
    return guarded(err, [&] { self.after(*call); });
  }

  void after(const axon_kernel_call& call) {
#if defined(TOY_FAULT_ASYNC)
    const char* op = std::getenv("TOY_FAULT_OP");
    const axon::OpSchema* faulty = axon::find_op(op != nullptr && *op != '\0' ? op : "ApplyAdam");
    if (faulty == nullptr || axon::find_op(call.op) != faulty) return;
    const int64_t n = ++calls_;
    if (id_ == env_number("TOY_FAULT_DEVICE", 0) && n == env_number("TOY_FAULT_CALL", 1)) {
      std::lock_guard<std::mutex> lock(mu_);
      pending_ = std::string(call.op) + " call " + std::to_string(n) + " on toy device " + std::to_string(id_) +
                 ": planted asynchronous fault";
    }
#elif defined(TOY_FAULT_NAN)
    if (axon::find_op(call.op) == &axon::op_schema(axon::OpId::Relu) && ++relu_calls_ == env_number("TOY_NAN_CALL", 3)) {
      const axon_tensor& y = call.outputs[0];
      int64_t count = 1;
      for (int i = 0; i < y.rank; ++i) count *= y.dims[i];
      float* out = static_cast<float*>(y.data);
      for (int64_t i = 0; i < count; ++i) out[i] = std::numeric_limits<float>::quiet_NaN();
    }
#else
    (void)call;
#endif
  }

  // The reference ops without the fused ones.
  static const char* const* ops() {
    static const std::vector<const char*> list = [] {
      std::vector<const char*> v;
      for (const char* const* op = ref::kernel_table().list(); *op != nullptr; ++op) {
        const axon::OpSchema* s = axon::find_op(*op);
        if (s == nullptr || axon::op_is_optional(*s)) continue;
#if defined(TOY_NO_CONV)
        if (s->id == axon::OpId::Conv2D || s->id == axon::OpId::Conv2DBackpropInput ||
            s->id == axon::OpId::Conv2DBackpropFilter)
          continue;
#endif
        v.push_back(*op);
      }
      v.push_back(nullptr);
      return v;
    }();
    return list.data();
  }

  int id_;
  int64_t calls_ = 0;
  int64_t relu_calls_ = 0;
  std::mutex mu_;
  std::string pending_;
};

// In-process all-reduce over host memory, in device order (for --strategy mirrored).
axon_status all_reduce(void*, int32_t n, void* const*, void* const* buffers, int64_t count, axon_dtype dtype,
                       axon_reduce_op op, axon_error* err) {
  return guarded(err, [&] {
    require(dtype == AXON_FLOAT32, "toy: all-reduce of float32 only");
    float* first = static_cast<float*>(buffers[0]);
    for (int32_t b = 1; b < n; ++b)
      for (int64_t i = 0; i < count; ++i) first[i] += static_cast<const float*>(buffers[b])[i];
    if (op == AXON_REDUCE_MEAN)
      for (int64_t i = 0; i < count; ++i) first[i] /= static_cast<float>(n);
    for (int32_t b = 1; b < n; ++b) std::memcpy(buffers[b], first, static_cast<size_t>(count) * sizeof(float));
  });
}

class ToyPlugin final : public Plugin {
 public:
  ToyPlugin() {
    collectives_.struct_size = sizeof collectives_;
    collectives_.all_reduce = &all_reduce;
  }
  int device_count() noexcept override {
#if defined(TOY_NO_DEVICES)
    return 0;
#else
    return kDevices;
#endif
  }
  std::string unavailable_reason() override {
#if defined(TOY_NO_DEVICES)
    return "no toy accelerator is plugged in (planted)";
#else
    return {};
#endif
  }
  axon_device_props device_props(int physical_id) override {
    require(physical_id >= 0 && physical_id < kDevices, format("toy: no device %d", physical_id));
    axon_device_props p{};
    copy_string(p.name, "toy device (reference kernels, one planted fault)");
    p.physical_id = physical_id;
    p.threads = 1;
    return p;
  }
  std::unique_ptr<Device> open_device(int physical_id, const axon_device_config&) override {
    // What the host's get_config says, for the tests of the setting.
    const char* check = config("check-numerics");
    log(AXON_LOG_INFO, format("device %d: check-numerics=%s", physical_id, check != nullptr ? check : "(unset)"));
#if defined(TOY_FAIL_OPEN)
    fail(AXON_UNAVAILABLE, format("device %d failed its self-test (planted open failure)", physical_id));
#endif
    require(physical_id >= 0 && physical_id < kDevices, format("toy: no device %d", physical_id));
    return std::make_unique<ToyDevice>(physical_id);
  }
  const axon_collective_api* collectives() override { return &collectives_; }

 private:
  axon_collective_api collectives_{};
};

}  // namespace toy

#if defined(TOY_FAIL_INIT)
// Fails before it fills its table, so it never says its device type.
extern "C" AXON_PLUGIN_EXPORT axon_status axon_plugin_get_api(const axon_host_api*, const axon_plugin_api**,
                                                              axon_error* err) {
  axon::sdk::set_error(err, "the toy accelerator did not answer (planted init failure)");
  return AXON_UNAVAILABLE;
}
#else
AXON_DEFINE_PLUGIN(new toy::ToyPlugin(), "toy", "0.1.0", "TOY", 300)
#endif
