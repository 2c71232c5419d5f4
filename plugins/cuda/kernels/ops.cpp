// Launches for the ops that run on axon's own CUDA kernels (elementwise.cu):
// bias, loss, Adam, accuracy, reductions, fills, scaling, sums of tensors,
// image normalisation and copies.
#include "cuda_device.hpp"
#include "elementwise.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

namespace axon::cuda {

namespace {

void bias_add(CudaDevice& d, const sdk::KernelCall& c) {
  auto x = c.input(0), b = c.input(1), y = c.output(0);
  const int64_t cols = b.dim(0);
  if (x.numel() == 0) return;
  launch::bias_add(d.stream(), x.data<float>(), b.data<float>(), y.data<float>(), x.numel() / cols, cols);
}

void bias_add_grad(CudaDevice& d, const sdk::KernelCall& c) {
  auto dy = c.input(0), db = c.output(0);
  const int64_t cols = db.dim(0);
  if (cols == 0) return;
  const int64_t rows = dy.numel() / cols;
  CudaDevice::Scratch scratch(d, launch::column_sum_scratch(rows, cols) * sizeof(float));
  launch::column_sum(d.stream(), dy.data<float>(), rows, cols, db.data<float>(), scratch.get<float>());
}

void softmax_xent(CudaDevice& d, const sdk::KernelCall& c) {
  auto logits = c.input(0), labels = c.input(1), loss = c.output(0), dlogits = c.output(1);
  const int64_t n = logits.dim(0), classes = logits.dim(1);
  if (n == 0) return;
  launch::softmax_cross_entropy(d.stream(), logits.data<float>(), labels.data<int32_t>(), n, classes, loss.data<float>(),
                                dlogits.data<float>());
}

void apply_adam(CudaDevice& d, const sdk::KernelCall& c) {
  auto var = c.input(0), m = c.input(1), v = c.input(2), g = c.input(3);
  const auto& a = c.attrs<axon_adam_attrs>();
  // Keras: the bias corrections are folded into the learning rate (in double on the host).
  const double t = static_cast<double>(a.step);
  const double lr_t = a.learning_rate * std::sqrt(1.0 - std::pow(static_cast<double>(a.beta_2), t)) /
                      (1.0 - std::pow(static_cast<double>(a.beta_1), t));
  launch::adam(d.stream(), var.data<float>(), m.data<float>(), v.data<float>(), g.data<float>(), var.numel(),
               static_cast<float>(lr_t), a.beta_1, a.beta_2, a.epsilon);
}

void in_top_k(CudaDevice& d, const sdk::KernelCall& c) {
  const int64_t n = c.input(0).dim(0), classes = c.input(0).dim(1);
  launch::in_top_k(d.stream(), c.input(0).data<float>(), c.input(1).data<int32_t>(), n, classes, 1,
                   c.output(0).data<float>());
}

void in_top_k_v2(CudaDevice& d, const sdk::KernelCall& c) {
  const int64_t n = c.input(0).dim(0), classes = c.input(0).dim(1);
  launch::in_top_k(d.stream(), c.input(0).data<float>(), c.input(1).data<int32_t>(), n, classes,
                   c.attrs<axon_in_top_k_attrs>().k, c.output(0).data<float>());
}

void sparse_categorical_accuracy(CudaDevice& d, const sdk::KernelCall& c) {
  const int64_t n = c.input(0).dim(0), classes = c.input(0).dim(1);
  launch::argmax_accuracy(d.stream(), c.input(0).data<float>(), c.input(1).data<int32_t>(), n, classes,
                          c.output(0).data<float>());
}

void sum(CudaDevice& d, const sdk::KernelCall& c) {
  auto x = c.input(0), y = c.output(0);
  CudaDevice::Scratch scratch(d, launch::sum_scratch(x.numel()) * sizeof(float));
  launch::sum_all(d.stream(), x.data<float>(), x.numel(), y.data<float>(), scratch.get<float>());
}

void fill(CudaDevice& d, const sdk::KernelCall& c) {
  auto y = c.output(0);
  launch::fill(d.stream(), y.data<float>(), y.numel(), c.attrs<axon_fill_attrs>().value);
}

void scale(CudaDevice& d, const sdk::KernelCall& c) {
  auto x = c.input(0), y = c.output(0);
  launch::scale(d.stream(), x.data<float>(), y.data<float>(), x.numel(), c.attrs<axon_scale_attrs>().alpha);
}

void add_n(CudaDevice& d, const sdk::KernelCall& c) {
  auto y = c.output(0);
  std::vector<const float*> xs;
  bool y_is_input = false;
  for (int i = 0; i < c.num_inputs(); ++i) {
    auto x = c.input(i);
    xs.push_back(x.data<float>());
    y_is_input = y_is_input || (i >= launch::kAddNMax && x.raw() == y.raw());
  }
  const int64_t n = y.numel();
  if (n == 0) return;
  // In chunks of kAddNMax inputs; the output accumulates after the first chunk.
  // If y is one of the later inputs it would be overwritten first: sum into scratch.
  std::optional<CudaDevice::Scratch> tmp;
  float* out = y.data<float>();
  if (y_is_input) {
    tmp.emplace(d, n * sizeof(float));
    out = tmp->get<float>();
  }
  for (size_t i = 0; i < xs.size(); i += launch::kAddNMax) {
    const int count = static_cast<int>(std::min<size_t>(launch::kAddNMax, xs.size() - i));
    launch::add_n(d.stream(), xs.data() + i, count, out, n, i > 0);
  }
  if (y_is_input) CUDA_CHECK(cudaMemcpyAsync(y.raw(), out, n * sizeof(float), cudaMemcpyDeviceToDevice, d.stream()));
}

void normalize_image(CudaDevice& d, const sdk::KernelCall& c) {
  auto x = c.input(0), y = c.output(0);
  launch::normalize_image(d.stream(), x.data<uint8_t>(), y.data<float>(), x.numel());
}

void identity(CudaDevice& d, const sdk::KernelCall& c) {
  auto x = c.input(0), y = c.output(0);
  const size_t bytes = static_cast<size_t>(x.numel()) * sdk::dtype_size(x.dtype());
  if (bytes > 0 && x.raw() != y.raw())
    CUDA_CHECK(cudaMemcpyAsync(y.raw(), x.raw(), bytes, cudaMemcpyDeviceToDevice, d.stream()));
}

}  // namespace

void register_own_kernels(sdk::KernelTable& t) {
  add<OpId::BiasAdd, bias_add>(t);
  add<OpId::BiasAddGrad, bias_add_grad>(t);
  add<OpId::SparseSoftmaxCrossEntropyWithLogits, softmax_xent>(t);
  add<OpId::ApplyAdam, apply_adam>(t);
  add<OpId::InTopK, in_top_k>(t);
  add<OpId::InTopKV2, in_top_k_v2>(t);
  add<OpId::SparseCategoricalAccuracy, sparse_categorical_accuracy>(t);
  add<OpId::Sum, sum>(t);
  add<OpId::Fill, fill>(t);
  add<OpId::Scale, scale>(t);
  add<OpId::AddN, add_n>(t);
  add<OpId::NormalizeImage, normalize_image>(t);
  add<OpId::Identity, identity>(t);
}

}  // namespace axon::cuda
