#include "cases.hpp"


#include "reference.hpp"

#include <axon/op_geometry.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>

namespace axon::plugin_check {

// ------------------------------------------------------------------ tensors

HostTensor::HostTensor(axon_dtype t, Dims d) : dtype(t), dims(std::move(d)) {
  bytes.assign(static_cast<size_t>(numel()) * dtype_size(t), 0);
}

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

axon_tensor HostTensor::view(void* data) const {
  axon_tensor t{};
  t.data = numel() > 0 ? data : nullptr;
  t.dtype = dtype;
  t.rank = static_cast<int32_t>(dims.size());
  for (size_t i = 0; i < dims.size() && i < AXON_MAX_RANK; ++i) t.dims[i] = dims[i];
  return t;
}

std::string dims_text(const Dims& d) {
  if (d.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) (s += (i ? "x" : "")) += std::to_string(d[i]);
  return s;
}

std::string kernel_name(const OpSchema& op, axon_dtype key) {
  return std::string("kernel[") + op.name + " " + dtype_name(key) + "]";
}

std::string Case::name() const { return kernel_name(*op, key) + " " + label; }

int Case::result_count() const {
  return op->in_place_inputs > 0 ? op->in_place_inputs : static_cast<int>(outputs.size());
}

const char* Case::result_name(int i) const {
  return op->in_place_inputs > 0 ? input_slot(*op, i).name : output_slot(*op, i).name;
}

namespace {

// ------------------------------------------------------------------ values and cases

constexpr axon_padding kSame = AXON_PADDING_SAME, kValid = AXON_PADDING_VALID;

class Gen {
 public:
  Gen(const OpSchema& op, axon_dtype key)
      : op_(op), key_(key), rng_(1000u + 16u * static_cast<unsigned>(op.id) + static_cast<unsigned>(key)) {}

  Case& add(std::string label) {
    cases_.emplace_back();
    Case& c = cases_.back();
    c.op = &op_;
    c.key = key_;
    c.label = std::move(label);
    return c;
  }
  std::vector<Case> take() { return std::move(cases_); }

  // Uniform in [lo, hi): mixed signs, as training data is.
  HostTensor floats(Dims d, float lo = -1.0f, float hi = 1.0f) {
    HostTensor t(AXON_FLOAT32, std::move(d));
    std::uniform_real_distribution<float> u(lo, hi);
    for (int64_t i = 0; i < t.numel(); ++i) t.f32()[i] = u(rng_);
    return t;
  }
  // Whole numbers in [lo, hi]: exact sums and many ties.
  HostTensor whole(Dims d, int lo, int hi) {
    HostTensor t(AXON_FLOAT32, std::move(d));
    std::uniform_int_distribution<int> u(lo, hi);
    for (int64_t i = 0; i < t.numel(); ++i) t.f32()[i] = static_cast<float>(u(rng_));
    return t;
  }
  HostTensor labels(int64_t n, int64_t classes) {
    HostTensor t(AXON_INT32, {n});
    std::uniform_int_distribution<int32_t> u(0, static_cast<int32_t>(classes - 1));
    for (int64_t i = 0; i < n; ++i) {
      const int32_t v = u(rng_);
      std::memcpy(&t.bytes[static_cast<size_t>(i) * 4], &v, 4);
    }
    return t;
  }
  // Any bit pattern but NaN, for dtypes compared bit for bit.
  HostTensor raw(axon_dtype dt, Dims d) {
    if (dt == AXON_FLOAT32) return floats(std::move(d), -100.0f, 100.0f);
    HostTensor t(dt, std::move(d));
    std::uniform_int_distribution<int> u(0, 255);
    for (unsigned char& b : t.bytes) b = static_cast<unsigned char>(u(rng_));
    return t;
  }
  // Uniform in [lo, hi), every third element taken from `edges` in turn.
  HostTensor with_edges(Dims d, const std::vector<float>& edges, float lo, float hi) {
    HostTensor t = floats(std::move(d), lo, hi);
    for (int64_t i = 2; i < t.numel(); i += 3) t.f32()[i] = edges[static_cast<size_t>(i / 3) % edges.size()];
    return t;
  }
  // ReLU outputs: zeros where the draw was negative.
  HostTensor relu_like(Dims d) {
    HostTensor t = floats(std::move(d));
    for (int64_t i = 0; i < t.numel(); ++i) t.f32()[i] = t.f32()[i] > 0 ? t.f32()[i] : 0.0f;
    return t;
  }

