// What axon accepts at most. Each limit is checked before anything is
// allocated for the value, with a usage error (exit 2) naming the limit and
// the value; docs/cli.md lists them.
#pragma once

#include <cstdint>

namespace axon::limits {

// --threads / AXON_NUM_THREADS: CPU threads in all (0 = all cores).
inline constexpr int kMaxThreads = 1024;
// --cpu-devices / AXON_CPU_DEVICE_COUNT: logical CPU devices.
inline constexpr int kMaxCpuDevices = 256;
// --batch-size: samples per step, the global batch.
inline constexpr int64_t kMaxBatchSize = 65536;
// Rows and columns of a data set's images. MNIST-format sets are 28x28; the
// trainer's CNN at 64x64 and batch 64 stays within about 200 MB, while a
// 4096x4096 image would ask for a 17 GB Dense kernel.
inline constexpr int64_t kMaxImageSide = 64;
// Rows and columns of the images a model is given from NumPy arrays or an
// image folder (--image-size): the model's own limits (its activations) bound
// them further.
inline constexpr int64_t kMaxModelImageSide = 4096;
// Data bytes of one IDX file once decompressed (Fashion-MNIST's largest
// holds 47 MB).
inline constexpr uint64_t kMaxIdxDataBytes = uint64_t{1} << 30;
// One image file of a folder (--data DIR of class folders, axon-predict):
// its bytes, and its pixels once decoded, both checked before the decoder
// allocates (a PNG header claiming 60000 x 60000 pixels costs nothing).
// 2^24 pixels is 4096 x 4096, 64 MiB at 4 channels.
inline constexpr uint64_t kMaxImageFileBytes = uint64_t{1} << 26;
inline constexpr int64_t kMaxImagePixels = int64_t{1} << 24;
// Data bytes of one NumPy array (.npy, or a member of a .npz) as stored.
inline constexpr uint64_t kMaxArrayDataBytes = uint64_t{1} << 32;

// A Keras model JSON (--model): its file, its layers, its parameters and
// each layer's output per sample, in floats. Keras' own applications fit:
// NASNetLarge has 1,041 layers and a 1.0 MB JSON, ConvNeXtXLarge 348 million
// parameters, EfficientNetB7 at 600x600 17.4 million outputs in a layer and
// 1.05 billion in all layers together. What a batch of such outputs needs is
// checked against the machine's memory when training starts.
inline constexpr uint64_t kMaxModelJsonBytes = uint64_t{4} << 20;
inline constexpr int kMaxModelLayers = 4096;
inline constexpr int64_t kMaxModelParameters = int64_t{1} << 30;
inline constexpr int64_t kMaxLayerOutputsPerSample = int64_t{1} << 25;
// All layers' outputs per sample together, in floats: what a training step
// keeps for its backward at most (4 GiB per sample).
inline constexpr int64_t kMaxActivationsPerSample = int64_t{1} << 30;

}  // namespace axon::limits
