// Checkpoints in process: stopping and resuming gives the weights of a run
// that never stopped, bit for bit; damaged, lying and oversized files are
// refused with the model untouched; another run's checkpoint is a usage
// error; the folder keeps the newest K. Also the weights reader's hostile
// paths.
#include "reliability_util.hpp"
#include "synthetic.hpp"

#include <axon/error.hpp>
#include <axon/io/read_file.hpp>
#include <axon/io/safetensors.hpp>
#include <axon/nn/layers.hpp>
#include <axon/nn/model.hpp>
#include <axon/train/checkpoint.hpp>
#include <axon/train/weights.hpp>

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <fstream>

using namespace axon;
using axon::test::TempDir;
using axon::test::usage_error;

namespace {

constexpr int64_t kBatch = 32;

Device& cpu() { return test::test_runtime().device("cpu:0"); }

std::unique_ptr<nn::Sequential> cnn(uint64_t seed, const nn::OptimizerOptions& optimizer = {}) {
  auto m = nn::make_cnn(10);
  m->build({28, 28, 1}, cpu(), seed);
  m->compile(optimizer);
  return m;
}

nn::FitOptions options(int epochs, uint64_t seed) {
  nn::FitOptions o;
  o.epochs = epochs;
  o.batch_size = kBatch;
  o.seed = seed;
  o.prefetch = false;
  return o;
}

train::RunIdentity identity(const data::ImageSet& set, uint64_t seed) {
  return {seed, kBatch, set.count, (set.count + kBatch - 1) / kBatch, 1e-3f};
}

std::vector<float> weights(nn::Sequential& m) { return m.replica(0).buffers().values().to_vector<float>(); }

// A checkpoint written mid-epoch 2 of a 3-epoch run (global step `at`).
std::string checkpoint_at(const data::ImageSet& set, int64_t at, uint64_t seed) {
  auto m = cnn(seed);
  nn::FitOptions o = options(3, seed);
  int64_t polls = 0;
  o.stop_requested = [&] { return polls++ == at; };
  const nn::History h = m->fit(set, o);
  REQUIRE(h.stopped);
  return train::serialize_checkpoint(*m, identity(set, seed), {h.stopped_epoch - 1, h.stopped_step, at, h.epochs});
}

}  // namespace

TEST_CASE("checkpoint: stop mid-epoch, restore into a new model, finish: the same bits", "[checkpoint]") {
  const data::ImageSet set = test::synthetic_set(200, 3);  // 7 steps per epoch, the last one short
  const uint64_t seed = 11;
  auto straight = cnn(seed);
  const nn::History full = straight->fit(set, options(3, seed));

  // Stopped after 10 steps: epoch 2, step 3.
  auto first = cnn(seed);
  nn::FitOptions o = options(3, seed);
  int64_t polls = 0;
  o.stop_requested = [&] { return polls++ == 10; };
  const nn::History part = first->fit(set, o);
  REQUIRE(part.stopped);
  CHECK(part.stopped_epoch == 2);
  CHECK(part.stopped_step == 3);
  CHECK(first->optimizer().iterations() == 10);
  const train::RunIdentity run = identity(set, seed);
  const std::string bytes =
      train::serialize_checkpoint(*first, run, {1, 3, 10, part.epochs});

  auto resumed = cnn(seed + 1);  // other initial weights: all must come from the file
  const train::TrainingPosition at = train::restore_checkpoint(*resumed, run, bytes, "mem");
  CHECK(at.epochs_done == 1);
  CHECK(at.step_in_epoch == 3);
  CHECK(at.global_step == 10);
  REQUIRE(at.history.size() == 1);
  CHECK(at.history[0].loss == part.epochs[0].loss);
  CHECK(at.history[0].val_accuracy == part.epochs[0].val_accuracy);
  CHECK(weights(*resumed) == weights(*first));
  nn::FitOptions rest = options(3, seed);
  rest.initial_epoch = at.epochs_done;
  rest.initial_step = at.step_in_epoch;
  const nn::History tail = resumed->fit(set, rest);
  REQUIRE(tail.epochs.size() == 2);
  CHECK(weights(*resumed) == weights(*straight));
  CHECK(resumed->optimizer().iterations() == straight->optimizer().iterations());
  // The resumed epoch's metrics cover all its samples, as if never stopped.
  CHECK(tail.epochs[0].loss == full.epochs[1].loss);
  CHECK(tail.epochs[0].accuracy == full.epochs[1].accuracy);
  CHECK(tail.epochs[0].samples == 200);
}

