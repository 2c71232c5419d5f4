// One opened CUDA device: its stream, cuDNN and cuBLAS handles, caching
// allocator and kernel table. Every entry point first makes the device
// current on the calling thread, so several devices can be driven from one.
#pragma once

#include <axon/plugin.hpp>

#include "allocator.hpp"
#include "axon_cuda_kernels.h"
#include "check.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace axon::cuda {

struct ConvPlans;  // conv.cpp: cuDNN descriptors and algorithms per shape

// A collective queued on a device's stream (collectives.cpp). While one is
// pending, a wait for the stream polls it instead of blocking in
// cudaStreamSynchronize: an NCCL error, or its deadline passing, ends the
// wait with a message naming the collective, never a hang.
struct PendingCollective {
  const void* communicator = nullptr;  // one entry per communicator: a later collective replaces it
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // "" while it may still finish; else why it cannot (its communicator is then aborted).
  std::function<std::string()> failure;
  // At the deadline: aborts its communicator; says what timed out.
  std::function<std::string()> expire;
};

class CudaDevice final : public sdk::Device {
 public:
  explicit CudaDevice(const axon_cuda_open_args& args);
  ~CudaDevice() override;

  // sdk::Device
  void* allocate(size_t bytes) override;
  void deallocate(void* p) noexcept override;
  void copy_host_to_device(void* dst, const void* src, size_t bytes) override;
  void copy_device_to_host(void* dst, const void* src, size_t bytes) override;
  void copy_device_to_device(void* dst, const void* src, size_t bytes) override;
  void synchronize() override;
  axon_kernel_fn get_kernel(const char* op, axon_dtype dtype) override;
  const char* const* list_ops() override;
  axon_memory_info memory_info() override;
  // Streams and events: CUDA's own (axon_stream is a cudaStream_t, NULL the
  // device's stream; axon_event a cudaEvent_t); the asynchronous copies are
  // cudaMemcpyAsync on the stream given.
  bool has_events() const override { return true; }
  axon_stream stream_create() override;
  void stream_destroy(axon_stream stream) noexcept override;
  axon_event event_create() override;
  void event_destroy(axon_event event) noexcept override;
  void event_record(axon_event event, axon_stream stream) override;
  void event_wait(axon_event event, axon_stream stream) override;
  bool event_query(axon_event event) override;
  void event_synchronize(axon_event event) override;
  void copy_host_to_device_async(void* dst, const void* src, size_t bytes, axon_stream stream) override;
  void copy_device_to_host_async(void* dst, const void* src, size_t bytes, axon_stream stream) override;
  void copy_device_to_device_async(void* dst, const void* src, size_t bytes, axon_stream stream) override;

  void activate() const { CUDA_CHECK(cudaSetDevice(ordinal_)); }
  // Before each kernel (sdk::validated_kernel): this device made current.
  struct Current {};
  Current kernel_scope() const {
    activate();
    return {};
  }
  // Collectives queued on the stream, watched by every wait for it.
  void add_pending(PendingCollective c);
  // Waits until the stream's work is done (device-to-host copies; `s` null:
  // the device's stream): cudaStreamSynchronize, or while collectives are
  // pending, polling them; throws what they report.
  void wait_stream(cudaStream_t s = nullptr);
  // Waits until `event` is reached, as wait_stream does for the whole stream.
  void wait_for(cudaEvent_t event);
  // Work queued on `waiting` from now on starts after the work queued on
  // `first` so far.
  void join(cudaStream_t first, cudaStream_t waiting);
  // Where `src` is a peer GPU's memory, lets this GPU reach it directly (a
  // peer copy over NVLink or PCIe) if the two can; asked once per peer.
  void reach_peer(const void* src);
  void log(axon_log_level level, const std::string& message) const;

  int ordinal() const { return ordinal_; }
  const std::string& label() const { return label_; }
  cudaStream_t stream() const { return stream_; }
  // The stream queued collectives run on (all_reduce_async and
  // comm_all_reduce_async), beside the device's own; made on first use.
  cudaStream_t communication_stream();
  cudnnHandle_t cudnn() const { return cudnn_; }
  cublasHandle_t cublas() const { return cublas_; }
  bool allow_tf32() const { return allow_tf32_; }
  bool deterministic() const { return deterministic_; }
  ConvPlans& conv_plans() { return *conv_plans_; }
  // cuBLAS's workspace (cuBLASLt products use it too), and a slot for
  // matmul.cpp's per-shape plans (made there, released before the handles).
  void* cublas_workspace() const { return cublas_workspace_; }
  size_t cublas_workspace_bytes() const { return cublas_workspace_bytes_; }
  std::shared_ptr<void>& matmul_plans() { return matmul_plans_; }

