// The fake cuDNN (fake_cuda_libraries.hpp): descriptors that remember what
// they were set to; for convolutions, the backend (graph) API, whose
// heuristics offer script().nhwc_offers or nchw_offers (by the image's
// layout) as engine configurations, and whose plans compute naively on the
// host in the layout their tensors' strides give, so a test sees both which
// engine and layout ran and whether the data went in and out the right way.
#include "fake_cuda_libraries.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

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

// Element offsets in the descriptors' layouts.
int64_t at(const cudnnTensorStruct* t, int64_t n, int64_t c, int64_t h, int64_t w) {
  return t->format == CUDNN_TENSOR_NHWC ? ((n * t->h + h) * t->w + w) * t->c + c
                                        : ((n * t->c + c) * t->h + h) * t->w + w;
}
int64_t at(const cudnnFilterStruct* f, int64_t k, int64_t c, int64_t r, int64_t s) {
  return f->format == CUDNN_TENSOR_NHWC ? ((k * f->r + r) * f->s + s) * f->c + c
                                        : ((k * f->c + c) * f->r + r) * f->s + s;
}

enum Kind { kForward, kBackwardData, kBackwardFilter };
const char* kind_name[] = {"forward", "backward-data", "backward-filter"};

// A convolution's geometry: padding, strides, dilations, groups.
struct Convolution {
  int pad_h = 0, pad_w = 0, u = 1, v = 1, dil_h = 1, dil_w = 1, groups = 1;
};

