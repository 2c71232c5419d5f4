#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>

#include <algorithm>
#include <cmath>

namespace axon::nn {

std::pair<double, double> compute_fans(const Shape& shape) {
  if (shape.size() < 2) throw RuntimeError("compute_fans: kernel shape " + shape_string(shape) + " has rank < 2");
  double receptive = 1;
  for (size_t i = 0; i + 2 < shape.size(); ++i) receptive *= static_cast<double>(shape[i]);
  return {static_cast<double>(shape[shape.size() - 2]) * receptive,
          static_cast<double>(shape[shape.size() - 1]) * receptive};
}

std::vector<float> glorot_uniform(const Shape& shape, Rng& rng) {
  auto [fan_in, fan_out] = compute_fans(shape);
  const auto limit = static_cast<float>(std::sqrt(6.0 / (fan_in + fan_out)));
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  for (float& x : v) x = rng.uniform(-limit, limit);
  return v;
}

namespace {

// Keras' VarianceScaling forms by class: scale, mode, distribution.
struct Scaled {
  const char* class_name;
  const char* snake;
  double scale;
  const char* mode;
  const char* distribution;
};
constexpr Scaled kScaled[] = {
    {"GlorotUniform", "glorot_uniform", 1.0, "fan_avg", "uniform"},
    {"GlorotNormal", "glorot_normal", 1.0, "fan_avg", "truncated_normal"},
    {"HeNormal", "he_normal", 2.0, "fan_in", "truncated_normal"},
    {"HeUniform", "he_uniform", 2.0, "fan_in", "uniform"},
    {"LecunNormal", "lecun_normal", 1.0, "fan_in", "truncated_normal"},
    {"LecunUniform", "lecun_uniform", 1.0, "fan_in", "uniform"},
};
constexpr std::pair<const char*, const char*> kPlain[] = {
    {"VarianceScaling", "variance_scaling"}, {"RandomNormal", "random_normal"},
    {"TruncatedNormal", "truncated_normal"}, {"RandomUniform", "random_uniform"},
    {"Zeros", "zeros"}, {"Ones", "ones"}, {"Constant", "constant"},
    {"Orthogonal", "orthogonal"}, {"Identity", "identity"},
};

// N(0, 1) from two 53-bit uniforms (Box-Muller).
double standard_normal(Rng& rng) {
  const double u1 = (static_cast<double>(rng.next_u64() >> 11) + 1.0) * 0x1p-53;  // (0, 1]
  const double u2 = static_cast<double>(rng.next_u64() >> 11) * 0x1p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}
// N(0, 1) drawn again beyond two standard deviations (Keras' truncated normal).
double truncated_standard_normal(Rng& rng) {
  for (;;)
    if (const double z = standard_normal(rng); std::fabs(z) <= 2.0) return z;
}

// Keras' Orthogonal: the weight as a [rows, cols] matrix (rows the product of
// all but its last axis), from the Q of a QR of a normal matrix of the
// taller of that shape and its transpose, so that its columns (rows, where
// it is wide) are orthonormal, times gain. Keras multiplies Q's columns by
// the signs of R's diagonal to make Q uniform over the orthogonal
// matrices; Gram-Schmidt's R has a positive diagonal, so its Q is that one
// already. Each column is orthogonalised twice (Gram-Schmidt loses
// orthogonality in one pass).
std::vector<float> orthogonal(const Shape& shape, double gain, Rng& rng) {
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i) rows *= shape[i];
  const int64_t cols = shape.back(), m = std::max(rows, cols), n = std::min(rows, cols);
  std::vector<double> q(static_cast<size_t>(m * n));  // column j at q[j * m]
  for (double& v : q) v = standard_normal(rng);
  for (int64_t j = 0; j < n; ++j) {
    double* v = q.data() + j * m;
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t i = 0; i < j; ++i) {
        const double* u = q.data() + i * m;
        double r = 0;
        for (int64_t k = 0; k < m; ++k) r += u[k] * v[k];
        for (int64_t k = 0; k < m; ++k) v[k] -= r * u[k];
      }
    double norm = 0;
    for (int64_t k = 0; k < m; ++k) norm += v[k] * v[k];
    norm = std::sqrt(norm);
    if (!(norm > 0)) throw RuntimeError("Orthogonal: a rank-deficient normal draw");
    for (int64_t k = 0; k < m; ++k) v[k] /= norm;
  }
  // Element (r, c) of the [rows, cols] weight: Q's (r, c), or (c, r) where Q is the transpose's.
  std::vector<float> out(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[static_cast<size_t>(r * cols + c)] =
          static_cast<float>(gain * (rows >= cols ? q[static_cast<size_t>(c * m + r)] : q[static_cast<size_t>(r * m + c)]));
  return out;
}

}  // namespace

