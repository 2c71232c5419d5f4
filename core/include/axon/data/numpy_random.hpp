// NumPy's legacy RandomState(seed).shuffle(list), which Keras'
// image_dataset_from_directory uses to split files into training and
// validation: MT19937 seeded as init_genrand(seed), then Fisher-Yates from
// the last element down, each index drawn by masked rejection
// (random_interval). The same seed gives the same order as NumPy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace axon::data {

class NumpyRandomState {
 public:
  explicit NumpyRandomState(uint32_t seed);
  uint32_t next32();
  // Uniform in [0, max], as NumPy's random_interval (max < 2^32).
  uint32_t interval(uint32_t max);
  template <class T>
  void shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i-- > 1;) std::swap(v[i], v[interval(static_cast<uint32_t>(i))]);
  }

 private:
  uint32_t mt_[624];
  int pos_ = 624;
};

}  // namespace axon::data
