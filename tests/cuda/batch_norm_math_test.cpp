// The per-column arithmetic of the CUDA plugin's batch normalization
// (plugins/cuda/kernels/batch_norm_math.hpp), run here on column sums taken
// in double as its kernels take them, against TensorFlow's
// FusedBatchNormV3 and FusedBatchNormGradV3 (tf_values.inc, from
// tf_values.py) on [2, 3, 4, 5]: training with exponential_avg_factor 1 and
// 0.3, and inference. Bound: 2e-6 (1 + |tf|) (TensorFlow sums in float).
#include "batch_norm_math.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace {

#include "tf_values.inc"

constexpr int64_t kCols = 5, kRows = 24;
constexpr float kEpsilon = 0.001f;

void expect_close(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO(what << "[" << i << "]: " << got[i] << ", TensorFlow " << want[i]);
    CHECK(std::fabs(double(got[i]) - want[i]) <= 2e-6 * (1 + std::fabs(want[i])));
  }
}

// The column sums the kernels take: of f(row, column) over the rows.
template <class F>
std::vector<double> column_sums(F f) {
  std::vector<double> s(kCols, 0.0);
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t c = 0; c < kCols; ++c) s[c] += f(r, c);
  return s;
}

void check_grad(bool training, const std::vector<float>& mean, const std::vector<float>& variance,
                const std::vector<float>& dx_tf, const std::vector<float>& scale_tf,
                const std::vector<float>& offset_tf, const std::string& what) {
  const auto sum_dy = column_sums([&](int64_t r, int64_t c) { return double(kBnDy[r * kCols + c]); });
  const auto sum_dyc = column_sums(
      [&](int64_t r, int64_t c) { return double(kBnDy[r * kCols + c]) * (double(kBnX[r * kCols + c]) - mean[c]); });
  std::vector<float> dx(kBnX.size()), scale_bp(kCols), offset_bp(kCols);
  for (int64_t c = 0; c < kCols; ++c) {
    const auto g =
        axon::cuda::batch_norm_gradient(sum_dy[c], sum_dyc[c], kRows, kBnScale[c], variance[c], kEpsilon, training);
    scale_bp[c] = g.scale_backprop;
    offset_bp[c] = g.offset_backprop;
    for (int64_t r = 0; r < kRows; ++r) {
      const int64_t i = r * kCols + c;
      dx[i] = g.k_dy * kBnDy[i] + g.k_x * (kBnX[i] - mean[c]) + g.k_1;
    }
  }
  expect_close(dx, dx_tf, what + " dx");
  expect_close(scale_bp, scale_tf, what + " scale_backprop");
  expect_close(offset_bp, offset_tf, what + " offset_backprop");
}

void check_training(float factor, const std::vector<float>& y_tf, const std::vector<float>& mean_tf,
                    const std::vector<float>& var_tf, const std::vector<float>& r1_tf, const std::vector<float>& r2_tf,
                    const std::vector<float>& dx_tf, const std::vector<float>& scale_tf,
                    const std::vector<float>& offset_tf) {
  const std::string what = "training, factor " + std::to_string(factor);
  const auto sums = column_sums([&](int64_t r, int64_t c) { return double(kBnX[r * kCols + c]); });
  std::vector<double> mean(kCols);
  for (int64_t c = 0; c < kCols; ++c) mean[c] = sums[c] / kRows;
  const auto squares = column_sums([&](int64_t r, int64_t c) {
    const double d = kBnX[r * kCols + c] - mean[c];
    return d * d;
  });
  std::vector<float> y(kBnX.size()), running_mean(kCols), running_var(kCols), saved_mean(kCols), saved_var(kCols);
  for (int64_t c = 0; c < kCols; ++c) {
    const auto st = axon::cuda::batch_norm_stats(mean[c], squares[c], kRows, kBnMean[c], kBnVariance[c], factor);
    running_mean[c] = st.running_mean;
    running_var[c] = st.running_variance;
    saved_mean[c] = st.mean;
    saved_var[c] = st.variance;
    const float k = axon::cuda::batch_norm_coefficient(kBnScale[c], st.variance, kEpsilon);
    for (int64_t r = 0; r < kRows; ++r) y[r * kCols + c] = (kBnX[r * kCols + c] - st.mean) * k + kBnOffset[c];
  }
  expect_close(y, y_tf, what + " y");
  expect_close(running_mean, mean_tf, what + " batch_mean");
  expect_close(running_var, var_tf, what + " batch_variance");
  expect_close(saved_mean, r1_tf, what + " reserve_space_1");
  expect_close(saved_var, r2_tf, what + " reserve_space_2");
  check_grad(true, r1_tf, r2_tf, dx_tf, scale_tf, offset_tf, what);
}

}  // namespace

TEST_CASE("batch normalization in training: the batch's statistics and their running averages, as TensorFlow's") {
  check_training(1.f, kBnTrainY, kBnTrainBatchMean, kBnTrainBatchVariance, kBnTrainReserve1, kBnTrainReserve2,
                 kBnTrainDx, kBnTrainScaleBackprop, kBnTrainOffsetBackprop);
  check_training(0.3f, kBnTrainAvgY, kBnTrainAvgBatchMean, kBnTrainAvgBatchVariance, kBnTrainAvgReserve1,
                 kBnTrainAvgReserve2, kBnTrainAvgDx, kBnTrainAvgScaleBackprop, kBnTrainAvgOffsetBackprop);
}

TEST_CASE("batch normalization in inference: the given statistics, as TensorFlow's") {
  std::vector<float> y(kBnX.size());
  for (int64_t c = 0; c < kCols; ++c) {
    const float k = axon::cuda::batch_norm_coefficient(kBnScale[c], kBnVariance[c], kEpsilon);
    for (int64_t r = 0; r < kRows; ++r) y[r * kCols + c] = (kBnX[r * kCols + c] - kBnMean[c]) * k + kBnOffset[c];
  }
  expect_close(y, kBnInferY, "inference y");
  // TensorFlow's other outputs are the given mean and variance (the kernel copies them).
  expect_close(kBnMean, kBnInferBatchMean, "inference batch_mean");
  expect_close(kBnVariance, kBnInferBatchVariance, "inference batch_variance");
  check_grad(false, kBnInferReserve1, kBnInferReserve2, kBnInferDx, kBnInferScaleBackprop, kBnInferOffsetBackprop,
             "inference");
}