// Each optimizer's state (and Nadam's step-dependent cache) goes through the
// file: stopped after 5 of 8 steps and resumed in a new model, the run ends
// with the uninterrupted run's weights, bit for bit.
TEST_CASE("checkpoint: every optimizer resumes bit for bit, and another optimizer's checkpoint is refused",
          "[checkpoint][optimizers]") {
  const data::ImageSet set = test::synthetic_set(128, 3);  // 4 steps per epoch
  const uint64_t seed = 21;
  const train::RunIdentity run = identity(set, seed);
  using K = nn::OptimizerKind;
  std::vector<nn::OptimizerOptions> configs(7);
  configs[0].kind = K::sgd, configs[0].momentum = 0.9f, configs[0].nesterov = true;
  configs[1].kind = K::rmsprop, configs[1].momentum = 0.5f, configs[1].centered = true;
  configs[2].kind = K::adam, configs[2].amsgrad = true, configs[2].clipnorm = 0.1f;
  configs[3].kind = K::adamw;
  configs[4].kind = K::adagrad, configs[4].global_clipnorm = 0.5f;
  configs[5].kind = K::nadam, configs[5].clipvalue = 0.01f;
  configs[6].kind = K::sgd;  // no momentum: no state at all
  for (nn::OptimizerOptions& o : configs) {
    o.learning_rate = 1e-3f;  // the run identity's
    auto straight = cnn(seed, o);
    INFO(straight->optimizer().describe());
    straight->fit(set, options(2, seed));
    auto first = cnn(seed, o);
    nn::FitOptions part = options(2, seed);
    int64_t polls = 0;
    part.stop_requested = [&] { return polls++ == 5; };
    const nn::History h = first->fit(set, part);
    REQUIRE(h.stopped);
    const std::string bytes = train::serialize_checkpoint(*first, run, {1, 1, 5, h.epochs});
    auto resumed = cnn(seed + 1, o);
    const train::TrainingPosition at = train::restore_checkpoint(*resumed, run, bytes, "mem");
    REQUIRE(at.global_step == 5);
    nn::FitOptions rest = options(2, seed);
    rest.initial_epoch = at.epochs_done;
    rest.initial_step = at.step_in_epoch;
    resumed->fit(set, rest);
    CHECK(resumed->optimizer().iterations() == 8);
    CHECK(weights(*resumed) == weights(*straight));

    // Resumed with another optimizer (Adam, Keras' defaults): one message naming both.
    auto adam = cnn(seed);
    const std::vector<float> before = weights(*adam);
    const std::string msg = usage_error([&] { train::restore_checkpoint(*adam, run, bytes, "ckpt-x"); });
    CHECK(msg == "checkpoint ckpt-x was written with the optimizer '" + first->optimizer().describe() +
                     "', this run has '--optimizer adam': resume with the same settings, or start afresh in another "
                     "--checkpoint-dir");
    CHECK(weights(*adam) == before);
  }
}

// A checkpoint written before the optimizer was recorded holds Adam: it
// loads into a model with Adam and is refused by any other optimizer.
TEST_CASE("checkpoint: one without the optimizer key loads as Adam", "[checkpoint][optimizers]") {
  const data::ImageSet set = test::synthetic_set(100, 4);
  const uint64_t seed = 5;
  const train::RunIdentity run = identity(set, seed);
  const io::SafetensorsFile f = io::parse_safetensors(checkpoint_at(set, 6, seed));
  io::SafetensorsWriter w;
  for (const io::SafetensorsEntry& t : f.tensors()) w.add_f32(t.name, t.shape, f.f32(t.name, t.shape));
  for (const auto& [key, value] : f.metadata())
    if (key != "optimizer" && key != "axon_crc32") w.set_metadata(key, value);
  const std::string old = w.bytes(true);
  auto target = cnn(99);
  CHECK(train::restore_checkpoint(*target, run, old, "old").global_step == 6);
  nn::OptimizerOptions sgd;
  sgd.kind = nn::OptimizerKind::sgd;
  sgd.learning_rate = 1e-3f;
  auto other = cnn(99, sgd);
  CHECK_THAT(usage_error([&] { train::restore_checkpoint(*other, run, old, "old"); }),
             Catch::Contains("was written with the optimizer '--optimizer adam', this run has '--optimizer sgd'"));
}

