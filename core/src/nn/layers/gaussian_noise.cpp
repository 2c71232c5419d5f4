// GaussianNoise and GaussianDropout: StatelessRandomNormalV2 draws the noise
// on the device (its key from the layer's stream, a new one each training
// forward), then AddN or Mul; backward dy, or dy times the same factors.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

#include <cmath>

namespace axon::nn {

GaussianNoise::GaussianNoise(Kind kind, float amount, std::string name)
    : Layer(std::move(name)), kind_(kind), amount_(amount) {
  if (kind == Kind::additive && !(amount >= 0 && std::isfinite(amount)))
    throw UsageError("GaussianNoise: stddev must be a number of at least 0");
  if (kind == Kind::multiplicative && !(amount >= 0 && amount < 1))
    throw UsageError("GaussianDropout: rate must be from 0 to below 1");
}

void GaussianNoise::write_config(KerasConfigWriter& c) const {
  c.number(kind_ == Kind::additive ? "stddev" : "rate", amount_);
  c.null("seed");
}

void GaussianNoise::on_build(Device&, Rng& rng) { keys_ = Rng(rng.next_u64()); }

Tensor GaussianNoise::forward(std::span<const Tensor> in) {
  const Tensor& x = in[0];
  factors_ = Tensor();
  if (!training() || amount_ <= 0.0f) return x;
  axon_random_attrs a{};
  a.struct_size = sizeof a;
  const uint64_t key = keys_.next_u64();
  a.key[0] = static_cast<uint32_t>(key);
  a.key[1] = static_cast<uint32_t>(key >> 32);
  const bool additive = kind_ == Kind::additive;
  a.scale = additive ? amount_ : static_cast<float>(std::sqrt(double(amount_) / (1.0 - double(amount_))));
  a.offset = additive ? 0.0f : 1.0f;
  Tensor noise = take_like(x);
  ops::stateless_random_normal(noise, a, name());
  Tensor y = take_like(x);
  if (additive) {
    ops::add_n({&x, &noise}, y, name());
  } else {
    ops::mul(x, noise, y, name());
    if (remembers()) factors_ = noise;
  }
  return y;
}

void GaussianNoise::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  if (need_dx[0]) {
    if (!factors_.defined()) {
      dx[0] = dy;
    } else {
      dx[0] = take_like(dy);
      ops::mul(dy, factors_, dx[0], name());
    }
  }
  factors_ = Tensor();
}

namespace {

std::unique_ptr<Layer> gaussian_noise_from_keras(const KerasLayerConfig& l) {
  if (!l.has("stddev") || !l.at("stddev").is_number()) l.fail("has no stddev");
  const double stddev = l.at("stddev").get<double>();
  if (!(stddev >= 0 && stddev <= 1e30)) l.fail("stddev is " + json_text(l.at("stddev")) + ", not a number of at least 0");
  return std::make_unique<GaussianNoise>(GaussianNoise::Kind::additive, static_cast<float>(stddev), l.name());
}
std::unique_ptr<Layer> gaussian_dropout_from_keras(const KerasLayerConfig& l) {
  return std::make_unique<GaussianNoise>(GaussianNoise::Kind::multiplicative, l.rate(), l.name());
}

const LayerEntry kGaussianNoiseEntry{"GaussianNoise", gaussian_noise_from_keras,
                                     "stddev (the noise is axon's own draw)"};
const LayerEntry kGaussianDropoutEntry{"GaussianDropout", gaussian_dropout_from_keras,
                                       "rate (the noise is axon's own draw)"};
const LayerRegistration kGaussianNoiseRegistered(kGaussianNoiseEntry);
const LayerRegistration kGaussianDropoutRegistered(kGaussianDropoutEntry);

}  // namespace
}  // namespace axon::nn
