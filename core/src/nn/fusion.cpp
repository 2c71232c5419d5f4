#include "fusion.hpp"

#include <axon/dispatch.hpp>
#include <axon/error.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

#include <algorithm>
#include <cstring>

namespace axon::nn {
namespace {

// Two layers the pass runs as one step; ops() names the fused ops it calls
// (for the placement log and --dry-run).
class FusedStep : public Layer {
 public:
  using Layer::Layer;
  virtual const char* ops() const = 0;
  std::unique_ptr<Layer> clone() const override { throw RuntimeError("a fused step is not cloned"); }
  void write_config(KerasConfigWriter&) const override {}
};

// A Conv2D and the MaxPooling2D after it as one layer. Where the device the
// convolution goes to has both fused ops, the convolution's full-size output
// never exists, only the pooled one and a byte of argmax per pooled value;
// elsewhere the two layers run as they are.
class FusedConvPool : public FusedStep {
 public:
  FusedConvPool(Conv2D& conv, MaxPooling2D& pool, TensorPool& memory)
      : FusedStep(conv.name()), conv_(conv), pool_(pool), memory_(memory) {}
  const char* type() const override { return "Conv2D+MaxPooling2D"; }
  int64_t forward_flops() const override { return conv_.forward_flops() + pool_.forward_flops(); }
  const char* ops() const override { return "_FusedConv2DMaxPool, _FusedConv2DMaxPoolGrad"; }
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

// A BatchNormalization and the ReLU after it as one layer:
// _FusedBatchNormEx writes relu(y) as it normalises, and
// _FusedBatchNormGradEx masks dy by it as it reads dy, so neither the
// normalised values before the relu nor relu's gradient cross memory
// (measured on the CPU at 28x28x16, batch 64: about 2 of the 5 passes over
// the tensor forward and 1 of 8 backward). BatchNormalization's own
// numbers (its forward, its moving statistics, its backward), through its
// accessors; dispatch runs the ops' parts where a device lacks them (they
// are stateless: the gradient reads relu's output, which the step keeps).
class FusedBatchNormRelu : public FusedStep {
 public:
  FusedBatchNormRelu(BatchNormalization& bn, ReLU& relu, TensorPool& memory)
      : FusedStep(bn.name()), bn_(bn), relu_(relu), memory_(memory) {}
  const char* type() const override { return "BatchNormalization+ReLU"; }
  int64_t forward_flops() const override { return bn_.forward_flops() + relu_.forward_flops(); }
  const char* ops() const override { return "_FusedBatchNormEx, _FusedBatchNormGradEx"; }
  Shape output_shape(std::span<const Shape> in) const override { return relu_.output_shape(in); }
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;

  Tensor forward(std::span<const Tensor> in) override {
    const Tensor& x = in[0];
    apart_ = !bn_.fused_ops() || !relu_.fused_ops();  // turned off since the plan was made
    if (apart_) return relu_.forward(bn_.forward(x));
    Tensor y = memory_.take(x.dtype(), x.shape());
    const float eps = static_cast<float>(bn_.epsilon());
    if (!bn_.training()) {
      ops::fused_batch_norm_relu(x, bn_.gamma(), bn_.beta(), bn_.moving_mean(), bn_.moving_variance(), y,
                                 ops::batch_norm_attrs(eps, false), bn_.name());
      return y;
    }
    const int64_t c = bn_.input_shape().back();
    Tensor batch_mean = channels(c), batch_variance = channels(c), mean = channels(c), variance = channels(c);
    ops::fused_batch_norm_relu_training(x, bn_.gamma(), bn_.beta(), bn_.moving_mean(), bn_.moving_variance(), y,
                                        batch_mean, batch_variance, mean, variance, ops::batch_norm_attrs(eps, true),
                                        bn_.name());
    bn_.move_statistics(mean, variance);
    if (bn_.remembers()) x_ = x, y_ = y, mean_ = mean, variance_ = variance;
    return y;
  }

  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override {
    if (apart_) return bn_.backward(relu_.backward(dy, true), need_dx, dx);
    const int64_t c = bn_.input_shape().back();
    Tensor dgamma = bn_.gamma_grad(), dbeta = bn_.beta_grad();
    if (!dgamma.defined()) dgamma = channels(c);
    if (!dbeta.defined()) dbeta = channels(c);
    // The gradient op always writes dx; it is the input's when needed.
    Tensor d = memory_.take(dy.dtype(), dy.shape());
    ops::fused_batch_norm_relu_grad(dy, x_, bn_.gamma(), mean_, variance_, y_, d, dgamma, dbeta,
                                    ops::batch_norm_attrs(static_cast<float>(bn_.epsilon()), true), bn_.name());
    if (need_dx[0]) dx[0] = d;
    x_ = y_ = mean_ = variance_ = Tensor();
  }

