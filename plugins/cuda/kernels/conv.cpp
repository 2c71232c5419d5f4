// Conv2D and its two gradients on cuDNN. Layouts are TensorFlow's: NHWC
// activations and HWIO filters. cuDNN's NHWC filter layout is KRSC (OHWI), so
// filters are transposed on the device on the way in (and dfilter on the way
// out). A shape cuDNN has no usable NHWC algorithm for runs in NCHW (KCRS
// filters), its tensors permuted on the way in and out. Depthwise
// convolutions (TensorFlow's DepthwiseConv2dNative and its gradients) are
// cuDNN's grouped convolutions, one group per input channel.
#include "conv.hpp"

#include "cuda_device.hpp"
#include "cudnn_limits.hpp"
#include "elementwise.hpp"
#include "math_policy.hpp"

#include <axon/op_geometry.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace axon::cuda {

ConvPlan::~ConvPlan() {
  if (x) cudnnDestroyTensorDescriptor(x);
  if (y) cudnnDestroyTensorDescriptor(y);
  if (w) cudnnDestroyFilterDescriptor(w);
  if (conv) cudnnDestroyConvolutionDescriptor(conv);
}

namespace {

enum Kind { kForward = 0, kBackwardData = 1, kBackwardFilter = 2 };

constexpr size_t kMaxWorkspace = size_t{1} << 30;  // algorithms needing more are skipped

// TensorFlow's geometry (op_geometry.hpp) as cuDNN takes it: cuDNN pads both
// sides alike, so SAME's odd row/column (at the end) is made part of the input.
// A depthwise convolution is cuDNN's grouped one: a group per input channel,
// each with the filter's last dimension (the multiplier) as its outputs.
struct Geometry : ConvGeometry {
  int64_t groups = 1;  // 1, or c for a depthwise convolution
  Geometry(const ConvGeometry& g, bool depthwise) : ConvGeometry(g), groups(depthwise ? g.c : 1) {}
  int64_t out_c() const { return groups == 1 ? oc : c * oc; }  // y's channels
  int64_t in_per_group() const { return c / groups; }
  int64_t extra_h() const { return pad_h_total - 2 * pad_h; }
  int64_t extra_w() const { return pad_w_total - 2 * pad_w; }
  int64_t hp() const { return h + extra_h(); }  // input height as given to cuDNN
  int64_t wp() const { return w + extra_w(); }
  bool padded() const { return extra_h() != 0 || extra_w() != 0; }
};

int as_int(int64_t v, const char* op) {
  sdk::require(v <= INT32_MAX, sdk::format("%s: dimension %lld is too large for cuDNN", op, (long long)v));
  return static_cast<int>(v);
}

MathPolicy math_policy(const CudaDevice& d) { return {d.allow_tf32(), d.deterministic(), kMaxWorkspace}; }

constexpr const char* kKindNames[] = {"forward", "backward-data", "backward-filter"};

const char* layout_name(cudnnTensorFormat_t f) { return f == CUDNN_TENSOR_NHWC ? "NHWC" : "NCHW"; }

// Whether cuDNN will run candidate `index` of the plan: its math type set
// and its workspace asked for (in `bytes`). NOT_SUPPORTED from either means
// it will not for these descriptors, whatever the heuristics said: false,
// and the caller moves on; any other error throws.
bool accepted(CudaDevice& d, ConvPlan& p, Kind kind, size_t index, size_t& bytes) {
  const auto [algo, math] = p.candidates[index];
  auto refused = [](cudnnStatus_t s, const char* call) {
    if (s == CUDNN_STATUS_SUCCESS) return false;
    if (CUDNN_STATUS_CATEGORY(s) == CUDNN_STATUS_NOT_SUPPORTED) return true;
    check_cudnn(s, call, __FILE__, __LINE__);
    return true;
  };
  if (refused(cudnnSetConvolutionMathType(p.conv, math), "cudnnSetConvolutionMathType")) return false;
  cudnnStatus_t s;
  if (kind == kForward)
    s = cudnnGetConvolutionForwardWorkspaceSize(d.cudnn(), p.x, p.w, p.conv, p.y,
                                                static_cast<cudnnConvolutionFwdAlgo_t>(algo), &bytes);
  else if (kind == kBackwardData)
    s = cudnnGetConvolutionBackwardDataWorkspaceSize(d.cudnn(), p.w, p.y, p.conv, p.x,
                                                     static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), &bytes);
  else
    s = cudnnGetConvolutionBackwardFilterWorkspaceSize(d.cudnn(), p.x, p.y, p.conv, p.w,
                                                       static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), &bytes);
  return !refused(s, "cudnnGetConvolution*WorkspaceSize") && bytes <= kMaxWorkspace;
}