  // Device memory for the duration of one kernel call (workspaces, padded
  // copies); freed on scope exit, which is safe because reuse is stream-ordered.
  class Scratch {
   public:
    Scratch(CudaDevice& d, size_t bytes) : d_(&d), p_(d.allocate(bytes)) {}
    ~Scratch() { d_->deallocate(p_); }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    template <class T = void>
    T* get() const { return static_cast<T*>(p_); }

   private:
    CudaDevice* d_;
    void* p_;
  };

 private:
  class Segments;
  void init(const axon_cuda_open_args& args);
  void release() noexcept;
  const axon_host_api* host_;
  std::string plugin_name_;
  int ordinal_;
  std::string label_;
  bool allow_tf32_;
  bool deterministic_;
  cudaStream_t stream_ = nullptr;
  cudaStream_t communication_stream_ = nullptr;
  std::mutex streams_mu_;
  std::vector<cudaStream_t> streams_;  // from stream_create, still alive
  std::set<int> peers_;                // GPUs reach_peer asked about (guarded by streams_mu_)
  cudnnHandle_t cudnn_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  std::unique_ptr<Segments> segments_;
  std::unique_ptr<CachingAllocator> allocator_;
  void* cublas_workspace_ = nullptr;
  size_t cublas_workspace_bytes_ = 0;
  std::shared_ptr<void> matmul_plans_;
  std::unique_ptr<ConvPlans> conv_plans_;
  cudaEvent_t idle_ = nullptr;  // recorded by wait_stream
  cudaEvent_t joined_ = nullptr;  // recorded by join
  std::mutex pending_mu_;
  std::vector<std::pair<uint64_t, PendingCollective>> pending_;  // by number, in the order queued
  uint64_t pending_count_ = 0;
};

// F on the call's stream: kernels run on the device's stream (its cuDNN and
// cuBLAS handles, the allocator's stream-ordered reuse are bound to it), so a
// call naming another stream is joined to it by events both ways: the
// device's stream waits for that stream's work so far, and that stream for
// the kernel. Ordered as the call asks; the two run one after the other.
template <void (*F)(CudaDevice&, const sdk::KernelCall&)>
void on_call_stream(CudaDevice& d, const sdk::KernelCall& c) {
  const auto s = reinterpret_cast<cudaStream_t>(c.stream());
  if (s == nullptr || s == d.stream()) return F(d, c);
  d.join(s, d.stream());
  F(d, c);
  d.join(d.stream(), s);
}

// Registers F as op Op's kernel for each dtype the op table keys it by,
// behind the op table's validator (sdk::validated_kernel: counts, dtypes,
// shapes, attributes), so F checks only what cuDNN and cuBLAS cannot take;
// the device is made current first (CudaDevice::kernel_scope).
template <OpId Op, void (*F)(CudaDevice&, const sdk::KernelCall&)>
void add(sdk::KernelTable& t) {
  sdk::add_validated<Op, CudaDevice, on_call_stream<F>>(t);
}

// The device behind a device_ctx handed out by open_device.
inline CudaDevice& device_from_ctx(void* ctx) { return static_cast<CudaDevice&>(*static_cast<sdk::Device*>(ctx)); }

// The device's kernels (kernel_table.cpp), registered per area (conv.cpp,
// pool_activation.cpp, matmul.cpp, ops.cpp, activations.cpp, tensor_ops.cpp,
// batch_norm.cpp, optimizers.cpp, losses.cpp, random.cpp, reduce.cpp).
const sdk::KernelTable& kernel_table();
void register_conv_kernels(sdk::KernelTable& t);
void register_pool_activation_kernels(sdk::KernelTable& t);
void register_matmul_kernels(sdk::KernelTable& t);
void register_own_kernels(sdk::KernelTable& t);
void register_activation_kernels(sdk::KernelTable& t);
void register_tensor_kernels(sdk::KernelTable& t);
void register_batch_norm_kernels(sdk::KernelTable& t);
void register_optimizer_kernels(sdk::KernelTable& t);
void register_loss_kernels(sdk::KernelTable& t);
void register_random_kernels(sdk::KernelTable& t);
void register_reduce_kernels(sdk::KernelTable& t);
void register_layer_norm_kernels(sdk::KernelTable& t);

}  // namespace axon::cuda
