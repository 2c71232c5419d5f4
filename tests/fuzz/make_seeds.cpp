// Writes the fuzzers' seed inputs (tests/fuzz/corpus/, committed):
//   make_seeds tests/fuzz/corpus
// Small valid files of each kind, so the fuzzers start from the formats'
// real shapes: IDX raw, gzip and two-member gzip; a checkpoint and a weights
// file of the tiny model; device lists; numbers and booleans with ranges.
#include "tiny_model.hpp"

#include <axon/train/weights.hpp>

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string idx(const std::vector<uint32_t>& dims, size_t fill) {
  std::string s = {0, 0, 8, static_cast<char>(dims.size())};
  size_t n = 1;
  for (uint32_t d : dims) {
    for (int shift : {24, 16, 8, 0}) s += static_cast<char>(d >> shift);
    n *= d;
  }
  for (size_t i = 0; i < n && i < fill; ++i) s += static_cast<char>(i * 7);
  return s;
}

std::string gzip(const std::string& raw) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, raw.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string with_bounds(int64_t lo, int64_t hi, const std::string& text) {
  std::string s(16, '\0');
  std::memcpy(s.data(), &lo, 8);
  std::memcpy(s.data() + 8, &hi, 8);
  return s + text;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds CORPUS_DIR\n");
    return 2;
  }
  const fs::path out = argv[1];
  write(out / "idx" / "labels-raw", idx({10}, 10));
  write(out / "idx" / "images-raw", idx({2, 3, 3}, 18));
  write(out / "idx" / "images-gz", gzip(idx({2, 3, 3}, 18)));
  const std::string whole = idx({3, 2, 2}, 12);
  write(out / "idx" / "images-two-members-gz", gzip(whole.substr(0, 10)) + gzip(whole.substr(10)));
  write(out / "idx" / "labels-short", idx({10}, 4));

  axon::nn::Sequential& m = axon::fuzz::tiny_model();
  const axon::train::RunIdentity run = axon::fuzz::tiny_run();
  write(out / "checkpoint" / "mid-epoch", axon::train::serialize_checkpoint(m, run, {0, 1, 1, {}}));
  axon::nn::EpochLogs logs;
  logs.epoch = 1;
  logs.epochs = 2;
  logs.steps = 2;
  logs.samples = 8;
  logs.has_validation = true;
  write(out / "checkpoint" / "epoch-end", axon::train::serialize_checkpoint(m, run, {1, 0, 2, {logs}}));
  write(out / "checkpoint" / "weights", axon::train::serialize_weights(m));
  const std::string st_weights = axon::train::serialize_safetensors_weights(m, {{"model", "{}"}});
  write(out / "checkpoint" / "weights-safetensors", st_weights);
  axon::train::set_weights(m, st_weights, "weights.safetensors");  // a seed the reader accepts

  // The checkpoints must be ones the reader accepts, or the fuzzer would
  // start outside the format.
  for (const char* name : {"mid-epoch", "epoch-end"}) {
    std::ifstream in(out / "checkpoint" / name, std::ios::binary);
    axon::train::restore_checkpoint(m, run, std::string(std::istreambuf_iterator<char>(in), {}), name);
  }

  int n = 0;
  for (const char* list : {"cpu:0", "/device:GPU:1,cpu:0", " gpu , cuda:2 ", "GPU", "/gpu:0,,cpu:1"})
    write(out / "device_list" / ("list-" + std::to_string(++n)), list);

  write(out / "parse" / "threads", with_bounds(0, 1024, "16"));
  write(out / "parse" / "negative", with_bounds(-10, 10, "-3"));
  write(out / "parse" / "boolean", with_bounds(0, 1, "Off"));
  write(out / "parse" / "devices", with_bounds(1, 256, "cpu:0,gpu:1"));
  std::printf("seeds written to %s\n", out.c_str());
  return 0;
}