// Makes the first candidate from `from` on that cuDNN accepts, with a
// workspace under `below` bytes, the plan's algorithm. False when none is.
bool choose(CudaDevice& d, ConvPlan& p, Kind kind, size_t from, const Geometry& g, const char* op,
            size_t below = SIZE_MAX) {
  for (size_t i = from; i < p.candidates.size(); ++i) {
    size_t bytes = 0;
    if (!accepted(d, p, kind, i, bytes)) {
      d.log(AXON_LOG_DEBUG,
            sdk::format("%s: %s: cuDNN does not support %s algorithm %d (candidate %zu of %zu) here; skipped",
                        d.label().c_str(), op, kKindNames[kind], p.candidates[i].first, i + 1, p.candidates.size()));
      continue;
    }
    if (bytes >= below) continue;
    p.chosen = i;
    p.algo = p.candidates[i].first;
    p.workspace = bytes;
    d.log(
        AXON_LOG_DEBUG,
        sdk::format("%s: %s uses %s %s algorithm %d (candidate %zu of %zu, math %d, workspace %zu bytes) "
                    "for N=%lld H=%lld W=%lld C=%lld K=%lld R=%lld S=%lld",
                    d.label().c_str(), op, layout_name(p.layout), kKindNames[kind], p.algo, i + 1, p.candidates.size(),
                    static_cast<int>(p.candidates[i].second), p.workspace, (long long)g.n, (long long)g.hp(),
                    (long long)g.wp(), (long long)g.c, (long long)g.out_c(), (long long)g.kh, (long long)g.kw));
    return true;
  }
  return false;
}

// Runs `call(algo, workspace, bytes)` with the plan's algorithm. If cuDNN
// refuses it after all (not supported), or its workspace does not fit in
// the memory left (a --gpu-memory-limit), the next candidate that cuDNN
// accepts (needing less workspace, for the latter) is taken and kept.
template <class Call>
void execute(CudaDevice& d, ConvPlan& p, Kind kind, const Geometry& g, const char* op, Call call) {
  for (;;) {
    // The descriptor's math type is the chosen candidate's (choose() may have tried others since).
    CUDNN_CHECK(cudnnSetConvolutionMathType(p.conv, p.candidates[p.chosen].second));
    std::optional<CudaDevice::Scratch> ws;
    try {
      ws.emplace(d, p.workspace);
    } catch (const sdk::Error& e) {
      if (e.code() != AXON_OUT_OF_MEMORY) throw;
      const int algo = p.algo;
      const size_t wanted = p.workspace;
      if (!choose(d, p, kind, p.chosen + 1, g, op, wanted))
        sdk::fail(AXON_OUT_OF_MEMORY,
                  sdk::format("%s: no %s algorithm fits: %s (the workspace of algorithm %d; no other needs less)",
                              op, kKindNames[kind], e.what(), algo));
      d.log(AXON_LOG_INFO,
            sdk::format("%s: %s: no room for the %zu-byte workspace of %s algorithm %d; using algorithm %d (%zu bytes) "
                        "instead",
                        d.label().c_str(), op, wanted, kKindNames[kind], algo, p.algo, p.workspace));
      continue;
    }
    const cudnnStatus_t s = call(p.algo, ws->get(), p.workspace);
    if (s == CUDNN_STATUS_SUCCESS) return;
    const int algo = p.algo;
    if (CUDNN_STATUS_CATEGORY(s) == CUDNN_STATUS_NOT_SUPPORTED && choose(d, p, kind, p.chosen + 1, g, op)) {
      d.log(AXON_LOG_DEBUG, sdk::format("%s: %s algorithm %d refused (%s); using algorithm %d", d.label().c_str(), op,
                                        algo, cudnnGetErrorString(s), p.algo));
      continue;
    }
    check_cudnn(s, sdk::format("cudnnConvolution %s (algorithm %d) for %s", kKindNames[kind], algo, op).c_str(),
                __FILE__, __LINE__);
  }
}

