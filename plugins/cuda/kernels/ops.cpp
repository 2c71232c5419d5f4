// Argument checks and launches for the ops that run on axon's own CUDA
// kernels (elementwise.cu): bias, loss, Adam, accuracy, reductions, fills,
// scaling, sums of tensors, image normalisation and copies.
#include "cuda_device.hpp"
#include "elementwise.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

namespace axon::cuda {

namespace {

void same_numel(const sdk::KernelCall& c, const sdk::TensorRef& a, const sdk::TensorRef& b, const char* what) {
  sdk::require(a.numel() == b.numel(), sdk::format("%s: %s differ in size: %s vs %s", c.op(), what, a.shape_string().c_str(),
                                                   b.shape_string().c_str()));
}

void bias_add(CudaDevice& d, const sdk::KernelCall& c) {
  c.expect_arity(2, 1);
  auto x = c.input(0), b = c.input(1), y = c.output(0);
  for (auto* t : {&x, &b, &y}) expect_dtype(c, *t, AXON_FLOAT32, "every tensor");
  sdk::require(x.rank() >= 1 && b.rank() == 1 && b.dim(0) == x.dim(-1),
               sdk::format("%s: bias %s must be [%lld] for x %s", c.op(), b.shape_string().c_str(),
                           (long long)(x.rank() ? x.dim(-1) : 0), x.shape_string().c_str()));
  expect_same_shape(c, x, y, "x and y");
  const int64_t cols = b.dim(0);
  if (x.numel() == 0) return;
  launch::bias_add(d.stream(), x.data<float>(), b.data<float>(), y.data<float>(), x.numel() / cols, cols);
}

void bias_add_grad(CudaDevice& d, const sdk::KernelCall& c) {
  c.expect_arity(1, 1);
  auto dy = c.input(0), db = c.output(0);
  expect_dtype(c, dy, AXON_FLOAT32, "dy");
  expect_dtype(c, db, AXON_FLOAT32, "dbias");
  sdk::require(dy.rank() >= 1 && db.rank() == 1 && db.dim(0) == dy.dim(-1),
               sdk::format("%s: dbias %s must be [last dim of dy %s]", c.op(), db.shape_string().c_str(),
                           dy.shape_string().c_str()));
  const int64_t cols = db.dim(0);
  if (cols == 0) return;
  const int64_t rows = dy.numel() / cols;
  CudaDevice::Scratch scratch(d, launch::column_sum_scratch(rows, cols) * sizeof(float));
  launch::column_sum(d.stream(), dy.data<float>(), rows, cols, db.data<float>(), scratch.get<float>());
}

void softmax_xent(CudaDevice& d, const sdk::KernelCall& c) {
  c.expect_arity(2, 2);
  auto logits = c.input(0), labels = c.input(1), loss = c.output(0), dlogits = c.output(1);
  expect_dtype(c, logits, AXON_FLOAT32, "logits");
  expect_dtype(c, labels, AXON_INT32, "labels");
  expect_dtype(c, loss, AXON_FLOAT32, "loss");
  expect_dtype(c, dlogits, AXON_FLOAT32, "dlogits");
  sdk::require(logits.rank() == 2, sdk::format("%s: logits must be [N,C], got %s", c.op(), logits.shape_string().c_str()));
  const int64_t n = logits.dim(0), classes = logits.dim(1);
  sdk::require(labels.rank() == 1 && labels.dim(0) == n && loss.rank() == 1 && loss.dim(0) == n,
               sdk::format("%s: labels %s and loss %s must be [%lld]", c.op(), labels.shape_string().c_str(),
                           loss.shape_string().c_str(), (long long)n));
  expect_same_shape(c, logits, dlogits, "logits and dlogits");
  if (n == 0) return;
  sdk::require(classes > 0, sdk::format("%s: logits have no classes", c.op()));
  launch::softmax_cross_entropy(d.stream(), logits.data<float>(), labels.data<int32_t>(), n, classes, loss.data<float>(),
                                dlogits.data<float>());
}

void apply_adam(CudaDevice& d, const sdk::KernelCall& c) {
  c.expect_arity(4, 0);
  auto var = c.input(0), m = c.input(1), v = c.input(2), g = c.input(3);
  for (auto* t : {&var, &m, &v, &g}) expect_dtype(c, *t, AXON_FLOAT32, "every tensor");
  expect_same_shape(c, var, m, "var and m");
  expect_same_shape(c, var, v, "var and v");
  expect_same_shape(c, var, g, "var and grad");
  const auto& a = c.attrs<axon_adam_attrs>();
  sdk::require(a.step >= 1, sdk::format("%s: step must be >= 1, got %lld", c.op(), (long long)a.step));
  // Keras: the bias corrections are folded into the learning rate (in double on the host).
  const double t = static_cast<double>(a.step);
  const double lr_t = a.learning_rate * std::sqrt(1.0 - std::pow(static_cast<double>(a.beta_2), t)) /
                      (1.0 - std::pow(static_cast<double>(a.beta_1), t));
  launch::adam(d.stream(), var.data<float>(), m.data<float>(), v.data<float>(), g.data<float>(), var.numel(),
               static_cast<float>(lr_t), a.beta_1, a.beta_2, a.epsilon);
}

// Logits [N,C] float32, labels [N] int32 and a float32 [N] output, checked; N and C.
std::pair<int64_t, int64_t> check_logits_labels(const sdk::KernelCall& c) {
  c.expect_arity(2, 1);
  auto logits = c.input(0), labels = c.input(1), out = c.output(0);
  expect_dtype(c, logits, AXON_FLOAT32, "logits");
  expect_dtype(c, labels, AXON_INT32, "labels");
  expect_dtype(c, out, AXON_FLOAT32, "correct");
  sdk::require(logits.rank() == 2, sdk::format("%s: logits must be [N,C], got %s", c.op(), logits.shape_string().c_str()));
  const int64_t n = logits.dim(0);
  sdk::require(labels.rank() == 1 && labels.dim(0) == n && out.rank() == 1 && out.dim(0) == n,
               sdk::format("%s: labels %s and output %s must be [%lld]", c.op(), labels.shape_string().c_str(),
                           out.shape_string().c_str(), (long long)n));
  sdk::require(n == 0 || logits.dim(1) > 0, sdk::format("%s: logits have no classes", c.op()));
  return {n, logits.dim(1)};
}

void in_top_k(CudaDevice& d, const sdk::KernelCall& c) {
  const auto [n, classes] = check_logits_labels(c);
  launch::in_top_1(d.stream(), c.input(0).data<float>(), c.input(1).data<int32_t>(), n, classes, c.output(0).data<float>());
}

void sparse_categorical_accuracy(CudaDevice& d, const sdk::KernelCall& c) {
  const auto [n, classes] = check_logits_labels(c);
  launch::argmax_accuracy(d.stream(), c.input(0).data<float>(), c.input(1).data<int32_t>(), n, classes,
                          c.output(0).data<float>());
}

void sum(CudaDevice& d, const sdk::KernelCall& c) {
  c.expect_arity(1, 1);
  auto x = c.input(0), y = c.output(0);
  expect_dtype(c, x, AXON_FLOAT32, "x");
  expect_dtype(c, y, AXON_FLOAT32, "y");
  sdk::require(y.numel() == 1 && y.rank() <= 1, sdk::format("%s: y must be [1] or [], got %s", c.op(), y.shape_string().c_str()));
  CudaDevice::Scratch scratch(d, launch::sum_scratch(x.numel()) * sizeof(float));
  launch::sum_all(d.stream(), x.data<float>(), x.numel(), y.data<float>(), scratch.get<float>());
}

void fill(CudaDevice& d, const sdk::KernelCall& c) {
  c.expect_arity(0, 1);
  auto y = c.output(0);
  expect_dtype(c, y, AXON_FLOAT32, "y");
  launch::fill(d.stream(), y.data<float>(), y.numel(), c.attrs<axon_fill_attrs>().value);
}

void scale(CudaDevice& d, const sdk::KernelCall& c) {
  c.expect_arity(1, 1);
  auto x = c.input(0), y = c.output(0);
  expect_dtype(c, x, AXON_FLOAT32, "x");
  expect_dtype(c, y, AXON_FLOAT32, "y");
  same_numel(c, x, y, "x and y");
  launch::scale(d.stream(), x.data<float>(), y.data<float>(), x.numel(), c.attrs<axon_scale_attrs>().alpha);
}

void add_n(CudaDevice& d, const sdk::KernelCall& c) {
  sdk::require(c.num_inputs() >= 1 && c.num_outputs() == 1,
               sdk::format("%s: expected at least 1 input and 1 output, got %d and %d", c.op(), c.num_inputs(), c.num_outputs()));
  auto y = c.output(0);
  expect_dtype(c, y, AXON_FLOAT32, "y");
  std::vector<const float*> xs;
  bool y_is_input = false;
  for (int i = 0; i < c.num_inputs(); ++i) {
    auto x = c.input(i);
    expect_dtype(c, x, AXON_FLOAT32, "every input");
    expect_same_shape(c, x, y, "input and output");
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
  c.expect_arity(1, 1);
  auto x = c.input(0), y = c.output(0);
  expect_dtype(c, x, AXON_UINT8, "x");
  expect_dtype(c, y, AXON_FLOAT32, "y");
  same_numel(c, x, y, "x and y");
  launch::normalize_image(d.stream(), x.data<uint8_t>(), y.data<float>(), x.numel());
}

void identity(CudaDevice& d, const sdk::KernelCall& c) {
  c.expect_arity(1, 1);
  auto x = c.input(0), y = c.output(0);
  expect_dtype(c, y, x.dtype(), "y (as x)");
  same_numel(c, x, y, "x and y");
  const size_t bytes = static_cast<size_t>(x.numel()) * sdk::dtype_size(x.dtype());
  if (bytes > 0 && x.raw() != y.raw())
    CUDA_CHECK(cudaMemcpyAsync(y.raw(), x.raw(), bytes, cudaMemcpyDeviceToDevice, d.stream()));
}

}  // namespace

void register_own_kernels(sdk::KernelTable& t) {
  t.add("BiasAdd", AXON_FLOAT32, cuda_kernel<bias_add>);
  t.add("BiasAddGrad", AXON_FLOAT32, cuda_kernel<bias_add_grad>);
  t.add("SparseSoftmaxCrossEntropyWithLogits", AXON_FLOAT32, cuda_kernel<softmax_xent>);
  t.add("ApplyAdam", AXON_FLOAT32, cuda_kernel<apply_adam>);
  t.add("InTopK", AXON_FLOAT32, cuda_kernel<in_top_k>);
  t.add("_SparseCategoricalAccuracy", AXON_FLOAT32, cuda_kernel<sparse_categorical_accuracy>);
  t.add("Sum", AXON_FLOAT32, cuda_kernel<sum>);
  t.add("Fill", AXON_FLOAT32, cuda_kernel<fill>);
  t.add("Scale", AXON_FLOAT32, cuda_kernel<scale>);
  t.add("AddN", AXON_FLOAT32, cuda_kernel<add_n>);
  t.add("NormalizeImage", AXON_UINT8, cuda_kernel<normalize_image>);
  for (axon_dtype dt : {AXON_FLOAT32, AXON_INT32, AXON_UINT8, AXON_INT64}) t.add("Identity", dt, cuda_kernel<identity>);
}

}  // namespace axon::cuda
