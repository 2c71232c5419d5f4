// The fake CUDA runtime (fake_cuda_libraries.hpp): devices, streams, events
// and memory on the host. Queued work runs at once; a stream is busy only
// while a hung collective blocks it.
#include "fake_cuda_libraries.hpp"

#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

struct CUstream_st {
  std::vector<const void*> hung;  // tokens of the hung collectives queued on it
};
struct CUevent_st {
  std::vector<const void*> waits_for;  // what was hung on the stream when the event was recorded
};

namespace axon::fake {

namespace {

std::mutex mu;
std::set<const void*> hung_tokens;
int current_device = 0;

bool busy(const std::vector<const void*>& tokens) {
  for (const void* t : tokens)
    if (hung_tokens.count(t)) return true;
  return false;
}

}  // namespace

Script& script() {
  static Script s;
  return s;
}

Record& record() {
  static Record r;
  return r;
}

void reset() {
  std::lock_guard<std::mutex> lock(mu);
  script() = Script{};
  record() = Record{};
  hung_tokens.clear();
}

void hang(void* stream, const void* token) {
  std::lock_guard<std::mutex> lock(mu);
  static_cast<CUstream_st*>(stream)->hung.push_back(token);
  hung_tokens.insert(token);
}

void release(const void* token) {
  std::lock_guard<std::mutex> lock(mu);
  hung_tokens.erase(token);
}

}  // namespace axon::fake

using namespace axon::fake;

extern "C" {

cudaError_t cudaGetLastError() { return cudaSuccess; }
const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    default: return "cudaErrorLaunchTimeout";
  }
}
const char* cudaGetErrorString(cudaError_t e) {
  return e == cudaErrorLaunchTimeout ? "fake cudart: the stream would wait forever" : "fake cudart error";
}
cudaError_t cudaRuntimeGetVersion(int* v) {
  *v = 13000;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (device < 0 || device >= script().devices) return cudaErrorInvalidDevice;
  current_device = device;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int) {
  std::memset(p, 0, sizeof *p);
  p->major = 9;
  return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  *total = size_t{80} << 30;
  *free = *total - (size_t{1} << 30);
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** p, size_t bytes) {
  *p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFree(void* p) {
  std::free(p);
  return cudaSuccess;
}
cudaError_t cudaDeviceCanAccessPeer(int* can, int, int) {
  *can = 0;
  return cudaSuccess;
}
cudaError_t cudaDeviceEnablePeerAccess(int, unsigned) { return cudaSuccess; }
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* a, const void*) {
  std::memset(a, 0, sizeof *a);
  a->type = cudaMemoryTypeUnregistered;
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind, cudaStream_t) {
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind, cudaStream_t) {
  if (width > dpitch || width > spitch) return cudaErrorInvalidPitchValue;
  for (size_t r = 0; r < height; ++r)
    std::memmove(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* dst, int value, size_t bytes, cudaStream_t) {
  std::memset(dst, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) {
  *s = new CUstream_st;
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  delete s;
  return cudaSuccess;
}
// The real call would block for ever behind a hung collective: fail instead,
// so a test sees the wait that polls nothing.
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  std::lock_guard<std::mutex> lock(mu);
  return busy(s->hung) ? cudaErrorLaunchTimeout : cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* e) {
  *e = new CUevent_st;
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) { return cudaEventCreate(e); }
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  std::lock_guard<std::mutex> lock(mu);
  e->waits_for = s->hung;
  return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t e) {
  std::lock_guard<std::mutex> lock(mu);
  return busy(e->waits_for) ? cudaErrorNotReady : cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  std::lock_guard<std::mutex> lock(mu);
  return busy(e->waits_for) ? cudaErrorLaunchTimeout : cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned) {
  std::lock_guard<std::mutex> lock(mu);
  ++axon::fake::record().stream_waits;
  return cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t, cudaEvent_t) {
  *ms = 0.f;
  return cudaSuccess;
}

}  // extern "C"
