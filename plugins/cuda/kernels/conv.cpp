// Conv2D and its two gradients on cuDNN. Layouts are TensorFlow's: NHWC
// activations and HWIO filters. cuDNN's NHWC filter layout is KRSC (OHWI), so
// filters are transposed on the device on the way in (and dfilter on the way out).
#include "conv.hpp"

#include "cuda_device.hpp"
#include "elementwise.hpp"
#include "math_policy.hpp"

#include <axon/op_geometry.hpp>

#include <optional>

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
struct Geometry : ConvGeometry {
  explicit Geometry(const ConvGeometry& g) : ConvGeometry(g) {}
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

// Makes candidate `index` the plan's algorithm: math type and workspace size.
void choose(CudaDevice& d, ConvPlan& p, Kind kind, size_t index, const Geometry& g, const char* op) {
  p.chosen = index;
  p.algo = p.candidates[index].first;
  const cudnnMathType_t math = p.candidates[index].second;  // run_math(): never down-converting, TF32 only if allowed
  CUDNN_CHECK(cudnnSetConvolutionMathType(p.conv, math));
  if (kind == kForward)
    CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(d.cudnn(), p.x, p.w, p.conv, p.y,
                                                        static_cast<cudnnConvolutionFwdAlgo_t>(p.algo), &p.workspace));
  else if (kind == kBackwardData)
    CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(
        d.cudnn(), p.w, p.y, p.conv, p.x, static_cast<cudnnConvolutionBwdDataAlgo_t>(p.algo), &p.workspace));
  else
    CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(
        d.cudnn(), p.x, p.y, p.conv, p.w, static_cast<cudnnConvolutionBwdFilterAlgo_t>(p.algo), &p.workspace));
  d.log(AXON_LOG_DEBUG, sdk::format("%s: %s uses %s algorithm %d (candidate %zu of %zu, math %d, workspace %zu bytes) for "
                                    "N=%lld H=%lld W=%lld C=%lld K=%lld R=%lld S=%lld",
                                    d.label().c_str(), op, kKindNames[kind], p.algo, index + 1, p.candidates.size(),
                                    static_cast<int>(math), p.workspace, (long long)g.n, (long long)g.hp(),
                                    (long long)g.wp(), (long long)g.c, (long long)g.oc, (long long)g.kh, (long long)g.kw));
}

// Runs `call(algo, workspace, bytes)`; if cuDNN says the chosen algorithm is
// not supported after all, moves to the next candidate (kept for later calls).
template <class Call>
void execute(CudaDevice& d, ConvPlan& p, Kind kind, const Geometry& g, const char* op, Call call) {
  for (;;) {
    CudaDevice::Scratch ws(d, p.workspace);
    const cudnnStatus_t s = call(p.algo, ws.get(), p.workspace);
    if (s == CUDNN_STATUS_SUCCESS) return;
    if (CUDNN_STATUS_CATEGORY(s) == CUDNN_STATUS_NOT_SUPPORTED && p.chosen + 1 < p.candidates.size()) {
      d.log(AXON_LOG_DEBUG, sdk::format("%s: %s algorithm %d refused (%s); trying the next", d.label().c_str(), op, p.algo,
                                        cudnnGetErrorString(s)));
      choose(d, p, kind, p.chosen + 1, g, op);
      continue;
    }
    check_cudnn(s, sdk::format("cudnnConvolution %s (algorithm %d) for %s", kKindNames[kind], p.algo, op).c_str(), __FILE__,
                __LINE__);
  }
}

