// A "CHK" device on host memory that serves every op from the reference
// kernels, for axon-plugin-check's tests. A define picks one fault, and each
// fault fails exactly one of the checker's checks:
//   CHK_FAULT_WRONGKERNEL  Conv2D with SAME padding, stride 2 and an odd width
//                          leaves out the last output column;
//   CHK_FAULT_CRASHBAD     MatMul trusts the rank of its first input and
//                          crashes on any other than 2;
//   CHK_FAULT_LEAKINFO     memory_info's in_use never goes down;
//   CHK_FAULT_LOSTASYNC    synchronize() drops the error Relu's bad input left;
//   CHK_FAULT_LOSTEVENT    an event after Relu's bad input is reached without
//                          its error (synchronize() still reports it);
//   CHK_FAULT_DECLINEWRITES AvgPool writes zeros into the output of a call
//                          it then declines.
// Relu validates asynchronously in every variant (a bad call returns OK and
// the next synchronize() reports it), and every variant declines dilated
// Conv2D up front (supports) and AvgPool windows above 16 taps when it runs
// (AXON_UNIMPLEMENTED), so CHK_FAULT_NONE passes every check, the deferred
// errors included, and skips the declined calls.
#include "kernels.hpp"

#include <axon/host_memory_device.hpp>
#include <axon/op_validate.hpp>
#include <axon/plugin.hpp>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>

namespace chk {

using namespace axon::sdk;

class ChkDevice final : public HostMemoryDevice {
 public:
  explicit ChkDevice(const axon_device_config& config)
      : HostMemoryDevice("/device:CHK:0", config.memory_mode == AXON_MEMORY_LIMIT ? config.memory_limit_bytes : 0) {}

  // Reports (and clears) the error a deferred validation left.
  void synchronize() override {
    std::string pending;
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending.swap(pending_);
    }
#ifndef CHK_FAULT_LOSTASYNC
    if (!pending.empty()) fail(AXON_INVALID_ARGUMENT, pending);
#endif
  }
  void defer_error(const std::string& message) {
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_.empty()) pending_ = message;
  }

  axon_kernel_fn get_kernel(const char* op, axon_dtype dtype) override;
  const char* const* list_ops() override { return ref::kernel_table().list(); }
  bool supports(const axon_kernel_call& call) override {
    if (std::string(call.op) != "Conv2D" || call.attrs == nullptr) return true;
    const auto& a = *static_cast<const axon_conv2d_attrs*>(call.attrs);
    return a.dilation_h == 1 && a.dilation_w == 1;
  }

#ifdef CHK_FAULT_LOSTEVENT
  // Events always reached, the pending error left for synchronize() alone.
  bool event_query(axon_event) override { return true; }
  void event_synchronize(axon_event) override {}
#endif

#ifdef CHK_FAULT_LEAKINFO
  // in_use never goes down: the most ever in use.
  axon_memory_info memory_info() override {
    axon_memory_info m = HostMemoryDevice::memory_info();
    m.in_use = m.reserved = m.peak_in_use;
    return m;
  }
#endif

 private:
  std::mutex mu_;  // guards pending_
  std::string pending_;
};

axon_kernel_fn reference(const char* op) { return ref::kernel_table().find(op, AXON_FLOAT32); }

// Relu as a queued device would run it: a bad call is accepted, and its
// error is left for synchronize().
axon_status relu_deferred(void* ctx, const axon_kernel_call* call, axon_error* err) {
  std::string why;
  if (!axon::validate_call(axon::op_schema(axon::OpId::Relu), *call, &why)) {
    static_cast<ChkDevice*>(static_cast<Device*>(ctx))->defer_error(why);
    return AXON_OK;
  }
  return reference("Relu")(ctx, call, err);
}

// AvgPool as a library without an algorithm for large windows: declined
// when it runs, its output untouched (or, with the fault, zeroed first).
axon_status avg_pool_small_windows(void* ctx, const axon_kernel_call* call, axon_error* err) {
  const auto* a = static_cast<const axon_pool_attrs*>(call->attrs);
  if (a != nullptr && a->window_h * a->window_w > 16) {
#ifdef CHK_FAULT_DECLINEWRITES
    const axon_tensor& y = call->outputs[0];
    int64_t n = 1;
    for (int i = 0; i < y.rank; ++i) n *= y.dims[i];
    std::fill_n(static_cast<float*>(y.data), n, 0.0f);
#endif
    set_error(err, format("AvgPool: no algorithm for a %dx%d window", a->window_h, a->window_w).c_str());
    return AXON_UNIMPLEMENTED;
  }
  return reference("AvgPool")(ctx, call, err);
}

#ifdef CHK_FAULT_WRONGKERNEL
axon_status conv2d_drops_column(void* ctx, const axon_kernel_call* call, axon_error* err) {
  const axon_status s = reference("Conv2D")(ctx, call, err);
  if (s != AXON_OK) return s;
  const auto& a = *static_cast<const axon_conv2d_attrs*>(call->attrs);
  const axon_tensor& x = call->inputs[0];
  const axon_tensor& y = call->outputs[0];
  if (a.padding != AXON_PADDING_SAME || a.stride_w != 2 || x.dims[2] % 2 == 0) return s;
  float* yp = static_cast<float*>(y.data);
  for (int64_t row = 0; row < y.dims[0] * y.dims[1]; ++row)
    for (int64_t c = 0; c < y.dims[3]; ++c) yp[(row * y.dims[2] + y.dims[2] - 1) * y.dims[3] + c] = 0.0f;
  return s;
}
#endif

#ifdef CHK_FAULT_CRASHBAD
axon_status matmul_trusting(void* ctx, const axon_kernel_call* call, axon_error* err) {
  // Rows of a looked up per rank, as if every caller passed a matrix.
  static const int64_t two = 2;
  static const int64_t* const rows_by_rank[AXON_MAX_RANK + 1] = {nullptr, nullptr, &two};
  const int rank = std::clamp(call->inputs[0].rank, 0, AXON_MAX_RANK);
  const int64_t* volatile rows = rows_by_rank[rank];
  if (*rows != 2) return AXON_INTERNAL;
  return reference("MatMul")(ctx, call, err);
}
#endif

axon_kernel_fn ChkDevice::get_kernel(const char* op, axon_dtype dtype) {
  const std::string name = op;
  if (dtype == AXON_FLOAT32 && name == "Relu") return relu_deferred;
  if (dtype == AXON_FLOAT32 && name == "AvgPool") return avg_pool_small_windows;
#ifdef CHK_FAULT_WRONGKERNEL
  if (dtype == AXON_FLOAT32 && name == "Conv2D") return conv2d_drops_column;
#endif
#ifdef CHK_FAULT_CRASHBAD
  if (dtype == AXON_FLOAT32 && name == "MatMul") return matmul_trusting;
#endif
  return ref::kernel_table().find(op, dtype);
}

class ChkPlugin final : public Plugin {
 public:
  int device_count() noexcept override { return 1; }
  axon_device_props device_props(int physical_id) override {
    require(physical_id == 0, format("chk: no device %d (it has one)", physical_id));
    axon_device_props p{};
    copy_string(p.name, "axon-plugin-check test device (reference kernels)");
    p.physical_id = 0;
    p.threads = 1;
    return p;
  }
  std::unique_ptr<Device> open_device(int physical_id, const axon_device_config& config) override {
    require(physical_id == 0, format("chk: no device %d (it has one)", physical_id));
    return std::make_unique<ChkDevice>(config);
  }
};

}  // namespace chk

AXON_DEFINE_PLUGIN(new chk::ChkPlugin(), "chk", "0.1.0", "CHK", 5)
