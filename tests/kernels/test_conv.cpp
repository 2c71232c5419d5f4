// Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter of the CPU plugin
// against the reference plugin on random shapes: batch 1, odd sizes, VALID
// and SAME, strides 1..3, dilation 2, few and many channels (a filter
// row's floats are read as one run from 8 on), and the CNN's and the small
// ResNet's own shapes.
//
// Tolerance (compare_sum): each output is a float32 sum of products;
// |cpu - ref| <= 16 * 2^-24 * S + 2^-24 |ref|, S being the same op run by the
// reference on the absolute values of the inputs (tests/common/tolerance.hpp).
// _Conv2DBackpropInputAccumulate (dx += the input gradient) is held to the
// same bound against the reference, and to the bits of the CPU's own
// Conv2DBackpropInput followed by AddN.
#include "kernel_test_util.hpp"

using namespace axon::test;

namespace {

struct ConvCase {
  int64_t n, h, w, c, kh, kw, oc;
  int sh, sw, dh, dw;
  axon_padding pad;
};

std::string describe(const ConvCase& k) {
  std::ostringstream s;
  s << "x [" << k.n << "," << k.h << "," << k.w << "," << k.c << "] filter [" << k.kh << "," << k.kw << "," << k.c << ","
    << k.oc << "] stride " << k.sh << "," << k.sw << " dilation " << k.dh << "," << k.dw << " "
    << (k.pad == AXON_PADDING_SAME ? "SAME" : "VALID");
  return s.str();
}

// The CPU's `op` of `in` against the reference's, the bound from the
// reference on the inputs' absolute values.
void check_op(const char* op, const std::vector<HostTensor>& in, const std::vector<int64_t>& out,
              const axon_conv2d_attrs& a) {
  std::vector<HostTensor> abs_in;
  for (const HostTensor& t : in) abs_in.push_back({t.dims, abs_of(t.values)});
  auto want = run_host(ref(), op, in, {out}, &a)[0];
  auto bound = run_host(ref(), op, abs_in, {out}, &a)[0];
  auto got = run_host(cpu(), op, in, {out}, &a)[0];
  auto r = compare_sum(got, want, bound);
  INFO(op << " " << r.report);
  CHECK(r.ok);
}

void check_case(const ConvCase& k, std::mt19937& rng) {
  INFO(describe(k));
  const int64_t oh = out_size(k.h, k.kh, k.sh, k.dh, k.pad), ow = out_size(k.w, k.kw, k.sw, k.dw, k.pad);
  REQUIRE(oh > 0);
  REQUIRE(ow > 0);
  axon_conv2d_attrs a{sizeof(axon_conv2d_attrs), k.sh, k.sw, k.dh, k.dw, k.pad};
  const std::vector<int64_t> xd{k.n, k.h, k.w, k.c}, wd{k.kh, k.kw, k.c, k.oc}, yd{k.n, oh, ow, k.oc};
  HostTensor x{xd, random_floats(rng, numel(xd))}, w{wd, random_floats(rng, numel(wd))}, dy{yd, random_floats(rng, numel(yd))};

  check_op("Conv2D", {x, w}, yd, a);
  check_op("Conv2DBackpropInput", {dy, w}, xd, a);
  {
    HostTensor dx0{xd, random_floats(rng, numel(xd))}, adx0{xd, abs_of(dx0.values)};
    const HostTensor aw{wd, abs_of(w.values)}, ady{yd, abs_of(dy.values)};
    auto want = run_host_in_place(ref(), "_Conv2DBackpropInputAccumulate", {dx0, dy, w}, &a);
    auto bound = run_host_in_place(ref(), "_Conv2DBackpropInputAccumulate", {adx0, ady, aw}, &a);
    auto got = run_host_in_place(cpu(), "_Conv2DBackpropInputAccumulate", {dx0, dy, w}, &a);
    auto r = compare_sum(got, want, bound);
    INFO("_Conv2DBackpropInputAccumulate " << r.report);
    CHECK(r.ok);
    const HostTensor part{xd, run_host(cpu(), "Conv2DBackpropInput", {dy, w}, {xd}, &a)[0]};
    const auto separate = run_host(cpu(), "AddN", {dx0, part}, {xd})[0];
    CHECK(std::memcmp(got.data(), separate.data(), got.size() * sizeof(float)) == 0);
  }
  check_op("Conv2DBackpropFilter", {x, dy}, wd, a);
}

}  // namespace