 private:
  const OpSchema& op_;
  axon_dtype key_;
  std::mt19937 rng_;
  std::vector<Case> cases_;
};

HostTensor f32(Dims d) { return HostTensor(AXON_FLOAT32, std::move(d)); }

void judge_all(Case& c, Rule r, bool abs_all) {
  c.rules.assign(static_cast<size_t>(c.result_count()), r);
  c.abs_inputs.assign(c.inputs.size(), abs_all);
}

// ------------------------------------------------------------------ convolutions

struct ConvSpec {
  Dims x, f;
  axon_padding pad;
  int sh, sw, dh, dw;
};

const char* pad_name(axon_padding p) { return p == kSame ? "SAME" : "VALID"; }

std::string pair_text(int a, int b) { return a == b ? std::to_string(a) : std::to_string(a) + "x" + std::to_string(b); }

std::string conv_text(const ConvSpec& s) {
  std::string t = std::string(pad_name(s.pad)) + " stride " + pair_text(s.sh, s.sw);
  if (s.dh != 1 || s.dw != 1) t += " dilation " + pair_text(s.dh, s.dw);
  return t + " " + dims_text(s.x) + " * " + dims_text(s.f);
}

axon_conv2d_attrs conv_attrs(const ConvSpec& s) {
  return {sizeof(axon_conv2d_attrs), s.sh, s.sw, s.dh, s.dw, s.pad};
}

Dims conv_out(const ConvSpec& s) {
  const ConvGeometry g = conv_geometry(conv_attrs(s), s.x.data(), s.f.data());
  return {g.n, g.oh, g.ow, g.oc};
}

// Odd sizes, batch 1 and 2, SAME and VALID, strides 1 and 2, dilation 2,
// a layer of the guide's CNN and an empty batch; only the third has SAME,
// stride 2 and an odd width.
const std::vector<ConvSpec>& conv_specs() {
  static const std::vector<ConvSpec> specs = {
      {{1, 7, 5, 3}, {3, 3, 3, 4}, kValid, 1, 1, 1, 1},
      {{2, 6, 7, 2}, {3, 3, 2, 3}, kSame, 1, 1, 1, 1},
      {{1, 7, 5, 3}, {3, 3, 3, 4}, kSame, 2, 2, 1, 1},
      {{2, 8, 9, 3}, {2, 3, 3, 2}, kValid, 2, 2, 1, 1},
      {{1, 6, 6, 2}, {3, 3, 2, 2}, kSame, 2, 2, 1, 1},
      {{1, 5, 8, 2}, {1, 3, 2, 3}, kSame, 2, 1, 1, 1},
      {{1, 9, 8, 2}, {3, 3, 2, 3}, kSame, 1, 1, 2, 2},
      {{1, 9, 9, 1}, {2, 2, 1, 2}, kValid, 1, 1, 2, 2},
      {{2, 13, 13, 32}, {3, 3, 32, 64}, kValid, 1, 1, 1, 1},  // the CNN's second layer
      {{0, 5, 5, 3}, {3, 3, 3, 4}, kSame, 1, 1, 1, 1},
  };
  return specs;
}

void conv_cases(Gen& g, OpId id) {
  int k = 0;
  for (const ConvSpec& s : conv_specs()) {
    const Dims y = conv_out(s);
    switch (id) {
      case OpId::Conv2D: {
        Case& c = g.add(conv_text(s));
        c.inputs = {g.floats(s.x), g.floats(s.f)};
        c.outputs = {f32(y)};
        c.attrs = conv_attrs(s);
        judge_all(c, Rule::sum, true);
        break;
      }
      case OpId::Conv2DBackpropInput: {
        Case& c = g.add(conv_text(s));
        c.inputs = {g.floats(y), g.floats(s.f)};
        c.outputs = {f32(s.x)};
        c.attrs = conv_attrs(s);
        judge_all(c, Rule::sum, true);
        break;
      }
      case OpId::Conv2DBackpropInputAccumulate: {  // dx holds another reader's gradient
        Case& c = g.add(conv_text(s));
        c.inputs = {g.floats(s.x), g.floats(y), g.floats(s.f)};
        c.attrs = conv_attrs(s);
        judge_all(c, Rule::sum, true);
        break;
      }
      case OpId::Conv2DBackpropFilter: {
        Case& c = g.add(conv_text(s));
        c.inputs = {g.floats(s.x), g.floats(y)};
        c.outputs = {f32(s.f)};
        c.attrs = conv_attrs(s);
        judge_all(c, Rule::sum, true);
        break;
      }
      default: {  // _FusedConv2D, with and without relu in turn
        const int act = k % 2 == 0 ? AXON_ACTIVATION_RELU : AXON_ACTIVATION_NONE;
        Case& c = g.add(conv_text(s) + (act == AXON_ACTIVATION_RELU ? ", relu" : ", no activation"));
        c.inputs = {g.floats(s.x), g.floats(s.f), g.floats({s.f[3]})};
        c.outputs = {f32(y)};
        c.attrs = axon_fused_conv2d_attrs{sizeof(axon_fused_conv2d_attrs), conv_attrs(s), act};
        judge_all(c, Rule::sum, true);
        break;
      }
    }
    ++k;
  }
}

// ------------------------------------------------------------------ pooling

struct PoolSpec {
  Dims x;
  axon_padding pad;
  int wh, ww, sh, sw;
};

axon_pool_attrs pool_attrs(const PoolSpec& s) { return {sizeof(axon_pool_attrs), s.wh, s.ww, s.sh, s.sw, s.pad}; }

std::string pool_text(const PoolSpec& s) {
  return std::string(pad_name(s.pad)) + " " + std::to_string(s.wh) + "x" + std::to_string(s.ww) + " stride " +
         pair_text(s.sh, s.sw) + " " + dims_text(s.x);
}

void pool_cases(Gen& g, OpId id) {
  static const std::vector<PoolSpec> specs = {
      {{1, 7, 5, 3}, kValid, 2, 2, 2, 2}, {{2, 7, 6, 2}, kSame, 3, 3, 2, 2}, {{1, 5, 5, 2}, kSame, 2, 2, 1, 1},
      {{1, 6, 7, 1}, kValid, 3, 3, 1, 1}, {{1, 5, 7, 2}, kSame, 3, 2, 2, 1}, {{0, 4, 4, 2}, kSame, 2, 2, 2, 2},
  };
  for (const PoolSpec& s : specs) {
    const axon_pool_attrs a = pool_attrs(s);
    const PoolGeometry p = pool_geometry(a, s.x[0], s.x[1], s.x[2], s.x[3]);
    const Dims y = {p.n, p.oh, p.ow, p.c};
    Case& c = g.add(pool_text(s));
    c.attrs = a;
    if (id == OpId::MaxPool) {
      c.inputs = {g.floats(s.x)};
      c.outputs = {f32(y)};
      judge_all(c, Rule::exact, false);
    } else {  // MaxPoolGrad: y is MaxPool(x); dy is summed where windows overlap
      HostTensor x = g.floats(s.x);
      HostTensor yv = run_reference(op_schema(OpId::MaxPool), {x}, {f32(y)}, attrs_ptr(c.attrs))[0];
      c.inputs = {x, yv, g.floats(y)};
      c.outputs = {f32(s.x)};
      judge_all(c, Rule::sum, false);
      c.abs_inputs[2] = true;
    }
  }
}

// ------------------------------------------------------------------ convolution + max pooling

struct ConvPoolSpec {
  ConvSpec conv;
  PoolSpec pool;  // pool.x unused
  int act;
};

axon_fused_conv2d_max_pool_attrs conv_pool_attrs(const ConvPoolSpec& s) {
  return {sizeof(axon_fused_conv2d_max_pool_attrs), conv_attrs(s.conv), s.act, pool_attrs(s.pool)};
}

std::string conv_pool_text(const ConvPoolSpec& s) {
  const PoolSpec& p = s.pool;
  return "conv " + conv_text(s.conv) + ", pool " + pad_name(p.pad) + " " + std::to_string(p.wh) + "x" +
         std::to_string(p.ww) + " stride " + pair_text(p.sh, p.sw) +
         (s.act == AXON_ACTIVATION_RELU ? ", relu" : ", no activation");
}

void conv_pool_cases(Gen& g, OpId id) {
  static const std::vector<ConvPoolSpec> specs = {
      {{{1, 7, 5, 3}, {3, 3, 3, 4}, kSame, 1, 1, 1, 1}, {{}, kValid, 2, 2, 2, 2}, AXON_ACTIVATION_RELU},
      {{{2, 8, 7, 2}, {3, 3, 2, 3}, kValid, 1, 1, 1, 1}, {{}, kSame, 3, 3, 2, 2}, AXON_ACTIVATION_NONE},
      {{{1, 9, 9, 1}, {3, 3, 1, 2}, kSame, 2, 2, 1, 1}, {{}, kSame, 2, 2, 2, 2}, AXON_ACTIVATION_RELU},
      {{{1, 7, 6, 2}, {2, 2, 2, 2}, kValid, 1, 1, 2, 2}, {{}, kValid, 2, 2, 1, 1}, AXON_ACTIVATION_NONE},
      // the guide's CNN's first layer
      {{{2, 28, 28, 1}, {3, 3, 1, 32}, kValid, 1, 1, 1, 1}, {{}, kValid, 2, 2, 2, 2}, AXON_ACTIVATION_RELU},
      {{{0, 6, 6, 2}, {3, 3, 2, 2}, kSame, 1, 1, 1, 1}, {{}, kValid, 2, 2, 2, 2}, AXON_ACTIVATION_RELU},
  };
  for (const ConvPoolSpec& s : specs) {
    const axon_fused_conv2d_max_pool_attrs a = conv_pool_attrs(s);
    const ConvGeometry cg = conv_geometry(a.conv, s.conv.x.data(), s.conv.f.data());
    const PoolGeometry p = pool_geometry(a.pool, cg.n, cg.oh, cg.ow, cg.oc);
    const Dims y = {p.n, p.oh, p.ow, p.c};
    const Dims bias = {s.conv.f[3]};
    if (id == OpId::FusedConv2DMaxPool) {
      Case& c = g.add(conv_pool_text(s));
      c.attrs = a;
      c.inputs = {g.floats(s.conv.x), g.floats(s.conv.f), g.floats(bias)};
      c.outputs = {f32(y), HostTensor(AXON_UINT8, y)};
      judge_all(c, Rule::sum, true);
      c.rules[1] = Rule::exact;  // the argmax tap
      continue;
    }
    // The gradient, with the argmax its forward gives, with and without dx.
    HostTensor x = g.floats(s.conv.x), f = g.floats(s.conv.f), b = g.floats(bias);
    HostTensor argmax = run_reference(op_schema(OpId::FusedConv2DMaxPool), {x, f, b},
                                      {f32(y), HostTensor(AXON_UINT8, y)}, &a)[1];
    HostTensor dy = g.floats(y);
    for (bool with_dx : {true, false}) {
      Case& c = g.add(conv_pool_text(s) + (with_dx ? ", with dx" : ", without dx"));
      c.attrs = a;
      c.inputs = {x, f, dy, argmax};
      c.outputs = {f32(s.conv.f), f32(bias)};
      if (with_dx) c.outputs.push_back(f32(s.conv.x));
      judge_all(c, Rule::sum, true);
      c.abs_inputs[3] = false;
    }
  }
}

// ------------------------------------------------------------------ matrix products

struct MatMulSpec {
  int64_t m, k, n;
  int ta, tb;
};

std::string matmul_text(const MatMulSpec& s, const Dims& a, const Dims& b) {
  return dims_text(a) + (s.ta ? "^T" : "") + " * " + dims_text(b) + (s.tb ? "^T" : "");
}

void matmul_cases(Gen& g, OpId id) {
  // Both transposes, batch 1, odd sizes, the CNN's Dense layer (batch 64,
  // 576 -> 64) and its gradient's product, no rows, and k = 0 (c is all zeros).
  static const std::vector<MatMulSpec> plain = {{3, 5, 4, 0, 0},  {3, 5, 4, 1, 0},   {3, 5, 4, 0, 1},
                                                {3, 5, 4, 1, 1},  {1, 7, 3, 0, 0},   {5, 9, 7, 0, 1},
                                                {64, 576, 64, 0, 0}, {576, 64, 64, 1, 0}, {0, 5, 4, 0, 0},
                                                {3, 0, 4, 0, 0}};
  static const std::vector<MatMulSpec> fused = {{3, 5, 4, 0, 0}, {3, 5, 4, 1, 1}, {1, 7, 3, 0, 1},  {5, 9, 7, 1, 0},
                                                {64, 576, 64, 0, 0}, {0, 5, 4, 0, 0}, {3, 0, 4, 0, 0}};
  int i = 0;
  for (const MatMulSpec& s : id == OpId::MatMul ? plain : fused) {
    const Dims a = s.ta ? Dims{s.k, s.m} : Dims{s.m, s.k};
    const Dims b = s.tb ? Dims{s.n, s.k} : Dims{s.k, s.n};
    const axon_matmul_attrs ma{sizeof(axon_matmul_attrs), s.ta, s.tb};
    if (id == OpId::MatMul) {
      Case& c = g.add(matmul_text(s, a, b));
      c.inputs = {g.floats(a), g.floats(b)};
      c.outputs = {f32({s.m, s.n})};
      c.attrs = ma;
      judge_all(c, Rule::sum, true);
    } else {
      const int act = i % 2 == 0 ? AXON_ACTIVATION_RELU : AXON_ACTIVATION_NONE;
      Case& c = g.add(matmul_text(s, a, b) + (act == AXON_ACTIVATION_RELU ? ", relu" : ", no activation"));
      c.inputs = {g.floats(a), g.floats(b), g.floats({s.n})};
      c.outputs = {f32({s.m, s.n})};
      c.attrs = axon_fused_matmul_attrs{sizeof(axon_fused_matmul_attrs), ma, act};
      judge_all(c, Rule::sum, true);
    }
    ++i;
  }
}

// ------------------------------------------------------------------ the other ops

void elementwise_cases(Gen& g, OpId id) {
  static const std::vector<Dims> shapes = {{3, 5, 7}, {1}, {2, 3, 4, 5}, {0, 3}};
  for (const Dims& d : shapes) {
    switch (id) {
      case OpId::Relu: {
        Case& c = g.add(dims_text(d));
        c.inputs = {g.floats(d)};
        c.outputs = {f32(d)};
        judge_all(c, Rule::exact, false);
        break;
      }
      case OpId::ReluGrad: {
        Case& c = g.add(dims_text(d));
        c.inputs = {g.floats(d), g.relu_like(d)};
        c.outputs = {f32(d)};
        judge_all(c, Rule::exact, false);
        break;
      }
      case OpId::Scale:
        for (bool in_place : {false, true}) {
          Case& c = g.add("alpha -0.75 " + dims_text(d) + (in_place ? ", in place" : ""));
          c.inputs = {g.floats(d)};
          c.outputs = {f32(d)};
          c.in_place = in_place;
          c.attrs = axon_scale_attrs{sizeof(axon_scale_attrs), -0.75f};
          judge_all(c, Rule::exact, false);
        }
        break;
      case OpId::Fill: {
        Case& c = g.add("value 2.5 " + dims_text(d));
        c.outputs = {f32(d)};
        c.attrs = axon_fill_attrs{sizeof(axon_fill_attrs), 2.5f};
        judge_all(c, Rule::exact, false);
        break;
      }
      case OpId::Identity: {
        Case& c = g.add(dims_text(d));
        HostTensor x = g.raw(c.key, d);
        c.inputs = {x};
        c.outputs = {HostTensor(c.key, d)};
        judge_all(c, Rule::exact, false);
        break;
      }
      case OpId::NormalizeImage: {
        Case& c = g.add(dims_text(d));
        c.inputs = {g.raw(AXON_UINT8, d)};
        c.outputs = {f32(d)};
        judge_all(c, Rule::exact, false);
        break;
      }
      default: break;
    }
  }
}

void bias_cases(Gen& g, OpId id) {
  static const std::vector<Dims> shapes = {{2, 3, 5}, {1, 7}, {2, 2, 3, 4}, {0, 4}};
  for (const Dims& d : shapes) {
    const Dims bias = {d.back()};
    switch (id) {
      case OpId::BiasAdd:
        for (bool in_place : {false, true}) {
          Case& c = g.add(dims_text(d) + " + bias " + dims_text(bias) + (in_place ? ", in place" : ""));
          c.inputs = {g.floats(d), g.floats(bias)};
          c.outputs = {f32(d)};
          c.in_place = in_place;
          judge_all(c, Rule::exact, false);
        }
        break;
      case OpId::BiasAddGrad: {
        Case& c = g.add(dims_text(d));
        c.inputs = {g.floats(d)};
        c.outputs = {f32(bias)};
        judge_all(c, Rule::sum, true);
        break;
      }
      case OpId::FusedReluGradBiasAddGrad: {
        Case& c = g.add(dims_text(d));
        c.inputs = {g.floats(d), g.relu_like(d)};
        c.outputs = {f32(d), f32(bias)};
        judge_all(c, Rule::sum, false);
        c.rules[0] = Rule::exact;  // dx is ReluGrad
        c.abs_inputs[0] = true;
        break;
      }
      default: break;
    }
  }
}

void sum_cases(Gen& g, OpId id) {
  if (id == OpId::Sum) {
    const std::vector<std::pair<Dims, Dims>> shapes = {{{3, 5, 7}, {}}, {{1}, {1}}, {{4, 9}, {1}}, {{0, 3}, {}}};
    for (const auto& [x, y] : shapes) {
      Case& c = g.add(dims_text(x) + " -> " + dims_text(y));
      c.inputs = {g.floats(x)};
      c.outputs = {f32(y)};
      judge_all(c, Rule::sum, true);
    }
    return;
  }
  // AddN with 1, 2 and 3 inputs.
  const std::vector<std::pair<int, Dims>> shapes = {{3, {2, 3, 4}}, {1, {3, 5}}, {2, {1}}, {3, {0, 3}}};
  for (const auto& [n, d] : shapes) {
    Case& c = g.add(std::to_string(n) + (n == 1 ? " input " : " inputs ") + dims_text(d));
    for (int i = 0; i < n; ++i) c.inputs.push_back(g.floats(d));
    c.outputs = {f32(d)};
    judge_all(c, Rule::sum, true);
  }
}

void classifier_cases(Gen& g, OpId id) {
  struct Spec {
    int64_t n, classes;
    bool ties;
  };
  static const std::vector<Spec> specs = {{5, 10, false}, {1, 3, false}, {8, 4, true}, {0, 10, false}};
  // InTopKV2 at k = 1, within the classes and past them.
  const std::vector<int32_t> ks = id == OpId::InTopKV2 ? std::vector<int32_t>{1, 3, 12} : std::vector<int32_t>{0};
  for (const Spec& s : specs)
    for (int32_t k : ks) {
      if (s.ties && id == OpId::SparseSoftmaxCrossEntropyWithLogits) continue;
      Case& c = g.add(std::string(s.ties ? "ties " : "") + (k > 0 ? "k " + std::to_string(k) + " " : "") +
                      dims_text({s.n, s.classes}));
      // Ties: whole-number logits, so classes share the maximum.
      c.inputs = {s.ties ? g.whole({s.n, s.classes}, 0, 2) : g.floats({s.n, s.classes}, -4.0f, 4.0f),
                  g.labels(s.n, s.classes)};
      if (id == OpId::InTopKV2) c.attrs = axon_in_top_k_attrs{sizeof(axon_in_top_k_attrs), k};
      if (id == OpId::SparseSoftmaxCrossEntropyWithLogits) {
        c.outputs = {f32({s.n}), f32({s.n, s.classes})};
        judge_all(c, Rule::loss, false);
        c.rules[1] = Rule::dlogits;
      } else {
        c.outputs = {f32({s.n})};
        judge_all(c, Rule::exact, false);
      }
    }
}

void adam_cases(Gen& g) {
  struct Spec {
    Dims d;
    int64_t step;
  };
  static const std::vector<Spec> specs = {{{37}, 1}, {{37}, 7}, {{3, 5}, 7}, {{0}, 1}};
  for (const Spec& s : specs) {
    Case& c = g.add("step " + std::to_string(s.step) + " " + dims_text(s.d));
    c.inputs = {g.floats(s.d), g.floats(s.d, -0.1f, 0.1f), g.floats(s.d, 0.0f, 0.01f), g.floats(s.d)};
    c.attrs = axon_adam_attrs{sizeof(axon_adam_attrs), 0.01f, 0.9f, 0.999f, 1e-7f, s.step};
    judge_all(c, Rule::adam_var, false);
    c.rules = {Rule::adam_var, Rule::adam_m, Rule::adam_v};
  }
}

// ------------------------------------------------------------------ the losses of ABI 1.7

// Each loss with its settings on a batch of 10 classes, one of 3 (or one
// unit), batch 1 and an empty batch. Probabilities (from_logits 0) are
// positive and not normalised (the op divides by the row's sum); binary
// ones cross the clip's range [1e-7, 1 - 1e-7] both ways.
void loss_cases(Gen& g, OpId id) {
  if (id == OpId::BinaryAccuracy) {
    for (int64_t n : {9, 1, 0})
      for (float threshold : {0.5f, 0.0f}) {
        Case& c = g.add("threshold " + std::to_string(threshold).substr(0, 3) + " " + dims_text({n, 1}));
        c.inputs = {g.floats({n, 1}, -1.0f, 1.5f), g.labels(n, 2)};
        c.attrs = axon_binary_accuracy_attrs{sizeof(axon_binary_accuracy_attrs), threshold};
        c.outputs = {f32({n})};
        judge_all(c, Rule::exact, false);
      }
    return;
  }
  const bool binary = id == OpId::BinaryCrossentropy;
  const std::vector<Dims> shapes = binary ? std::vector<Dims>{{7, 1}, {1, 1}, {0, 1}}
                                   : id == OpId::RegressionLoss ? std::vector<Dims>{{5, 10}, {6, 1}, {1, 3}, {0, 4}}
                                                                : std::vector<Dims>{{5, 10}, {1, 3}, {0, 10}};
  for (const Dims& d : shapes) {
    const int64_t n = d[0], units = d[1];
    const HostTensor labels = g.labels(n, binary ? 2 : units == 1 ? 10 : units);
    auto add = [&](const std::string& what, HostTensor x) -> Case& {
      Case& c = g.add(what + " " + dims_text(d));
      c.inputs = {std::move(x), labels};
      c.outputs = {f32({n}), f32(d)};
      judge_all(c, Rule::keras_loss, false);
      return c;
    };
    if (id == OpId::RegressionLoss) {
      for (int loss = 0; loss < 4; ++loss) {
        const bool huber = loss >= 2;
        Case& c = add(huber ? (loss == 2 ? "huber delta 1" : "huber delta 0.5") : loss == 0 ? "mse" : "mae",
                      g.floats(d, -4.0f, 4.0f));
        c.attrs = axon_regression_loss_attrs{sizeof(axon_regression_loss_attrs),
                                   huber ? AXON_LOSS_HUBER : static_cast<axon_regression_loss>(loss),
                                   loss == 3 ? 0.5f : 1.0f};
      }
      continue;
    }
    for (int from_logits = 1; from_logits >= 0; --from_logits)
      for (float smoothing : {0.0f, 0.1f}) {
        HostTensor x = from_logits ? g.floats(d, -4.0f, 4.0f)
                       : binary    ? g.floats(d, -0.2f, 1.2f)
                                   : g.floats(d, 0.05f, 1.0f);
        Case& c = add(std::string(from_logits ? "logits" : "probabilities") + (smoothing > 0 ? " smoothing 0.1" : ""),
                      std::move(x));
        c.attrs = axon_crossentropy_attrs{sizeof(axon_crossentropy_attrs), from_logits, smoothing};
      }
  }
}

// ------------------------------------------------------------------ the random ops and reductions of ABI 1.9

// A partial last Philox block, several blocks, a counter whose low word
// carries into the next, a scale and offset; the empty tensor.
void random_cases(Gen& g, OpId id) {
  struct Spec {
    Dims d;
    uint32_t counter0;
    float scale, offset;
  };
  static const std::vector<Spec> specs = {
      {{7}, 0, 1.0f, 0.0f}, {{3, 5, 7}, 0xFFFFFFF0u, 1.0f, 0.0f}, {{2, 33}, 5, 0.5f, -2.0f}, {{0, 4}, 0, 1.0f, 0.0f}};
  for (const Spec& s : specs) {
    char label[96];
    std::snprintf(label, sizeof label, "counter0 %#x scale %g offset %g %s", s.counter0, double(s.scale),
                  double(s.offset), dims_text(s.d).c_str());
    Case& c = g.add(label);
    c.outputs = {f32(s.d)};
    c.attrs = axon_random_attrs{sizeof(axon_random_attrs), {0x3ec8f720u, 0x02461e29u}, {s.counter0, 0, 7, 0x9e3779b9u},
                      s.scale, s.offset};
    judge_all(c, id == OpId::StatelessRandomNormalV2 ? Rule::normal : Rule::exact, false);
  }
}

// Leading, trailing, middle, several, negative and all axes, keep_dims or
// not, rank 0 and no axis; empty reductions (Mean's NaN is checked by the
// kernel tests: the judge passes no NaN).
void reduce_cases(Gen& g, OpId id) {
  struct Spec {
    Dims x;
    std::vector<int32_t> axes;
    bool keep;
  };
  static const std::vector<Spec> specs = {
      {{3, 5, 7}, {0}, false},    {{3, 5, 7}, {2}, true},      {{3, 5, 7}, {1}, false},     {{2, 3, 4, 5}, {0, 2}, false},
      {{2, 3, 4, 5}, {-1, 1}, true}, {{4, 9}, {0, 1}, false}, {{40, 700}, {1}, false},     {{700, 40}, {0}, false},
      {{5}, {}, false},           {{}, {}, true},              {{0, 3}, {0}, false},        {{3, 0}, {0}, true}};
  for (const Spec& s : specs) {
    if (id == OpId::Mean && s.x.size() == 2 && s.x[0] == 0) continue;
    axon_reduce_attrs a{sizeof(axon_reduce_attrs), static_cast<int32_t>(s.axes.size()), {}, s.keep ? 1 : 0};
    std::string axes;
    Dims y;
    for (size_t i = 0; i < s.axes.size(); ++i) {
      a.axes[i] = s.axes[i];
      (axes += i ? "," : "") += std::to_string(s.axes[i]);
    }
    for (size_t d = 0; d < s.x.size(); ++d) {
      bool reduced = false;
      for (int32_t axis : s.axes) reduced = reduced || (axis < 0 ? axis + static_cast<int>(s.x.size()) : axis) == int(d);
      if (!reduced || s.keep) y.push_back(reduced ? 1 : s.x[d]);
    }
    Case& c = g.add(dims_text(s.x) + " axes [" + axes + "]" + (s.keep ? " keep_dims" : ""));
    c.inputs = {g.floats(s.x)};
    c.outputs = {f32(y)};
    c.attrs = a;
    judge_all(c, id == OpId::Max ? Rule::exact : Rule::sum, id != OpId::Max);
  }
}

// ------------------------------------------------------------------ the optimizers of ABI 1.6

// Each update with and without its options, at steps 1 and 7, over an odd
// size and an empty one; the sums of squares start non-negative.
void optimizer_cases(Gen& g, OpId id) {
  const OpSchema& s = op_schema(id);
  for (const Dims& d : {Dims{1031}, Dims{0}}) {
    for (int variant = 0; variant < 2; ++variant) {
      if (id == OpId::ClipGradients) {
        for (int mode = 0; mode < 3; ++mode) {
          Case& c = g.add("mode " + std::to_string(mode) + " " + dims_text(d));
          HostTensor ends(AXON_INT64, {d[0] > 0 ? 3 : 0});
          const int64_t cut[3] = {100, 101, d[0]};  // a one-element variable in the middle
          if (d[0] > 0) std::memcpy(ends.bytes.data(), cut, sizeof cut);
          c.inputs = {g.floats(d, variant ? -0.01f : -1.0f, variant ? 0.01f : 1.0f), ends};
          c.attrs = axon_clip_attrs{sizeof(axon_clip_attrs), static_cast<axon_clip_mode>(mode), 0.5f};
          judge_all(c, Rule::update, false);
        }
        break;
      }
      const int64_t step = variant ? 7 : 1;
      Case& c = g.add((variant ? "options, step 7 " : "defaults, step 1 ") + dims_text(d));
      c.inputs.push_back(g.floats(d));
      for (int i = 1; i < s.in_place_inputs; ++i) {
        const std::string name = input_slot(s, i).name;
        const bool squares = name == "v" || name == "vhat" || name == "velocity" || name == "accumulator";
        const bool sgd_velocity = id == OpId::ApplySGD;  // Keras' SGD velocity: a sum of -lr g
        c.inputs.push_back(variant == 0 ? g.floats(d, 0.0f, 0.0f)
                           : squares && !sgd_velocity ? g.floats(d, 0.0f, 0.01f)
                                                      : g.floats(d, -0.1f, 0.1f));
      }
      if (s.in_place_inputs < s.min_inputs) c.inputs.push_back(g.floats(d));
      if (id == OpId::ApplyRMSprop && variant == 1) {  // centered: keep v above avg^2
        float* v = c.inputs[1].f32();
        const float* avg = c.inputs[3].f32();
        for (int64_t i = 0; i < c.inputs[1].numel(); ++i) v[i] += avg[i] * avg[i];
      }
      switch (s.attrs) {
        case AttrKind::sgd:
          c.attrs = axon_sgd_attrs{sizeof(axon_sgd_attrs), 0.01f, variant ? 0.9f : 0.0f, variant};
          break;
        case AttrKind::rmsprop:
          c.attrs = axon_rmsprop_attrs{sizeof(axon_rmsprop_attrs), 0.001f, 0.9f, variant ? 0.5f : 0.0f, 1e-7f, variant};
          break;
        case AttrKind::adam:
          c.attrs = axon_adam_attrs{sizeof(axon_adam_attrs), 0.001f, 0.9f, 0.999f, 1e-7f, step};
          break;
        case AttrKind::adagrad:
          c.attrs = axon_adagrad_attrs{sizeof(axon_adagrad_attrs), 0.01f, variant ? 1e-3f : 1e-7f};
          break;
        case AttrKind::nadam:
          c.attrs =
              axon_nadam_attrs{sizeof(axon_nadam_attrs), 0.001f, 0.9f, 0.999f, 1e-7f, step, variant ? 0.2f : 0.45f};
          break;
        case AttrKind::weight_decay:
          c.attrs = axon_weight_decay_attrs{sizeof(axon_weight_decay_attrs), 0.01f, variant ? 0.5f : 0.004f};
          break;
        default: break;
      }
      judge_all(c, Rule::update, false);
    }
  }
}

// ------------------------------------------------------------------ the layers of ABI 1.4

void avg_pool_cases(Gen& g, OpId id) {
  // Odd sizes, SAME windows clipped at the edges, overlap, a window over the
  // whole image (global average pooling), one larger than the image, an empty batch.
  static const std::vector<PoolSpec> specs = {
      {{1, 7, 5, 3}, kValid, 2, 2, 2, 2}, {{2, 7, 6, 2}, kSame, 3, 3, 2, 2}, {{1, 5, 5, 2}, kSame, 2, 2, 1, 1},
      {{1, 6, 7, 1}, kValid, 3, 3, 1, 1}, {{1, 5, 7, 2}, kSame, 3, 2, 2, 1}, {{2, 7, 7, 19}, kValid, 7, 7, 7, 7},
      {{1, 3, 2, 4}, kSame, 4, 4, 1, 1},  {{0, 4, 4, 2}, kSame, 2, 2, 2, 2},
  };
  for (const PoolSpec& s : specs) {
    const axon_pool_attrs a = pool_attrs(s);
    const PoolGeometry p = pool_geometry(a, s.x[0], s.x[1], s.x[2], s.x[3]);
    const Dims y = {p.n, p.oh, p.ow, p.c};
    Case& c = g.add(pool_text(s));
    c.attrs = a;
    c.inputs = {g.floats(id == OpId::AvgPool ? s.x : y)};
    c.outputs = {f32(id == OpId::AvgPool ? y : s.x)};
    judge_all(c, Rule::sum, true);
  }
}

// Batch normalization: training (all five outputs) and inference (y alone or
// all five), 4-D and 2-D x, one value per channel, a constant channel (zero
// variance), a running average, an empty batch; with relu (_FusedBatchNormEx
// and its gradient, whose y is the reference forward's: about half of it 0)
// the same cases, and with a side input too (_FusedBatchNormAddEx and its
// gradient; the first case also without the activation). Judged with the
// bounds of axon/tolerance_batch_norm.hpp (reference.cpp).
void batch_norm_cases(Gen& g, OpId id) {
  struct Spec {
    Dims x;
    int training;
    float factor;
    int outputs;
    bool constant_channel;
  };
  static const std::vector<Spec> specs = {
      {{2, 5, 7, 3}, 1, 1.0f, 5, false}, {{9, 6}, 1, 0.4f, 5, false},  {{3, 4, 4, 5}, 1, 1.0f, 5, true},
      {{1, 4}, 1, 1.0f, 5, false},       {{2, 3, 5, 4}, 0, 1.0f, 1, false}, {{1, 3, 3, 7}, 0, 1.0f, 5, false},
      {{0, 4, 4, 3}, 0, 1.0f, 1, false},
  };
  const bool side = id == OpId::FusedBatchNormAddEx || id == OpId::FusedBatchNormAddGradEx;
  const bool relu = side || id == OpId::FusedBatchNormEx || id == OpId::FusedBatchNormGradEx;
  const bool forward = id == OpId::FusedBatchNormV3 || id == OpId::FusedBatchNormEx || id == OpId::FusedBatchNormAddEx;
  auto set_attrs = [&](Case& c, const axon_batch_norm_attrs& a, int32_t activation) {
    if (relu)
      c.attrs = axon_fused_batch_norm_attrs{sizeof(axon_fused_batch_norm_attrs), a, activation};
    else
      c.attrs = a;
  };
  std::vector<Spec> all = specs;
  if (side) all.push_back(specs[0]);  // the last one without the activation
  for (size_t at = 0; at < all.size(); ++at) {
    const Spec& s = all[at];
    const int32_t activation = side && at + 1 == all.size() ? AXON_ACTIVATION_NONE : AXON_ACTIVATION_RELU;
    const int64_t ch = s.x.back();
    const Dims v = {ch};
    const std::string text = std::string(s.training ? "training" : "inference") + " " + dims_text(s.x) +
                             (s.constant_channel ? ", a constant channel" : "") +
                             (s.factor != 1.0f ? ", exponential_avg_factor 0.4" : "") +
                             (activation == AXON_ACTIVATION_NONE ? ", no activation" : "");
    HostTensor x = g.floats(s.x, -1.0f, 3.0f);
    if (s.constant_channel)
      for (int64_t i = 1; i < x.numel(); i += ch) x.f32()[i] = 0.75f;
    HostTensor scale = g.floats(v, 0.5f, 1.5f), offset = g.floats(v, -0.5f, 0.5f);
    HostTensor mean = g.floats(v, -0.2f, 0.2f), var = g.floats(v, 0.5f, 2.0f);
    const axon_batch_norm_attrs a{sizeof(axon_batch_norm_attrs), 1e-3f, s.factor, s.training};
    const HostTensor side_input = g.floats(s.x);
    if (forward) {
      Case& c = g.add(text + (s.outputs == 1 ? ", y only" : ""));
      set_attrs(c, a, activation);
      c.inputs = {x, scale, offset, mean, var};
      if (side) c.inputs.push_back(side_input);
      c.outputs = {f32(s.x)};
      for (int k = 1; k < s.outputs; ++k) c.outputs.push_back(f32(v));
      judge_all(c, Rule::sum, false);
      continue;
    }
    // The gradient takes the mean and biased variance the forward used (and,
    // with relu, its y).
    HostTensor saved_mean = mean, saved_var = var, y = f32(s.x);
    if (s.x[0] > 0) {
      const axon_fused_batch_norm_attrs fa{sizeof(axon_fused_batch_norm_attrs), a, AXON_ACTIVATION_RELU};
      std::vector<HostTensor> fwd_in = {x, scale, offset, mean, var};
      if (side) fwd_in.push_back(side_input);
      const auto out = run_reference(op_schema(side ? OpId::FusedBatchNormAddEx : OpId::FusedBatchNormEx), fwd_in,
                                     {f32(s.x), f32(v), f32(v), f32(v), f32(v)}, &fa);
      if (s.training) saved_mean = out[3], saved_var = out[4];
      y = out[0];
    }
    Case& c = g.add(text);
    set_attrs(c, a, activation);
    c.inputs = {g.floats(s.x), x, scale, saved_mean, saved_var};
    if (relu) c.inputs.push_back(y);
    c.outputs = {f32(s.x), f32(v), f32(v)};
    if (side) c.outputs.push_back(f32(s.x));
    judge_all(c, Rule::sum, false);
  }
  if (!forward) {  // an empty batch in training: zero sums
    Case& c = g.add("training 0x3x3x2");
    set_attrs(c, {sizeof(axon_batch_norm_attrs), 1e-3f, 1.0f, 1}, AXON_ACTIVATION_RELU);
    c.inputs = {f32({0, 3, 3, 2}), f32({0, 3, 3, 2}), g.floats({2}), g.floats({2}), g.floats({2}, 0.5f, 2.0f)};
    if (relu) c.inputs.push_back(f32({0, 3, 3, 2}));
    c.outputs = {f32({0, 3, 3, 2}), f32({2}), f32({2})};
    if (side) c.outputs.push_back(f32({0, 3, 3, 2}));
    judge_all(c, Rule::sum, false);
  }
}

// Layer normalization of x [R, K]: rows of one value (variance 0), of a
// constant, of a vector's width and odd sizes, a ConvNeXt layer's 96
// channels, and no rows (zero sums). The gradient takes the mean and inv_std
// the reference's forward gives. Judged by axon/tolerance_layer_norm.hpp
// (reference.cpp).
void layer_norm_cases(Gen& g, OpId id) {
  struct Spec {
    Dims x;
    float epsilon;
    bool constant_row;
  };
  static const std::vector<Spec> specs = {{{6, 5}, 1e-3f, false},  {{3, 16}, 1e-6f, false}, {{4, 1}, 1e-3f, false},
                                          {{5, 37}, 1e-5f, true},  {{128, 96}, 1e-6f, false}, {{0, 8}, 1e-3f, false}};
  for (const Spec& s : specs) {
    const int64_t rows = s.x[0], k = s.x[1];
    const Dims v = {k}, r = {rows};
    const std::string text = dims_text(s.x) + ", epsilon " + std::to_string(s.epsilon).substr(0, 8) +
                             (s.constant_row ? ", a constant row" : "");
    HostTensor x = g.floats(s.x, -1.0f, 3.0f);
    if (s.constant_row && rows > 0)
      for (int64_t j = 0; j < k; ++j) x.f32()[j] = 0.75f;
    const HostTensor scale = g.floats(v, 0.5f, 1.5f), offset = g.floats(v, -0.5f, 0.5f);
    const axon_layer_norm_attrs a{sizeof(axon_layer_norm_attrs), s.epsilon};
    if (id == OpId::LayerNorm) {
      Case& c = g.add(text);
      c.attrs = a;
      c.inputs = {x, scale, offset};
      c.outputs = {f32(s.x), f32(r), f32(r)};
      judge_all(c, Rule::sum, false);
      continue;
    }
    const auto fwd = run_reference(op_schema(OpId::LayerNorm), {x, scale, offset}, {f32(s.x), f32(r), f32(r)}, &a);
    Case& c = g.add(text);
    c.attrs = a;
    c.inputs = {g.floats(s.x), x, scale, fwd[1], fwd[2]};
    c.outputs = {f32(s.x), f32(v), f32(v)};
    judge_all(c, Rule::sum, false);
  }
}

// Depthwise convolution, filter [KH, KW, C, M]: multipliers 1 to 3, SAME and
// VALID, strides 1 and 2 (and 2x1), dilation, batch 1 and 2, a layer of a
// small ResNet and an empty batch.
void depthwise_cases(Gen& g, OpId id) {
  static const std::vector<ConvSpec> specs = {
      {{1, 7, 5, 3}, {3, 3, 3, 1}, kValid, 1, 1, 1, 1}, {{2, 6, 7, 2}, {3, 3, 2, 2}, kSame, 1, 1, 1, 1},
      {{1, 7, 5, 3}, {3, 3, 3, 2}, kSame, 2, 2, 1, 1},  {{2, 8, 9, 3}, {2, 3, 3, 1}, kValid, 2, 1, 1, 1},
      {{1, 9, 8, 2}, {3, 3, 2, 1}, kSame, 1, 1, 2, 2},  {{1, 9, 9, 1}, {2, 2, 1, 3}, kValid, 1, 1, 2, 2},
      {{2, 14, 14, 32}, {3, 3, 32, 1}, kSame, 1, 1, 1, 1}, {{0, 5, 5, 3}, {3, 3, 3, 2}, kSame, 1, 1, 1, 1},
  };
  for (const ConvSpec& s : specs) {
    const ConvGeometry cg = conv_geometry(conv_attrs(s), s.x.data(), s.f.data());
    const Dims y = {cg.n, cg.oh, cg.ow, cg.c * cg.oc};
    Case& c = g.add(conv_text(s));
    c.attrs = conv_attrs(s);
    if (id == OpId::DepthwiseConv2dNative) {
      c.inputs = {g.floats(s.x), g.floats(s.f)};
      c.outputs = {f32(y)};
    } else if (id == OpId::DepthwiseConv2dNativeBackpropInput) {
      c.inputs = {g.floats(y), g.floats(s.f)};
      c.outputs = {f32(s.x)};
    } else {
      c.inputs = {g.floats(s.x), g.floats(y)};
      c.outputs = {f32(s.f)};
    }
    judge_all(c, Rule::sum, true);
  }
}

// ------------------------------------------------------------------ activations (ABI 1.4)

// The forward op of an activation gradient, and whether the gradient takes
// the forward's output y (else x) and dy first (TensorFlow's orders).
struct GradOf {
  OpId forward;
  bool takes_y, dy_first;
};

GradOf grad_of(OpId id) {
  switch (id) {
    case OpId::SigmoidGrad: return {OpId::Sigmoid, true, false};
    case OpId::TanhGrad: return {OpId::Tanh, true, false};
    case OpId::EluGrad: return {OpId::Elu, true, true};
    case OpId::SeluGrad: return {OpId::Selu, true, true};
    case OpId::SoftplusGrad: return {OpId::Softplus, false, true};
    case OpId::GeluGrad: return {OpId::Gelu, false, true};
    case OpId::SiluGrad: return {OpId::Silu, false, true};
    case OpId::Relu6Grad: return {OpId::Relu6, false, true};
    case OpId::LeakyReluGrad: return {OpId::LeakyRelu, false, true};
    case OpId::ClippedReluGrad: return {OpId::ClippedRelu, false, true};
    default: return {id, false, false};  // a forward op
  }
}

// Odd shapes, a scalar, one wider than any vector with a partial last one, empty.
const std::vector<Dims>& activation_shapes() {
  static const std::vector<Dims> shapes = {{3, 5, 7}, {1}, {2, 3, 4, 5}, {4099}, {}, {0, 3}};
  return shapes;
}

// The exp-based ones: where their polynomials switch, where e^x under- and
// overflows, Softplus' thresholds, huge values. Judged by function_bounds.hpp.
void smooth_activation_cases(Gen& g, OpId id) {
  static const std::vector<float> edges = {0.0f,   -0.0f,   1e-8f,  -1e-8f,  0.625f,    -0.7f,      13.942385f,
                                           -13.942385f, 20.0f, -20.0f, 88.5f, -88.5f, 1e4f, -1e4f, 1e30f, -1e30f};
  const GradOf grad = grad_of(id);
  const bool is_gelu = id == OpId::Gelu || id == OpId::GeluGrad;
  for (const Dims& d : activation_shapes())
    for (int tanh_form = 0; tanh_form < (is_gelu ? 2 : 1); ++tanh_form) {
      Case& c = g.add((is_gelu ? std::string(tanh_form ? "tanh form " : "erf form ") : std::string()) + dims_text(d));
      if (is_gelu) c.attrs = axon_gelu_attrs{sizeof(axon_gelu_attrs), tanh_form};
      HostTensor x = g.with_edges(d, edges, -6.0f, 6.0f);
      if (grad.forward == id) {
        c.inputs = {x};
      } else {
        HostTensor second =
            grad.takes_y ? run_reference(op_schema(grad.forward), {x}, {f32(d)}, attrs_ptr(c.attrs))[0] : x;
        HostTensor dy = g.floats(d, -2.0f, 2.0f);
        c.inputs = grad.dy_first ? std::vector<HostTensor>{dy, second} : std::vector<HostTensor>{second, dy};
      }
      c.outputs = {f32(d)};
      judge_all(c, Rule::function, false);
    }
}

// Relu6, LeakyRelu, ClippedRelu and their gradients: quarter steps in [-8, 8],
// so values sit exactly at 0, 6, the thresholds and maxima. Exact.
void piecewise_activation_cases(Gen& g, OpId id) {
  static const std::vector<float> ties = {0.0f, -0.0f, 6.0f, 1.0f, -1.0f, 2.0f, 0.5f};
  struct Clip {
    float slope, max_value, threshold;
  };
  static const std::vector<Clip> clips = {{0.0f, INFINITY, 0.0f}, {0.1f, 6.0f, 0.0f}, {0.3f, 2.0f, 1.0f},
                                          {0.1f, INFINITY, -1.0f}, {0.0f, 0.0f, 0.5f}};
  const GradOf grad = grad_of(id);
  int k = 0;
  for (const Dims& d : activation_shapes()) {
    std::string label = dims_text(d);
    Case& c = g.add("");
    if (grad.forward == OpId::LeakyRelu) {
      const float alpha = k % 2 ? -0.5f : 0.2f;
      c.attrs = axon_leaky_relu_attrs{sizeof(axon_leaky_relu_attrs), alpha};
      label = "alpha " + std::to_string(alpha).substr(0, 4) + " " + label;
    } else if (grad.forward == OpId::ClippedRelu) {
      const Clip& cl = clips[static_cast<size_t>(k) % clips.size()];
      c.attrs = axon_clipped_relu_attrs{sizeof(axon_clipped_relu_attrs), cl.slope, cl.max_value, cl.threshold};
      char b[96];
      std::snprintf(b, sizeof b, "slope %g max %g threshold %g ", double(cl.slope), double(cl.max_value),
                    double(cl.threshold));
      label = b + label;
    }
    c.label = label;
    HostTensor x = g.with_edges(d, ties, -8.0f, 8.0f);
    for (int64_t i = 0; i < x.numel(); i += 2) x.f32()[i] = std::round(x.f32()[i] * 4.0f) / 4.0f;
    c.inputs = grad.forward == id ? std::vector<HostTensor>{x} : std::vector<HostTensor>{g.floats(d), x};
    c.outputs = {f32(d)};
    judge_all(c, Rule::exact, false);
    ++k;
  }
}

// ------------------------------------------------------------------ softmax (ABI 1.4)

// Rows of 1, 10 and 1000 classes, a partial last vector, masked (-inf)
// logits, logits of +-1e30 and empty batches. Judged by function_bounds.hpp.
void softmax_cases(Gen& g, OpId id) {
  static const std::vector<Dims> shapes = {{5, 10}, {1, 1}, {3, 1000}, {2, 3, 17}, {7}, {0, 10}};
  for (const Dims& d : shapes) {
    Case& c = g.add(dims_text(d));
    HostTensor x = g.floats(d, -8.0f, 8.0f);
    const int64_t classes = d.back();
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (i % 7 == 3 && i % classes != 0) x.f32()[i] = -INFINITY;  // never a whole row
      if (i % 11 == 5) x.f32()[i] = i % 2 ? 1e30f : -1e30f;
    }
    if (id == OpId::Softmax) {
      c.inputs = {x};
    } else {  // SoftmaxGrad(dy, y), y a softmax
      HostTensor y = run_reference(op_schema(OpId::Softmax), {x}, {f32(d)}, nullptr)[0];
      c.inputs = {g.floats(d), y};
    }
    c.outputs = {f32(d)};
    judge_all(c, Rule::function, false);
  }
}

// ------------------------------------------------------------------ arithmetic (ABI 1.4)

// Sub, Mul, Maximum, MaximumGrad (whole numbers: ties between a and b;
// signed zeros), MovingAverage (Keras' momentum 0.99). Exact. (No NaN: an
// output left unwritten reads as NaN.)
void arithmetic_cases(Gen& g, OpId id) {
  static const std::vector<Dims> shapes = {{3, 5, 7}, {1}, {2, 3, 4, 5}, {4099}, {}, {0, 3}};
  for (const Dims& d : shapes) {
    if (id == OpId::MovingAverage) {
      Case& c = g.add("momentum 0.99 " + dims_text(d));
      c.attrs = axon_moving_average_attrs{sizeof(axon_moving_average_attrs), 0.99f,
                                          static_cast<float>(1.0 - double(0.99f))};
      c.inputs = {g.floats(d, -5.0f, 5.0f), g.floats(d, -5.0f, 5.0f)};
      judge_all(c, Rule::exact, false);
      continue;
    }
    Case& c = g.add(dims_text(d));
    HostTensor a = g.whole(d, -3, 3), b = g.whole(d, -3, 3);
    if (a.numel() > 8) {
      a.f32()[1] = -0.0f, b.f32()[1] = 0.0f, a.f32()[3] = 0.0f, b.f32()[3] = -0.0f;
      for (int64_t i = 8; i < a.numel(); i += 2) a.f32()[i] += 0.25f;  // not only ties
    }
    if (id == OpId::MaximumGrad) {
      c.inputs = {g.floats(d), a, b};
      c.outputs = {f32(d), f32(d)};
    } else {
      c.inputs = {a, b};
      c.outputs = {f32(d)};
    }
    judge_all(c, Rule::exact, false);
  }
}

// ------------------------------------------------------------------ shapes (ABI 1.4)

// ConcatV2 on each axis with an empty input among them; Slice and Pad at
// both ends, in the middle, of whole and empty tensors. Exact.
void shape_cases(Gen& g, OpId id) {
  if (id == OpId::ConcatV2) {
    struct Spec {
      std::vector<Dims> in;
      int axis;
    };
    static const std::vector<Spec> specs = {{{{2, 3, 4}, {2, 1, 4}, {2, 0, 4}, {2, 5, 4}}, 1},
                                            {{{2, 3, 4}, {1, 3, 4}}, 0},
                                            {{{2, 3, 4}, {2, 3, 7}}, 2},
                                            {{{5}}, 0},
                                            {{{0, 3}, {0, 3}}, 1},
                                            {{{4, 13, 13, 32}, {4, 13, 13, 64}}, 3}};
    for (const Spec& s : specs) {
      Dims out = s.in[0];
      out[static_cast<size_t>(s.axis)] = 0;
      std::string label;
      Case& c = g.add("");
      for (const Dims& d : s.in) {
        out[static_cast<size_t>(s.axis)] += d[static_cast<size_t>(s.axis)];
        label += (label.empty() ? "" : " + ") + dims_text(d);
        c.inputs.push_back(g.floats(d));
      }
      c.label = label + " on axis " + std::to_string(s.axis);
      c.attrs = axon_concat_attrs{sizeof(axon_concat_attrs), s.axis};
      c.outputs = {f32(out)};
      judge_all(c, Rule::exact, false);
    }
    return;
  }
  struct Spec {
    Dims small, large;
    std::vector<int64_t> begin;
  };
  static const std::vector<Spec> specs = {{{2, 3}, {5, 7}, {3, 4}},         {{1, 5, 2}, {3, 5, 4}, {0, 0, 2}},
                                          {{4, 4}, {4, 4}, {0, 0}},         {{2, 2, 3, 1}, {3, 5, 3, 2}, {1, 2, 0, 1}},
                                          {{0, 3}, {2, 3}, {1, 0}},         {{}, {}, {}},
                                          {{4, 26, 26, 32}, {4, 28, 28, 32}, {0, 1, 1, 0}}};
  for (const Spec& s : specs) {
    Case& c = g.add(dims_text(s.small) + (id == OpId::Slice ? " from " : " into ") + dims_text(s.large) + " at " +
                    dims_text(s.begin));
    auto& a = emplace_attrs<axon_slice_attrs>(c.attrs);
    for (size_t i = 0; i < s.begin.size(); ++i) a.begin[i] = s.begin[i];
    c.inputs = {g.floats(id == OpId::Slice ? s.large : s.small)};
    c.outputs = {f32(id == OpId::Slice ? s.small : s.large)};
    judge_all(c, Rule::exact, false);
  }
}

}  // namespace

