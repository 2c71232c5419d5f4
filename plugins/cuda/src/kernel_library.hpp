// Finds and loads libaxon-cuda-kernels.so (cudart, cuDNN, cuBLAS, NCCL) from
// the plugin's own folder, once. Loading it costs tens to hundreds of
// milliseconds, so the plugin does it only when the driver shows a device.
#pragma once

#include "axon_cuda_kernels.h"

#include <string>

namespace axon::cuda {

// Returns the table, or nullptr with `error` naming the file, the loader's
// message and the folders searched.
const axon_cuda_kernels_api* load_kernel_library(std::string& error);

}  // namespace axon::cuda
