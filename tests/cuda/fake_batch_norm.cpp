// Host versions of batch normalization's launchers (batch_norm.hpp) for the
// fake-library tests: the same steps as batch_norm.cu (column sums in
// double, the per-column arithmetic of batch_norm_math.hpp, one pass over
// the elements, relu, relu's mask and the side input included), run at once
// on host memory.
#include "batch_norm.hpp"
#include "batch_norm_math.hpp"

#include <vector>

namespace axon::cuda::launch {

namespace {

template <class F>
std::vector<double> column_sums(int64_t rows, int64_t cols, F f) {
  std::vector<double> s(static_cast<size_t>(cols), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) s[c] += f(r * cols + c, c);
  return s;
}

// As normalize_kernel: the side input (when given) added, then relu.
float activate(float v, const float* side, int64_t i, bool relu) {
  if (side != nullptr) v += side[i];
  return relu ? (v > 0.f ? v : 0.f) : v;
}

}  // namespace

int64_t batch_norm_scratch_bytes(int64_t, int64_t) { return 0; }

void batch_norm_training(cudaStream_t, const float* x, int64_t rows, int64_t cols, const float* scale,
                         const float* offset, const float* old_mean, const float* old_variance, float epsilon,
                         float factor, bool relu, const float* side_input, float* y, float* batch_mean,
                         float* batch_variance, float* saved_mean, float* saved_variance, void*) {
  std::vector<double> mean = column_sums(rows, cols, [&](int64_t i, int64_t) { return double(x[i]); });
  for (double& m : mean) m /= static_cast<double>(rows);
  const std::vector<double> squares = column_sums(rows, cols, [&](int64_t i, int64_t c) {
    const double d = x[i] - mean[c];
    return d * d;
  });
  for (int64_t c = 0; c < cols; ++c) {
    const BatchStats st = batch_norm_stats(mean[c], squares[c], rows, old_mean[c], old_variance[c], factor);
    batch_mean[c] = st.running_mean;
    batch_variance[c] = st.running_variance;
    saved_mean[c] = st.mean;
    saved_variance[c] = st.variance;
    const float k = batch_norm_coefficient(scale[c], st.variance, epsilon);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = r * cols + c;
      y[i] = activate((x[i] - st.mean) * k + offset[c], side_input, i, relu);
    }
  }
}

void batch_norm_inference(cudaStream_t, const float* x, int64_t rows, int64_t cols, const float* scale,
                          const float* offset, const float* mean, const float* variance, float epsilon, bool relu,
                          const float* side_input, float* y, void*) {
  for (int64_t c = 0; c < cols; ++c) {
    const float k = batch_norm_coefficient(scale[c], variance[c], epsilon);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = r * cols + c;
      y[i] = activate((x[i] - mean[c]) * k + offset[c], side_input, i, relu);
    }
  }
}

void batch_norm_grad(cudaStream_t, const float* dy, const float* relu_y, float* side_input_backprop, const float* x,
                     int64_t rows, int64_t cols, const float* scale, const float* mean, const float* variance,
                     float epsilon, bool training, float* dx, float* scale_backprop, float* offset_backprop, void*) {
  auto g_at = [&](int64_t i) { return relu_y == nullptr || relu_y[i] > 0.f ? dy[i] : 0.f; };
  const std::vector<double> sum_dy = column_sums(rows, cols, [&](int64_t i, int64_t) {
    if (side_input_backprop != nullptr) side_input_backprop[i] = g_at(i);  // the sums' pass writes it, as on the GPU
    return double(g_at(i));
  });
  const std::vector<double> sum_dyc =
      column_sums(rows, cols, [&](int64_t i, int64_t c) { return double(g_at(i)) * (double(x[i]) - mean[c]); });
  for (int64_t c = 0; c < cols; ++c) {
    const BatchNormGrad g = batch_norm_gradient(sum_dy[c], sum_dyc[c], rows, scale[c], variance[c], epsilon, training);
    scale_backprop[c] = g.scale_backprop;
    offset_backprop[c] = g.offset_backprop;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = r * cols + c;
      dx[i] = g.k_dy * (side_input_backprop != nullptr ? side_input_backprop[i] : g_at(i)) + g.k_x * (x[i] - mean[c]) +
              g.k_1;
    }
  }
}

}  // namespace axon::cuda::launch
