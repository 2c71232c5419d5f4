// NCCL collectives in the ABI's shape (axon_collective_api).
#pragma once

#include <axon/plugin_abi.h>

namespace axon::cuda {

const axon_collective_api& nccl_collectives();

}  // namespace axon::cuda
