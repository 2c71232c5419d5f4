// Typed wrappers over dispatch::run, one per op of the op table
// (op_table.hpp). Outputs are allocated by the caller (so buffers are reused
// across steps). `layer` labels the placement log and error messages.
#pragma once

#include <axon/dispatch.hpp>

#include <string>

namespace axon::ops {

axon_conv2d_attrs conv2d_attrs(int stride, axon_padding padding);
axon_pool_attrs pool_attrs(int window, int stride, axon_padding padding);

void conv2d(const Tensor& x, const Tensor& filter, Tensor& y, const axon_conv2d_attrs& a, const std::string& layer = {});
void conv2d_backprop_input(const Tensor& dy, const Tensor& filter, Tensor& dx, const axon_conv2d_attrs& a,
                           const std::string& layer = {});
void conv2d_backprop_filter(const Tensor& x, const Tensor& dy, Tensor& dfilter, const axon_conv2d_attrs& a,
                            const std::string& layer = {});
void max_pool(const Tensor& x, Tensor& y, const axon_pool_attrs& a, const std::string& layer = {});
void max_pool_grad(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx, const axon_pool_attrs& a,
                   const std::string& layer = {});
void relu(const Tensor& x, Tensor& y, const std::string& layer = {});
void relu_grad(const Tensor& dy, const Tensor& y, Tensor& dx, const std::string& layer = {});
void matmul(const Tensor& a, const Tensor& b, Tensor& c, bool transpose_a, bool transpose_b,
            const std::string& layer = {});
void bias_add(const Tensor& x, const Tensor& bias, Tensor& y, const std::string& layer = {});
void bias_add_grad(const Tensor& dy, Tensor& dbias, const std::string& layer = {});
void sparse_softmax_cross_entropy(const Tensor& logits, const Tensor& labels, Tensor& loss, Tensor& dlogits,
                                  const std::string& layer = {});
void apply_adam(Tensor& var, Tensor& m, Tensor& v, const Tensor& grad, const axon_adam_attrs& a,
                const std::string& layer = {});
// TensorFlow's InTopK, k = 1: a tie for the largest logit counts as correct.
void in_top_k(const Tensor& logits, const Tensor& labels, Tensor& correct, const std::string& layer = {});
void sum(const Tensor& x, Tensor& y, const std::string& layer = {});
void fill(Tensor& y, float value, const std::string& layer = {});
void scale(const Tensor& x, Tensor& y, float alpha, const std::string& layer = {});
void add_n(const std::vector<const Tensor*>& xs, Tensor& y, const std::string& layer = {});
void normalize_image(const Tensor& x_uint8, Tensor& y, const std::string& layer = {});
void identity(const Tensor& x, Tensor& y, const std::string& layer = {});

// Optional fused ops (ABI 1.1); run them only where the device has a kernel
// (Device::has_kernel), else the ops above. relu: activation relu, else none.
void fused_conv2d(const Tensor& x, const Tensor& filter, const Tensor& bias, Tensor& y, const axon_conv2d_attrs& a,
                  bool relu, const std::string& layer = {});
void fused_matmul(const Tensor& a, const Tensor& b, const Tensor& bias, Tensor& c, bool transpose_a, bool transpose_b,
                  bool relu, const std::string& layer = {});
void relu_grad_bias_add_grad(const Tensor& dy, const Tensor& y, Tensor& dx, Tensor& dbias,
                             const std::string& layer = {});
// A convolution layer and the max pooling after it (ABI 1.2): argmax is uint8.
void fused_conv2d_max_pool(const Tensor& x, const Tensor& filter, const Tensor& bias, Tensor& y, Tensor& argmax,
                           const axon_conv2d_attrs& conv, bool relu, const axon_pool_attrs& pool,
                           const std::string& layer = {});
// dx == nullptr: the layer's input needs no gradient (the first layer).
void fused_conv2d_max_pool_grad(const Tensor& x, const Tensor& filter, const Tensor& dy, const Tensor& argmax,
                                Tensor& dfilter, Tensor& dbias, Tensor* dx, const axon_conv2d_attrs& conv, bool relu,
                                const axon_pool_attrs& pool, const std::string& layer = {});

// Keras' accuracy (ABI 1.3, optional): argmax(logits) == label, ties to the
// lower index.
void sparse_categorical_accuracy(const Tensor& logits, const Tensor& labels, Tensor& correct,
                                 const std::string& layer = {});

}  // namespace axon::ops
