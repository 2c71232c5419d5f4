// Conv2D and its two gradients on cuDNN's backend (graph) API. Layouts are
// TensorFlow's: NHWC activations and HWIO filters. cuDNN's NHWC filter layout
// is KRSC (OHWI), so filters are transposed on the device on the way in (and
// dfilter on the way out). A shape cuDNN has no usable NHWC engine for runs in
// NCHW (KCRS filters), its tensors permuted on the way in and out. Depthwise
// convolutions (TensorFlow's DepthwiseConv2dNative and its gradients) are
// cuDNN's grouped convolutions, one group per input channel (the filter
// tensor's channels are the input's over the groups).
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

BackendDescriptor::BackendDescriptor(cudnnBackendDescriptorType_t type) {
  CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &d_));
}
BackendDescriptor::~BackendDescriptor() {
  if (d_) cudnnBackendDestroyDescriptor(d_);
}
void BackendDescriptor::set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
                            const void* values) {
  check_cudnn(cudnnBackendSetAttribute(d_, name, type, count, values), "cudnnBackendSetAttribute", __FILE__, __LINE__);
}
void BackendDescriptor::finalize(const char* what) {
  check_cudnn(cudnnBackendFinalize(d_), what, __FILE__, __LINE__);
}

namespace {

enum Kind { kForward = 0, kBackwardData = 1, kBackwardFilter = 2 };

constexpr size_t kMaxWorkspace = size_t{1} << 30;  // engines needing more are skipped

// The tensors' ids in the graph and in each call's variant pack: the image
// (x or dx), the filter (w or dw) and the output side (y or dy).
constexpr int64_t kImage = 'x', kFilter = 'w', kOutput = 'y';

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

MathPolicy math_policy(const CudaDevice& d) { return {d.allow_tf32(), d.deterministic()}; }

constexpr const char* kKindNames[] = {"forward", "backward-data", "backward-filter"};

const char* layout_name(cudnnTensorFormat_t f) { return f == CUDNN_TENSOR_NHWC ? "NHWC" : "NCHW"; }

bool not_supported(cudnnStatus_t s) { return CUDNN_STATUS_CATEGORY(s) == CUDNN_STATUS_NOT_SUPPORTED; }

// A float tensor of logical dims [n, c, h, w] laid out as `layout` (the
// filter's KRSC is NHWC's order, KCRS NCHW's).
BackendDescriptor tensor(int64_t id, std::array<int64_t, 4> dims, cudnnTensorFormat_t layout) {
  const auto [n, c, h, w] = dims;
  const std::array<int64_t, 4> strides = layout == CUDNN_TENSOR_NHWC ? std::array<int64_t, 4>{h * w * c, 1, w * c, c}
                                                                      : std::array<int64_t, 4>{c * h * w, h * w, w, 1};
  const cudnnDataType_t type = CUDNN_DATA_FLOAT;
  const int64_t alignment = 4;  // a float; the allocator gives more, views into tensors may not
  BackendDescriptor t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data());
  t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data());
  t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &id);
  t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  t.finalize("cuDNN tensor descriptor");
  return t;
}

// The operation graph of one convolution of `kind` in `layout`: its tensors,
// convolution, operation and graph descriptors, the graph last.
std::vector<BackendDescriptor> conv_graph(CudaDevice& d, Kind kind, const Geometry& g, cudnnTensorFormat_t layout) {
  std::vector<BackendDescriptor> parts;
  parts.push_back(tensor(kImage, {g.n, g.c, g.hp(), g.wp()}, layout));
  parts.push_back(tensor(kOutput, {g.n, g.out_c(), g.oh, g.ow}, layout));
  parts.push_back(tensor(kFilter, {g.out_c(), g.in_per_group(), g.kh, g.kw}, layout));
  BackendDescriptor conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const int64_t spatial = 2, pad[] = {g.pad_h, g.pad_w}, stride[] = {g.sh, g.sw}, dilation[] = {g.dh, g.dw};
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial);
  conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  conv.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
  conv.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
  conv.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dilation);
  conv.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride);
  conv.finalize("cuDNN convolution descriptor");
  static constexpr cudnnBackendDescriptorType_t kOperation[] = {
      CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
      CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
      CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR};
  // The operation's attributes by kind: image, filter, output side, convolution, alpha, beta.
  static constexpr cudnnBackendAttributeName_t kAttributes[][6] = {
      {CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
       CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
       CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA},
      {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA},
      {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA}};
  const auto& a = kAttributes[kind];
  const float alpha = 1.f, beta = 0.f;
  BackendDescriptor op(kOperation[kind]);
  op.set(a[0], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, parts[0].address());
  op.set(a[1], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, parts[2].address());
  op.set(a[2], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, parts[1].address());
  op.set(a[3], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, conv.address());
  op.set(a[4], CUDNN_TYPE_FLOAT, 1, &alpha);
  op.set(a[5], CUDNN_TYPE_FLOAT, 1, &beta);
  op.finalize("cuDNN convolution operation");
  BackendDescriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  cudnnHandle_t handle = d.cudnn();
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, op.address());
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  graph.finalize("cuDNN operation graph");
  parts.push_back(std::move(conv));
  parts.push_back(std::move(op));
  parts.push_back(std::move(graph));
  return parts;
}