// cuDNN's heuristics for the plan's descriptors (no timing runs: they
// allocate nothing and need no data), as many results as cuDNN may give
// (cudnnGet*AlgorithmMaxCount: its DEFAULT and TENSOR_OP variants of one
// algorithm count apart), filtered by the math policy.
std::vector<std::pair<int, cudnnMathType_t>> heuristic_candidates(CudaDevice& d, const ConvPlan& p, Kind kind,
                                                                  const MathPolicy& policy) {
  int max = 0, n = 0;
  if (kind == kForward) {
    CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(d.cudnn(), &max));
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(std::max(max, 1)));
    CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(d.cudnn(), p.x, p.w, p.conv, p.y, max, &n, perf.data()));
    return usable_algorithms(perf.data(), n, policy);
  }
  if (kind == kBackwardData) {
    CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(d.cudnn(), &max));
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(static_cast<size_t>(std::max(max, 1)));
    CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(d.cudnn(), p.w, p.y, p.conv, p.x, max, &n, perf.data()));
    return usable_algorithms(perf.data(), n, policy);
  }
  CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(d.cudnn(), &max));
  std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(static_cast<size_t>(std::max(max, 1)));
  CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(d.cudnn(), p.x, p.y, p.conv, p.w, max, &n, perf.data()));
  return usable_algorithms(perf.data(), n, policy);
}

// Descriptors in `layout` (activations NHWC with KRSC filters, or NCHW with
// KCRS) and the first candidate cuDNN accepts; nullptr when there is none.
std::unique_ptr<ConvPlan> make_plan(CudaDevice& d, Kind kind, const Geometry& g, const char* op,
                                    const MathPolicy& policy, cudnnTensorFormat_t layout) {
  auto p = std::make_unique<ConvPlan>();
  p->layout = layout;
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->x));
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->y));
  CUDNN_CHECK(cudnnCreateFilterDescriptor(&p->w));
  CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&p->conv));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(p->x, layout, CUDNN_DATA_FLOAT, as_int(g.n, op), as_int(g.c, op),
                                         as_int(g.hp(), op), as_int(g.wp(), op)));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(p->y, layout, CUDNN_DATA_FLOAT, as_int(g.n, op), as_int(g.out_c(), op),
                                         as_int(g.oh, op), as_int(g.ow, op)));
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(p->w, CUDNN_DATA_FLOAT, layout, as_int(g.out_c(), op),
                                         as_int(g.in_per_group(), op), as_int(g.kh, op), as_int(g.kw, op)));
  CUDNN_CHECK(cudnnSetConvolution2dDescriptor(p->conv, as_int(g.pad_h, op), as_int(g.pad_w, op), as_int(g.sh, op),
                                              as_int(g.sw, op), as_int(g.dh, op), as_int(g.dw, op),
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  CUDNN_CHECK(cudnnSetConvolutionMathType(p->conv, descriptor_math(policy)));
  if (g.groups > 1) CUDNN_CHECK(cudnnSetConvolutionGroupCount(p->conv, as_int(g.groups, op)));

  // cuDNN's own output size must agree with TensorFlow's (it does, given the
  // explicit extra row/column); a mismatch would be a bug here.
  int on = 0, oc = 0, oh = 0, ow = 0;
  CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(p->conv, p->x, p->w, &on, &oc, &oh, &ow));
  if (oh != g.oh || ow != g.ow)
    sdk::fail(AXON_INTERNAL, sdk::format("%s: cuDNN output %dx%d differs from TensorFlow's %lldx%lld", op, oh, ow,
                                         (long long)g.oh, (long long)g.ow));

  // The policy drops what may not run (down-conversion, TF32 when off, too
  // much workspace, non-deterministic algorithms when determinism is asked);
  // cuDNN itself may still refuse a candidate's math type or workspace query.
  p->candidates = heuristic_candidates(d, *p, kind, policy);
  if (!choose(d, *p, kind, 0, g, op)) return nullptr;
  return p;
}

