// The kernel library's one exported symbol: the private table the plugin uses
// to open devices and reach the collectives.
#include "axon_cuda_kernels.h"
#include "collectives.hpp"
#include "cuda_device.hpp"

namespace {

const char* build_info() {
  static const std::string info = [] {
    int rt = 0;
    cudaRuntimeGetVersion(&rt);
    const size_t dnn = cudnnGetVersion();
    int blas = 0;
    cublasGetProperty(MAJOR_VERSION, &blas);
    int blas_minor = 0;
    cublasGetProperty(MINOR_VERSION, &blas_minor);
    int nccl = 0;
    ncclGetVersion(&nccl);
    return axon::sdk::format("cudart %d.%d, cuDNN %zu.%zu.%zu, cuBLAS %d.%d, NCCL %d.%d.%d", rt / 1000, (rt % 1000) / 10,
                             dnn / 10000, (dnn % 10000) / 100, dnn % 100, blas, blas_minor, nccl / 10000,
                             (nccl % 10000) / 100, nccl % 100);
  }();
  return info.c_str();
}

axon_status open_device(const axon_cuda_open_args* args, const axon_device_api** out, axon_error* err) {
  return axon::sdk::guarded(err, [&] {
    axon::sdk::require(args != nullptr && out != nullptr, "open_device: null arguments");
    auto dev = std::make_unique<axon::cuda::CudaDevice>(*args);
    *out = axon::sdk::device_table(dev.release());
  });
}

// CUDA events bracket the enqueued work on the device's own stream.
axon_status time_on_stream(void* device_ctx, void (*enqueue)(void*), void* arg, int32_t iters, float* gpu_ms,
                           axon_error* err) {
  return axon::sdk::guarded(err, [&] {
    axon::sdk::require(device_ctx && enqueue && gpu_ms && iters > 0, "time_on_stream: bad arguments");
    auto& d = axon::cuda::device_from_ctx(device_ctx);
    d.activate();
    cudaEvent_t start = nullptr, stop = nullptr;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    struct Events {
      cudaEvent_t a, b;
      ~Events() {
        cudaEventDestroy(a);
        cudaEventDestroy(b);
      }
    } guard{start, stop};
    CUDA_CHECK(cudaEventRecord(start, d.stream()));
    for (int32_t i = 0; i < iters; ++i) enqueue(arg);
    CUDA_CHECK(cudaEventRecord(stop, d.stream()));
    CUDA_CHECK(cudaEventSynchronize(stop));
    CUDA_CHECK(cudaEventElapsedTime(gpu_ms, start, stop));
  });
}

}  // namespace

extern "C" AXON_PLUGIN_EXPORT axon_status axon_cuda_kernels_init(uint32_t version, axon_cuda_kernels_api* out,
                                                                 axon_error* err) {
  return axon::sdk::guarded(err, [&] {
    if (version != AXON_CUDA_KERNELS_VERSION)
      axon::sdk::fail(AXON_UNAVAILABLE, axon::sdk::format("plugin expects kernel table version %u, this library has %d", version,
                                                          AXON_CUDA_KERNELS_VERSION));
    std::memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->version = AXON_CUDA_KERNELS_VERSION;
    out->build_info = build_info();
    out->open_device = open_device;
    out->collectives = &axon::cuda::nccl_collectives();
    out->time_on_stream = time_on_stream;
  });
}
