#include "cuda_device.hpp"

#include "conv.hpp"
#include "elementwise.hpp"
#include "math_policy.hpp"

#include <algorithm>
#include <thread>

namespace axon::cuda {

namespace {

constexpr size_t kCublasWorkspace = 32u << 20;  // cuBLAS's own recommendation for Hopper

}  // namespace

// cudaMalloc/cudaFree for the allocator, on this device.
class CudaDevice::Segments final : public SegmentSource {
 public:
  explicit Segments(int ordinal) : ordinal_(ordinal) {}
  void* acquire(size_t bytes) noexcept override {
    void* p = nullptr;
    if (cudaSetDevice(ordinal_) != cudaSuccess || cudaMalloc(&p, bytes) != cudaSuccess) {
      cudaGetLastError();  // an allocation failure is not sticky; clear it
      return nullptr;
    }
    return p;
  }
  void release(void* p) noexcept override {
    cudaSetDevice(ordinal_);
    cudaFree(p);
  }

 private:
  int ordinal_;
};

CudaDevice::CudaDevice(const axon_cuda_open_args& a)
    : host_(a.host),
      plugin_name_(a.plugin_name ? a.plugin_name : "cuda"),
      ordinal_(a.cuda_ordinal),
      label_(a.label ? a.label : "GPU"),
      allow_tf32_(a.allow_tf32 != 0),
      deterministic_(a.struct_size >= AXON_STRUCT_SIZE(axon_cuda_open_args, deterministic) && a.deterministic != 0) {
  try {
    init(a);
  } catch (...) {
    release();  // a failed open leaves no stream, handle or memory behind
    throw;
  }
}

void CudaDevice::init(const axon_cuda_open_args& a) {
  activate();
  std::string why;
  if (!launch::have_code_for_current_device(why)) {
    cudaDeviceProp p{};
    cudaGetDeviceProperties(&p, ordinal_);
    sdk::fail(AXON_UNAVAILABLE, sdk::format("%s: the CUDA kernel library has no code for compute capability %d.%d: %s",
                                            label_.c_str(), p.major, p.minor, why.c_str()));
  }
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CUDNN_CHECK(cudnnCreate(&cudnn_));
  CUDNN_CHECK(cudnnSetStream(cudnn_, stream_));
  CUBLAS_CHECK(cublasCreate(&cublas_));
  CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
  // TF32 changes float32 results; it is off unless asked for, and FP16 never.
  CUBLAS_CHECK(cublasSetMathMode(cublas_, cublas_math({allow_tf32_, deterministic_})));
  // cuBLAS is deterministic on one stream with its own workspace unless atomics
  // are allowed; say so explicitly when determinism is asked for.
  if (deterministic_) CUBLAS_CHECK(cublasSetAtomicsMode(cublas_, CUBLAS_ATOMICS_NOT_ALLOWED));
  log(AXON_LOG_INFO, sdk::format("%s: float32 math: TF32 %s, deterministic algorithms %s", label_.c_str(),
                                 allow_tf32_ ? "allowed" : "off", deterministic_ ? "only" : "not required"));
  conv_plans_ = std::make_unique<ConvPlans>();
  CUDA_CHECK(cudaEventCreateWithFlags(&idle_, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreateWithFlags(&joined_, cudaEventDisableTiming));

  size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  const axon_device_config& cfg = a.config;
  axon_memory_mode mode = cfg.memory_mode;
  if (mode == AXON_MEMORY_LIMIT && cfg.memory_limit_bytes == 0)
    sdk::fail(AXON_INVALID_ARGUMENT, label_ + ": memory mode 'limit' needs a non-zero memory_limit_bytes");
  segments_ = std::make_unique<Segments>(ordinal_);
  allocator_ = std::make_unique<CachingAllocator>(*segments_, mode, cfg.memory_limit_bytes, total, label_);
  if (mode == AXON_MEMORY_RESERVE) {
    // Leave room for what cuDNN, cuBLAS and NCCL allocate outside the allocator.
    const size_t headroom = std::max<size_t>(512u << 20, total / 32);
    size_t amount = free > headroom ? free - headroom : 0;
    if (cfg.memory_limit_bytes > 0) amount = std::min<size_t>(amount, cfg.memory_limit_bytes);
    allocator_->reserve(amount);
    log(AXON_LOG_INFO, sdk::format("%s: memory mode reserve: reserved %s of %s free (%s total)", label_.c_str(),
                                   CachingAllocator::human(allocator_->info().reserved).c_str(),
                                   CachingAllocator::human(free).c_str(), CachingAllocator::human(total).c_str()));
  } else if (mode == AXON_MEMORY_LIMIT) {
    log(AXON_LOG_INFO, sdk::format("%s: memory mode limit: grows on demand up to %s (%s free, %s total)", label_.c_str(),
                                   CachingAllocator::human(cfg.memory_limit_bytes).c_str(),
                                   CachingAllocator::human(free).c_str(), CachingAllocator::human(total).c_str()));
  } else {
    log(AXON_LOG_INFO, sdk::format("%s: memory mode growth: grows on demand (%s free, %s total)", label_.c_str(),
                                   CachingAllocator::human(free).c_str(), CachingAllocator::human(total).c_str()));
  }
  // cuBLAS would otherwise cudaMalloc its workspace behind the allocator's back.
  // Under a small limit it gets a sixteenth of it (or its own default, if that is under 1 MiB).
  size_t workspace = kCublasWorkspace;
  if (mode == AXON_MEMORY_LIMIT) workspace = std::min<size_t>(workspace, cfg.memory_limit_bytes / 16 / (1u << 20) * (1u << 20));
  if (workspace > 0) {
    cublas_workspace_ = allocator_->allocate(workspace);
    cublas_workspace_bytes_ = workspace;
    CUBLAS_CHECK(cublasSetWorkspace(cublas_, cublas_workspace_, workspace));
  }
}

CudaDevice::~CudaDevice() { release(); }

void CudaDevice::release() noexcept {
  cudaSetDevice(ordinal_);
  if (stream_) {
    try {
      synchronize();
    } catch (...) {  // a failed collective was reported and aborted; nothing is left to wait for
    }
  }
  for (cudaStream_t s : streams_) cudaStreamDestroy(s);  // the host's, left undestroyed at close
  streams_.clear();
  if (communication_stream_) cudaStreamDestroy(communication_stream_);
  communication_stream_ = nullptr;
  if (idle_) cudaEventDestroy(idle_);
  idle_ = nullptr;
  if (joined_) cudaEventDestroy(joined_);
  joined_ = nullptr;
  conv_plans_.reset();
  matmul_plans_.reset();
  if (cublas_) cublasDestroy(cublas_);
  cublas_ = nullptr;
  if (cudnn_) cudnnDestroy(cudnn_);
  cudnn_ = nullptr;
  if (allocator_ && cublas_workspace_) allocator_->deallocate(cublas_workspace_);
  cublas_workspace_ = nullptr;
  cublas_workspace_bytes_ = 0;
  allocator_.reset();
  if (stream_) cudaStreamDestroy(stream_);
  stream_ = nullptr;
}

void CudaDevice::log(axon_log_level level, const std::string& message) const {
  if (host_ && host_->struct_size >= AXON_STRUCT_SIZE(axon_host_api, log) && host_->log)
    host_->log(host_->host_ctx, level, plugin_name_.c_str(), message.c_str());
}

void* CudaDevice::allocate(size_t bytes) {
  activate();
  return allocator_->allocate(bytes);
}

void CudaDevice::deallocate(void* p) noexcept { allocator_->deallocate(p); }

void CudaDevice::copy_host_to_device(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  activate();
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
  // From pageable memory the copy is staged before cudaMemcpyAsync returns; from
  // pinned memory it is not, and the ABI promises `src` may be reused at once.
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, src) == cudaSuccess && attr.type == cudaMemoryTypeHost) wait_stream();
  cudaGetLastError();
}

