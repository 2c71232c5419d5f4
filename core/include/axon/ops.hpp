// Typed wrappers over dispatch::run, one per op of the op table
// (op_table.hpp). Outputs are allocated by the caller (so buffers are reused
// across steps). `layer` labels the placement log and error messages.
#pragma once

#include <axon/dispatch.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace axon::ops {

axon_conv2d_attrs conv2d_attrs(int stride, axon_padding padding);
axon_pool_attrs pool_attrs(int window, int stride, axon_padding padding);

void conv2d(const Tensor& x, const Tensor& filter, Tensor& y, const axon_conv2d_attrs& a, const std::string& layer = {});
void conv2d_backprop_input(const Tensor& dy, const Tensor& filter, Tensor& dx, const axon_conv2d_attrs& a,
                           const std::string& layer = {});
void conv2d_backprop_filter(const Tensor& x, const Tensor& dy, Tensor& dfilter, const axon_conv2d_attrs& a,
                            const std::string& layer = {});
// dx += the input gradient (_Conv2DBackpropInputAccumulate); dispatch runs
// Conv2DBackpropInput into a temporary and AddN where a device lacks it.
void conv2d_backprop_input_accumulate(const Tensor& dy, const Tensor& filter, Tensor& dx, const axon_conv2d_attrs& a,
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
// The optimizers of ABI 1.6 (plugin_abi.h gives each update rule).
void apply_sgd(Tensor& var, Tensor& velocity, const Tensor& grad, const axon_sgd_attrs& a,
               const std::string& layer = {});
void apply_rmsprop(Tensor& var, Tensor& velocity, Tensor& momentum, Tensor& average_grad, const Tensor& grad,
                   const axon_rmsprop_attrs& a, const std::string& layer = {});
void apply_adam_with_amsgrad(Tensor& var, Tensor& m, Tensor& v, Tensor& vhat, const Tensor& grad,
                             const axon_adam_attrs& a, const std::string& layer = {});
void apply_adagrad(Tensor& var, Tensor& accumulator, const Tensor& grad, const axon_adagrad_attrs& a,
                   const std::string& layer = {});
void apply_nadam(Tensor& var, Tensor& m, Tensor& v, const Tensor& grad, const axon_nadam_attrs& a,
                 const std::string& layer = {});
void apply_weight_decay(Tensor& var, const axon_weight_decay_attrs& a, const std::string& layer = {});
// segment_ends: int64, where each variable of grad ends.
void clip_gradients(Tensor& grad, const Tensor& segment_ends, const axon_clip_attrs& a, const std::string& layer = {});
// The losses of ABI 1.7 (plugin_abi.h gives each formula): the per-sample
// loss and the gradient of each sample's loss.
void categorical_crossentropy(const Tensor& predictions, const Tensor& labels, Tensor& loss, Tensor& dpredictions,
                              const axon_crossentropy_attrs& a, const std::string& layer = {});
void binary_crossentropy(const Tensor& predictions, const Tensor& labels, Tensor& loss, Tensor& dpredictions,
                         const axon_crossentropy_attrs& a, const std::string& layer = {});
void regression_loss(const Tensor& predictions, const Tensor& labels, Tensor& loss, Tensor& dpredictions,
                     const axon_regression_loss_attrs& a, const std::string& layer = {});
// Keras' binary_accuracy on one unit: (prediction > threshold) == label.
void binary_accuracy(const Tensor& predictions, const Tensor& labels, Tensor& correct,
                     const axon_binary_accuracy_attrs& a, const std::string& layer = {});
// TensorFlow's InTopK, k = 1: a tie for the largest logit counts as correct.
void in_top_k(const Tensor& logits, const Tensor& labels, Tensor& correct, const std::string& layer = {});
// TensorFlow's InTopKV2: fewer than k logits of the row above the label's (ties count).
void in_top_k(const Tensor& logits, const Tensor& labels, Tensor& correct, int k, const std::string& layer = {});
void sum(const Tensor& x, Tensor& y, const std::string& layer = {});
// ABI 1.9: TensorFlow's Sum (ReduceSum), Mean and Max over a.axes of x
// (plugin_abi.h); y's shape is x's reduced (keep_dims: reduced axes 1).
void reduce_sum(const Tensor& x, Tensor& y, const axon_reduce_attrs& a, const std::string& layer = {});
void mean(const Tensor& x, Tensor& y, const axon_reduce_attrs& a, const std::string& layer = {});
void max(const Tensor& x, Tensor& y, const axon_reduce_attrs& a, const std::string& layer = {});
// axes (each in [-rank, rank), at most AXON_MAX_RANK) and keep_dims as the
// attribute struct; validation judges them against x.
axon_reduce_attrs reduce_attrs(const std::vector<int>& axes, bool keep_dims);
// ABI 1.9: TensorFlow's stateless normals and uniforms of key and counter
// (axon/philox.hpp derives them from a seed pair), times scale plus offset.
void stateless_random_normal(Tensor& y, const axon_random_attrs& a, const std::string& layer = {});
void stateless_random_uniform(Tensor& y, const axon_random_attrs& a, const std::string& layer = {});
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

// ABI 1.4. Activations and their gradients (inputs in TensorFlow's order).
void sigmoid(const Tensor& x, Tensor& y, const std::string& layer = {});
void sigmoid_grad(const Tensor& y, const Tensor& dy, Tensor& dx, const std::string& layer = {});
void tanh(const Tensor& x, Tensor& y, const std::string& layer = {});
void tanh_grad(const Tensor& y, const Tensor& dy, Tensor& dx, const std::string& layer = {});
void elu(const Tensor& x, Tensor& y, const std::string& layer = {});
void elu_grad(const Tensor& dy, const Tensor& y, Tensor& dx, const std::string& layer = {});
void selu(const Tensor& x, Tensor& y, const std::string& layer = {});
void selu_grad(const Tensor& dy, const Tensor& y, Tensor& dx, const std::string& layer = {});
void relu6(const Tensor& x, Tensor& y, const std::string& layer = {});
void relu6_grad(const Tensor& dy, const Tensor& x, Tensor& dx, const std::string& layer = {});
void leaky_relu(const Tensor& x, Tensor& y, float alpha, const std::string& layer = {});
void leaky_relu_grad(const Tensor& dy, const Tensor& x, Tensor& dx, float alpha, const std::string& layer = {});
void softplus(const Tensor& x, Tensor& y, const std::string& layer = {});
void softplus_grad(const Tensor& dy, const Tensor& x, Tensor& dx, const std::string& layer = {});
void gelu(const Tensor& x, Tensor& y, bool approximate, const std::string& layer = {});
void gelu_grad(const Tensor& dy, const Tensor& x, Tensor& dx, bool approximate, const std::string& layer = {});
void silu(const Tensor& x, Tensor& y, const std::string& layer = {});
void silu_grad(const Tensor& dy, const Tensor& x, Tensor& dx, const std::string& layer = {});
// Keras' relu(x, negative_slope, max_value, threshold); max_value INFINITY: none.
axon_clipped_relu_attrs clipped_relu_attrs(float negative_slope, float max_value, float threshold);
void clipped_relu(const Tensor& x, Tensor& y, const axon_clipped_relu_attrs& a, const std::string& layer = {});
void clipped_relu_grad(const Tensor& dy, const Tensor& x, Tensor& dx, const axon_clipped_relu_attrs& a,
                       const std::string& layer = {});
// Over the last dimension.
void softmax(const Tensor& logits, Tensor& y, const std::string& layer = {});
void softmax_grad(const Tensor& dy, const Tensor& y, Tensor& dx, const std::string& layer = {});

// Pooling, elementwise arithmetic of equal shapes, and shapes.
axon_pool_attrs pool_attrs(int window_h, int window_w, int stride_h, int stride_w, axon_padding padding);
void avg_pool(const Tensor& x, Tensor& y, const axon_pool_attrs& a, const std::string& layer = {});
void avg_pool_grad(const Tensor& dy, Tensor& dx, const axon_pool_attrs& a, const std::string& layer = {});
void sub(const Tensor& a, const Tensor& b, Tensor& y, const std::string& layer = {});
void mul(const Tensor& a, const Tensor& b, Tensor& y, const std::string& layer = {});
void maximum(const Tensor& a, const Tensor& b, Tensor& y, const std::string& layer = {});
void maximum_grad(const Tensor& dy, const Tensor& a, const Tensor& b, Tensor& da, Tensor& db,
                  const std::string& layer = {});
void concat(const std::vector<const Tensor*>& xs, Tensor& y, int axis, const std::string& layer = {});
// begin: one entry per dimension of x (slice) or y (pad); the rest is zero.
void slice(const Tensor& x, Tensor& y, const std::vector<int64_t>& begin, const std::string& layer = {});
void pad(const Tensor& x, Tensor& y, const std::vector<int64_t>& begin, const std::string& layer = {});

// Batch normalization over the last dimension (TensorFlow's FusedBatchNormV3).
// Inference (is_training 0): only y. Training: all five outputs.
axon_batch_norm_attrs batch_norm_attrs(float epsilon, bool is_training, float exponential_avg_factor = 1.0f);
void fused_batch_norm(const Tensor& x, const Tensor& scale, const Tensor& offset, const Tensor& mean,
                      const Tensor& variance, Tensor& y, const axon_batch_norm_attrs& a, const std::string& layer = {});
void fused_batch_norm_training(const Tensor& x, const Tensor& scale, const Tensor& offset, const Tensor& mean,
                               const Tensor& variance, Tensor& y, Tensor& batch_mean, Tensor& batch_variance,
                               Tensor& reserve_space_1, Tensor& reserve_space_2, const axon_batch_norm_attrs& a,
                               const std::string& layer = {});
void fused_batch_norm_grad(const Tensor& dy, const Tensor& x, const Tensor& scale, const Tensor& reserve_space_1,
                           const Tensor& reserve_space_2, Tensor& dx, Tensor& scale_backprop, Tensor& offset_backprop,
                           const axon_batch_norm_attrs& a, const std::string& layer = {});
// The same with relu applied to y (_FusedBatchNormEx), and its gradient
// (_FusedBatchNormGradEx: dy masked where y, the forward's output, is not
// positive); dispatch runs FusedBatchNormV3 + Relu, ReluGrad +
// FusedBatchNormGradV3 where a device lacks them.
axon_fused_batch_norm_attrs fused_batch_norm_relu_attrs(const axon_batch_norm_attrs& a);
void fused_batch_norm_relu(const Tensor& x, const Tensor& scale, const Tensor& offset, const Tensor& mean,
                           const Tensor& variance, Tensor& y, const axon_batch_norm_attrs& a,
                           const std::string& layer = {});
void fused_batch_norm_relu_training(const Tensor& x, const Tensor& scale, const Tensor& offset, const Tensor& mean,
                                    const Tensor& variance, Tensor& y, Tensor& batch_mean, Tensor& batch_variance,
                                    Tensor& reserve_space_1, Tensor& reserve_space_2, const axon_batch_norm_attrs& a,
                                    const std::string& layer = {});
void fused_batch_norm_relu_grad(const Tensor& dy, const Tensor& x, const Tensor& scale, const Tensor& reserve_space_1,
                                const Tensor& reserve_space_2, const Tensor& y, Tensor& dx, Tensor& scale_backprop,
                                Tensor& offset_backprop, const axon_batch_norm_attrs& a,
                                const std::string& layer = {});
// The same with side_input (a residual branch, x's shape) added before the
// relu (_FusedBatchNormAddEx), and its gradient (_FusedBatchNormAddGradEx:
// side_input_backprop is dy masked where y is not positive, dx and the rest
// FusedBatchNormGradV3's of it); dispatch runs FusedBatchNormV3 + AddN +
// Relu, ReluGrad + FusedBatchNormGradV3 where a device lacks them.
void fused_batch_norm_add_relu(const Tensor& x, const Tensor& scale, const Tensor& offset, const Tensor& mean,
                               const Tensor& variance, const Tensor& side_input, Tensor& y,
                               const axon_batch_norm_attrs& a, const std::string& layer = {});
void fused_batch_norm_add_relu_training(const Tensor& x, const Tensor& scale, const Tensor& offset, const Tensor& mean,
                                        const Tensor& variance, const Tensor& side_input, Tensor& y,
                                        Tensor& batch_mean, Tensor& batch_variance, Tensor& reserve_space_1,
                                        Tensor& reserve_space_2, const axon_batch_norm_attrs& a,
                                        const std::string& layer = {});
void fused_batch_norm_add_relu_grad(const Tensor& dy, const Tensor& x, const Tensor& scale,
                                    const Tensor& reserve_space_1, const Tensor& reserve_space_2, const Tensor& y,
                                    Tensor& dx, Tensor& scale_backprop, Tensor& offset_backprop,
                                    Tensor& side_input_backprop, const axon_batch_norm_attrs& a,
                                    const std::string& layer = {});
// Layer normalization of each row of x [R, K] (LayerNorm): y, and the rows'
// mean and inv_std [R] for the gradient (LayerNormGrad).
void layer_norm(const Tensor& x, const Tensor& scale, const Tensor& offset, Tensor& y, Tensor& mean, Tensor& inv_std,
                float epsilon, const std::string& layer = {});
void layer_norm_grad(const Tensor& dy, const Tensor& x, const Tensor& scale, const Tensor& mean, const Tensor& inv_std,
                     Tensor& dx, Tensor& scale_backprop, Tensor& offset_backprop, float epsilon,
                     const std::string& layer = {});
// var = momentum * var + weight * value.
void moving_average(Tensor& var, const Tensor& value, float momentum, float weight, const std::string& layer = {});

// Depthwise convolution: filter [KH, KW, C, M].
axon_conv2d_attrs conv2d_attrs(int stride_h, int stride_w, int dilation_h, int dilation_w, axon_padding padding);
void depthwise_conv2d(const Tensor& x, const Tensor& filter, Tensor& y, const axon_conv2d_attrs& a,
                      const std::string& layer = {});
void depthwise_conv2d_backprop_input(const Tensor& dy, const Tensor& filter, Tensor& dx, const axon_conv2d_attrs& a,
                                     const std::string& layer = {});
void depthwise_conv2d_backprop_filter(const Tensor& x, const Tensor& dy, Tensor& dfilter, const axon_conv2d_attrs& a,
                                      const std::string& layer = {});

}  // namespace axon::ops