TEST_CASE("CPU convolutions match the reference on random shapes", "[conv][cpu]") {
  std::mt19937 rng(1234);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int checked = 0;
  while (checked < 60) {
    ConvCase k{};
    k.n = pick(1, 3), k.h = pick(1, 11), k.w = pick(1, 11), k.c = pick(0, 2) == 0 ? pick(7, 20) : pick(1, 6);
    k.kh = pick(1, 4), k.kw = pick(1, 4), k.oc = pick(1, 9);
    k.sh = pick(1, 3), k.sw = pick(1, 3);
    k.dh = pick(0, 3) == 0 ? 2 : 1, k.dw = pick(0, 3) == 0 ? 2 : 1;
    k.pad = pick(0, 1) ? AXON_PADDING_SAME : AXON_PADDING_VALID;
    if (k.pad == AXON_PADDING_VALID && ((k.kh - 1) * k.dh + 1 > k.h || (k.kw - 1) * k.dw + 1 > k.w)) continue;
    check_case(k, rng);
    ++checked;
  }
}

TEST_CASE("CPU convolutions match the reference at the CNN's shapes", "[conv][cpu]") {
  std::mt19937 rng(99);
  // conv1, conv2, conv3 of the guide's CNN (batch reduced to keep the oracle quick).
  check_case({4, 28, 28, 1, 3, 3, 32, 1, 1, 1, 1, AXON_PADDING_VALID}, rng);
  check_case({3, 13, 13, 32, 3, 3, 64, 1, 1, 1, 1, AXON_PADDING_VALID}, rng);
  check_case({2, 5, 5, 64, 3, 3, 64, 1, 1, 1, 1, AXON_PADDING_VALID}, rng);
  // conv3 at batch 16: enough rows that Conv2DBackpropFilter shares out
  // blocks of dW's rows among the threads instead of chunks of rows.
  check_case({16, 5, 5, 64, 3, 3, 64, 1, 1, 1, 1, AXON_PADDING_VALID}, rng);
  // Batch 1, SAME, stride 2, 1x1 (the pointwise fast path), large K (576).
  check_case({1, 13, 13, 32, 3, 3, 64, 2, 2, 1, 1, AXON_PADDING_SAME}, rng);
  check_case({2, 7, 9, 16, 1, 1, 24, 1, 1, 1, 1, AXON_PADDING_VALID}, rng);
  check_case({1, 6, 6, 64, 3, 3, 16, 1, 1, 1, 1, AXON_PADDING_SAME}, rng);
  check_case({2, 9, 8, 3, 5, 5, 4, 1, 1, 1, 1, AXON_PADDING_SAME}, rng);
  check_case({1, 10, 11, 2, 3, 2, 3, 2, 3, 2, 2, AXON_PADDING_SAME}, rng);
}

TEST_CASE("CPU convolutions match the reference at the ResNet's shapes", "[conv][cpu]") {
  // tests/data/keras_resnet.json's convolutions (SAME 3x3 at strides 1 and 2,
  // 1x1 stride-2 projections), batch reduced; batch 5 of 7x7 images puts
  // several images into one tile.
  std::mt19937 rng(2024);
  check_case({2, 28, 28, 1, 3, 3, 16, 1, 1, 1, 1, AXON_PADDING_SAME}, rng);
  check_case({2, 28, 28, 16, 3, 3, 16, 1, 1, 1, 1, AXON_PADDING_SAME}, rng);
  check_case({2, 28, 28, 16, 3, 3, 32, 2, 2, 1, 1, AXON_PADDING_SAME}, rng);
  check_case({2, 28, 28, 16, 1, 1, 32, 2, 2, 1, 1, AXON_PADDING_VALID}, rng);
  check_case({3, 14, 14, 32, 3, 3, 32, 1, 1, 1, 1, AXON_PADDING_SAME}, rng);
  check_case({2, 14, 14, 32, 3, 3, 64, 2, 2, 1, 1, AXON_PADDING_SAME}, rng);
  check_case({5, 7, 7, 64, 3, 3, 64, 1, 1, 1, 1, AXON_PADDING_SAME}, rng);
  check_case({3, 14, 14, 32, 1, 1, 64, 2, 2, 1, 1, AXON_PADDING_VALID}, rng);
  // Strided 1x1 input gradients are written an image at a time, zero where no
  // tap lands: a last row no tap reaches (8 rows at stride 3), unequal strides.
  check_case({2, 8, 9, 5, 1, 1, 7, 3, 2, 1, 1, AXON_PADDING_VALID}, rng);
  check_case({1, 7, 6, 3, 1, 1, 33, 2, 3, 1, 1, AXON_PADDING_SAME}, rng);
}