ConvPlan& plan_for(CudaDevice& d, Kind kind, const Geometry& g, const char* op) {
  const MathPolicy policy = math_policy(d);
  const bool tf32 = policy.allow_tf32;
  ConvKey key{kind, g.n, g.hp(), g.wp(), g.c, g.oc, g.kh, g.kw, g.pad_h, g.pad_w, g.sh, g.sw, g.dh, g.dw,
              tf32 ? 1 : 0, policy.deterministic ? 1 : 0};
  auto& slot = d.conv_plans().plans[key];
  if (slot) return *slot;

  auto p = std::make_unique<ConvPlan>();
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->x));
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->y));
  CUDNN_CHECK(cudnnCreateFilterDescriptor(&p->w));
  CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&p->conv));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(p->x, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, as_int(g.n, op), as_int(g.c, op),
                                         as_int(g.hp(), op), as_int(g.wp(), op)));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(p->y, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, as_int(g.n, op), as_int(g.oc, op),
                                         as_int(g.oh, op), as_int(g.ow, op)));
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(p->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, as_int(g.oc, op), as_int(g.c, op),
                                         as_int(g.kh, op), as_int(g.kw, op)));
  CUDNN_CHECK(cudnnSetConvolution2dDescriptor(p->conv, as_int(g.pad_h, op), as_int(g.pad_w, op), as_int(g.sh, op),
                                              as_int(g.sw, op), as_int(g.dh, op), as_int(g.dw, op),
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  CUDNN_CHECK(cudnnSetConvolutionMathType(p->conv, descriptor_math(policy)));

  // cuDNN's own output size must agree with TensorFlow's (it does, given the
  // explicit extra row/column); a mismatch would be a bug here.
  int on = 0, oc = 0, oh = 0, ow = 0;
  CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(p->conv, p->x, p->w, &on, &oc, &oh, &ow));
  if (oh != g.oh || ow != g.ow)
    sdk::fail(AXON_INTERNAL, sdk::format("%s: cuDNN output %dx%d differs from TensorFlow's %lldx%lld", op, oh, ow,
                                         (long long)g.oh, (long long)g.ow));

  // Heuristics only (no timing runs): they allocate nothing and need no data.
  // The policy drops what may not run (down-conversion, TF32 when off, too
  // much workspace, non-deterministic algorithms when determinism is asked).
  auto collect = [&](const auto* perf, int n) { p->candidates = usable_algorithms(perf, n, policy); };
  if (kind == kForward) {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int n = 0;
    CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(d.cudnn(), p->x, p->w, p->conv, p->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                       &n, perf));
    collect(perf, n);
  } else if (kind == kBackwardData) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int n = 0;
    CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(d.cudnn(), p->w, p->y, p->conv, p->x,
                                                            CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n, perf));
    collect(perf, n);
  } else {
    cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int n = 0;
    CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(d.cudnn(), p->x, p->y, p->conv, p->w,
                                                              CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &n, perf));
    collect(perf, n);
  }
  if (p->candidates.empty())
    sdk::fail(AXON_UNIMPLEMENTED, sdk::format("%s: cuDNN offers no usable %s algorithm for N=%lld H=%lld W=%lld C=%lld K=%lld "
                                              "R=%lld S=%lld (TF32 %s, deterministic %s)", op, kKindNames[kind],
                                              (long long)g.n, (long long)g.hp(), (long long)g.wp(), (long long)g.c,
                                              (long long)g.oc, (long long)g.kh, (long long)g.kw, tf32 ? "allowed" : "off",
                                              policy.deterministic ? "on" : "off"));
  choose(d, *p, kind, 0, g, op);
  slot = std::move(p);
  return *slot;
}

const float kOne = 1.f, kZero = 0.f;

// HWIO [R*S*C, K] -> KRSC [K, R*S*C] in scratch.
void filter_to_krsc(CudaDevice& d, const sdk::TensorRef& f, float* out) {
  const int64_t k = f.dim(3);
  launch::transpose(d.stream(), f.data<float>(), out, f.numel() / k, k);
}

bool empty(const Geometry& g) { return g.n == 0 || g.c == 0 || g.oc == 0 || g.oh == 0 || g.ow == 0; }