TEST_CASE("checkpoint: damaged, lying and foreign files are refused, the model untouched", "[checkpoint][hostile]") {
  const data::ImageSet set = test::synthetic_set(100, 4);
  const uint64_t seed = 5;
  const train::RunIdentity run = identity(set, seed);
  const std::string good = checkpoint_at(set, 6, seed);
  auto target = cnn(99);
  const std::vector<float> before = weights(*target);
  auto corrupt_error = [&](const std::string& bytes) {
    std::string msg;
    try {
      train::restore_checkpoint(*target, run, bytes, "ckpt-x");
      FAIL("a damaged checkpoint was accepted");
    } catch (const train::CorruptCheckpoint& e) {
      msg = e.what();
    }
    CHECK(weights(*target) == before);
    CHECK(msg.find('\n') == std::string::npos);
    return msg;
  };

  CHECK_THAT(corrupt_error(good.substr(0, good.size() - 100)), Catch::Contains("checkpoint ckpt-x"));
  CHECK_THAT(corrupt_error(good.substr(0, 20)), Catch::Contains("holds only"));
  CHECK_THAT(corrupt_error(""), Catch::Contains("too short"));
  std::string flipped = good;
  flipped[flipped.size() - 1000] ^= 0x10;
  CHECK_THAT(corrupt_error(flipped), Catch::Contains("fails its checksum"));
  // A header that lies about a shape (the checksum would catch it too: the
  // reader refuses it before).
  std::string lying = good;
  const size_t at = lying.find("[3,3,1,32]");
  REQUIRE(at != std::string::npos);
  lying.replace(at, 10, "[3,3,2,32]");
  CHECK_THAT(corrupt_error(lying), Catch::Contains("data_offsets span"));
  CHECK_THAT(corrupt_error(good + std::string(64, '\0')), Catch::Contains("64 bytes after its last tensor"));
  // Sound safetensors, but not a checkpoint.
  io::SafetensorsWriter w;
  const float one = 1;
  w.add_f32("x", {1}, {&one, 1});
  CHECK_THAT(corrupt_error(w.bytes(false)), Catch::Contains("has no checksum"));
  CHECK_THAT(corrupt_error(w.bytes(true)), Catch::Contains("has no metadata 'format'"));

  // Another run's checkpoint is a usage error of its own, not damage.
  train::RunIdentity other = run;
  other.batch_size = 64;
  other.steps_per_epoch = 2;
  const std::string msg = usage_error([&] { train::restore_checkpoint(*target, other, good, "ckpt-x"); });
  CHECK_THAT(msg, Catch::Contains("was written with --batch-size 32, this run has 64"));
  CHECK_THROWS_AS(train::restore_checkpoint(*target, other, good, "ckpt-x"), UsageError);
  try {
    train::restore_checkpoint(*target, other, good, "ckpt-x");
  } catch (const train::CorruptCheckpoint&) {
    FAIL("another run's checkpoint was taken for damage");
  } catch (const UsageError&) {
  }
  CHECK(weights(*target) == before);
  // And the good one restores.
  train::restore_checkpoint(*target, run, good, "ckpt-x");
  CHECK(weights(*target) != before);
}

TEST_CASE("checkpoint folder: newest first, the newest K kept, oversized files refused unread", "[checkpoint]") {
  TempDir dir("ckptdir");
  const train::CheckpointDir ckpts(dir.path / "c");
  train::prepare_checkpoint_dir(ckpts.path());
  CHECK(std::filesystem::is_directory(ckpts.path()));
  for (int64_t step : {5, 100, 20, 7}) ckpts.write("x" + std::to_string(step), step, 3);
  test::write_raw(ckpts.path() / "notes.txt", "mine");
  test::write_raw(ckpts.path() / "ckpt-12.safetensors.bak", "mine");
  const std::vector<std::filesystem::path> files = ckpts.list();
  REQUIRE(files.size() == 3);
  CHECK(files[0] == ckpts.file_for(100));
  CHECK(files[1] == ckpts.file_for(20));
  CHECK(files[2] == ckpts.file_for(7));
  CHECK(std::filesystem::exists(ckpts.path() / "notes.txt"));  // never touched
  CHECK(std::filesystem::exists(ckpts.path() / "ckpt-12.safetensors.bak"));

  auto m = cnn(1);
  // The header's limit (16 MiB: the model's JSON rides in it) and the CNN's state.
  const uint64_t cap = train::CheckpointDir::max_file_bytes(*m);
  CHECK(cap < 20u << 20);
  const auto big = ckpts.path() / "ckpt-0000009999.safetensors";
  {
    std::ofstream f(big, std::ios::binary);
  }
  std::filesystem::resize_file(big, uint64_t{2} << 30);  // sparse: no disk used
  CHECK_THAT(usage_error([&] { io::read_regular_file(big, cap, "checkpoint"); }),
             Catch::Contains("more than the") && Catch::Contains("it can be"));

  CHECK_THAT(usage_error([&] { train::prepare_checkpoint_dir(dir.path / "absent" / "c"); }),
             Catch::Contains("does not exist"));
  test::write_raw(dir.path / "file", "x");
  CHECK_THAT(usage_error([&] { train::prepare_checkpoint_dir(dir.path / "file"); }), Catch::Contains("not a folder"));
}

