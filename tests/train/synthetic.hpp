// A learnable synthetic image set for model tests that must not depend on the
// installed data set: class k is a bright 6x6 square at a class-specific
// place on a noisy 28x28 background.
#pragma once

#include <axon/data/batches.hpp>
#include <axon/data/mnist.hpp>
#include <axon/nn/random.hpp>

namespace axon::test {

inline data::ImageSet synthetic_set(int64_t n, uint64_t seed) {
  data::ImageSet s;
  s.count = n;
  s.rows = 28;
  s.cols = 28;
  s.images.resize(static_cast<size_t>(n * 784));
  s.labels.resize(static_cast<size_t>(n));
  nn::Rng rng(seed);
  for (int64_t i = 0; i < n; ++i) {
    const int k = static_cast<int>(rng.below(10));
    s.labels[static_cast<size_t>(i)] = static_cast<uint8_t>(k);
    uint8_t* img = s.images.data() + i * 784;
    for (int p = 0; p < 784; ++p) img[p] = static_cast<uint8_t>(rng.below(90));
    const int top = 2 + (k / 5) * 12 + static_cast<int>(rng.below(3));
    const int left = 1 + (k % 5) * 5 + static_cast<int>(rng.below(2));
    for (int r = top; r < top + 6; ++r)
      for (int c = left; c < left + 6 && c < 28; ++c) img[r * 28 + c] = static_cast<uint8_t>(200 + rng.below(56));
  }
  return s;
}

// Samples [first, first + n) of a set as a host batch, in order.
inline data::HostBatch batch_of(const data::ImageSet& s, int64_t first, int64_t n) {
  const int64_t per = s.image_bytes();
  data::HostBatch b;
  b.size = n;
  b.images.assign(s.images.begin() + first * per, s.images.begin() + (first + n) * per);
  for (int64_t i = 0; i < n; ++i) b.labels.push_back(s.labels[static_cast<size_t>(first + i)]);
  return b;
}

}  // namespace axon::test