 private:
  Tensor channels(int64_t c) { return memory_.take(AXON_FLOAT32, {c}); }

  BatchNormalization& bn_;
  ReLU& relu_;
  TensorPool& memory_;
  bool apart_ = false;  // the last forward ran the two layers' own passes
  Tensor x_, y_, mean_, variance_;
};

// A BatchNormalization, an Add of its output and one other tensor, and a
// ReLU of the sum (a residual block's end) as one layer:
// _FusedBatchNormAddEx writes relu(normalised + side) as it normalises, and
// _FusedBatchNormAddGradEx writes the masked dy, which is the side input's
// gradient, in the pass that sums it and reads it back for dx. Neither the
// normalised values nor the sum cross memory, and Add and Relu (forward) and
// ReluGrad (backward) are not passes of their own. As FusedBatchNormRelu
// otherwise; inputs: the normalisation's, then the Add's other one.
class FusedBatchNormAddRelu : public FusedStep {
 public:
  FusedBatchNormAddRelu(BatchNormalization& bn, Layer& add, int bn_slot, ReLU& relu, TensorPool& memory)
      : FusedStep(bn.name()), bn_(bn), add_(add), bn_slot_(bn_slot), relu_(relu), memory_(memory) {}
  const char* type() const override { return "BatchNormalization+Add+ReLU"; }
  int64_t forward_flops() const override {
    return bn_.forward_flops() + add_.forward_flops() + relu_.forward_flops();
  }
  const char* ops() const override { return "_FusedBatchNormAddEx, _FusedBatchNormAddGradEx"; }
  int min_inputs() const override { return 2; }
  int max_inputs() const override { return 2; }
  Shape output_shape(std::span<const Shape> in) const override { return relu_.output_shape(in.first(1)); }
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;

  Tensor forward(std::span<const Tensor> in) override {
    const Tensor &x = in[0], &side = in[1];
    apart_ = !bn_.fused_ops() || !add_.fused_ops() || !relu_.fused_ops();  // turned off since the plan was made
    if (apart_) {
      Tensor terms[2];
      terms[bn_slot_] = bn_.forward(x);
      terms[1 - bn_slot_] = side;
      return relu_.forward(add_.forward(terms));
    }
    Tensor y = memory_.take(x.dtype(), x.shape());
    const float eps = static_cast<float>(bn_.epsilon());
    if (!bn_.training()) {
      ops::fused_batch_norm_add_relu(x, bn_.gamma(), bn_.beta(), bn_.moving_mean(), bn_.moving_variance(), side, y,
                                     ops::batch_norm_attrs(eps, false), bn_.name());
      return y;
    }
    const int64_t c = bn_.input_shape().back();
    Tensor batch_mean = channels(c), batch_variance = channels(c), mean = channels(c), variance = channels(c);
    ops::fused_batch_norm_add_relu_training(x, bn_.gamma(), bn_.beta(), bn_.moving_mean(), bn_.moving_variance(), side,
                                            y, batch_mean, batch_variance, mean, variance,
                                            ops::batch_norm_attrs(eps, true), bn_.name());
    bn_.move_statistics(mean, variance);
    if (bn_.remembers()) x_ = x, y_ = y, mean_ = mean, variance_ = variance;
    return y;
  }

  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override {
    if (apart_) {
      const bool need_terms[2] = {true, true};
      Tensor terms[2];
      add_.backward(relu_.backward(dy, true), need_terms, terms);
      bn_.backward(terms[bn_slot_], need_dx.first(1), dx.first(1));
      if (need_dx[1]) dx[1] = terms[1 - bn_slot_];
      return;
    }
    const int64_t c = bn_.input_shape().back();
    Tensor dgamma = bn_.gamma_grad(), dbeta = bn_.beta_grad();
    if (!dgamma.defined()) dgamma = channels(c);
    if (!dbeta.defined()) dbeta = channels(c);
    // The gradient op always writes both gradients; they are the inputs' when needed.
    Tensor d = memory_.take(dy.dtype(), dy.shape()), dside = memory_.take(dy.dtype(), dy.shape());
    ops::fused_batch_norm_add_relu_grad(dy, x_, bn_.gamma(), mean_, variance_, y_, d, dgamma, dbeta, dside,
                                        ops::batch_norm_attrs(static_cast<float>(bn_.epsilon()), true), bn_.name());
    if (need_dx[0]) dx[0] = d;
    if (need_dx[1]) dx[1] = dside;
    x_ = y_ = mean_ = variance_ = Tensor();
  }