// The engine configurations cuDNN's heuristics offer for `graph` in `mode`
// (no timing runs: they allocate nothing and need no data), best first,
// those the math policy allows.
void heuristic_candidates(const BackendDescriptor& graph, cudnnBackendHeurMode_t mode, const MathPolicy& policy,
                          std::vector<ConvPlan::Candidate>& out) {
  BackendDescriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  heuristics.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, graph.address());
  heuristics.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  const cudnnStatus_t s = cudnnBackendFinalize(heuristics.get());
  if (not_supported(s)) return;  // this mode has nothing for the graph
  check_cudnn(s, "cudnnBackendFinalize (cuDNN heuristics)", __FILE__, __LINE__);
  int64_t count = 0;
  CUDNN_CHECK(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr));
  std::vector<BackendDescriptor> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    raw.push_back(configs.back().get());
  }
  int64_t got = 0;
  CUDNN_CHECK(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, raw.data()));
  for (int64_t i = 0; i < std::min(got, count); ++i) {
    BackendDescriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    cudnnBackendDescriptor_t e = engine.get();
    int64_t n = 0, index = -1;
    CUDNN_CHECK(cudnnBackendGetAttribute(raw[i], CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                         &e));
    CUDNN_CHECK(cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &index));
    std::vector<cudnnBackendNumericalNote_t> notes(CUDNN_NUMERICAL_NOTE_TYPE_COUNT);
    CUDNN_CHECK(cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                         CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n, notes.data()));
    notes.resize(static_cast<size_t>(std::clamp<int64_t>(n, 0, CUDNN_NUMERICAL_NOTE_TYPE_COUNT)));
    if (engine_allowed(notes, policy)) out.push_back({std::move(configs[static_cast<size_t>(i)]), index});
  }
}

// Candidate `index`'s execution plan, and the workspace it needs in `bytes`;
// false where cuDNN will not run it for this graph (NOT_SUPPORTED when the
// plan is made) or it needs more workspace than the policy allows. Other
// errors throw.
bool accepted(CudaDevice& d, const ConvPlan& p, size_t index, BackendDescriptor& plan, size_t& bytes) {
  BackendDescriptor made(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  cudnnHandle_t handle = d.cudnn();
  made.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  made.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
           p.candidates[index].config.address());
  const cudnnStatus_t s = cudnnBackendFinalize(made.get());
  if (not_supported(s)) return false;
  check_cudnn(s, "cudnnBackendFinalize (cuDNN execution plan)", __FILE__, __LINE__);
  int64_t n = 0, workspace = 0;
  CUDNN_CHECK(cudnnBackendGetAttribute(made.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                                       &workspace));
  if (workspace < 0 || static_cast<size_t>(workspace) > kMaxWorkspace) return false;
  bytes = static_cast<size_t>(workspace);
  plan = std::move(made);
  return true;
}

// Chooses the first candidate from `from` on that cuDNN accepts and whose
// workspace is below `below`; false if none is.
bool choose(CudaDevice& d, ConvPlan& p, Kind kind, size_t from, const Geometry& g, const char* op,
            size_t below = SIZE_MAX) {
  for (size_t i = from; i < p.candidates.size(); ++i) {
    BackendDescriptor plan;
    size_t bytes = 0;
    if (!accepted(d, p, i, plan, bytes)) {
      d.log(AXON_LOG_DEBUG,
            sdk::format("%s: %s: cuDNN makes no plan of %s engine %lld (candidate %zu of %zu) here, or it needs "
                        "more than 1 GiB of workspace; skipped",
                        d.label().c_str(), op, kKindNames[kind], (long long)p.candidates[i].engine, i + 1,
                        p.candidates.size()));
      continue;
    }
    if (bytes >= below) continue;
    p.chosen = i;
    p.plan = std::move(plan);
    p.workspace = bytes;
    d.log(AXON_LOG_DEBUG,
          sdk::format("%s: %s uses %s %s engine %lld (candidate %zu of %zu, workspace %zu bytes) "
                      "for N=%lld H=%lld W=%lld C=%lld K=%lld R=%lld S=%lld",
                      d.label().c_str(), op, layout_name(p.layout), kKindNames[kind], (long long)p.engine(), i + 1,
                      p.candidates.size(), p.workspace, (long long)g.n, (long long)g.hp(), (long long)g.wp(),
                      (long long)g.c, (long long)g.out_c(), (long long)g.kh, (long long)g.kw));
    return true;
  }
  return false;
}

