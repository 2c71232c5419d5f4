// Where a small GPU step's time goes: the host cost of one cuDNN convolution
// call through the legacy API (what the CUDA plugin uses) against the backend
// (graph) API with its execution plan made once, beside the GPU time of the
// same kernels and a floor (an asynchronous 4-byte memset).
// At batch 64 the guide's CNN runs ~50 kernel calls a step; when a call's host
// cost exceeds its kernel time the GPU waits on the host.
//
//   axon-bench-cudnn-calls [--iters N]
//
// Per case and API, over N calls queued back to back on one stream:
//   host us   time the host spends in the call (the enqueue; no waiting)
//   queued us GPU time per call, between events around all N calls
//   alone us  GPU time of one call with the stream idle before it (the kernels' own time)
// Float32 throughout, tensor-core (TF32) engines excluded, as the plugin runs
// by default. Prints figures, asserts nothing. Exit: 0, 1 a CUDA/cuDNN error,
// 2 bad usage, 77 no CUDA device.
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void dnn_ok(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": " + cudnnGetErrorString(s));
}

struct Times {
  double host_us = 0, queued_us = 0, alone_us = 0;
};

// Times `call` as described at the top of the file.
template <class Call>
Times time_calls(cudaStream_t stream, int iters, Call call) {
  cudaEvent_t a, b;
  cuda_ok(cudaEventCreate(&a), "cudaEventCreate");
  cuda_ok(cudaEventCreate(&b), "cudaEventCreate");
  for (int i = 0; i < 3; ++i) call();  // warm-up: lazy loading, plan caches
  cuda_ok(cudaStreamSynchronize(stream), "sync");
  Times t;
  cuda_ok(cudaEventRecord(a, stream), "record");
  const auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) call();
  const auto t1 = Clock::now();
  cuda_ok(cudaEventRecord(b, stream), "record");
  cuda_ok(cudaEventSynchronize(b), "sync");
  float ms = 0;
  cuda_ok(cudaEventElapsedTime(&ms, a, b), "elapsed");
  t.host_us = std::chrono::duration<double, std::micro>(t1 - t0).count() / iters;
  t.queued_us = 1000.0 * ms / iters;
  double alone = 0;
  const int singles = std::max(5, iters / 10);
  for (int i = 0; i < singles; ++i) {
    cuda_ok(cudaStreamSynchronize(stream), "sync");
    cuda_ok(cudaEventRecord(a, stream), "record");
    call();
    cuda_ok(cudaEventRecord(b, stream), "record");
    cuda_ok(cudaEventSynchronize(b), "sync");
    cuda_ok(cudaEventElapsedTime(&ms, a, b), "elapsed");
    alone += 1000.0 * ms;
  }
  t.alone_us = alone / singles;
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return t;
}

// A 3x3 (or 1x1) NHWC convolution, forward.
struct Shape {
  const char* name;
  int n, h, w, c, k, r, pad, stride;
  int oh() const { return (h + 2 * pad - r) / stride + 1; }
  int ow() const { return (w + 2 * pad - r) / stride + 1; }
};

struct Buffers {
  void *x = nullptr, *w = nullptr, *y = nullptr, *ws = nullptr;
  size_t ws_bytes = 0;
};

void print(const char* api, const char* name, const char* how, const Times& t) {
  std::printf("%-10s %-26s %-28s %9.2f %9.2f %9.2f\n", api, name, how, t.host_us, t.queued_us, t.alone_us);
}

// Legacy API: descriptors set once, the heuristics' first algorithm whose
// math is plain float (as the plugin chooses), one cudnnConvolutionForward per call.
Times legacy(cudnnHandle_t h, cudaStream_t stream, const Shape& s, Buffers& b, int iters, int& algo_out) {
  cudnnTensorDescriptor_t x, y;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  dnn_ok(cudnnCreateTensorDescriptor(&x), "create");
  dnn_ok(cudnnCreateTensorDescriptor(&y), "create");
  dnn_ok(cudnnCreateFilterDescriptor(&w), "create");
  dnn_ok(cudnnCreateConvolutionDescriptor(&conv), "create");
  dnn_ok(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, s.n, s.c, s.h, s.w), "x");
  dnn_ok(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, s.n, s.k, s.oh(), s.ow()), "y");
  dnn_ok(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, s.k, s.c, s.r, s.r), "w");
  dnn_ok(cudnnSetConvolution2dDescriptor(conv, s.pad, s.pad, s.stride, s.stride, 1, 1, CUDNN_CROSS_CORRELATION,
                                         CUDNN_DATA_FLOAT),
         "conv");
  dnn_ok(cudnnSetConvolutionMathType(conv, CUDNN_FMA_MATH), "math");
  int max = 0, got = 0;
  dnn_ok(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max), "max count");
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(max));
  dnn_ok(cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, conv, y, max, &got, perf.data()), "heuristics");
  int algo = -1;
  for (int i = 0; i < got && algo < 0; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].mathType == CUDNN_FMA_MATH &&
        perf[i].memory <= b.ws_bytes)
      algo = perf[i].algo;
  if (algo < 0) throw std::runtime_error(std::string(s.name) + ": no plain-float legacy algorithm");
  algo_out = algo;
  const float one = 1, zero = 0;
  Times t = time_calls(stream, iters, [&] {
    dnn_ok(cudnnConvolutionForward(h, &one, x, b.x, w, b.w, conv, static_cast<cudnnConvolutionFwdAlgo_t>(algo),
                                   b.ws, b.ws_bytes, &zero, y, b.y),
           "cudnnConvolutionForward");
  });
  cudnnDestroyTensorDescriptor(x);
  cudnnDestroyTensorDescriptor(y);
  cudnnDestroyFilterDescriptor(w);
  cudnnDestroyConvolutionDescriptor(conv);
  return t;
}