void CudaDevice::copy_device_to_host(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  activate();
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
  wait_stream();
}

void CudaDevice::copy_device_to_device(void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src) return;
  activate();
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
}

void CudaDevice::synchronize() {
  activate();
  std::vector<cudaStream_t> all;
  {
    std::lock_guard<std::mutex> lock(streams_mu_);
    all = streams_;
  }
  if (communication_stream_ != nullptr) all.push_back(communication_stream_);
  for (cudaStream_t s : all) wait_stream(s);
  wait_stream();
  CUDA_CHECK(cudaGetLastError());
}

cudaStream_t CudaDevice::communication_stream() {
  std::lock_guard<std::mutex> lock(streams_mu_);
  if (communication_stream_ == nullptr) {
    activate();
    CUDA_CHECK(cudaStreamCreateWithFlags(&communication_stream_, cudaStreamNonBlocking));
  }
  return communication_stream_;
}

void CudaDevice::add_pending(PendingCollective c) {
  std::lock_guard<std::mutex> lock(pending_mu_);
  // A later collective on the same communicator stands for the earlier ones
  // (it finishes after them), so the list stays as long as the communicators.
  std::erase_if(pending_, [&](const auto& p) { return p.second.communicator == c.communicator; });
  pending_.emplace_back(++pending_count_, std::move(c));
}

