// The fake cuDNN (fake_cuda_libraries.hpp): descriptors that remember what
// they were set to, convolution heuristics that offer script().nhwc_offers or
// nchw_offers (by the input's layout), and convolutions computed naively on
// the host in the layout their descriptors give, so a test sees both which
// algorithm and layout ran and whether the data went in and out the right way.
#include "fake_cuda_libraries.hpp"

#include <algorithm>
#include <cstring>
#include <string>

struct cudnnContext {
  cudaStream_t stream = nullptr;
};
struct cudnnTensorStruct {
  cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW;
  int n = 0, c = 0, h = 0, w = 0;
};
struct cudnnFilterStruct {
  cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW;
  int k = 0, c = 0, r = 0, s = 0;
};
struct cudnnConvolutionStruct {
  int pad_h = 0, pad_w = 0, u = 1, v = 1, dil_h = 1, dil_w = 1;
  int groups = 1;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};
struct cudnnPoolingStruct {
  cudnnPoolingMode_t mode = CUDNN_POOLING_MAX;
};
struct cudnnActivationStruct {
  cudnnActivationMode_t mode = CUDNN_ACTIVATION_RELU;
};

namespace {

using namespace axon::fake;

std::string last_error;

cudnnStatus_t failed(cudnnStatus_t s, const std::string& why) {
  last_error = why;
  return s;
}

const char* layout(cudnnTensorFormat_t f) { return f == CUDNN_TENSOR_NHWC ? "NHWC" : "NCHW"; }

const std::vector<ConvOffer>& offers_for(cudnnTensorDescriptor_t x) {
  return x->format == CUDNN_TENSOR_NHWC ? script().nhwc_offers : script().nchw_offers;
}

const ConvOffer* find_offer(cudnnTensorDescriptor_t x, int algo, cudnnMathType_t math) {
  const ConvOffer* any = nullptr;
  for (const ConvOffer& o : offers_for(x))
    if (o.algo == algo) {
      if (o.math == math || (math == CUDNN_FMA_MATH && o.math == CUDNN_DEFAULT_MATH)) return &o;
      any = any ? any : &o;
    }
  return any;
}

template <class Perf, class Algo>
cudnnStatus_t heuristics(cudnnTensorDescriptor_t x, int requested, int* returned, Perf* perf) {
  const auto& offers = offers_for(x);
  const int n = std::min<int>(requested, static_cast<int>(offers.size()));
  for (int i = 0; i < n; ++i) {
    std::memset(&perf[i], 0, sizeof perf[i]);
    perf[i].algo = static_cast<Algo>(offers[i].algo);
    perf[i].status = offers[i].status;
    perf[i].memory = offers[i].memory;
    perf[i].determinism = offers[i].deterministic ? CUDNN_DETERMINISTIC : CUDNN_NON_DETERMINISTIC;
    perf[i].mathType = offers[i].math;
  }
  *returned = n;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t workspace_size(cudnnTensorDescriptor_t x, cudnnConvolutionDescriptor_t conv, int algo, size_t* bytes) {
  const ConvOffer* o = find_offer(x, algo, conv->math);
  if (o == nullptr)
    return failed(CUDNN_STATUS_BAD_PARAM, "fake cuDNN: algorithm " + std::to_string(algo) + " never offered");
  if (o->workspace_query != CUDNN_STATUS_SUCCESS)
    return failed(o->workspace_query, "fake cuDNN: workspace query refused");
  *bytes = o->workspace;
  return CUDNN_STATUS_SUCCESS;
}

// Element offsets in the descriptors' layouts.
int64_t at(cudnnTensorDescriptor_t t, int64_t n, int64_t c, int64_t h, int64_t w) {
  return t->format == CUDNN_TENSOR_NHWC ? ((n * t->h + h) * t->w + w) * t->c + c
                                        : ((n * t->c + c) * t->h + h) * t->w + w;
}
int64_t at(cudnnFilterDescriptor_t f, int64_t k, int64_t c, int64_t r, int64_t s) {
  return f->format == CUDNN_TENSOR_NHWC ? ((k * f->r + r) * f->s + s) * f->c + c
                                        : ((k * f->c + c) * f->r + r) * f->s + s;
}

enum Kind { kForward, kBackwardData, kBackwardFilter };
const char* kind_name[] = {"forward", "backward-data", "backward-filter"};

// One convolution, naively: y = alpha * conv(x, w) + beta * y, or its
// gradient with respect to x or w, each in the layout of its descriptor.
cudnnStatus_t convolve(Kind kind, const void* alpha, cudnnTensorDescriptor_t xd, const float* x,
                       cudnnFilterDescriptor_t wd, const float* w, cudnnConvolutionDescriptor_t cd,
                       cudnnTensorDescriptor_t yd, const float* y, int algo, size_t workspace, const void* beta,
                       float* out) {
  const ConvOffer* o = find_offer(xd, algo, cd->math);
  if (o == nullptr)
    return failed(CUDNN_STATUS_BAD_PARAM, "fake cuDNN: algorithm " + std::to_string(algo) + " never offered");
  if (xd->format != yd->format || xd->format != wd->format)
    return failed(CUDNN_STATUS_NOT_SUPPORTED, "fake cuDNN: mixed layouts");
  if (o->run != CUDNN_STATUS_SUCCESS) return failed(o->run, "fake cuDNN: the algorithm refused to run");
  if (workspace < o->workspace) return failed(CUDNN_STATUS_BAD_PARAM, "fake cuDNN: workspace too small");
  record().conv_runs.push_back(std::string(kind_name[kind]) + " algo " + std::to_string(algo) + " " +
                               layout(xd->format) + " workspace " + std::to_string(workspace));
  const float a = *static_cast<const float*>(alpha), b = *static_cast<const float*>(beta);
  const int64_t out_count = kind == kForward        ? int64_t{yd->n} * yd->c * yd->h * yd->w
                            : kind == kBackwardData ? int64_t{xd->n} * xd->c * xd->h * xd->w
                                                    : int64_t{wd->k} * wd->c * wd->r * wd->s;
  std::vector<double> acc(static_cast<size_t>(out_count), 0.0);
  if (wd->c * cd->groups != xd->c || yd->c % cd->groups != 0 || wd->k != yd->c)
    return failed(CUDNN_STATUS_BAD_PARAM, "fake cuDNN: channels do not match the groups");
  const int per_group = yd->c / cd->groups;  // outputs of each group
  for (int n = 0; n < yd->n; ++n)
    for (int k = 0; k < yd->c; ++k)
      for (int oh = 0; oh < yd->h; ++oh)
        for (int ow = 0; ow < yd->w; ++ow)
          for (int cg = 0; cg < wd->c; ++cg)  // the input channels of k's group
            for (int r = 0; r < wd->r; ++r)
              for (int s = 0; s < wd->s; ++s) {
                const int ih = oh * cd->u - cd->pad_h + r * cd->dil_h, iw = ow * cd->v - cd->pad_w + s * cd->dil_w;
                if (ih < 0 || ih >= xd->h || iw < 0 || iw >= xd->w) continue;
                const int c = k / per_group * wd->c + cg;
                const int64_t xi = at(xd, n, c, ih, iw), wi = at(wd, k, cg, r, s), yi = at(yd, n, k, oh, ow);
                if (kind == kForward) acc[yi] += double(x[xi]) * w[wi];
                if (kind == kBackwardData) acc[xi] += double(y[yi]) * w[wi];
                if (kind == kBackwardFilter) acc[wi] += double(x[xi]) * y[yi];
              }
  for (int64_t i = 0; i < out_count; ++i) out[i] = static_cast<float>(a * acc[i] + (b != 0.f ? b * out[i] : 0.0));
  return CUDNN_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

size_t cudnnGetVersion() { return 91900; }
const char* cudnnGetErrorString(cudnnStatus_t s) {
  switch (s) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
    default: return "CUDNN_STATUS_INTERNAL_ERROR";
  }
}
void cudnnGetLastErrorString(char* message, size_t max) {
  std::snprintf(message, max, "%s", last_error.c_str());
  last_error.clear();
}

cudnnStatus_t cudnnCreate(cudnnHandle_t* h) {
  *h = new cudnnContext;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroy(cudnnHandle_t h) {
  delete h;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s) {
  h->stream = s;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* t) {
  *t = new cudnnTensorStruct;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t t) {
  delete t;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t t, cudnnTensorFormat_t f, cudnnDataType_t, int n,
                                         int c, int h, int w) {
  if (int64_t{n} * c * h * w > INT32_MAX) return failed(CUDNN_STATUS_NOT_SUPPORTED, "fake cuDNN: over 2^31 elements");
  *t = {f, n, c, h, w};
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* f) {
  *f = new cudnnFilterStruct;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t f) {
  delete f;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t f, cudnnDataType_t, cudnnTensorFormat_t format, int k,
                                         int c, int r, int s) {
  *f = {format, k, c, r, s};
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* c) {
  *c = new cudnnConvolutionStruct;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t c) {
  delete c;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t c, int pad_h, int pad_w, int u, int v,
                                              int dil_h, int dil_w, cudnnConvolutionMode_t, cudnnDataType_t) {
  c->pad_h = pad_h, c->pad_w = pad_w, c->u = u, c->v = v, c->dil_h = dil_h, c->dil_w = dil_w;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t c, int groups) {
  c->groups = groups;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t c, cudnnMathType_t m) {
  const auto& refused = script().refused_math;
  if (std::find(refused.begin(), refused.end(), m) != refused.end())
    return failed(CUDNN_STATUS_NOT_SUPPORTED, "fake cuDNN: math type " + std::to_string(m) + " refused");
  c->math = m;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(cudnnConvolutionDescriptor_t c, cudnnTensorDescriptor_t x,
                                                    cudnnFilterDescriptor_t w, int* n, int* k, int* h, int* wo) {
  *n = x->n;
  *k = w->k;
  *h = (x->h + 2 * c->pad_h - ((w->r - 1) * c->dil_h + 1)) / c->u + 1;
  *wo = (x->w + 2 * c->pad_w - ((w->s - 1) * c->dil_w + 1)) / c->v + 1;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t, int* n) {
  *n = script().algorithm_max_count;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cudnnHandle_t, int* n) {
  *n = script().algorithm_max_count;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cudnnHandle_t, int* n) {
  *n = script().algorithm_max_count;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t,
                                                     cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t,
                                                     int requested, int* returned,
                                                     cudnnConvolutionFwdAlgoPerf_t* perf) {
  return heuristics<cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgo_t>(x, requested, returned, perf);
}
cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(cudnnHandle_t, cudnnFilterDescriptor_t,
                                                          cudnnTensorDescriptor_t, cudnnConvolutionDescriptor_t,
                                                          cudnnTensorDescriptor_t dx, int requested, int* returned,
                                                          cudnnConvolutionBwdDataAlgoPerf_t* perf) {
  return heuristics<cudnnConvolutionBwdDataAlgoPerf_t, cudnnConvolutionBwdDataAlgo_t>(dx, requested, returned, perf);
}
cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(cudnnHandle_t, cudnnTensorDescriptor_t x,
                                                            cudnnTensorDescriptor_t, cudnnConvolutionDescriptor_t,
                                                            cudnnFilterDescriptor_t, int requested, int* returned,
                                                            cudnnConvolutionBwdFilterAlgoPerf_t* perf) {
  return heuristics<cudnnConvolutionBwdFilterAlgoPerf_t, cudnnConvolutionBwdFilterAlgo_t>(x, requested, returned, perf);
}
cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t,
                                                      cudnnConvolutionDescriptor_t c, cudnnTensorDescriptor_t,
                                                      cudnnConvolutionFwdAlgo_t algo, size_t* bytes) {
  return workspace_size(x, c, algo, bytes);
}
cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(cudnnHandle_t, cudnnFilterDescriptor_t,
                                                           cudnnTensorDescriptor_t, cudnnConvolutionDescriptor_t c,
                                                           cudnnTensorDescriptor_t dx,
                                                           cudnnConvolutionBwdDataAlgo_t algo, size_t* bytes) {
  return workspace_size(dx, c, algo, bytes);
}
cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(cudnnHandle_t, cudnnTensorDescriptor_t x,
                                                             cudnnTensorDescriptor_t, cudnnConvolutionDescriptor_t c,
                                                             cudnnFilterDescriptor_t,
                                                             cudnnConvolutionBwdFilterAlgo_t algo, size_t* bytes) {
  return workspace_size(x, c, algo, bytes);
}

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t, const void* alpha, cudnnTensorDescriptor_t xd, const void* x,
                                      cudnnFilterDescriptor_t wd, const void* w, cudnnConvolutionDescriptor_t cd,
                                      cudnnConvolutionFwdAlgo_t algo, void*, size_t workspace, const void* beta,
                                      cudnnTensorDescriptor_t yd, void* y) {
  return convolve(kForward, alpha, xd, static_cast<const float*>(x), wd, static_cast<const float*>(w), cd, yd, nullptr,
                  algo, workspace, beta, static_cast<float*>(y));
}
cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t, const void* alpha, cudnnFilterDescriptor_t wd, const void* w,
                                           cudnnTensorDescriptor_t dyd, const void* dy, cudnnConvolutionDescriptor_t cd,
                                           cudnnConvolutionBwdDataAlgo_t algo, void*, size_t workspace,
                                           const void* beta, cudnnTensorDescriptor_t dxd, void* dx) {
  return convolve(kBackwardData, alpha, dxd, nullptr, wd, static_cast<const float*>(w), cd, dyd,
                  static_cast<const float*>(dy), algo, workspace, beta, static_cast<float*>(dx));
}
cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t, const void* alpha, cudnnTensorDescriptor_t xd,
                                             const void* x, cudnnTensorDescriptor_t dyd, const void* dy,
                                             cudnnConvolutionDescriptor_t cd, cudnnConvolutionBwdFilterAlgo_t algo,
                                             void*, size_t workspace, const void* beta, cudnnFilterDescriptor_t dwd,
                                             void* dw) {
  return convolve(kBackwardFilter, alpha, xd, static_cast<const float*>(x), dwd, nullptr, cd, dyd,
                  static_cast<const float*>(dy), algo, workspace, beta, static_cast<float*>(dw));
}