// Backend API helpers.
struct Desc {
  cudnnBackendDescriptor_t d = nullptr;
  explicit Desc(cudnnBackendDescriptorType_t type) { dnn_ok(cudnnBackendCreateDescriptor(type, &d), "backend create"); }
  ~Desc() {
    if (d) cudnnBackendDestroyDescriptor(d);
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  template <class T>
  void set(cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t type, int64_t count, const T* v) {
    dnn_ok(cudnnBackendSetAttribute(d, a, type, count, v), "backend set attribute");
  }
  void finalize(const char* what) { dnn_ok(cudnnBackendFinalize(d), what); }
};

void tensor(Desc& t, int64_t uid, int64_t n, int64_t c, int64_t h, int64_t w) {
  const cudnnDataType_t dt = CUDNN_DATA_FLOAT;
  const int64_t dims[4] = {n, c, h, w}, strides[4] = {h * w * c, 1, w * c, c}, align = 16;  // NHWC in memory
  t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
  t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
  t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
  t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
  t.finalize("tensor");
}

// Whether an engine config's engine uses tensor cores (TF32 for float).
bool tensor_core(cudnnBackendDescriptor_t cfg) {
  Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  int64_t n = 0;
  if (cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &engine.d) !=
      CUDNN_STATUS_SUCCESS)
    return true;
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  int64_t count = 0;
  if (cudnnBackendGetAttribute(engine.d, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                               CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count, notes) != CUDNN_STATUS_SUCCESS)
    return true;
  return std::find(notes, notes + count, CUDNN_NUMERICAL_NOTE_TENSOR_CORE) != notes + count;
}

