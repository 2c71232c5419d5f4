/* Private table between libaxon-plugin-cuda.so (the part the runtime loads,
 * which only talks to the CUDA driver) and libaxon-cuda-kernels.so (the part
 * linking cudart, cuDNN, cuBLAS and NCCL, loaded only when there is a device
 * to use). Not a public interface: both files come from one build and the
 * plugin refuses a kernel library of another version. */
#ifndef AXON_CUDA_KERNELS_H
#define AXON_CUDA_KERNELS_H

#include <axon/plugin_abi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AXON_CUDA_KERNELS_VERSION 3
#define AXON_CUDA_KERNELS_ENTRY "axon_cuda_kernels_init"
#define AXON_CUDA_KERNELS_FILE "libaxon-cuda-kernels.so"

/* What the plugin tells the kernel library when it opens a device. */
typedef struct axon_cuda_open_args {
  size_t struct_size;
  const axon_host_api* host;   /* for logging; may be NULL */
  const char* plugin_name;     /* log tag */
  int32_t cuda_ordinal;        /* the driver's ordinal (after CUDA_VISIBLE_DEVICES) */
  const char* label;           /* "/device:GPU:0 (NVIDIA H200)" for messages */
  int32_t allow_tf32;          /* config "allow-tf32" */
  axon_device_config config;   /* memory mode and limit from the host */
  int32_t deterministic;       /* config "deterministic": only deterministic cuDNN algorithms */
} axon_cuda_open_args;

typedef struct axon_cuda_kernels_api {
  size_t struct_size;
  uint32_t version;            /* AXON_CUDA_KERNELS_VERSION */
  const char* build_info;      /* "cudart 13.0, cuDNN 9.19.0, cuBLAS 13.1.0, NCCL 2.28.9" */
  axon_status (*open_device)(const axon_cuda_open_args* args, const axon_device_api** out, axon_error* err);
  /* device_ctx arguments are the ctx of devices opened above; plugin_ctx is ignored. */
  const axon_collective_api* collectives;
  /* For benchmarks (bench/cuda): calls enqueue(arg) `iters` times between two
   * CUDA events recorded on the device's stream, waits, and returns the GPU
   * time in milliseconds. */
  axon_status (*time_on_stream)(void* device_ctx, void (*enqueue)(void* arg), void* arg, int32_t iters, float* gpu_ms,
                                axon_error* err);
} axon_cuda_kernels_api;

typedef axon_status (*axon_cuda_kernels_init_fn)(uint32_t version, axon_cuda_kernels_api* out, axon_error* err);

#ifdef __cplusplus
}
#endif

#endif