TEST_CASE("weights reader: a folder, /dev/zero, a FIFO and an oversized file are refused at once", "[weights][hostile]") {
  TempDir dir("weights-hostile");
  auto m = cnn(2);
  const auto file = dir.path / "w.axw";
  train::save_weights(*m, file);
  train::load_weights(*m, file);
  CHECK_THAT(usage_error([&] { train::load_weights(*m, dir.path); }), Catch::Contains("a folder"));
  CHECK_THAT(usage_error([&] { train::load_weights(*m, "/dev/zero"); }), Catch::Contains("a character device"));
  const auto fifo = dir.path / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THAT(usage_error([&] { train::load_weights(*m, fifo); }), Catch::Contains("a FIFO"));
  test::write_raw(dir.path / "long.axw", test::read_all(file) + std::string(2 << 20, 'x'));
  CHECK_THAT(usage_error([&] { train::load_weights(*m, dir.path / "long.axw"); }), Catch::Contains("more than the"));
}

namespace {

// A model with batch normalisation: trainable weights, and moving statistics
// that are weights without optimizer state.
std::unique_ptr<nn::Sequential> bn_model(uint64_t seed) {
  auto m = std::make_unique<nn::Sequential>();
  m->add<nn::Conv2D>(4, 3, nn::Activation::linear, 1, AXON_PADDING_SAME, "conv2d", false);
  m->add<nn::BatchNormalization>();
  m->add<nn::ReLU>();
  m->add<nn::GlobalPooling2D>(false);
  m->add<nn::Dense>(10);
  m->build({28, 28, 1}, cpu(), seed);
  m->compile();
  return m;
}

}  // namespace

TEST_CASE("checkpoint: a model with moving statistics resumes to the same bits, and its files hold them",
          "[checkpoint][batchnorm]") {
  const data::ImageSet set = test::synthetic_set(96, 4);  // 3 steps per epoch
  const uint64_t seed = 12;
  auto straight = bn_model(seed);
  straight->fit(set, options(2, seed));

  auto first = bn_model(seed);
  nn::FitOptions o = options(2, seed);
  int64_t polls = 0;
  o.stop_requested = [&] { return polls++ == 4; };
  const nn::History part = first->fit(set, o);
  REQUIRE(part.stopped);
  const train::RunIdentity run = identity(set, seed);
  const std::string bytes = train::serialize_checkpoint(*first, run, {1, 1, 4, part.epochs});
  // The moving statistics are in the file under Keras' names; Adam's state
  // covers the trainable weights only.
  const io::SafetensorsFile f = io::parse_safetensors(bytes, {});
  std::vector<std::string> names;
  for (const io::SafetensorsEntry& e : f.tensors()) names.push_back(e.name);
  auto has = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  CHECK(has("batch_normalization/moving_mean"));
  CHECK(has("batch_normalization/moving_variance"));
  CHECK(has("optimizer/m/batch_normalization/gamma"));
  CHECK_FALSE(has("optimizer/m/batch_normalization/moving_mean"));
  CHECK(f.f32("batch_normalization/moving_variance", {4}) != std::vector<float>(4, 1.0f));  // it moved

  auto resumed = bn_model(seed + 1);
  const train::TrainingPosition at = train::restore_checkpoint(*resumed, run, bytes, "mem");
  CHECK(weights(*resumed) == weights(*first));
  nn::FitOptions rest = options(2, seed);
  rest.initial_epoch = at.epochs_done;
  rest.initial_step = at.step_in_epoch;
  resumed->fit(set, rest);
  CHECK(weights(*resumed) == weights(*straight));

  // --save and --initial-weights: the moving statistics go and come back.
  TempDir dir("bn-weights");
  for (const char* name : {"w.safetensors", "w.axw"}) {
    const std::filesystem::path file = dir.path / name;
    train::save_weights(*straight, file);
    auto loaded = bn_model(seed + 2);
    train::load_weights(*loaded, file);
    CHECK(weights(*loaded) == weights(*straight));
  }
}