// One convolution, naively: y = alpha * conv(x, w) + beta * y, or its
// gradient with respect to x or w, each in the layout of its descriptor, as
// engine configuration `o` in its plan.
cudnnStatus_t convolve(Kind kind, const void* alpha, const cudnnTensorStruct* xd, const float* x,
                       const cudnnFilterStruct* wd, const float* w, const Convolution* cd,
                       const cudnnTensorStruct* yd, const float* y, const ConvOffer* o, const void* beta, float* out) {
  if (xd->format != yd->format || xd->format != wd->format)
    return failed(CUDNN_STATUS_NOT_SUPPORTED, "fake cuDNN: mixed layouts");
  if (o->run != CUDNN_STATUS_SUCCESS) return failed(o->run, "fake cuDNN: the engine refused to run");
  record().conv_runs.push_back(std::string(kind_name[kind]) + " engine " + std::to_string(o->algo) + " " +
                               layout(xd->format) + " workspace " + std::to_string(o->workspace));
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

// A backend descriptor: its type, its attributes as set (raw bytes), and
// what finalizing it made of them.
struct Backend {
  cudnnBackendDescriptorType_t type;
  std::map<int, std::vector<char>> attributes;
  bool finalized = false;
  cudnnTensorStruct tensor;          // TENSOR: the layout its strides give
  int64_t id = 0;                    // TENSOR: its unique id
  Convolution conv;                  // CONVOLUTION
  Kind kind = kForward;              // OPERATION_*
  float alpha = 1.f, beta = 0.f;     // OPERATION_*: y = alpha * conv + beta * y
  Backend *image = nullptr, *filter = nullptr, *output = nullptr, *conv_desc = nullptr;  // OPERATION_*
  Backend* op = nullptr;             // OPERATIONGRAPH; ENGINEHEUR, ENGINECFG, EXECUTION_PLAN: the graph's op
  std::vector<ConvOffer> offers;     // ENGINEHEUR: the heuristics' results
  ConvOffer offer;                   // ENGINECFG, ENGINE, EXECUTION_PLAN
};

size_t element_size(cudnnBackendAttributeType_t t) {
  switch (t) {
    case CUDNN_TYPE_INT64: return sizeof(int64_t);
    case CUDNN_TYPE_FLOAT: return sizeof(float);
    case CUDNN_TYPE_DOUBLE: return sizeof(double);
    case CUDNN_TYPE_DATA_TYPE: return sizeof(cudnnDataType_t);
    case CUDNN_TYPE_CONVOLUTION_MODE: return sizeof(cudnnConvolutionMode_t);
    case CUDNN_TYPE_HEUR_MODE: return sizeof(cudnnBackendHeurMode_t);
    case CUDNN_TYPE_NUMERICAL_NOTE: return sizeof(cudnnBackendNumericalNote_t);
    case CUDNN_TYPE_HANDLE: return sizeof(cudnnHandle_t);
    case CUDNN_TYPE_VOID_PTR: return sizeof(void*);
    case CUDNN_TYPE_BACKEND_DESCRIPTOR: return sizeof(cudnnBackendDescriptor_t);
    default: return 0;
  }
}

template <class T>
std::vector<T> values(const Backend& b, cudnnBackendAttributeName_t name) {
  const auto it = b.attributes.find(name);
  if (it == b.attributes.end()) return {};
  std::vector<T> out(it->second.size() / sizeof(T));
  std::memcpy(out.data(), it->second.data(), out.size() * sizeof(T));
  return out;
}
template <class T>
T value(const Backend& b, cudnnBackendAttributeName_t name, T otherwise = T{}) {
  const auto v = values<T>(b, name);
  return v.empty() ? otherwise : v[0];
}
Backend* descriptor(const Backend& b, cudnnBackendAttributeName_t name) {
  return static_cast<Backend*>(value<cudnnBackendDescriptor_t>(b, name));
}

// The attributes of the three convolution operations, by kind: image, filter,
// output side, convolution, alpha, beta.
constexpr cudnnBackendAttributeName_t kOperands[][6] = {
    {CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA}};

cudnnStatus_t finalize(Backend& b) {
  switch (b.type) {
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR: {
      const auto dims = values<int64_t>(b, CUDNN_ATTR_TENSOR_DIMENSIONS);
      const auto strides = values<int64_t>(b, CUDNN_ATTR_TENSOR_STRIDES);
      if (dims.size() != 4 || strides.size() != 4) return failed(CUDNN_STATUS_BAD_PARAM, "fake cuDNN: not 4-d");
      if (dims[0] * dims[1] * dims[2] * dims[3] > INT32_MAX)
        return failed(CUDNN_STATUS_NOT_SUPPORTED, "fake cuDNN: over 2^31 elements");
      // NHWC keeps channels innermost (for one channel: stride 1 along c).
      const bool nhwc = dims[1] > 1 ? strides[3] == dims[1] : strides[1] == 1;
      b.tensor = {nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, int(dims[0]), int(dims[1]), int(dims[2]),
                  int(dims[3])};
      b.id = value<int64_t>(b, CUDNN_ATTR_TENSOR_UNIQUE_ID);
      break;
    }
    case CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR: {
      const auto pad = values<int64_t>(b, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS);
      const auto post = values<int64_t>(b, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS);
      const auto stride = values<int64_t>(b, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES);
      const auto dilation = values<int64_t>(b, CUDNN_ATTR_CONVOLUTION_DILATIONS);
      if (pad.size() != 2 || post != pad || stride.size() != 2 || dilation.size() != 2)
        return failed(CUDNN_STATUS_BAD_PARAM, "fake cuDNN: a 2-d convolution padded alike on both sides");
      b.conv = {int(pad[0]), int(pad[1]), int(stride[0]), int(stride[1]), int(dilation[0]), int(dilation[1]), 1};
      break;
    }
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR: {
      b.kind = b.type == CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR         ? kForward
               : b.type == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR ? kBackwardData
                                                                                          : kBackwardFilter;
      const auto& a = kOperands[b.kind];
      b.image = descriptor(b, a[0]), b.filter = descriptor(b, a[1]), b.output = descriptor(b, a[2]);
      b.conv_desc = descriptor(b, a[3]);
      b.alpha = value<float>(b, a[4], 1.f), b.beta = value<float>(b, a[5], 0.f);
      if (!b.image || !b.filter || !b.output || !b.conv_desc)
        return failed(CUDNN_STATUS_BAD_PARAM, "fake cuDNN: an operand is missing");
      if (b.filter->tensor.c == 0 || b.image->tensor.c % b.filter->tensor.c != 0)
        return failed(CUDNN_STATUS_BAD_PARAM, "fake cuDNN: channels do not divide into groups");
      b.conv_desc->conv.groups = b.image->tensor.c / b.filter->tensor.c;
      break;
    }
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
      b.op = descriptor(b, CUDNN_ATTR_OPERATIONGRAPH_OPS);
      if (!b.op) return failed(CUDNN_STATUS_BAD_PARAM, "fake cuDNN: a graph without operations");
      break;
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR: {
      const Backend* graph = descriptor(b, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH);
      if (!graph) return failed(CUDNN_STATUS_BAD_PARAM, "fake cuDNN: heuristics without a graph");
      b.op = graph->op;
      const bool fallback = value<cudnnBackendHeurMode_t>(b, CUDNN_ATTR_ENGINEHEUR_MODE) == CUDNN_HEUR_MODE_FALLBACK;
      const auto& offers =
          b.op->image->tensor.format == CUDNN_TENSOR_NHWC ? script().nhwc_offers : script().nchw_offers;
      for (const ConvOffer& o : offers)
        if (o.fallback == fallback) b.offers.push_back(o);
      break;
    }
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: {
      const Backend* config = descriptor(b, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG);
      if (!config) return failed(CUDNN_STATUS_BAD_PARAM, "fake cuDNN: a plan without an engine configuration");
      b.op = config->op;
      b.offer = config->offer;
      if (b.offer.plan != CUDNN_STATUS_SUCCESS) return failed(b.offer.plan, "fake cuDNN: no plan for this engine");
      break;
    }
    default: break;
  }
  b.finalized = true;
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
cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t* d) {
  *d = new Backend{type, {}};
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d) {
  delete static_cast<Backend*>(d);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t count, const void* v) {
  auto& b = *static_cast<Backend*>(d);
  const size_t size = element_size(type);
  if (size == 0 || count < 0 || b.finalized) return failed(CUDNN_STATUS_BAD_PARAM, "fake cuDNN: bad attribute");
  const char* bytes = static_cast<const char*>(v);
  b.attributes[name].assign(bytes, bytes + size * static_cast<size_t>(count));
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t d) { return finalize(*static_cast<Backend*>(d)); }

// What the plugin reads back: the heuristics' results, a configuration's
// engine, an engine's index and notes, a plan's workspace.
cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t, int64_t requested, int64_t* count, void* out) {
  const auto& b = *static_cast<const Backend*>(d);
  if (!b.finalized && b.type != CUDNN_BACKEND_ENGINECFG_DESCRIPTOR && b.type != CUDNN_BACKEND_ENGINE_DESCRIPTOR)
    return failed(CUDNN_STATUS_BAD_PARAM, "fake cuDNN: read before finalizing");
  switch (name) {
    case CUDNN_ATTR_ENGINEHEUR_RESULTS: {
      *count = static_cast<int64_t>(b.offers.size());
      auto* configs = static_cast<cudnnBackendDescriptor_t*>(out);
      for (int64_t i = 0; i < std::min(requested, *count); ++i) {
        auto& c = *static_cast<Backend*>(configs[i]);
        c.op = b.op, c.offer = b.offers[static_cast<size_t>(i)], c.finalized = true;
      }
      return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_ATTR_ENGINECFG_ENGINE: {
      auto& e = *static_cast<Backend*>(*static_cast<cudnnBackendDescriptor_t*>(out));
      e.offer = b.offer, e.finalized = true;
      *count = 1;
      return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_ATTR_ENGINE_GLOBAL_INDEX:
      *static_cast<int64_t*>(out) = b.offer.algo;
      *count = 1;
      return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_ENGINE_NUMERICAL_NOTE: {
      *count = static_cast<int64_t>(b.offer.notes.size());
      auto* notes = static_cast<cudnnBackendNumericalNote_t*>(out);
      for (int64_t i = 0; i < std::min(requested, *count); ++i) notes[i] = b.offer.notes[static_cast<size_t>(i)];
      return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE:
      *static_cast<int64_t*>(out) = static_cast<int64_t>(b.offer.workspace);
      *count = 1;
      return CUDNN_STATUS_SUCCESS;
    default: return failed(CUDNN_STATUS_NOT_SUPPORTED, "fake cuDNN: attribute not modelled");
  }
}

// The plan's convolution on the variant pack's pointers, by tensor id.
cudnnStatus_t cudnnBackendExecute(cudnnHandle_t, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t pack) {
  const auto& p = *static_cast<const Backend*>(plan);
  const auto& v = *static_cast<const Backend*>(pack);
  if (!p.finalized || !v.finalized) return failed(CUDNN_STATUS_BAD_PARAM, "fake cuDNN: not finalized");
  const auto pointers = values<void*>(v, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
  const auto ids = values<int64_t>(v, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS);
  if (pointers.size() != ids.size()) return failed(CUDNN_STATUS_BAD_PARAM, "fake cuDNN: pointers and ids differ");
  auto pointer = [&](const Backend* t) -> float* {
    for (size_t i = 0; i < ids.size(); ++i)
      if (ids[i] == t->id) return static_cast<float*>(pointers[i]);
    return nullptr;
  };
  const Backend& op = *p.op;
  float *image = pointer(op.image), *filter = pointer(op.filter), *output = pointer(op.output);
  if (!image || !filter || !output) return failed(CUDNN_STATUS_BAD_PARAM, "fake cuDNN: a tensor has no pointer");
  if (p.offer.workspace > 0 && value<void*>(v, CUDNN_ATTR_VARIANT_PACK_WORKSPACE) == nullptr)
    return failed(CUDNN_STATUS_BAD_PARAM, "fake cuDNN: no workspace");
  const float *alpha = &op.alpha, *beta = &op.beta;
  const cudnnTensorStruct* x = &op.image->tensor;
  const cudnnTensorStruct* y = &op.output->tensor;
  const cudnnTensorStruct& wt = op.filter->tensor;
  const cudnnFilterStruct w{wt.format, wt.n, wt.c, wt.h, wt.w};
  switch (op.kind) {
    case kForward: return convolve(kForward, alpha, x, image, &w, filter, &op.conv_desc->conv, y, nullptr, &p.offer,
                                   beta, output);
    case kBackwardData: return convolve(kBackwardData, alpha, x, nullptr, &w, filter, &op.conv_desc->conv, y, output,
                                        &p.offer, beta, image);
    case kBackwardFilter: return convolve(kBackwardFilter, alpha, x, image, &w, nullptr, &op.conv_desc->conv, y,
                                          output, &p.offer, beta, filter);
  }
  return CUDNN_STATUS_BAD_PARAM;
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