// The plan for one convolution shape, made once: NHWC, or where cuDNN has no
// usable NHWC algorithm (few exist for float32, none for some dilated or
// deterministic gradients), NCHW through transposes, as TensorFlow does.
ConvPlan& plan_for(CudaDevice& d, Kind kind, const Geometry& g, const char* op) {
  const MathPolicy policy = math_policy(d);
  const bool tf32 = policy.allow_tf32;
  const ConvKey key{kind, g.n, g.hp(), g.wp(), g.c, g.oc, g.kh, g.kw, g.pad_h, g.pad_w, g.sh, g.sw, g.dh, g.dw,
                    tf32 ? 1 : 0, policy.deterministic ? 1 : 0, g.groups};
  auto& slot = d.conv_plans().plans[key];
  if (slot) return *slot;
  const std::string shape = sdk::format(
      "N=%lld H=%lld W=%lld C=%lld K=%lld R=%lld S=%lld, stride %lldx%lld, dilation "
      "%lldx%lld%s (TF32 %s, deterministic %s)",
      (long long)g.n, (long long)g.hp(), (long long)g.wp(), (long long)g.c, (long long)g.out_c(), (long long)g.kh,
      (long long)g.kw, (long long)g.sh, (long long)g.sw, (long long)g.dh, (long long)g.dw,
      g.groups > 1 ? sdk::format(", %lld groups", (long long)g.groups).c_str() : "", tf32 ? "allowed" : "off",
      policy.deterministic ? "on" : "off");
  std::unique_ptr<ConvPlan> p = make_plan(d, kind, g, op, policy, CUDNN_TENSOR_NHWC);
  if (p == nullptr) {
    p = make_plan(d, kind, g, op, policy, CUDNN_TENSOR_NCHW);
    if (p == nullptr)
      sdk::fail(AXON_UNIMPLEMENTED, sdk::format("%s: cuDNN offers no usable %s algorithm, in NHWC or NCHW, for %s", op,
                                                kKindNames[kind], shape.c_str()));
    d.log(AXON_LOG_INFO,
          sdk::format("%s: %s: cuDNN has no usable NHWC %s algorithm for %s; using NCHW through transposes",
                      d.label().c_str(), op, kKindNames[kind], shape.c_str()));
  }
  slot = std::move(p);
  return *slot;
}

const float kOne = 1.f, kZero = 0.f;
constexpr int kNhwcToNchw[] = {0, 3, 1, 2}, kNchwToNhwc[] = {0, 2, 3, 1};
constexpr int kHwioToKcrs[] = {3, 2, 0, 1}, kKcrsToHwio[] = {2, 3, 1, 0};

// The HWIO filter, [R, S, C / groups, K] (a depthwise [R, S, C, M] is
// [R, S, 1, C * M]), in the plan's filter layout: KRSC [K, R*S*C/groups] (a
// transpose) or KCRS (a permutation).
void filter_to_plan(CudaDevice& d, const ConvPlan& p, const Geometry& g, const float* f, float* out) {
  if (p.layout == CUDNN_TENSOR_NHWC)
    return launch::transpose(d.stream(), f, out, g.kh * g.kw * g.in_per_group(), g.out_c());
  const int64_t hwio[] = {g.kh, g.kw, g.in_per_group(), g.out_c()};
  launch::permute(d.stream(), f, 4, hwio, kHwioToKcrs, out);
}

// An NHWC activation [n, h, w, c] as the plan takes it: itself, or an NCHW copy in `buf`.
const float* to_plan(CudaDevice& d, const ConvPlan& p, const float* nhwc, std::array<int64_t, 4> dims,
                     std::optional<CudaDevice::Scratch>& buf) {
  if (p.layout == CUDNN_TENSOR_NHWC) return nhwc;
  buf.emplace(d, dims[0] * dims[1] * dims[2] * dims[3] * sizeof(float));
  launch::permute(d.stream(), nhwc, 4, dims.data(), kNhwcToNchw, buf->get<float>());
  return buf->get<float>();
}

