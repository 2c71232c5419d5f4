// TensorFlow's stateless random numbers as tests/api/goldens/*.txt hold them
// (tools/tf-goldens/stateless_normal.py): a line "case <dims> seed <s0>,<s1>"
// per case, then the values' float32 bits in hex.
#pragma once

#include <array>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace axon::test {

struct StatelessGolden {
  std::vector<int64_t> shape;
  std::array<int64_t, 2> seed{};
  std::vector<uint32_t> bits;
};

// The cases of `path`; none when it cannot be read.
inline std::vector<StatelessGolden> read_stateless_goldens(const std::string& path) {
  std::ifstream in(path);
  std::vector<StatelessGolden> cases;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    if (line.rfind("case ", 0) == 0) {
      std::string tag, dims, seed_tag, seeds;
      words >> tag >> dims >> seed_tag >> seeds;
      StatelessGolden g;
      std::istringstream d(dims);
      for (std::string x; std::getline(d, x, ',');) g.shape.push_back(std::stoll(x));
      const size_t comma = seeds.find(',');
      g.seed = {std::stoll(seeds.substr(0, comma)), std::stoll(seeds.substr(comma + 1))};
      cases.push_back(g);
      continue;
    }
    if (cases.empty()) return {};  // values before any case: not a golden file
    for (std::string hex; words >> hex;) cases.back().bits.push_back(static_cast<uint32_t>(std::stoul(hex, nullptr, 16)));
  }
  return cases;
}

}  // namespace axon::test