TEST_CASE("CPU convolutions match the reference at the Inception cell's shapes", "[conv][cpu]") {
  // tests/data/keras_inception.json's branch convolutions, batch reduced: few
  // channels either side, whose input gradient at stride 1 is the forward
  // convolution of dy with the turned filter (SAME, and VALID's full
  // padding), and 1x1 with few filters (the register-blocked product).
  std::mt19937 rng(77);
  check_case({2, 26, 26, 8, 3, 3, 8, 1, 1, 1, 1, AXON_PADDING_SAME}, rng);
  check_case({2, 26, 26, 4, 5, 5, 4, 1, 1, 1, 1, AXON_PADDING_SAME}, rng);
  check_case({2, 12, 13, 4, 5, 4, 6, 1, 1, 1, 1, AXON_PADDING_VALID}, rng);
  check_case({1, 11, 9, 3, 3, 3, 20, 1, 1, 2, 1, AXON_PADDING_SAME}, rng);
  check_case({2, 26, 26, 16, 1, 1, 8, 1, 1, 1, 1, AXON_PADDING_VALID}, rng);
  check_case({2, 26, 26, 16, 1, 1, 4, 1, 1, 1, 1, AXON_PADDING_VALID}, rng);
  // 6,760 rows: the accumulating input gradient adds two chunks of rows
  // (6,144 a chunk at 16 channels), one from each thread's tile.
  check_case({10, 26, 26, 16, 1, 1, 8, 1, 1, 1, 1, AXON_PADDING_VALID}, rng);
}

TEST_CASE("CPU convolutions of one-channel images match the reference", "[conv][cpu]") {
  // The padded-plane kernels (conv_one_channel.cpp): filters of 2 to 25
  // taps (square, rectangular, even with SAME's pad after), output widths
  // below and past the 8-pixel blocks, channels in whole vectors, half and
  // quarter vectors and single floats (5 to 33), 7x7 (past the 25 taps:
  // the gathered kernels), and batches whose filter-gradient rows cross
  // images.
  std::mt19937 rng(4242);
  check_case({3, 9, 11, 1, 3, 3, 16, 1, 1, 1, 1, AXON_PADDING_SAME}, rng);
  check_case({2, 7, 5, 1, 2, 2, 19, 1, 1, 1, 1, AXON_PADDING_SAME}, rng);
  check_case({2, 12, 10, 1, 3, 2, 33, 1, 1, 1, 1, AXON_PADDING_VALID}, rng);
  check_case({1, 10, 13, 1, 5, 5, 8, 1, 1, 1, 1, AXON_PADDING_SAME}, rng);
  check_case({2, 6, 17, 1, 1, 3, 5, 1, 1, 1, 1, AXON_PADDING_SAME}, rng);
  check_case({1, 11, 9, 1, 4, 3, 24, 1, 1, 1, 1, AXON_PADDING_SAME}, rng);
  check_case({5, 8, 8, 1, 3, 3, 32, 1, 1, 1, 1, AXON_PADDING_VALID}, rng);
  check_case({1, 12, 12, 1, 7, 7, 16, 1, 1, 1, 1, AXON_PADDING_SAME}, rng);
}

TEST_CASE("CPU Winograd convolutions match the reference", "[conv][cpu][winograd]") {
  // 3x3 stride-1 convolutions with at least 16 input and output channels and
  // a 7x7 output run as Winograd (plugins/cpu/winograd.cpp): the forward and
  // the input gradient in tiles of 4x2 outputs where 4 rows tile them as
  // tightly as 2 (7, 8, 12, 15, 27 rows here), the filter gradient too from
  // 16 rows on (27), else in tiles of 2x2 (9, 10 rows);
  // odd sizes (partial tiles at the bottom and right edges), SAME and VALID
  // (the input gradient of VALID stays on im2col), batch > 1, channel counts
  // that are no multiple of a vector (the transforms' narrower vectors and
  // single floats), and enough tiles for several chunks and partial
  // filter-gradient sums.
  std::mt19937 rng(4096);
  check_case({3, 9, 11, 17, 3, 3, 19, 1, 1, 1, 1, AXON_PADDING_SAME}, rng);
  check_case({2, 10, 9, 21, 3, 3, 16, 1, 1, 1, 1, AXON_PADDING_VALID}, rng);
  check_case({1, 7, 7, 20, 3, 3, 17, 1, 1, 1, 1, AXON_PADDING_SAME}, rng);
  check_case({2, 9, 10, 16, 3, 3, 35, 1, 1, 1, 1, AXON_PADDING_VALID}, rng);
  check_case({1, 15, 13, 35, 3, 3, 24, 1, 1, 1, 1, AXON_PADDING_SAME}, rng);
  check_case({6, 27, 29, 16, 3, 3, 16, 1, 1, 1, 1, AXON_PADDING_SAME}, rng);
  check_case({3, 12, 12, 64, 3, 3, 72, 1, 1, 1, 1, AXON_PADDING_VALID}, rng);
  check_case({2, 8, 7, 67, 3, 3, 18, 1, 1, 1, 1, AXON_PADDING_SAME}, rng);
}