// Pooling and activations: linked in with the kernels that use them; the
// failure-path tests reach only the calls that record.
cudnnStatus_t cudnnCreatePoolingDescriptor(cudnnPoolingDescriptor_t* p) {
  *p = new cudnnPoolingStruct;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroyPoolingDescriptor(cudnnPoolingDescriptor_t p) {
  delete p;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetPooling2dDescriptor(cudnnPoolingDescriptor_t p, cudnnPoolingMode_t mode, cudnnNanPropagation_t,
                                          int, int, int, int, int, int) {
  p->mode = mode;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnPoolingForward(cudnnHandle_t, cudnnPoolingDescriptor_t, const void*, cudnnTensorDescriptor_t,
                                  const void*, const void*, cudnnTensorDescriptor_t, void*) {
  return failed(CUDNN_STATUS_NOT_SUPPORTED, "fake cuDNN: pooling is not modelled");
}
cudnnStatus_t cudnnPoolingBackward(cudnnHandle_t, cudnnPoolingDescriptor_t, const void*, cudnnTensorDescriptor_t,
                                   const void*, cudnnTensorDescriptor_t, const void*, cudnnTensorDescriptor_t,
                                   const void*, const void*, cudnnTensorDescriptor_t, void*) {
  return failed(CUDNN_STATUS_NOT_SUPPORTED, "fake cuDNN: pooling is not modelled");
}
cudnnStatus_t cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t* a) {
  *a = new cudnnActivationStruct;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t a) {
  delete a;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t a, cudnnActivationMode_t mode,
                                           cudnnNanPropagation_t, double) {
  a->mode = mode;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnActivationForward(cudnnHandle_t, cudnnActivationDescriptor_t, const void*, cudnnTensorDescriptor_t t,
                                     const void* x, const void*, cudnnTensorDescriptor_t, void* y) {
  record().activations.push_back({int64_t{t->n} * t->c * t->h * t->w, x, y});
  if (script().record_only) return CUDNN_STATUS_SUCCESS;
  return failed(CUDNN_STATUS_NOT_SUPPORTED, "fake cuDNN: activations are only recorded");
}
cudnnStatus_t cudnnActivationBackward(cudnnHandle_t, cudnnActivationDescriptor_t, const void*,
                                      cudnnTensorDescriptor_t t, const void* y, cudnnTensorDescriptor_t, const void*,
                                      cudnnTensorDescriptor_t, const void*, const void*, cudnnTensorDescriptor_t,
                                      void* dx) {
  record().activations.push_back({int64_t{t->n} * t->c * t->h * t->w, y, dx});
  if (script().record_only) return CUDNN_STATUS_SUCCESS;
  return failed(CUDNN_STATUS_NOT_SUPPORTED, "fake cuDNN: activations are only recorded");
}

}  // extern "C"
