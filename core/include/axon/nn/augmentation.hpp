// Keras' image augmentation layers (RandomFlip, RandomTranslation,
// RandomRotation, RandomZoom, RandomShear, RandomCrop, RandomContrast,
// RandomBrightness, RandomGrayscale, RandomInvert, Solarization,
// RandomColorDegeneration, RandomPosterization, RandomSharpness,
// RandomSaturation, RandomHue, RandomColorJitter, RandomGaussianBlur): active in
// training only, the identity at inference (RandomCrop crops the centre
// there, so the model's shapes hold); and its image preprocessing layers
// Resizing, CenterCrop and AutoContrast, which draw nothing and do the same
// in training and at inference. Each runs on the host, one image at a
// time, with Keras' arithmetic
// (axon/data/image_transform.hpp): the batch is read back, transformed and
// sent up again, which costs a copy on a GPU and keeps the op table as it is.
//
// Draws are keyed, not streamed: a sample's draw depends only on the layer's
// seed, the training step (counted over the whole run) and the sample's
// place in the step's global batch. So a run resumed from a checkpoint draws
// what the uninterrupted run drew, and so does a run split over more
// replicas. The seed follows --seed, or the layer's own Keras `seed`.
//
// No gradient flows through them: a model that puts one after a layer with
// weights is refused when it is built (Keras users put them first).
#pragma once

#include <axon/data/image_transform.hpp>
#include <axon/nn/layer.hpp>

#include <array>
#include <optional>
#include <vector>

namespace axon::nn {

class ImageAugmentation : public Layer {
 public:
  // What one draw decides: up to four numbers (angle, shifts, zooms, ...).
  using Draw = std::array<float, 4>;

  ImageAugmentation(std::string name, std::optional<int64_t> seed) : Layer(std::move(name)), keras_seed_(seed) {}
  Shape output_shape(std::span<const Shape> inputs) const override;
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override;
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override;
  bool augments() const override { return true; }

  // One draw from a random stream: a sample's, or the batch's where
  // one_draw_per_batch().
  virtual Draw draw(Rng& rng) const = 0;
  // One image of input_shape() into out (output_shape()), as `d` says.
  virtual void transform(const float* in, const Draw& d, float* out) const = 0;
  // RandomCrop: one crop for the whole batch, as Keras draws it.
  virtual bool one_draw_per_batch() const { return false; }
  // The part of each sample's draw that Keras draws once per batch
  // (RandomGaussianBlur's sigmas): drawn from the batch's stream, then put
  // into every sample's draw by with_batch_part(); nullopt: none.
  virtual std::optional<Draw> batch_part(Rng&) const { return std::nullopt; }
  virtual void with_batch_part(const Draw&, Draw&) const {}
  // At inference: the identity, unless the layer says otherwise.
  virtual bool changes_at_inference() const { return false; }
  virtual void infer(const float* in, float* out) const;
  // The stream of a sample's draw (sample -1: the batch's).
  Rng stream(int64_t step, int64_t sample) const;

 protected:
  void on_build(Device& device, Rng& rng) override;
  void write_seed(KerasConfigWriter& c) const;
  data::ImageSize image_size() const;
  std::optional<int64_t> keras_seed() const { return keras_seed_; }

 private:
  std::optional<int64_t> keras_seed_;
  uint64_t seed_ = 0;
  int64_t own_steps_ = 0;  // training forwards of a layer used outside a model
  std::vector<float> in_, out_;
};

// A factor range [lower, upper] as Keras keeps it (written back as a pair).
struct FactorRange {
  double lower = 0, upper = 0;
};

// RandomFlip(mode): "horizontal", "vertical" or "horizontal_and_vertical"
// (Keras 3 flips both ways together, on one draw).
class RandomFlip : public ImageAugmentation {
 public:
  RandomFlip(std::string mode, std::string name = "random_flip", std::optional<int64_t> seed = std::nullopt);
  const char* type() const override { return "RandomFlip"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Draw draw(Rng& rng) const override;
  void transform(const float* in, const Draw& d, float* out) const override;

 private:
  std::string mode_;
  bool horizontal_, vertical_;
};

// What the layers built on TensorFlow's projective transform share.
struct TransformFill {
  data::FillMode fill_mode = data::FillMode::reflect;
  data::Interpolation interpolation = data::Interpolation::bilinear;
  float fill_value = 0;
};

class ProjectiveAugmentation : public ImageAugmentation {
 public:
  ProjectiveAugmentation(std::string name, std::optional<int64_t> seed, TransformFill fill)
      : ImageAugmentation(std::move(name), seed), fill_(fill) {}
  void transform(const float* in, const Draw& d, float* out) const override;
  // The transform for a draw, computed as Keras computes it (float32).
  virtual data::ProjectiveTransform matrix(const Draw& d) const = 0;
  const TransformFill& fill() const { return fill_; }