void conv2d(CudaDevice& d, const sdk::KernelCall& c) {
  auto x = c.input(0), f = c.input(1), y = c.output(0);
  const Geometry g(conv_geometry(c.attrs<axon_conv2d_attrs>(), x.c(), f.c()));
  if (y.numel() == 0) return;
  if (g.c == 0) return launch::fill(d.stream(), y.data<float>(), y.numel(), 0.f);
  ConvPlan& p = plan_for(d, kForward, g, c.op());
  CudaDevice::Scratch w(d, f.numel() * sizeof(float));
  filter_to_krsc(d, f, w.get<float>());
  const float* xin = x.data<float>();
  std::optional<CudaDevice::Scratch> xpad;
  if (g.padded()) {  // the asymmetric SAME row/column, as zeros at the end
    xpad.emplace(d, g.n * g.hp() * g.wp() * g.c * sizeof(float));
    launch::window_copy(d.stream(), xin, g.n, g.h, g.w, g.c, xpad->get<float>(), g.hp(), g.wp(), 0, 0, 0.f);
    xin = xpad->get<float>();
  }
  execute(d, p, kForward, g, c.op(), [&](int algo, void* ws, size_t bytes) {
    return cudnnConvolutionForward(d.cudnn(), &kOne, p.x, xin, p.w, w.get(), p.conv,
                                   static_cast<cudnnConvolutionFwdAlgo_t>(algo), ws, bytes, &kZero, p.y, y.raw());
  });
}

void conv2d_backprop_input(CudaDevice& d, const sdk::KernelCall& c) {
  auto dy = c.input(0), f = c.input(1), dx = c.output(0);
  const Geometry g(conv_geometry(c.attrs<axon_conv2d_attrs>(), dx.c(), f.c()));
  if (dx.numel() == 0) return;
  if (empty(g)) return launch::fill(d.stream(), dx.data<float>(), dx.numel(), 0.f);
  ConvPlan& p = plan_for(d, kBackwardData, g, c.op());
  CudaDevice::Scratch w(d, f.numel() * sizeof(float));
  filter_to_krsc(d, f, w.get<float>());
  std::optional<CudaDevice::Scratch> dxpad;
  float* out = dx.data<float>();
  if (g.padded()) {
    dxpad.emplace(d, g.n * g.hp() * g.wp() * g.c * sizeof(float));
    out = dxpad->get<float>();
  }
  execute(d, p, kBackwardData, g, c.op(), [&](int algo, void* ws, size_t bytes) {
    return cudnnConvolutionBackwardData(d.cudnn(), &kOne, p.w, w.get(), p.y, dy.raw(), p.conv,
                                        static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), ws, bytes, &kZero, p.x, out);
  });
  if (g.padded())  // drop the gradient of the padding row/column
    launch::window_copy(d.stream(), out, g.n, g.hp(), g.wp(), g.c, dx.data<float>(), g.h, g.w, 0, 0, 0.f);
}

void conv2d_backprop_filter(CudaDevice& d, const sdk::KernelCall& c) {
  auto x = c.input(0), dy = c.input(1), df = c.output(0);
  const Geometry g(conv_geometry(c.attrs<axon_conv2d_attrs>(), x.c(), df.c()));
  if (df.numel() == 0) return;
  if (empty(g)) return launch::fill(d.stream(), df.data<float>(), df.numel(), 0.f);
  ConvPlan& p = plan_for(d, kBackwardFilter, g, c.op());
  const float* xin = x.data<float>();
  std::optional<CudaDevice::Scratch> xpad;
  if (g.padded()) {
    xpad.emplace(d, g.n * g.hp() * g.wp() * g.c * sizeof(float));
    launch::window_copy(d.stream(), xin, g.n, g.h, g.w, g.c, xpad->get<float>(), g.hp(), g.wp(), 0, 0, 0.f);
    xin = xpad->get<float>();
  }
  CudaDevice::Scratch dw(d, df.numel() * sizeof(float));
  execute(d, p, kBackwardFilter, g, c.op(), [&](int algo, void* ws, size_t bytes) {
    return cudnnConvolutionBackwardFilter(d.cudnn(), &kOne, p.x, xin, p.y, dy.raw(), p.conv,
                                          static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), ws, bytes, &kZero, p.w,
                                          dw.get());
  });
  // KRSC [K, R*S*C] -> HWIO [R*S*C, K]
  const int64_t k = df.dim(3);
  launch::transpose(d.stream(), dw.get<float>(), df.data<float>(), k, df.numel() / k);
}

}  // namespace

void register_conv_kernels(sdk::KernelTable& t) {
  add<OpId::Conv2D, conv2d>(t);
  add<OpId::Conv2DBackpropInput, conv2d_backprop_input>(t);
  add<OpId::Conv2DBackpropFilter, conv2d_backprop_filter>(t);
}

}  // namespace axon::cuda
