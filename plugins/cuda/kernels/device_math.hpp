// AXON_HD: functions the CUDA kernels run per element that are plain C++ as
// well, so host tests (tests/cuda) check them on machines without a GPU.
#pragma once

#ifdef __CUDACC__
#define AXON_HD __host__ __device__
#else
#define AXON_HD
#endif