void CudaDevice::wait_stream(cudaStream_t s) {
  if (s == nullptr) s = stream_;
  bool pending = false;
  {
    std::lock_guard<std::mutex> lock(pending_mu_);
    pending = !pending_.empty();
  }
  if (!pending) {
    CUDA_CHECK(cudaStreamSynchronize(s));
    return;
  }
  CUDA_CHECK(cudaEventRecord(idle_, s));
  wait_for(idle_);
}

void CudaDevice::wait_for(cudaEvent_t event) {
  std::vector<std::pair<uint64_t, PendingCollective>> watched;
  {
    std::lock_guard<std::mutex> lock(pending_mu_);
    watched = pending_;
  }
  if (watched.empty()) {
    CUDA_CHECK(cudaEventSynchronize(event));
    return;
  }
  // Forgets entries [first, last]: done, or reported.
  auto forget = [this](uint64_t first, uint64_t last) {
    std::lock_guard<std::mutex> lock(pending_mu_);
    std::erase_if(pending_, [&](const auto& p) { return p.first >= first && p.first <= last; });
  };
  // Reports the first collective that failed or is past its deadline.
  auto check = [&](bool done) {
    for (auto& [number, c] : watched) {
      std::string why = c.failure();
      axon_status code = AXON_INTERNAL;
      if (why.empty() && !done && std::chrono::steady_clock::now() > c.deadline) {
        why = c.expire();
        code = AXON_DEADLINE_EXCEEDED;
      }
      if (!why.empty()) {
        forget(number, number);
        sdk::fail(code, why);
      }
    }
  };
  for (;;) {
    const cudaError_t q = cudaEventQuery(event);
    if (q == cudaSuccess) break;
    if (q != cudaErrorNotReady) CUDA_CHECK(q);
    check(false);
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  check(true);  // finished, but an error may have come with it
  forget(watched.front().first, watched.back().first);
}

namespace {
cudaStream_t cuda_stream(axon_stream s, cudaStream_t device_stream) {
  return s != nullptr ? reinterpret_cast<cudaStream_t>(s) : device_stream;
}
}  // namespace

axon_stream CudaDevice::stream_create() {
  activate();
  cudaStream_t s = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::lock_guard<std::mutex> lock(streams_mu_);
  streams_.push_back(s);
  return reinterpret_cast<axon_stream>(s);
}

void CudaDevice::stream_destroy(axon_stream stream) noexcept {
  auto s = reinterpret_cast<cudaStream_t>(stream);
  {
    std::lock_guard<std::mutex> lock(streams_mu_);
    std::erase(streams_, s);
  }
  if (cudaSetDevice(ordinal_) == cudaSuccess) {
    cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
  }
}

// cudaStreamWaitEvent waits for the event as recorded now, so one event serves
// every join of this device (its kernels come from one thread at a time).
void CudaDevice::join(cudaStream_t first, cudaStream_t waiting) {
  CUDA_CHECK(cudaEventRecord(joined_, first));
  CUDA_CHECK(cudaStreamWaitEvent(waiting, joined_, 0));
}

void CudaDevice::reach_peer(const void* src) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, src) != cudaSuccess || a.type != cudaMemoryTypeDevice || a.device == ordinal_) {
    cudaGetLastError();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(streams_mu_);
    if (!peers_.insert(a.device).second) return;
  }
  int can = 0;
  if (cudaDeviceCanAccessPeer(&can, ordinal_, a.device) == cudaSuccess && can == 1) {
    const cudaError_t e = cudaDeviceEnablePeerAccess(a.device, 0);
    if (e == cudaSuccess || e == cudaErrorPeerAccessAlreadyEnabled)
      log(AXON_LOG_DEBUG,
          sdk::format("%s: direct access to GPU %d's memory for peer copies", label_.c_str(), a.device));
  }
  cudaGetLastError();  // without peer access the driver stages the copy through the host
}