KerasInitializer keras_initializer(const std::string& class_name) {
  KerasInitializer k;
  for (const Scaled& s : kScaled)
    if (class_name == s.class_name || class_name == s.snake) {
      k.class_name = s.class_name;
      k.scale = s.scale;
      k.mode = s.mode;
      k.distribution = s.distribution;
      return k;
    }
  for (const auto& [cls, snake] : kPlain)
    if (class_name == cls || class_name == snake) {
      k.class_name = cls;
      return k;
    }
  throw UsageError("initializer " + class_name + "; supported: " + keras_initializer_names());
}

const char* keras_initializer_names() {
  return "GlorotUniform, GlorotNormal, HeNormal, HeUniform, LecunNormal, LecunUniform, VarianceScaling, "
         "RandomNormal, TruncatedNormal, RandomUniform, Zeros, Ones, Constant, Orthogonal, Identity";
}

std::string initializer_shape_error(const KerasInitializer& init, const Shape& shape) {
  const std::string& c = init.class_name;
  if ((c == "Orthogonal" && shape.size() < 2) || (c == "Identity" && shape.size() != 2))
    return "the " + c + " initializer takes " + (c == "Identity" ? "2-D" : "2-D or larger") +
           " weights (Keras' rule); this one is " + shape_string(shape);
  return {};
}

std::vector<float> initial_values(const KerasInitializer& init, const Shape& shape, Rng& rng) {
  const std::string& c = init.class_name;
  if (const std::string why = initializer_shape_error(init, shape); !why.empty()) throw UsageError(why);
  if (c == "Orthogonal") return orthogonal(shape, init.gain, rng);
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  if (c == "Identity") {
    for (int64_t i = 0; i < std::min(shape[0], shape[1]); ++i) v[static_cast<size_t>(i * shape[1] + i)] = static_cast<float>(init.gain);
  } else if (c == "Zeros" || c == "Ones" || c == "Constant") {
    std::fill(v.begin(), v.end(), c == "Zeros" ? 0.0f : c == "Ones" ? 1.0f : static_cast<float>(init.value));
  } else if (c == "RandomNormal" || c == "TruncatedNormal") {
    for (float& x : v)
      x = static_cast<float>(init.mean +
                             init.stddev * (c == "RandomNormal" ? standard_normal(rng) : truncated_standard_normal(rng)));
  } else if (c == "RandomUniform") {
    for (float& x : v) x = static_cast<float>(init.minval + (init.maxval - init.minval) * (rng.next_u64() >> 11) * 0x1p-53);
  } else {  // variance scaling
    const auto [fan_in, fan_out] =
        shape.size() >= 2 ? compute_fans(shape)
                          : std::pair<double, double>{shape.empty() ? 1.0 : static_cast<double>(shape[0]),
                                                      shape.empty() ? 1.0 : static_cast<double>(shape[0])};
    const double n = init.mode == "fan_in" ? fan_in : init.mode == "fan_out" ? fan_out : (fan_in + fan_out) / 2.0;
    const double scale = init.scale / std::max(1.0, n);
    if (init.distribution == "uniform") {
      const double limit = std::sqrt(3.0 * scale);
      for (float& x : v) x = static_cast<float>(limit * (2.0 * ((rng.next_u64() >> 11) * 0x1p-53) - 1.0));
    } else if (init.distribution == "untruncated_normal") {
      const double stddev = std::sqrt(scale);
      for (float& x : v) x = static_cast<float>(stddev * standard_normal(rng));
    } else {
      // The standard deviation of N(0, 1) cut at +-2, which Keras divides out.
      const double stddev = std::sqrt(scale) / 0.87962566103423978;
      for (float& x : v) x = static_cast<float>(stddev * truncated_standard_normal(rng));
    }
  }
  return v;
}

Tensor make_tensor(Device& device, const Shape& shape, const std::vector<float>& values) {
  return Tensor::from_vector<float>(device, AXON_FLOAT32, shape, values);
}

Tensor zeros(Device& device, const Shape& shape) {
  return make_tensor(device, shape, std::vector<float>(static_cast<size_t>(numel(shape)), 0.0f));
}

}  // namespace axon::nn