 protected:
  void write_fill(KerasConfigWriter& c) const;

 private:
  TransformFill fill_;
};

// RandomTranslation(height_factor, width_factor): shifts by a fraction of
// the height and width drawn from each range.
class RandomTranslation : public ProjectiveAugmentation {
 public:
  RandomTranslation(FactorRange height, FactorRange width, TransformFill fill = {},
                    std::string name = "random_translation", std::optional<int64_t> seed = std::nullopt);
  const char* type() const override { return "RandomTranslation"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Draw draw(Rng& rng) const override;  // {height fraction, width fraction}
  data::ProjectiveTransform matrix(const Draw& d) const override;

 private:
  FactorRange height_, width_;
};

// RandomShear(x_factor, y_factor): per image shears u and v drawn from each
// range, both negated on a coin's throw, about the image's top-left corner
// (Keras' matrix [1, u, 0, v, 1, 0]).
class RandomShear : public ProjectiveAugmentation {
 public:
  RandomShear(FactorRange x, FactorRange y, TransformFill fill = {}, std::string name = "random_shear",
              std::optional<int64_t> seed = std::nullopt);
  const char* type() const override { return "RandomShear"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Draw draw(Rng& rng) const override;  // {x shear, y shear}, the sign applied
  data::ProjectiveTransform matrix(const Draw& d) const override;

 private:
  FactorRange x_, y_;
};

// RandomRotation(factor): turns about the centre by an angle drawn from
// [lower, upper] x 360 degrees.
class RandomRotation : public ProjectiveAugmentation {
 public:
  RandomRotation(FactorRange factor, TransformFill fill = {}, std::string name = "random_rotation",
                 std::optional<int64_t> seed = std::nullopt);
  const char* type() const override { return "RandomRotation"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Draw draw(Rng& rng) const override;  // {degrees}
  data::ProjectiveTransform matrix(const Draw& d) const override;

 private:
  FactorRange factor_;
};

// RandomZoom(height_factor, width_factor): scales about the centre by
// 1 + a draw from each range (the height's for both without width_factor);
// a positive factor zooms out.
class RandomZoom : public ProjectiveAugmentation {
 public:
  RandomZoom(FactorRange height, std::optional<FactorRange> width, TransformFill fill = {},
             std::string name = "random_zoom", std::optional<int64_t> seed = std::nullopt);
  const char* type() const override { return "RandomZoom"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Draw draw(Rng& rng) const override;  // {height zoom, width zoom}
  data::ProjectiveTransform matrix(const Draw& d) const override;

 private:
  FactorRange height_;
  std::optional<FactorRange> width_;
};

// RandomCrop(height, width): in training one random window of that size per
// batch (Keras draws one); an image not larger both ways is cropped at the
// centre to the window's aspect ratio and resized. At inference the centre
// crop, resized. (Keras 3.15 passes images through uncropped at inference,
// so its own predict fails on a model with Flatten after RandomCrop; this is
// Keras 2's behaviour.)
class RandomCrop : public ImageAugmentation {
 public:
  RandomCrop(int64_t height, int64_t width, std::string name = "random_crop",
             std::optional<int64_t> seed = std::nullopt);
  const char* type() const override { return "RandomCrop"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Shape output_shape(std::span<const Shape> inputs) const override;
  using ImageAugmentation::output_shape;
  Draw draw(Rng& rng) const override;  // {top, left} (as floats)
  void transform(const float* in, const Draw& d, float* out) const override;
  bool one_draw_per_batch() const override { return true; }
  bool changes_at_inference() const override;
  void infer(const float* in, float* out) const override;

 private:
  Draw centre() const;
  int64_t height_, width_;
  mutable std::vector<float> window_;
};

// What Resizing and CenterCrop share: a height x width output, no draw,
// the same image in training and at inference.
class FixedSizeImage : public ImageAugmentation {
 public:
  // what: the class's name, for the message refusing a size below 1.
  FixedSizeImage(const char* what, int64_t height, int64_t width, std::string name);
  Shape output_shape(std::span<const Shape> inputs) const override;
  using ImageAugmentation::output_shape;
  Draw draw(Rng&) const override { return {}; }
  void transform(const float* in, const Draw&, float* out) const override { infer(in, out); }
  bool changes_at_inference() const override { return true; }