// axon_event is the cudaEvent_t itself.
axon_event CudaDevice::event_create() {
  activate();
  cudaEvent_t e = nullptr;
  CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return reinterpret_cast<axon_event>(e);
}

void CudaDevice::event_destroy(axon_event event) noexcept {
  if (cudaSetDevice(ordinal_) == cudaSuccess) cudaEventDestroy(reinterpret_cast<cudaEvent_t>(event));
}

void CudaDevice::event_record(axon_event event, axon_stream stream) {
  activate();
  CUDA_CHECK(cudaEventRecord(reinterpret_cast<cudaEvent_t>(event), cuda_stream(stream, stream_)));
}

void CudaDevice::event_wait(axon_event event, axon_stream stream) {
  activate();
  CUDA_CHECK(cudaStreamWaitEvent(cuda_stream(stream, stream_), reinterpret_cast<cudaEvent_t>(event), 0));
}

bool CudaDevice::event_query(axon_event event) {
  activate();
  const cudaError_t q = cudaEventQuery(reinterpret_cast<cudaEvent_t>(event));
  if (q == cudaErrorNotReady) return false;
  CUDA_CHECK(q);
  return true;
}

void CudaDevice::event_synchronize(axon_event event) {
  activate();
  wait_for(reinterpret_cast<cudaEvent_t>(event));
}

void CudaDevice::copy_host_to_device_async(void* dst, const void* src, size_t bytes, axon_stream stream) {
  if (bytes == 0) return;
  activate();
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, cuda_stream(stream, stream_)));
}

void CudaDevice::copy_device_to_host_async(void* dst, const void* src, size_t bytes, axon_stream stream) {
  if (bytes == 0) return;
  activate();
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, cuda_stream(stream, stream_)));
}

// cudaMemcpyDefault: unified addressing tells a peer GPU's memory from ours
// (a peer copy where the GPUs have one, staged by the driver where not).
void CudaDevice::copy_device_to_device_async(void* dst, const void* src, size_t bytes, axon_stream stream) {
  if (bytes == 0 || dst == src) return;
  activate();
  reach_peer(src);
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, cuda_stream(stream, stream_)));
}

axon_kernel_fn CudaDevice::get_kernel(const char* op, axon_dtype dtype) { return kernel_table().find(op, dtype); }

const char* const* CudaDevice::list_ops() { return kernel_table().list(); }

axon_memory_info CudaDevice::memory_info() { return allocator_->info(); }

}  // namespace axon::cuda