TEST_CASE("the conv comparison catches a one-tap error", "[conv][selftest]") {
  // The tolerance must be far tighter than the effect of a single wrong tap.
  std::mt19937 rng(7);
  axon_conv2d_attrs a{sizeof(axon_conv2d_attrs), 1, 1, 1, 1, AXON_PADDING_VALID};
  HostTensor x{{2, 13, 13, 32}, random_floats(rng, 2 * 13 * 13 * 32)};
  HostTensor w{{3, 3, 32, 64}, random_floats(rng, 3 * 3 * 32 * 64)};
  HostTensor w2 = w;
  w2.values[5 * 64 + 3] += 0.05f;  // one filter tap slightly off
  auto want = run_host(ref(), "Conv2D", {x, w}, {{2, 11, 11, 64}}, &a)[0];
  auto bound = run_host(ref(), "Conv2D", {HostTensor{x.dims, abs_of(x.values)}, HostTensor{w.dims, abs_of(w.values)}},
                        {{2, 11, 11, 64}}, &a)[0];
  auto wrong = run_host(cpu(), "Conv2D", {x, w2}, {{2, 11, 11, 64}}, &a)[0];
  CHECK_FALSE(compare_sum(wrong, want, bound).ok);
}

TEST_CASE("CPU Winograd filter gradients from mostly zero gradients match the reference", "[conv][cpu][winograd]") {
  // A relu or a max pooling after the convolution zeroes most of dy. The
  // rounding of a Winograd sum follows its tiles' magnitudes while S shrinks
  // with the zeros, so sparse gradients are the filter gradient's hardest
  // case: tiles of 4x2 from 16 output rows on (28, 24 and 16 rows here),
  // 2x2 below (12 and 7 rows) and where 4 rows would tile more (13).
  std::mt19937 rng(512);
  for (const double kept : {0.5, 0.25, 0.1}) {
    for (const ConvCase& k : {ConvCase{6, 28, 28, 16, 3, 3, 16, 1, 1, 1, 1, AXON_PADDING_SAME},
                              ConvCase{4, 24, 24, 64, 3, 3, 64, 1, 1, 1, 1, AXON_PADDING_SAME},
                              ConvCase{8, 16, 16, 64, 3, 3, 64, 1, 1, 1, 1, AXON_PADDING_SAME},
                              ConvCase{8, 12, 12, 64, 3, 3, 64, 1, 1, 1, 1, AXON_PADDING_SAME},
                              ConvCase{8, 7, 7, 64, 3, 3, 64, 1, 1, 1, 1, AXON_PADDING_SAME},
                              ConvCase{3, 15, 13, 35, 3, 3, 24, 1, 1, 1, 1, AXON_PADDING_VALID}}) {
      INFO(describe(k) << ", dy nonzero at " << kept);
      axon_conv2d_attrs a{sizeof(axon_conv2d_attrs), k.sh, k.sw, k.dh, k.dw, k.pad};
      const int64_t oh = out_size(k.h, k.kh, k.sh, k.dh, k.pad), ow = out_size(k.w, k.kw, k.sw, k.dw, k.pad);
      const std::vector<int64_t> xd{k.n, k.h, k.w, k.c}, wd{k.kh, k.kw, k.c, k.oc}, yd{k.n, oh, ow, k.oc};
      HostTensor x{xd, random_floats(rng, numel(xd))}, dy{yd, random_floats(rng, numel(yd))};
      std::bernoulli_distribution keep(kept);
      for (float& v : dy.values)
        if (!keep(rng)) v = 0.0f;
      check_op("Conv2DBackpropFilter", {x, dy}, wd, a);
    }
  }
}