 protected:
  void write_size(KerasConfigWriter& c) const;
  int64_t height_, width_;
  mutable std::vector<float> window_;  // a crop, before it is resized
};

// Resizing(height, width, interpolation, crop_to_aspect_ratio): every image
// to height x width, bilinear or nearest (TensorFlow's tf.image.resize,
// antialias off), after cropping the centre window of the target's aspect
// ratio where asked.
class Resizing : public FixedSizeImage {
 public:
  Resizing(int64_t height, int64_t width, data::Interpolation interpolation = data::Interpolation::bilinear,
           bool crop_to_aspect_ratio = false, std::string name = "resizing");
  const char* type() const override { return "Resizing"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  void infer(const float* in, float* out) const override;

 private:
  data::Interpolation interpolation_;
  bool crop_to_aspect_ratio_;
};

// CenterCrop(height, width): the centre height x width window of an image
// at least that large both ways, else (Keras' smart_resize) the centre
// window of the target's aspect ratio resized bilinearly to it.
class CenterCrop : public FixedSizeImage {
 public:
  CenterCrop(int64_t height, int64_t width, std::string name = "center_crop");
  const char* type() const override { return "CenterCrop"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  void infer(const float* in, float* out) const override;
};

// AutoContrast(value_range): each channel of each image stretched from its
// own [min, max] to the whole value_range (on Keras' [0, 255] scale, in
// float32); a channel whose values are all equal passes unchanged. No
// draw: the same in training and at inference.
class AutoContrast : public ImageAugmentation {
 public:
  AutoContrast(double lo = 0, double hi = 255, std::string name = "auto_contrast");
  const char* type() const override { return "AutoContrast"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Draw draw(Rng&) const override { return {}; }
  void transform(const float* in, const Draw&, float* out) const override { infer(in, out); }
  bool changes_at_inference() const override { return true; }
  void infer(const float* in, float* out) const override;

 private:
  double lo_, hi_;  // sorted, as Keras keeps them
};

// RandomContrast(factor, value_range): per image, (x - mean) * f + mean with
// f drawn from [1 - lower, 1 + upper], clipped to value_range (Keras 3: a
// single number f is the range [0, f]).
class RandomContrast : public ImageAugmentation {
 public:
  RandomContrast(FactorRange factor, float lo = 0, float hi = 255, std::string name = "random_contrast",
                 std::optional<int64_t> seed = std::nullopt);
  const char* type() const override { return "RandomContrast"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Draw draw(Rng& rng) const override;  // {factor}
  void transform(const float* in, const Draw& d, float* out) const override;
  // One image for the draw (RandomColorJitter's step too).
  static void apply(const float* in, const data::ImageSize& size, float draw, float lo, float hi, float* out);

 private:
  FactorRange factor_;
  float lo_, hi_;
};

// RandomBrightness(factor, value_range): per image, x + u (hi - lo) with u
// drawn from [lower, upper] (a single number f: [-f, f]), clipped to
// value_range [lo, hi].
class RandomBrightness : public ImageAugmentation {
 public:
  RandomBrightness(FactorRange factor, double lo = 0, double hi = 255, std::string name = "random_brightness",
                   std::optional<int64_t> seed = std::nullopt);
  const char* type() const override { return "RandomBrightness"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Draw draw(Rng& rng) const override;  // {u}
  void transform(const float* in, const Draw& d, float* out) const override;
  // One image for the draw (RandomColorJitter's step too).
  static void apply(const float* in, const data::ImageSize& size, float draw, double lo, double hi, float* out);

 private:
  FactorRange factor_;
  double lo_, hi_;  // as Keras keeps them: the range's width is taken in double
};

// RandomGrayscale(factor): per image, where a uniform draw falls below
// factor, the RGB image's grey (tf.image.rgb_to_grayscale) in all three
// channels; a grey image passes unchanged, other channel counts are refused.
class RandomGrayscale : public ImageAugmentation {
 public:
  explicit RandomGrayscale(double factor = 0.5, std::string name = "random_grayscale",
                           std::optional<int64_t> seed = std::nullopt);
  const char* type() const override { return "RandomGrayscale"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  using ImageAugmentation::output_shape;
  Shape output_shape(std::span<const Shape> inputs) const override;
  Draw draw(Rng& rng) const override;  // {u}: grey where u < factor
  void transform(const float* in, const Draw& d, float* out) const override;

 private:
  double factor_;
};

// RandomInvert(factor, value_range): per image a chance p drawn from
// [lower, upper] (a single number f: [0, f]) and a uniform u; where u < p,
// value_range's second value minus x (Keras' complement, whatever the first).
class RandomInvert : public ImageAugmentation {
 public:
  RandomInvert(FactorRange factor, double first = 0, double second = 255, std::string name = "random_invert",
               std::optional<int64_t> seed = std::nullopt);
  const char* type() const override { return "RandomInvert"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Draw draw(Rng& rng) const override;  // {p, u}: inverted where u < p
  void transform(const float* in, const Draw& d, float* out) const override;

 private:
  FactorRange factor_;
  double first_, second_;  // value_range as given (Keras does not sort it)
};

// Solarization(addition_factor, threshold_factor, value_range): per image an
// addition a and a threshold t drawn from [lower, upper * 255] of each factor
// (Keras scales only the upper bound); the image taken to [0, 255], a added
// and clipped there, every value at or above t turned to 255 minus it, and
// the image taken back to value_range.
class Solarization : public ImageAugmentation {
 public:
  Solarization(FactorRange addition, FactorRange threshold, double lo = 0, double hi = 255,
               std::string name = "solarization", std::optional<int64_t> seed = std::nullopt);
  const char* type() const override { return "Solarization"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Draw draw(Rng& rng) const override;  // {a, t}
  void transform(const float* in, const Draw& d, float* out) const override;

 private:
  FactorRange addition_, threshold_;
  double lo_, hi_;  // sorted, as Keras keeps them
};

// RandomColorDegeneration(factor, value_range): per image f drawn from
// [lower, upper] (a single number f: [-f, f]), x + f (grey - x) with the
// RGB image's grey (tf.image.rgb_to_grayscale), clipped to value_range;
// RGB images only, as Keras'.
class RandomColorDegeneration : public ImageAugmentation {
 public:
  RandomColorDegeneration(FactorRange factor, double lo = 0, double hi = 255,
                          std::string name = "random_color_degeneration", std::optional<int64_t> seed = std::nullopt);
  const char* type() const override { return "RandomColorDegeneration"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  using ImageAugmentation::output_shape;
  Shape output_shape(std::span<const Shape> inputs) const override;
  Draw draw(Rng& rng) const override;  // {f}
  void transform(const float* in, const Draw& d, float* out) const override;

 private:
  FactorRange factor_;
  double lo_, hi_;  // sorted, as Keras keeps them
};

// RandomSaturation(factor, value_range): per image u drawn from [lower,
// upper] (a single number f: [-f, f]) and kept as u / (1 - u + 1e-7), the
// saturation's multiplier (Keras': 0.5 leaves the image, 0 or less makes it
// grey); the RGB image through HSV with its saturation times that, clipped
// to value_range (sorted), and back (data::adjust_saturation); RGB only.
class RandomSaturation : public ImageAugmentation {
 public:
  RandomSaturation(FactorRange factor, double lo = 0, double hi = 255, std::string name = "random_saturation",
                   std::optional<int64_t> seed = std::nullopt);
  const char* type() const override { return "RandomSaturation"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  using ImageAugmentation::output_shape;
  Shape output_shape(std::span<const Shape> inputs) const override;
  Draw draw(Rng& rng) const override;  // {u / (1 - u + 1e-7)}
  void transform(const float* in, const Draw& d, float* out) const override;
  // One image for the draw (RandomColorJitter's step too).
  static void apply(const float* in, const data::ImageSize& size, float draw, double lo, double hi, float* out);

 private:
  FactorRange factor_;
  double lo_, hi_;  // sorted, as Keras keeps them
};

// RandomHue(factor, value_range): per image a sign (- where a uniform
// exceeds 0.5) and f drawn from [lower, upper] within [0, 1] (a single
// number f: [0, f]), kept as the hue's shift sign f / 2; the RGB image
// through HSV with that added to its hue, wrapped into [0, 1], and back,
// clipped to value_range (data::adjust_hue); RGB only.
class RandomHue : public ImageAugmentation {
 public:
  RandomHue(FactorRange factor, double lo = 0, double hi = 255, std::string name = "random_hue",
            std::optional<int64_t> seed = std::nullopt);
  const char* type() const override { return "RandomHue"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  using ImageAugmentation::output_shape;
  Shape output_shape(std::span<const Shape> inputs) const override;
  Draw draw(Rng& rng) const override;  // {sign f / 2}
  void transform(const float* in, const Draw& d, float* out) const override;
  // One image for the draw (RandomColorJitter's step too).
  static void apply(const float* in, const data::ImageSize& size, float draw, double lo, double hi, float* out);

 private:
  FactorRange factor_;
  double lo_, hi_;  // as given: Keras keeps them unsorted
};

// RandomColorJitter(value_range, brightness_factor, contrast_factor,
// saturation_factor, hue_factor): RandomBrightness, RandomContrast,
// RandomSaturation and RandomHue in that order, each where its factor is
// given, with its own draw and the shared value_range (rising); RGB only
// where saturation or hue is given.
class RandomColorJitter : public ImageAugmentation {
 public:
  struct Factors {
    std::optional<FactorRange> brightness, contrast, saturation, hue;
  };
  RandomColorJitter(Factors factors, double lo = 0, double hi = 255, std::string name = "random_color_jitter",
                    std::optional<int64_t> seed = std::nullopt);
  const char* type() const override { return "RandomColorJitter"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  using ImageAugmentation::output_shape;
  Shape output_shape(std::span<const Shape> inputs) const override;
  Draw draw(Rng& rng) const override;  // {brightness, contrast, saturation, hue}: each its layer's draw
  void transform(const float* in, const Draw& d, float* out) const override;

 private:
  Factors factors_;
  double lo_, hi_;
  // The four layers, for their draws.
  std::optional<RandomBrightness> brightness_;
  std::optional<RandomContrast> contrast_;
  std::optional<RandomSaturation> saturation_;
  std::optional<RandomHue> hue_;
};

// RandomGaussianBlur(factor, kernel_size, sigma, value_range): per image a
// chance p from [lower, upper] within [0, 1] (a single number f: [0, f])
// and a uniform u; where u < p the image blurred by a Gaussian of
// kernel_size (odd, either way) with zeros outside the image, its sigmas
// drawn once per batch from sigma's range (plus 1e-6, as Keras); every
// image then clipped to value_range (rising).
class RandomGaussianBlur : public ImageAugmentation {
 public:
  RandomGaussianBlur(FactorRange factor, std::array<int64_t, 2> kernel_size, FactorRange sigma, double lo = 0,
                     double hi = 255, std::string name = "random_gaussian_blur",
                     std::optional<int64_t> seed = std::nullopt);
  const char* type() const override { return "RandomGaussianBlur"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Draw draw(Rng& rng) const override;  // {p, u}; the batch's sigmas below
  std::optional<Draw> batch_part(Rng& rng) const override;  // {-, -, sigma 0, sigma 1}
  void with_batch_part(const Draw& part, Draw& d) const override;
  void transform(const float* in, const Draw& d, float* out) const override;

 private:
  FactorRange factor_, sigma_;
  std::array<int64_t, 2> kernel_size_;
  double lo_, hi_;
};

// RandomPosterization(factor, value_range): per image a bit count b drawn
// from the integers [lower, upper) (lower where the two are equal; a single
// number f: [1, f)); the image taken to [0, 255], truncated to 8-bit
// integers whose low 8 - b bits are cleared, and taken back to value_range.
class RandomPosterization : public ImageAugmentation {
 public:
  RandomPosterization(int lower, int upper, double lo = 0, double hi = 255,
                      std::string name = "random_posterization", std::optional<int64_t> seed = std::nullopt);
  const char* type() const override { return "RandomPosterization"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Draw draw(Rng& rng) const override;  // {b}
  void transform(const float* in, const Draw& d, float* out) const override;

 private:
  int lower_, upper_;
  double lo_, hi_;  // sorted, as Keras keeps them
};

// RandomSharpness(factor, value_range): per image u drawn from [lower,
// upper] (a single number f: [0, f]); x + (1 - 2u) (smooth - x) with
// smooth the image under the 3x3 kernel [1 1 1; 1 5 1; 1 1 1] / 13 (zeros
// outside the image), clipped to value_range: u = 0.5 leaves the image,
// less blurs it, more sharpens it.
class RandomSharpness : public ImageAugmentation {
 public:
  RandomSharpness(FactorRange factor, double lo = 0, double hi = 255, std::string name = "random_sharpness",
                  std::optional<int64_t> seed = std::nullopt);
  const char* type() const override { return "RandomSharpness"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Draw draw(Rng& rng) const override;  // {u}
  void transform(const float* in, const Draw& d, float* out) const override;

 private:
  FactorRange factor_;
  double lo_, hi_;  // sorted, as Keras keeps them
};

}  // namespace axon::nn