std::vector<Case> make_cases(const OpSchema& op, axon_dtype key) {
  Gen g(op, key);
  switch (op.id) {
    case OpId::Conv2D:
    case OpId::Conv2DBackpropInput:
    case OpId::Conv2DBackpropInputAccumulate:
    case OpId::Conv2DBackpropFilter:
    case OpId::FusedConv2D: conv_cases(g, op.id); break;
    case OpId::MaxPool:
    case OpId::MaxPoolGrad: pool_cases(g, op.id); break;
    case OpId::FusedConv2DMaxPool:
    case OpId::FusedConv2DMaxPoolGrad: conv_pool_cases(g, op.id); break;
    case OpId::MatMul:
    case OpId::FusedMatMul: matmul_cases(g, op.id); break;
    case OpId::Relu:
    case OpId::ReluGrad:
    case OpId::Scale:
    case OpId::Fill:
    case OpId::Identity:
    case OpId::NormalizeImage: elementwise_cases(g, op.id); break;
    case OpId::BiasAdd:
    case OpId::BiasAddGrad:
    case OpId::FusedReluGradBiasAddGrad: bias_cases(g, op.id); break;
    case OpId::Sum:
    case OpId::AddN: sum_cases(g, op.id); break;
    case OpId::SparseSoftmaxCrossEntropyWithLogits:
    case OpId::InTopK:
    case OpId::InTopKV2:
    case OpId::SparseCategoricalAccuracy: classifier_cases(g, op.id); break;
    case OpId::ApplyAdam: adam_cases(g); break;
    case OpId::ApplySGD:
    case OpId::ApplyRMSprop:
    case OpId::ApplyAdamWithAmsgrad:
    case OpId::ApplyAdagrad:
    case OpId::ApplyNadam:
    case OpId::ApplyWeightDecay:
    case OpId::ClipGradients: optimizer_cases(g, op.id); break;
    case OpId::CategoricalCrossentropy:
    case OpId::BinaryCrossentropy:
    case OpId::RegressionLoss:
    case OpId::BinaryAccuracy: loss_cases(g, op.id); break;
    case OpId::StatelessRandomNormalV2:
    case OpId::StatelessRandomUniformV2: random_cases(g, op.id); break;
    case OpId::ReduceSum:
    case OpId::Mean:
    case OpId::Max: reduce_cases(g, op.id); break;
    case OpId::AvgPool:
    case OpId::AvgPoolGrad: avg_pool_cases(g, op.id); break;
    case OpId::FusedBatchNormV3:
    case OpId::FusedBatchNormGradV3:
    case OpId::FusedBatchNormEx:
    case OpId::FusedBatchNormGradEx:
    case OpId::FusedBatchNormAddEx:
    case OpId::FusedBatchNormAddGradEx: batch_norm_cases(g, op.id); break;
    case OpId::DepthwiseConv2dNative:
    case OpId::DepthwiseConv2dNativeBackpropInput:
    case OpId::DepthwiseConv2dNativeBackpropFilter: depthwise_cases(g, op.id); break;
    case OpId::LayerNorm:
    case OpId::LayerNormGrad: layer_norm_cases(g, op.id); break;
    case OpId::Sigmoid:
    case OpId::SigmoidGrad:
    case OpId::Tanh:
    case OpId::TanhGrad:
    case OpId::Elu:
    case OpId::EluGrad:
    case OpId::Selu:
    case OpId::SeluGrad:
    case OpId::Softplus:
    case OpId::SoftplusGrad:
    case OpId::Gelu:
    case OpId::GeluGrad:
    case OpId::Silu:
    case OpId::SiluGrad: smooth_activation_cases(g, op.id); break;
    case OpId::Relu6:
    case OpId::Relu6Grad:
    case OpId::LeakyRelu:
    case OpId::LeakyReluGrad:
    case OpId::ClippedRelu:
    case OpId::ClippedReluGrad: piecewise_activation_cases(g, op.id); break;
    case OpId::Softmax:
    case OpId::SoftmaxGrad: softmax_cases(g, op.id); break;
    case OpId::Sub:
    case OpId::Mul:
    case OpId::Maximum:
    case OpId::MaximumGrad:
    case OpId::MovingAverage: arithmetic_cases(g, op.id); break;
    case OpId::ConcatV2:
    case OpId::Slice:
    case OpId::Pad: shape_cases(g, op.id); break;
    case OpId::count: break;
  }
  std::vector<Case> cases = g.take();
  // Each case carries the attribute struct its op takes, and no other.
  for (const Case& c : cases)
    if (attr_kind(c.attrs) != op.attrs)
      throw std::logic_error(c.name() + ": the case holds attribute kind " +
                             std::to_string(static_cast<int>(attr_kind(c.attrs))) + ", the op takes " +
                             std::to_string(static_cast<int>(op.attrs)));
  return cases;
}

}  // namespace axon::plugin_check
