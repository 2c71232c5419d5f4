// FLOPs and bytes of one op call (see axon/op_cost.hpp). Elementwise
// activations and their gradients count one FLOP per element whatever the
// function: at 8 or more bytes per element they are memory-bound on any
// machine whose balance exceeds a few FLOPs per byte, so a finer count
// would not move their bound.
#include <axon/op_cost.hpp>
#include <axon/op_geometry.hpp>

namespace axon {
namespace {

// An absent optional tensor is a zero view: no data and rank 0.
int64_t numel(const axon_tensor& t) {
  if (t.data == nullptr && t.rank == 0) return 0;
  int64_t n = 1;
  for (int32_t i = 0; i < t.rank; ++i) n *= t.dims[i];
  return n;
}

int64_t tensor_bytes(const axon_tensor& t) { return numel(t) * static_cast<int64_t>(dtype_size(t.dtype)); }

template <class A>
const A& attrs_of(const axon_kernel_call& call) {
  return *static_cast<const A*>(call.attrs);
}

// ------------------------------------------------------------ per op kind

// A convolution or depthwise convolution (filter [KH, KW, C, K]; K is the
// channel multiplier for a depthwise one): a multiply-add per tap, input
// channel and output channel of each output pixel, whichever of x, filter
// or y the op computes.
int64_t conv_flops(const axon_conv2d_attrs& a, const axon_tensor& image, const axon_tensor& filter) {
  const ConvGeometry g = conv_geometry(a, image, filter);
  return 2 * g.rows() * g.k() * g.oc;
}

// The convolution's output elements (y before any pooling).
int64_t conv_outputs(const axon_conv2d_attrs& a, const axon_tensor& image, const axon_tensor& filter) {
  const ConvGeometry g = conv_geometry(a, image, filter);
  return g.rows() * g.oc;
}

int64_t matmul_flops(const axon_matmul_attrs& a, const axon_tensor& lhs, const axon_tensor& product) {
  const int64_t k = a.transpose_a != 0 ? lhs.dims[0] : lhs.dims[1];
  return 2 * numel(product) * k;
}

// One compare or add per window tap of each pooled element.
int64_t pool_flops(const axon_pool_attrs& a, const axon_tensor& pooled) {
  return numel(pooled) * a.window_h * a.window_w;
}

// Bias add (1) and, with relu, the activation (1) per element.
int64_t bias_activation_flops(int64_t elements, int32_t activation) {
  return elements * (activation == AXON_ACTIVATION_RELU ? 2 : 1);
}

constexpr int64_t kBatchNormForward = 4;   // per element, as BatchNormalization::forward_flops
constexpr int64_t kBatchNormBackward = 8;  // per element, as BatchNormalization::backward_flops
constexpr int64_t kSoftmax = 4;            // max, exp, sum, divide
constexpr int64_t kAdam = 12;              // m: 3, v: 4, var: multiply, divide, sqrt, add, subtract
constexpr int64_t kMovingAverage = 3;
constexpr int64_t kSgd = 4;        // velocity: 3, var: 1 (nesterov: 2 more)
constexpr int64_t kRmsprop = 10;   // velocity: 4, denominator: 2, increment: 2, momentum: 2
constexpr int64_t kAdagrad = 6;    // accumulator: 2, var: add, sqrt, multiply, divide (subtract folded)
constexpr int64_t kNadam = 16;     // m: 3, v: 4, m_hat: 5, var: 4
constexpr int64_t kWeightDecay = 3;
constexpr int64_t kClip = 3;       // clipnorm: square and add, then a multiply

int64_t flops(OpId op, const axon_kernel_call& c) {
  const axon_tensor* in = c.inputs;
  const axon_tensor* out = c.outputs;
  switch (op) {
    case OpId::Conv2D:
    case OpId::DepthwiseConv2dNative: return conv_flops(attrs_of<axon_conv2d_attrs>(c), in[0], in[1]);
    case OpId::Conv2DBackpropInput:
    case OpId::DepthwiseConv2dNativeBackpropInput: return conv_flops(attrs_of<axon_conv2d_attrs>(c), out[0], in[1]);
    case OpId::Conv2DBackpropInputAccumulate:  // and an add per dx element
      return conv_flops(attrs_of<axon_conv2d_attrs>(c), in[0], in[2]) + numel(in[0]);
    case OpId::Conv2DBackpropFilter:
    case OpId::DepthwiseConv2dNativeBackpropFilter: return conv_flops(attrs_of<axon_conv2d_attrs>(c), in[0], out[0]);
    case OpId::MatMul: return matmul_flops(attrs_of<axon_matmul_attrs>(c), in[0], out[0]);

    case OpId::FusedConv2D: {
      const auto& a = attrs_of<axon_fused_conv2d_attrs>(c);
      return conv_flops(a.conv, in[0], in[1]) + bias_activation_flops(numel(out[0]), a.activation);
    }
    case OpId::FusedMatMul: {
      const auto& a = attrs_of<axon_fused_matmul_attrs>(c);
      return matmul_flops(a.matmul, in[0], out[0]) + bias_activation_flops(numel(out[0]), a.activation);
    }
    case OpId::FusedConv2DMaxPool: {
      const auto& a = attrs_of<axon_fused_conv2d_max_pool_attrs>(c);
      return conv_flops(a.conv, in[0], in[1]) +
             bias_activation_flops(conv_outputs(a.conv, in[0], in[1]), a.activation) + pool_flops(a.pool, out[0]);
    }
    case OpId::FusedConv2DMaxPoolGrad: {
      // MaxPoolGrad, ReluGrad, BiasAddGrad, Conv2DBackpropFilter and, when
      // dx is asked for, Conv2DBackpropInput.
      const auto& a = attrs_of<axon_fused_conv2d_max_pool_attrs>(c);
      const int64_t conv = conv_flops(a.conv, in[0], in[1]);
      const bool dx = c.num_outputs > 2 && numel(out[2]) > 0;
      return pool_flops(a.pool, in[2]) + bias_activation_flops(conv_outputs(a.conv, in[0], in[1]), a.activation) +
             conv + (dx ? conv : 0);
    }
    case OpId::FusedReluGradBiasAddGrad: return 2 * numel(in[0]);

    case OpId::MaxPool:
    case OpId::AvgPool: return pool_flops(attrs_of<axon_pool_attrs>(c), out[0]);
    case OpId::MaxPoolGrad: return pool_flops(attrs_of<axon_pool_attrs>(c), in[2]);
    case OpId::AvgPoolGrad: return pool_flops(attrs_of<axon_pool_attrs>(c), in[0]);

    case OpId::FusedBatchNormV3:
    case OpId::LayerNorm: return kBatchNormForward * numel(in[0]);
    case OpId::LayerNormGrad: return kBatchNormBackward * numel(in[1]);
    case OpId::FusedBatchNormGradV3: return kBatchNormBackward * numel(in[1]);
    case OpId::FusedBatchNormEx:
      return (kBatchNormForward + (attrs_of<axon_fused_batch_norm_attrs>(c).activation == AXON_ACTIVATION_RELU)) *
             numel(in[0]);
    case OpId::FusedBatchNormGradEx:
    case OpId::FusedBatchNormAddGradEx:
      return (kBatchNormBackward + (attrs_of<axon_fused_batch_norm_attrs>(c).activation == AXON_ACTIVATION_RELU)) *
             numel(in[1]);
    case OpId::FusedBatchNormAddEx:  // and the side input's add
      return (kBatchNormForward + 1 + (attrs_of<axon_fused_batch_norm_attrs>(c).activation == AXON_ACTIVATION_RELU)) *
             numel(in[0]);
    case OpId::MovingAverage: return kMovingAverage * numel(in[0]);
    case OpId::ApplyAdam: return kAdam * numel(in[0]);
    case OpId::ApplyAdamWithAmsgrad: return (kAdam + 1) * numel(in[0]);
    case OpId::ApplySGD: return kSgd * numel(in[0]);
    case OpId::ApplyRMSprop: return kRmsprop * numel(in[0]);
    case OpId::ApplyAdagrad: return kAdagrad * numel(in[0]);
    case OpId::ApplyNadam: return kNadam * numel(in[0]);
    case OpId::ApplyWeightDecay: return kWeightDecay * numel(in[0]);
    case OpId::ClipGradients: return kClip * numel(in[0]);

    case OpId::SparseSoftmaxCrossEntropyWithLogits:
    case OpId::CategoricalCrossentropy:
    case OpId::BinaryCrossentropy:
    case OpId::Softmax:
    case OpId::SoftmaxGrad: return kSoftmax * numel(in[0]);
    case OpId::InTopK:
    case OpId::InTopKV2:
    case OpId::SparseCategoricalAccuracy:
    case OpId::BinaryAccuracy: return numel(in[0]);  // one compare per logit
    case OpId::RegressionLoss: return 4 * numel(in[0]);  // difference, its square or magnitude, mean, gradient

    case OpId::BiasAddGrad:
    case OpId::Sum:
    case OpId::ReduceSum:
    case OpId::Mean:
    case OpId::Max: return numel(in[0]);  // one add or compare per element reduced

    // A Philox block (10 rounds of 2 multiplies and 4 xors) per 4 elements,
    // the normal's Box-Muller pair (log, sqrt, sin, cos: counted as 20), and
    // the scale and offset.
    case OpId::StatelessRandomUniformV2: return (60 / 4 + 3) * numel(out[0]);
    case OpId::StatelessRandomNormalV2: return (60 / 4 + 20 + 2) * numel(out[0]);
    case OpId::AddN: return (c.num_inputs - 1) * numel(out[0]);
    case OpId::MaximumGrad: return numel(in[0]);

    case OpId::Relu:
    case OpId::ReluGrad:
    case OpId::BiasAdd:
    case OpId::Scale:
    case OpId::NormalizeImage:
    case OpId::Sigmoid:
    case OpId::SigmoidGrad:
    case OpId::Tanh:
    case OpId::TanhGrad:
    case OpId::Elu:
    case OpId::EluGrad:
    case OpId::Selu:
    case OpId::SeluGrad:
    case OpId::Relu6:
    case OpId::Relu6Grad:
    case OpId::LeakyRelu:
    case OpId::LeakyReluGrad:
    case OpId::Softplus:
    case OpId::SoftplusGrad:
    case OpId::Gelu:
    case OpId::GeluGrad:
    case OpId::Silu:
    case OpId::SiluGrad:
    case OpId::ClippedRelu:
    case OpId::ClippedReluGrad:
    case OpId::Sub:
    case OpId::Mul:
    case OpId::Maximum: return numel(out[0]);

    case OpId::Fill:
    case OpId::Identity:
    case OpId::ConcatV2:
    case OpId::Slice:
    case OpId::Pad: return 0;

    case OpId::count: break;
  }
  return 0;
}

}  // namespace

OpCost op_cost(OpId op, const axon_kernel_call& call) {
  OpCost cost;
  cost.flops = flops(op, call);
  const int in_place = op_schema(op).in_place_inputs;
  for (int32_t i = 0; i < call.num_inputs; ++i) cost.bytes += tensor_bytes(call.inputs[i]) * (i < in_place ? 2 : 1);
  for (int32_t i = 0; i < call.num_outputs; ++i) cost.bytes += tensor_bytes(call.outputs[i]);
  return cost;
}

}  // namespace axon