// Where cuDNN writes an NHWC result [n, h, w, c]: `nhwc` itself, or NCHW
// scratch in `buf` that from_plan() then permutes into `nhwc`.
float* out_plan(CudaDevice& d, const ConvPlan& p, float* nhwc, std::array<int64_t, 4> dims,
                std::optional<CudaDevice::Scratch>& buf) {
  if (p.layout == CUDNN_TENSOR_NHWC) return nhwc;
  buf.emplace(d, dims[0] * dims[1] * dims[2] * dims[3] * sizeof(float));
  return buf->get<float>();
}
void from_plan(CudaDevice& d, const ConvPlan& p, float* nhwc, std::array<int64_t, 4> dims,
               const std::optional<CudaDevice::Scratch>& buf) {
  if (p.layout == CUDNN_TENSOR_NHWC) return;
  const int64_t nchw[] = {dims[0], dims[3], dims[1], dims[2]};
  launch::permute(d.stream(), buf->get<float>(), 4, nchw, kNchwToNhwc, nhwc);
}

bool empty(const Geometry& g) { return g.n == 0 || g.c == 0 || g.out_c() == 0 || g.oh == 0 || g.ow == 0; }

// The three tensors as cuDNN takes them (the image with SAME's extra row or
// column) within its 2^31 - 1 elements.
void require_cudnn_sizes(const Geometry& g, const char* op) {
  require_cudnn_size(op, g.padded() ? "the image (with SAME's extra row/column)" : "the image",
                     {g.n, g.hp(), g.wp(), g.c});
  require_cudnn_size(op, "the convolution's output", {g.n, g.oh, g.ow, g.out_c()});
  require_cudnn_size(op, "the filter", {g.kh, g.kw, g.in_per_group(), g.out_c()});
}

template <bool Depthwise>
void conv2d(CudaDevice& d, const sdk::KernelCall& c) {
  auto x = c.input(0), f = c.input(1), y = c.output(0);
  const Geometry g(conv_geometry(c.attrs<axon_conv2d_attrs>(), x.c(), f.c()), Depthwise);
  if (y.numel() == 0) return;
  if (g.c == 0) return launch::fill(d.stream(), y.data<float>(), y.numel(), 0.f);
  require_cudnn_sizes(g, c.op());
  ConvPlan& p = plan_for(d, kForward, g, c.op());
  CudaDevice::Scratch w(d, f.numel() * sizeof(float));
  filter_to_plan(d, p, g, f.data<float>(), w.get<float>());
  const float* xin = x.data<float>();
  std::optional<CudaDevice::Scratch> xpad, xplan, yplan;
  if (g.padded()) {  // the asymmetric SAME row/column, as zeros at the end
    xpad.emplace(d, g.n * g.hp() * g.wp() * g.c * sizeof(float));
    launch::window_copy(d.stream(), xin, g.n, g.h, g.w, g.c, xpad->get<float>(), g.hp(), g.wp(), 0, 0, 0.f);
    xin = xpad->get<float>();
  }
  xin = to_plan(d, p, xin, {g.n, g.hp(), g.wp(), g.c}, xplan);
  float* out = out_plan(d, p, y.data<float>(), {g.n, g.oh, g.ow, g.out_c()}, yplan);
  execute(d, p, kForward, g, c.op(), [&](int algo, void* ws, size_t bytes) {
    return cudnnConvolutionForward(d.cudnn(), &kOne, p.x, xin, p.w, w.get(), p.conv,
                                   static_cast<cudnnConvolutionFwdAlgo_t>(algo), ws, bytes, &kZero, p.y, out);
  });
  from_plan(d, p, y.data<float>(), {g.n, g.oh, g.ow, g.out_c()}, yplan);
}

