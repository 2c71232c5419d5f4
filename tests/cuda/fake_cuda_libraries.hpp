// Stand-ins for cudart, cuDNN, cuBLAS and NCCL, linked into a test in place of
// the real libraries (fake_cudart.cpp, fake_cudnn.cpp, fake_cublas.cpp,
// fake_nccl.cpp), so that the CUDA kernel library's own sources run on a
// machine without a GPU and its failure paths can be driven: an NCCL set-up
// or call that fails, a collective that never finishes, a cuDNN engine
// refused or needing more workspace than there is. "Device memory" is host
// memory and every queued operation runs at once, except a collective told to
// hang, which blocks its stream until its communicator is aborted.
//
// A test sets script() before the calls it makes; reset() restores the
// defaults and clears what was recorded.
#pragma once

#include <cudnn.h>
#include <nccl.h>

#include <cstddef>
#include <string>
#include <vector>

namespace axon::fake {

// One engine configuration as the fake cuDNN's heuristics offer it, and how
// the fake treats it afterwards.
struct ConvOffer {
  int algo = 0;                                    // the engine's global index
  std::vector<cudnnBackendNumericalNote_t> notes;  // what the engine says of its math
  cudnnStatus_t plan = CUDNN_STATUS_SUCCESS;       // what finalizing its execution plan returns
  size_t workspace = 0;                            // the plan's workspace
  cudnnStatus_t run = CUDNN_STATUS_SUCCESS;        // what executing the plan returns
  bool fallback = false;                           // offered in CUDNN_HEUR_MODE_FALLBACK, not mode A
};

struct Script {
  int devices = 4;
  // NCCL
  ncclResult_t init_all_result = ncclSuccess;  // what ncclCommInitAll returns
  std::string nccl_last_error;                 // what ncclGetLastError says after a failure
  int fail_all_reduce_rank = -1;               // that rank's next ncclAllReduce fails (ncclInvalidArgument)
  bool hang_collectives = false;               // collectives launched from now on never finish...
  ncclResult_t hang_async_error =
      ncclSuccess;  // ...and their communicators report this asynchronous error (read at each poll)
  // cuDNN: the heuristics' offers for images in NHWC and in NCHW (every kind
  // of convolution alike).
  std::vector<ConvOffer> nhwc_offers, nchw_offers;
  // cuDNN activations: record the calls without touching the data (for
  // shapes too large to allocate).
  bool record_only = false;
};

// What the fakes saw.
struct Record {
  int init_all_calls = 0;
  int group_depth = 0;                 // NCCL's group nesting now
  int launched = 0;                    // collectives launched (a complete set of ranks)
  int aborted = 0;                     // communicators aborted
  int async_polls = 0;                 // ncclCommGetAsyncError calls
  int stream_waits = 0;                // cudaStreamWaitEvent calls
  std::vector<std::string> conv_runs;  // "forward engine 3 NCHW workspace 1024"
  struct Activation {
    int64_t count;
    const void* x;
    void* y;
  };
  std::vector<Activation> activations;
};

Script& script();
Record& record();
void reset();

// Between the fakes: a hung collective blocks the streams it was queued on
// until its token is released (ncclCommAbort).
void hang(void* stream, const void* token);
void release(const void* token);

}  // namespace axon::fake