// Backend API: graph, heuristics and plan once; per call a variant pack
// (the data pointers) made, executed and destroyed, or one pack reused
// (returned).
Times backend(cudnnHandle_t h, cudaStream_t stream, const Shape& s, Buffers& b, int iters) {
  Desc x(CUDNN_BACKEND_TENSOR_DESCRIPTOR), w(CUDNN_BACKEND_TENSOR_DESCRIPTOR), y(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  tensor(x, 'x', s.n, s.c, s.h, s.w);
  tensor(w, 'w', s.k, s.c, s.r, s.r);
  tensor(y, 'y', s.n, s.k, s.oh(), s.ow());
  Desc conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const int64_t dims = 2, pad[2] = {s.pad, s.pad}, stride[2] = {s.stride, s.stride}, dil[2] = {1, 1};
  const cudnnDataType_t ct = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims);
  conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &ct);
  conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  conv.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
  conv.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
  conv.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil);
  conv.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride);
  conv.finalize("convolution");
  Desc op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  const float alpha = 1, beta = 0;
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x.d);
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w.d);
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y.d);
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv.d);
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
  op.finalize("convolution forward operation");
  Desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op.d);
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
  graph.finalize("operation graph");
  Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  const cudnnBackendHeurMode_t hm = CUDNN_HEUR_MODE_A;
  heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph.d);
  heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &hm);
  heur.finalize("heuristics");
  int64_t count = 0;
  dnn_ok(cudnnBackendGetAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                  nullptr),
         "heuristics count");
  std::vector<cudnnBackendDescriptor_t> cfgs(static_cast<size_t>(count));
  for (auto& c : cfgs) dnn_ok(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &c), "create cfg");
  int64_t got = 0;
  dnn_ok(cudnnBackendGetAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                                  cfgs.data()),
         "heuristics results");
  Desc plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  bool planned = false;
  int64_t ws = 0;
  for (int64_t i = 0; i < got && !planned; ++i) {
    if (tensor_core(cfgs[static_cast<size_t>(i)])) continue;
    Desc p(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    p.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    p.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[static_cast<size_t>(i)]);
    if (cudnnBackendFinalize(p.d) != CUDNN_STATUS_SUCCESS) continue;
    int64_t n = 0;
    dnn_ok(cudnnBackendGetAttribute(p.d, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &ws),
           "workspace size");
    if (static_cast<size_t>(ws) > b.ws_bytes) continue;
    std::swap(plan.d, p.d);
    planned = true;
  }
  for (auto& c : cfgs) cudnnBackendDestroyDescriptor(c);
  if (!planned) throw std::runtime_error(std::string(s.name) + ": no plain-float backend engine");
  void* ptrs[3] = {b.x, b.w, b.y};
  const int64_t uids[3] = {'x', 'w', 'y'};
  auto pack = [&](Desc& vp) {
    vp.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs);
    vp.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
    vp.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &b.ws);
    vp.finalize("variant pack");
  };
  print("backend", s.name, "pack made per call", time_calls(stream, iters, [&] {
          Desc vp(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
          pack(vp);
          dnn_ok(cudnnBackendExecute(h, plan.d, vp.d), "cudnnBackendExecute");
        }));
  Desc kept(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack(kept);
  const Times reused = time_calls(stream, iters, [&] {
    dnn_ok(cudnnBackendExecute(h, plan.d, kept.d), "cudnnBackendExecute");
  });
  print("backend", s.name, "one pack reused", reused);
  return reused;
}

int run(int iters) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop{};
  cuda_ok(cudaGetDeviceProperties(&prop, 0), "properties");
  std::printf("device: %s; cuDNN %zu, %d calls a case\n", prop.name, cudnnGetVersion(), iters);
  cudaStream_t stream;
  cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  cudnnHandle_t h;
  dnn_ok(cudnnCreate(&h), "cudnnCreate");
  dnn_ok(cudnnSetStream(h, stream), "cudnnSetStream");
  Buffers b;
  b.ws_bytes = size_t{64} << 20;
  const size_t bytes = size_t{64} << 20;
  cuda_ok(cudaMalloc(&b.x, bytes), "malloc");
  cuda_ok(cudaMalloc(&b.w, bytes), "malloc");
  cuda_ok(cudaMalloc(&b.y, bytes), "malloc");
  cuda_ok(cudaMalloc(&b.ws, b.ws_bytes), "malloc");
  cuda_ok(cudaMemset(b.x, 0, bytes), "memset");
  cuda_ok(cudaMemset(b.w, 0, bytes), "memset");

  std::printf("\n%-10s %-26s %-28s %9s %9s %9s\n", "api", "case (batch 64, NHWC)", "how", "host us", "queued us",
              "alone us");
  print("floor", "cudaMemsetAsync 4 B", "-", time_calls(stream, iters, [&] {
          cuda_ok(cudaMemsetAsync(b.y, 0, 4, stream), "memset");
        }));
  const Shape shapes[] = {
      {"CNN conv1 28x28x1->32", 64, 28, 28, 1, 32, 3, 0, 1},
      {"CNN conv2 13x13x32->64", 64, 13, 13, 32, 64, 3, 0, 1},
      {"CNN conv3 5x5x64->64", 64, 5, 5, 64, 64, 3, 0, 1},
      {"ResNet 28x28x16->16 SAME", 64, 28, 28, 16, 16, 3, 1, 1},
      {"ResNet 14x14x32->64 s2", 64, 14, 14, 32, 64, 3, 1, 2},
  };
  // The per-call ranges over the convolutions, for the summary line.
  double lo[2] = {1e30, 1e30}, hi[2] = {0, 0};
  auto range = [&](int api, double v) { lo[api] = std::min(lo[api], v), hi[api] = std::max(hi[api], v); };
  for (const Shape& s : shapes) {
    int algo = -1;
    const Times t = legacy(h, stream, s, b, iters, algo);
    print("legacy", s.name, ("heuristic algorithm " + std::to_string(algo)).c_str(), t);
    range(0, t.host_us);
    try {
      range(1, backend(h, stream, s, b, iters).host_us);
    } catch (const std::exception& e) {
      std::printf("backend    %-26s failed: %s\n", s.name, e.what());
    }
  }
  std::printf("SUMMARY: host time per convolution call: legacy API %.0f-%.0f us, backend API with its plan made once "
              "%.0f-%.0f us\n", lo[0], hi[0], hi[1] > 0 ? lo[1] : 0.0, hi[1]);
  cudnnDestroy(h);
  cudaStreamDestroy(stream);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 200;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
      iters = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: axon-bench-cudnn-calls [--iters N]\n");
      return 2;
    }
  }
  if (iters < 1) {
    std::fprintf(stderr, "axon-bench-cudnn-calls: --iters must be at least 1\n");
    return 2;
  }
  try {
    return run(iters);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL: %s\n", e.what());
    return 1;
  }
}