template <bool Depthwise>
void conv2d_backprop_input(CudaDevice& d, const sdk::KernelCall& c) {
  auto dy = c.input(0), f = c.input(1), dx = c.output(0);
  const Geometry g(conv_geometry(c.attrs<axon_conv2d_attrs>(), dx.c(), f.c()), Depthwise);
  if (dx.numel() == 0) return;
  if (empty(g)) return launch::fill(d.stream(), dx.data<float>(), dx.numel(), 0.f);
  require_cudnn_sizes(g, c.op());
  ConvPlan& p = plan_for(d, kBackwardData, g, c.op());
  CudaDevice::Scratch w(d, f.numel() * sizeof(float));
  filter_to_plan(d, p, g, f.data<float>(), w.get<float>());
  std::optional<CudaDevice::Scratch> dxpad, dyplan, dxplan;
  float* dx_nhwc = dx.data<float>();  // dx, or dx with the padding row/column
  if (g.padded()) {
    dxpad.emplace(d, g.n * g.hp() * g.wp() * g.c * sizeof(float));
    dx_nhwc = dxpad->get<float>();
  }
  const float* dyin = to_plan(d, p, dy.data<float>(), {g.n, g.oh, g.ow, g.out_c()}, dyplan);
  float* out = out_plan(d, p, dx_nhwc, {g.n, g.hp(), g.wp(), g.c}, dxplan);
  execute(d, p, kBackwardData, g, c.op(), [&](int algo, void* ws, size_t bytes) {
    return cudnnConvolutionBackwardData(d.cudnn(), &kOne, p.w, w.get(), p.y, dyin, p.conv,
                                        static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), ws, bytes, &kZero, p.x, out);
  });
  from_plan(d, p, dx_nhwc, {g.n, g.hp(), g.wp(), g.c}, dxplan);
  if (g.padded())  // drop the gradient of the padding row/column
    launch::window_copy(d.stream(), dx_nhwc, g.n, g.hp(), g.wp(), g.c, dx.data<float>(), g.h, g.w, 0, 0, 0.f);
}

template <bool Depthwise>
void conv2d_backprop_filter(CudaDevice& d, const sdk::KernelCall& c) {
  auto x = c.input(0), dy = c.input(1), df = c.output(0);
  const Geometry g(conv_geometry(c.attrs<axon_conv2d_attrs>(), x.c(), df.c()), Depthwise);
  if (df.numel() == 0) return;
  if (empty(g)) return launch::fill(d.stream(), df.data<float>(), df.numel(), 0.f);
  require_cudnn_sizes(g, c.op());
  ConvPlan& p = plan_for(d, kBackwardFilter, g, c.op());
  const float* xin = x.data<float>();
  std::optional<CudaDevice::Scratch> xpad, xplan, dyplan;
  if (g.padded()) {
    xpad.emplace(d, g.n * g.hp() * g.wp() * g.c * sizeof(float));
    launch::window_copy(d.stream(), xin, g.n, g.h, g.w, g.c, xpad->get<float>(), g.hp(), g.wp(), 0, 0, 0.f);
    xin = xpad->get<float>();
  }
  xin = to_plan(d, p, xin, {g.n, g.hp(), g.wp(), g.c}, xplan);
  const float* dyin = to_plan(d, p, dy.data<float>(), {g.n, g.oh, g.ow, g.out_c()}, dyplan);
  CudaDevice::Scratch dw(d, df.numel() * sizeof(float));
  execute(d, p, kBackwardFilter, g, c.op(), [&](int algo, void* ws, size_t bytes) {
    return cudnnConvolutionBackwardFilter(d.cudnn(), &kOne, p.x, xin, p.y, dyin, p.conv,
                                          static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), ws, bytes, &kZero, p.w,
                                          dw.get());
  });
  if (p.layout == CUDNN_TENSOR_NHWC)  // KRSC [K, R*S*C/groups] -> HWIO [R*S*C/groups, K]
    return launch::transpose(d.stream(), dw.get<float>(), df.data<float>(), g.out_c(), g.kh * g.kw * g.in_per_group());
  const int64_t kcrs[] = {g.out_c(), g.in_per_group(), g.kh, g.kw};
  launch::permute(d.stream(), dw.get<float>(), 4, kcrs, kKcrsToHwio, df.data<float>());
}

}  // namespace

void register_conv_kernels(sdk::KernelTable& t) {
  add<OpId::Conv2D, conv2d<false>>(t);
  add<OpId::Conv2DBackpropInput, conv2d_backprop_input<false>>(t);
  add<OpId::Conv2DBackpropFilter, conv2d_backprop_filter<false>>(t);
  add<OpId::DepthwiseConv2dNative, conv2d<true>>(t);
  add<OpId::DepthwiseConv2dNativeBackpropInput, conv2d_backprop_input<true>>(t);
  add<OpId::DepthwiseConv2dNativeBackpropFilter, conv2d_backprop_filter<true>>(t);
}

}  // namespace axon::cuda
