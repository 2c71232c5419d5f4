// TensorFlow's window arithmetic (axon::window_axis, op_geometry.hpp) and the
// way the CUDA plugin maps it onto cuDNN: symmetric padding pad_before plus one
// explicit extra row/column at the end must give cuDNN's output size formula
// exactly TensorFlow's output size, for every small shape. The pooling path
// (explicit border of pad_total, no cuDNN padding) is checked the same way.
#include <catch2/catch.hpp>

#include <axon/op_geometry.hpp>

using axon::window_axis;

TEST_CASE("TF windows map onto cuDNN's symmetric padding", "[cuda][windows]") {
  int checked = 0;
  for (int64_t in = 1; in <= 20; ++in)
    for (int64_t k = 1; k <= 6; ++k)
      for (int64_t stride = 1; stride <= 3; ++stride)
        for (int64_t dil = 1; dil <= 3; ++dil)
          for (axon_padding pad : {AXON_PADDING_SAME, AXON_PADDING_VALID}) {
            const auto w = window_axis(in, k, stride, dil, pad);
            const int64_t eff = (k - 1) * dil + 1;
            INFO("in " << in << " k " << k << " stride " << stride << " dil " << dil << " SAME " << (pad == AXON_PADDING_SAME));
            if (pad == AXON_PADDING_SAME) {
              REQUIRE(w.out == (in + stride - 1) / stride);  // ceil(in / stride)
            } else {
              REQUIRE(w.out == (in >= eff ? (in - eff + stride) / stride : 0));  // ceil((in - eff + 1) / stride)
              REQUIRE(w.pad_total == 0);
            }
            REQUIRE((w.extra() == 0 || w.extra() == 1));
            REQUIRE(w.pad_total - w.pad_before >= w.pad_before);  // the larger half at the end, as TF
            if (w.out == 0) continue;
            // Convolution: input grown by `extra`, cuDNN pads pad_before on both sides.
            const int64_t cudnn_out = (in + w.extra() + 2 * w.pad_before - eff) / stride + 1;
            REQUIRE(cudnn_out == w.out);
            // The last window must start inside the real input or its padding.
            REQUIRE((w.out - 1) * stride + eff <= in + w.pad_total);
            // Pooling: the whole padding is an explicit border, no cuDNN padding.
            if (dil == 1) REQUIRE((in + w.pad_total - k) / stride + 1 == w.out);
            ++checked;
          }
  CHECK(checked > 1000);  // of 2160 combinations, those with an output
}
