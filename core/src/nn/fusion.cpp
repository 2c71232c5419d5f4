#include "fusion.hpp"

#include <axon/dispatch.hpp>
#include <axon/error.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

#include <cstring>

namespace axon::nn {
namespace {

// A Conv2D and the MaxPooling2D after it as one layer. Where the device the
// convolution goes to has both fused ops, the convolution's full-size output
// never exists, only the pooled one and a byte of argmax per pooled value;
// elsewhere the two layers run as they are.
class FusedConvPool : public Layer {
 public:
  FusedConvPool(Conv2D& conv, MaxPooling2D& pool, TensorPool& memory)
      : Layer(conv.name()), conv_(conv), pool_(pool), memory_(memory) {}
  const char* type() const override { return "Conv2D+MaxPooling2D"; }
  std::unique_ptr<Layer> clone() const override { throw RuntimeError("a fused step is not cloned"); }
  void write_config(KerasConfigWriter&) const override {}
  Shape output_shape(std::span<const Shape> in) const override { return pool_.output_shape(in); }
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;

  Tensor forward(std::span<const Tensor> in) override {
    const Tensor& x = in[0];
    on_ = fused_device(x);
    if (on_ == nullptr) {
      const Tensor z = conv_.forward(x);
      return pool_.forward(z);
    }
    DeviceScope scope(*on_);
    const int64_t n = x.dim(0);
    Tensor y = conv_take(n, pool_.output_shape(), AXON_FLOAT32);
    Tensor argmax = conv_take(n, pool_.output_shape(), AXON_UINT8);
    ops::fused_conv2d_max_pool(x, conv_.weight(0).value, conv_.weight(1).value, y, argmax, conv_.attrs(),
                               conv_.applied() == Activation::relu, pool_.attrs(), conv_.name());
    if (conv_.remembers()) x_ = x, argmax_ = argmax;
    return y;
  }

  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override {
    if (on_ == nullptr) {
      const Tensor dz = pool_.backward(dy, true);
      conv_.backward(dz, need_dx, dx);
      return;
    }
    note_fused_path(OpId::FusedConv2DMaxPoolGrad, *on_, conv_.name(), x_.dtype());
    DeviceScope scope(*on_);
    Tensor d;
    if (need_dx[0]) d = conv_take(x_.dim(0), conv_.input_shape(), AXON_FLOAT32);
    ops::fused_conv2d_max_pool_grad(x_, conv_.weight(0).value, dy, argmax_, conv_.weight(0).grad, conv_.weight(1).grad,
                                    need_dx[0] ? &d : nullptr, conv_.attrs(), conv_.applied() == Activation::relu,
                                    pool_.attrs(), conv_.name());
    if (need_dx[0]) dx[0] = d;
    x_ = argmax_ = Tensor();
  }

 private:
  // The device the convolution would run on, when it has both fused ops
  // (and neither layer has fused ops turned off); else nullptr.
  Device* fused_device(const Tensor& x) const {
    if (!conv_.fused_ops() || !pool_.fused_ops()) return nullptr;
    const Tensor* inputs[] = {&x};
    OpCall c;
    c.op = OpId::Conv2D;
    c.layer = conv_.name();
    c.inputs = inputs;
    Device& d = place(c);
    if (!d.has_kernel(OpId::FusedConv2DMaxPool, x.dtype()) || !d.has_kernel(OpId::FusedConv2DMaxPoolGrad, x.dtype()))
      return nullptr;
    note_fused_path(OpId::FusedConv2DMaxPool, d, conv_.name(), x.dtype());
    return &d;
  }
  // Memory from the replica's pool (this layer is never built itself).
  Tensor conv_take(int64_t n, const Shape& per_sample, axon_dtype dtype) {
    Shape s{n};
    s.insert(s.end(), per_sample.begin(), per_sample.end());
    return memory_.take(dtype, std::move(s));
  }

  Conv2D& conv_;
  MaxPooling2D& pool_;
  TensorPool& memory_;
  Device* on_ = nullptr;  // where the last forward ran fused (nullptr: apart)
  Tensor x_, argmax_;
};

bool fusable(const Layer& conv_layer, const Layer& pool_layer) {
  if (std::strcmp(conv_layer.type(), "Conv2D") != 0 || std::strcmp(pool_layer.type(), "MaxPooling2D") != 0) return false;
  const auto& conv = static_cast<const Conv2D&>(conv_layer);
  const auto& pool = static_cast<const MaxPooling2D&>(pool_layer);
  const Activation act = conv.applied();
  return conv.fused_ops() && pool.fused_ops() && conv.use_bias() && (act == Activation::linear || act == Activation::relu) &&
         int64_t{pool.attrs().window_h} * pool.attrs().window_w <= 255;
}

}  // namespace

std::vector<PlanStep> plan_steps(Graph& graph, TensorPool& pool) {
  const size_t n = graph.layers.size();
  std::vector<int> readers(n, 0);
  for (const std::vector<int>& ins : graph.inputs)
    for (int j : ins)
      if (j >= 0) ++readers[static_cast<size_t>(j)];
  std::vector<PlanStep> plan;
  for (size_t i = 0; i < n; ++i) {
    PlanStep s;
    s.layer = graph.layers[i].get();
    s.inputs = graph.inputs[i];
    s.output = static_cast<int>(i);
    const size_t next = i + 1;
    if (next < n && readers[i] == 1 && graph.inputs[next] == std::vector<int>{static_cast<int>(i)} &&
        fusable(*graph.layers[i], *graph.layers[next])) {
      auto fused = std::make_unique<FusedConvPool>(static_cast<Conv2D&>(*graph.layers[i]),
                                                   static_cast<MaxPooling2D&>(*graph.layers[next]), pool);
      s.fused_from = graph.layers[i]->name() + " + " + graph.layers[next]->name();
      s.layer = fused.get();
      s.fused = std::move(fused);
      s.output = static_cast<int>(next);
      ++i;
    }
    plan.push_back(std::move(s));
  }
  return plan;
}

std::vector<std::string> describe_fusions(const std::vector<PlanStep>& plan) {
  std::vector<std::string> out;
  for (const PlanStep& s : plan)
    if (s.fused) out.push_back(s.fused_from + " -> _FusedConv2DMaxPool, _FusedConv2DMaxPoolGrad");
  return out;
}

}  // namespace axon::nn