// Runs the plan on (image, filter, output side): x, w, y forward; dx, w, dy
// for the data gradient; x, dw, dy for the filter gradient. If cuDNN refuses
// it after all (not supported), or its workspace does not fit in the memory
// left (a --gpu-memory-limit), the next candidate that cuDNN accepts (needing
// less workspace, for the latter) is taken and kept.
void execute(CudaDevice& d, ConvPlan& p, Kind kind, const Geometry& g, const char* op, const float* image,
             const float* filter, const float* output) {
  for (;;) {
    std::optional<CudaDevice::Scratch> ws;
    try {
      ws.emplace(d, p.workspace);
    } catch (const sdk::Error& e) {
      if (e.code() != AXON_OUT_OF_MEMORY) throw;
      const int64_t engine = p.engine();
      const size_t wanted = p.workspace;
      if (!choose(d, p, kind, p.chosen + 1, g, op, wanted))
        sdk::fail(AXON_OUT_OF_MEMORY,
                  sdk::format("%s: no %s engine fits: %s (the workspace of engine %lld; no other needs less)", op,
                              kKindNames[kind], e.what(), (long long)engine));
      d.log(AXON_LOG_INFO,
            sdk::format("%s: %s: no room for the %zu-byte workspace of %s engine %lld; using engine %lld (%zu bytes) "
                        "instead",
                        d.label().c_str(), op, wanted, kKindNames[kind], (long long)engine, (long long)p.engine(),
                        p.workspace));
      continue;
    }
    // The call binds this call's pointers to the plan (a variant pack costs
    // the host about what executing does: bench_cudnn_calls.cpp).
    void* pointers[] = {const_cast<float*>(image), const_cast<float*>(filter), const_cast<float*>(output)};
    const int64_t ids[] = {kImage, kFilter, kOutput};
    void* workspace = ws->get();
    BackendDescriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers);
    pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, ids);
    pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
    pack.finalize("cuDNN variant pack");
    const cudnnStatus_t s = cudnnBackendExecute(d.cudnn(), p.plan.get(), pack.get());
    if (s == CUDNN_STATUS_SUCCESS) return;
    const int64_t engine = p.engine();
    if (not_supported(s) && choose(d, p, kind, p.chosen + 1, g, op)) {
      d.log(AXON_LOG_DEBUG, sdk::format("%s: %s engine %lld refused (%s); using engine %lld", d.label().c_str(), op,
                                        (long long)engine, cudnnGetErrorString(s), (long long)p.engine()));
      continue;
    }
    check_cudnn(s, sdk::format("cudnnBackendExecute, %s engine %lld for %s", kKindNames[kind], (long long)engine, op)
                       .c_str(),
                __FILE__, __LINE__);
  }
}

// The graph in `layout` and its first engine cuDNN accepts; nullptr when
// there is none. The heuristics' mode A list first, then their fallback
// list where none of it was usable.
std::unique_ptr<ConvPlan> make_plan(CudaDevice& d, Kind kind, const Geometry& g, const char* op,
                                    const MathPolicy& policy, cudnnTensorFormat_t layout) {
  auto p = std::make_unique<ConvPlan>();
  p->layout = layout;
  p->graph = conv_graph(d, kind, g, layout);
  heuristic_candidates(p->graph.back(), CUDNN_HEUR_MODE_A, policy, p->candidates);
  if (choose(d, *p, kind, 0, g, op)) return p;
  p->candidates.clear();
  heuristic_candidates(p->graph.back(), CUDNN_HEUR_MODE_FALLBACK, policy, p->candidates);
  if (choose(d, *p, kind, 0, g, op)) return p;
  return nullptr;
}

// The plan for one convolution shape, made once: NHWC, or where cuDNN has no
// usable NHWC engine (few exist for float32, none for some dilated or
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
      sdk::fail(AXON_UNIMPLEMENTED, sdk::format("%s: cuDNN offers no usable %s engine, in NHWC or NCHW, for %s", op,
                                                kKindNames[kind], shape.c_str()));
    d.log(AXON_LOG_INFO,
          sdk::format("%s: %s: cuDNN has no usable NHWC %s engine for %s; using NCHW through transposes",
                      d.label().c_str(), op, kKindNames[kind], shape.c_str()));
  }
  slot = std::move(p);
  return *slot;
}

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
  execute(d, p, kForward, g, c.op(), xin, w.get<float>(), out);
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
  execute(d, p, kBackwardData, g, c.op(), out, w.get<float>(), dyin);
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
  execute(d, p, kBackwardFilter, g, c.op(), xin, dw.get<float>(), dyin);
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
