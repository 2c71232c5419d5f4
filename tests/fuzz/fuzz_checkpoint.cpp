// The safetensors reader, the checkpoint restore behind --resume and the
// weights readers (axon's format, and safetensors as --initial-weights reads
// it) on arbitrary bytes: each either accepts the file or throws UsageError,
// never reads past it, and leaves the model untouched unless it accepted.
#include "fuzz_input_file.hpp"
#include "tiny_model.hpp"

#include <axon/error.hpp>
#include <axon/io/safetensors.hpp>
#include <axon/train/weights.hpp>

#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const axon::io::SafetensorsFile f = axon::io::parse_safetensors(bytes);
    for (const axon::io::SafetensorsEntry& e : f.tensors())
      if (f.data(e).size() != e.end - e.begin) std::abort();
    f.checksum_ok();
  } catch (const axon::UsageError&) {
  }
  axon::nn::Sequential& model = axon::fuzz::tiny_model();
  const std::vector<float> before = model.replica(0).buffers().values().to_vector<float>();
  bool accepted = false;
  try {
    axon::train::restore_checkpoint(model, axon::fuzz::tiny_run(), bytes, "fuzz-input");
    accepted = true;
  } catch (const axon::UsageError&) {
  }
  if (!accepted && model.replica(0).buffers().values().to_vector<float>() != before) std::abort();
  const axon::fuzz::InputFile file(data, size);
  try {
    axon::train::load_weights(model, file.path());
  } catch (const axon::UsageError&) {
  }
  const std::vector<float> kept = model.replica(0).buffers().values().to_vector<float>();
  accepted = false;
  try {
    axon::train::set_weights(model, bytes, "fuzz-input.safetensors");
    accepted = true;
  } catch (const axon::UsageError&) {
  }
  if (!accepted && model.replica(0).buffers().values().to_vector<float>() != kept) std::abort();
  return 0;
}
