// NumPy arrays as Keras users have them: a .npz in the layout of Keras'
// mnist.npz and fashion_mnist (x_train, y_train, x_test, y_test; the test
// pair is the validation data), or an images .npy with a labels .npy.
//
// Images are N x H x W (one channel) or N x H x W x C: uint8 (0 to 255,
// divided by 255 as IDX images are) or float32/float64 (already scaled,
// given to the model as they are, float64 rounded to float32). Labels are
// N or N x 1 integers of any width, 0 to 255. Big-endian and Fortran-order
// arrays are converted; any other dtype is refused naming it. Every header
// is read and checked (shapes, lengths, limits) before any data, the labels
// before the images.
#pragma once

#include <axon/data/mnist.hpp>

#include <filesystem>
#include <string>

namespace axon::data {

struct ArrayDataset {
  ImageSet train, test;
  bool has_test = false;
};

// Keras' layout in a .npz: x_train and y_train required; x_test and y_test
// both or neither. `progress`: images of 64 MB or more show a count and rate
// on a terminal's stderr while they are read.
ArrayDataset load_npz(const std::filesystem::path& file, bool progress = false);

// One split from two .npy files.
ImageSet load_npy_pair(const std::filesystem::path& images, const std::filesystem::path& labels, bool progress = false);

// Images alone (axon-predict): one .npy, or a .npz's x_test (x_train when it
// has no test split); labels 0.
ImageSet load_npy_images(const std::filesystem::path& images);
ImageSet load_npz_images(const std::filesystem::path& file);

// Whether the file starts as a zip archive (a .npz) or as a .npy does.
bool looks_like_zip(const std::filesystem::path& file);
bool looks_like_npy(const std::filesystem::path& file);

}  // namespace axon::data
