// Throughput of the augmentation layers' image arithmetic on one core
// (axon/data/image_transform.hpp, what RandomTranslation, RandomRotation,
// RandomZoom, RandomContrast, RandomFlip and RandomCrop run per image):
// images/s and ns per output value at Fashion-MNIST's 28x28x1 and a photo's
// 224x224x3, each transform repeated for about half a second.
// Usage: axon-bench-augment
#include <axon/data/image_transform.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numbers>
#include <vector>

using namespace axon;

namespace {

// Calls f until half a second has passed; returns calls per second.
double rate(const std::function<void()>& f) {
  using Clock = std::chrono::steady_clock;
  int64_t calls = 0;
  const auto t0 = Clock::now();
  double seconds = 0;
  while (seconds < 0.5) {
    for (int i = 0; i < 16; ++i) f();
    calls += 16;
    seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  return static_cast<double>(calls) / seconds;
}

}  // namespace

int main() {
  std::printf("%-40s %14s %14s\n", "transform (one core)", "images/s", "ns per value");
  for (const data::ImageSize size : {data::ImageSize{28, 28, 1}, data::ImageSize{224, 224, 3}}) {
    std::vector<float> in(static_cast<size_t>(size.floats())), out(in.size());
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i * 37) % 255) / 255.0f;
    const float angle = 0.3f, cx = 0.5f * static_cast<float>(size.width - 1), cy = 0.5f * static_cast<float>(size.height - 1);
    const float c = std::cos(angle), s = std::sin(angle);
    const data::ProjectiveTransform rotation{c, -s, cx - cx * c + cy * s, s, c, cy - cx * s - cy * c, 0, 0};
    const data::ProjectiveTransform shift{1, 0, -2.4f, 0, 1, 1.7f, 0, 0};
    struct Case {
      const char* name;
      std::function<void()> run;
    };
    const std::vector<Case> cases = {
        {"rotation, bilinear, reflect", [&] {
           data::projective_transform(in.data(), size, rotation, data::Interpolation::bilinear, data::FillMode::reflect, 0,
                                      out.data());
         }},
        {"rotation, bilinear, constant", [&] {
           data::projective_transform(in.data(), size, rotation, data::Interpolation::bilinear, data::FillMode::constant,
                                      0, out.data());
         }},
        {"translation, nearest, wrap", [&] {
           data::projective_transform(in.data(), size, shift, data::Interpolation::nearest, data::FillMode::wrap, 0,
                                      out.data());
         }},
        {"contrast", [&] { data::adjust_contrast(in.data(), size, 1.3f, 0, 1, out.data()); }},
        {"flip, both ways", [&] { data::flip(in.data(), size, true, true, out.data()); }},
        {"crop to 7/8", [&] {
           data::crop(in.data(), size, size.height / 16, size.width / 16, size.height * 7 / 8, size.width * 7 / 8,
                      out.data());
         }},
    };
    for (const Case& k : cases) {
      const double per_second = rate(k.run);
      char what[64];
      std::snprintf(what, sizeof what, "%s, %lldx%lldx%lld", k.name, static_cast<long long>(size.height),
                    static_cast<long long>(size.width), static_cast<long long>(size.channels));
      std::printf("%-40s %14.0f %14.2f\n", what, per_second, 1e9 / per_second / static_cast<double>(size.floats()));
    }
  }
}