 private:
  Tensor channels(int64_t c) { return memory_.take(AXON_FLOAT32, {c}); }

  BatchNormalization& bn_;
  Layer& add_;
  int bn_slot_;  // which of the Add's two inputs is the normalisation's output
  ReLU& relu_;
  TensorPool& memory_;
  bool apart_ = false;  // the last forward ran the three layers' own passes
  Tensor x_, y_, mean_, variance_;
};

bool is(const Layer& l, const char* type) { return std::strcmp(l.type(), type) == 0; }

bool conv_pool_pair(const Layer& conv_layer, const Layer& pool_layer) {
  if (!is(conv_layer, "Conv2D") || !is(pool_layer, "MaxPooling2D")) return false;
  const auto& conv = static_cast<const Conv2D&>(conv_layer);
  const auto& pool = static_cast<const MaxPooling2D&>(pool_layer);
  const Activation act = conv.applied();
  return conv.fused_ops() && pool.fused_ops() && conv.use_bias() && conv.groups() == 1 &&
         (act == Activation::linear || act == Activation::relu) &&
         int64_t{pool.attrs().window_h} * pool.attrs().window_w <= 255;
}

// A synchronized BatchNormalization all-reduces its statistics mid-step:
// the fused op has no place for that, so it runs apart.
bool batch_norm_relu_pair(const Layer& bn, const Layer& relu) {
  return is(bn, "BatchNormalization") && is(relu, "ReLU") && static_cast<const ReLU&>(relu).plain() &&
         !bn.synchronizes() && bn.fused_ops() && relu.fused_ops();
}

// A BatchNormalization, an Add of two inputs of one shape (the fused op
// broadcasts nothing) and a plain ReLU, for the triple above.
bool batch_norm_add_relu(const Layer& bn, const Layer& add, const Layer& relu) {
  return batch_norm_relu_pair(bn, relu) && is(add, "Add") && add.fused_ops() &&
         !static_cast<const Merge&>(add).broadcasts();
}

// The fused step for layers `first` and `second` (the second reads only the
// first, which nothing else reads), or null where no rule pairs them.
std::unique_ptr<FusedStep> fuse(Layer& first, Layer& second, TensorPool& pool) {
  if (conv_pool_pair(first, second))
    return std::make_unique<FusedConvPool>(static_cast<Conv2D&>(first), static_cast<MaxPooling2D&>(second), pool);
  if (batch_norm_relu_pair(first, second))
    return std::make_unique<FusedBatchNormRelu>(static_cast<BatchNormalization&>(first), static_cast<ReLU&>(second),
                                                pool);
  return nullptr;
}

// Steps that read one tensor run back to back, the fewest forward FLOPs
// first: each step, with every later one that reads one of its inputs and
// whose inputs are all written before it, in that order (stable), the steps
// they pass staying in their order after them (none of those reads them).
// Backward walks the plan in reverse, so the readers' gradients follow one
// another too, the costliest first: its input gradient starts the sum and
// the cheaper ones add into it (a ResNet's strided 1x1 projection only at
// the pixels its taps reach), and no branch's backward runs between a
// batch normalization's gradient and its convolution's. The ResNet of
// tests/data on two EPYC cores: its strided 1x1 input gradients 30-40%
// faster as the adding one, about 70 us of a 15 ms step; the whole step
// within that machine's noise (20 pairs alternated with the old order:
// 11 faster, the median pair +0.6%).
void run_readers_together(std::vector<PlanStep>& plan, size_t nodes) {
  std::vector<char> written(nodes, 0);  // by the steps before position i
  auto ready = [&](const PlanStep& s) {
    return std::all_of(s.inputs.begin(), s.inputs.end(),
                       [&](int j) { return j < 0 || written[static_cast<size_t>(j)] != 0; });
  };
  for (size_t i = 0; i < plan.size(); ++i) {
    std::vector<size_t> group{i};
    for (size_t k = i + 1; k < plan.size(); ++k) {
      const bool shares = std::any_of(plan[k].inputs.begin(), plan[k].inputs.end(), [&](int j) {
        return std::find(plan[i].inputs.begin(), plan[i].inputs.end(), j) != plan[i].inputs.end();
      });
      if (shares && ready(plan[k])) group.push_back(k);
    }
    if (group.size() > 1) {
      std::vector<PlanStep> moved;
      for (size_t k : group) moved.push_back(std::move(plan[k]));
      std::stable_sort(moved.begin(), moved.end(), [](const PlanStep& a, const PlanStep& b) {
        return a.layer->forward_flops() < b.layer->forward_flops();
      });
      // The steps between the group's members, in order, after it.
      std::vector<PlanStep> between;
      for (size_t k = i + 1; k <= group.back(); ++k)
        if (std::find(group.begin(), group.end(), k) == group.end()) between.push_back(std::move(plan[k]));
      size_t at = i;
      for (PlanStep& s : moved) plan[at++] = std::move(s);
      for (PlanStep& s : between) plan[at++] = std::move(s);
      for (size_t k = 0; k + 1 < group.size(); ++k) written[static_cast<size_t>(plan[i + k].output)] = 1;
      i += group.size() - 1;
    }
    written[static_cast<size_t>(plan[i].output)] = 1;
  }
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
    s.first = static_cast<int>(i);
    s.output = static_cast<int>(i);
    const size_t next = i + 1;
    // Layer i's output read only by an Add of it and one other tensor (an
    // earlier one: the graph is in topological order), whose sum only a
    // ReLU reads: the three as one step, taking i's input and the other term.
    if (i + 2 < n && readers[i] == 1 && readers[next] == 1 && graph.inputs[i].size() == 1 &&
        graph.inputs[next].size() == 2 && graph.inputs[i + 2] == std::vector<int>{static_cast<int>(next)}) {
      const std::vector<int>& terms = graph.inputs[next];
      const int bn_slot = terms[0] == static_cast<int>(i) ? 0 : 1;
      if (terms[bn_slot] == static_cast<int>(i) && terms[1 - bn_slot] != static_cast<int>(i) &&
          batch_norm_add_relu(*graph.layers[i], *graph.layers[next], *graph.layers[i + 2])) {
        s.fused = std::make_unique<FusedBatchNormAddRelu>(static_cast<BatchNormalization&>(*graph.layers[i]),
                                                          *graph.layers[next], bn_slot,
                                                          static_cast<ReLU&>(*graph.layers[i + 2]), pool);
        s.fused_from = graph.layers[i]->name() + " + " + graph.layers[next]->name() + " + " +
                       graph.layers[i + 2]->name();
        s.layer = s.fused.get();
        s.inputs = {graph.inputs[i][0], terms[1 - bn_slot]};
        s.output = static_cast<int>(i + 2);
        plan.push_back(std::move(s));
        i += 2;
        continue;
      }
    }
    if (next < n && readers[i] == 1 && graph.inputs[next] == std::vector<int>{static_cast<int>(i)}) {
      if (std::unique_ptr<FusedStep> fused = fuse(*graph.layers[i], *graph.layers[next], pool)) {
        s.fused_from = graph.layers[i]->name() + " + " + graph.layers[next]->name();
        s.layer = fused.get();
        s.fused = std::move(fused);
        s.output = static_cast<int>(next);
        ++i;
      }
    }
    plan.push_back(std::move(s));
  }
  run_readers_together(plan, n);
  return plan;
}

std::vector<std::string> describe_fusions(const std::vector<PlanStep>& plan) {
  std::vector<std::string> out;
  for (const PlanStep& s : plan)  // every fused step is one of this pass's
    if (s.fused) out.push_back(s.fused_from + " -> " + static_cast<const FusedStep&>(*s.fused).ops());
  return out;
}

}  // namespace axon::nn
