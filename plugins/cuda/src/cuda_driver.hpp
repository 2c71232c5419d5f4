// The few CUDA driver API entry points the plugin needs to count and describe
// devices, loaded with dlopen("libcuda.so.1") so that the plugin itself links
// no CUDA library and loads on machines without a driver.
#pragma once

#include <cuda.h>  // types and enum values only; nothing is linked

#include <string>

namespace axon::cuda {

struct Driver {
  CUresult (*cuInit)(unsigned int) = nullptr;
  CUresult (*cuDriverGetVersion)(int*) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice) = nullptr;
  CUresult (*cuDeviceGetPCIBusId)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetUuid)(CUuuid*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
  CUresult (*cuCtxPushCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxPopCurrent)(CUcontext*) = nullptr;
  CUresult (*cuMemGetInfo)(size_t*, size_t*) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;

  // "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)".
  std::string error_text(CUresult r) const;
};

// Loads the driver once. Returns nullptr and sets `reason` when the library or
// one of its symbols is missing ("CUDA driver not found (libcuda.so.1: ...)").
const Driver* load_driver(std::string& reason);

}  // namespace axon::cuda
