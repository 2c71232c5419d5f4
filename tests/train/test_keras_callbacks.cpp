// Keras 3's EarlyStopping, ReduceLROnPlateau and ModelCheckpoint
// (save_best_only) as axon decides them, against what Keras decided on the
// same recorded loss histories (callback_goldens.txt, written by
// tools/tf-goldens/callback_goldens.py: overfitting runs with noise, a flat
// history, improvements below min_delta); their state through a checkpoint
// mid-run; Keras' messages; bad settings.
#include "train_test_util.hpp"

#include <axon/train/best_model.hpp>
#include <axon/train/early_stopping.hpp>
#include <axon/train/reduce_lr_on_plateau.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace axon;
using namespace axon::train;
using json = nlohmann::json;
using Catch::Matchers::Contains;

namespace {

struct CallbackGolden {
  std::string cls;
  json config, outcome;
  std::vector<EpochValues> history;
};

std::vector<CallbackGolden> callback_goldens() {
  std::ifstream in(std::string(AXON_TRAIN_TEST_DIR) + "/callback_goldens.txt");
  REQUIRE(in);
  std::vector<CallbackGolden> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    for (size_t at = 0;;) {
      const size_t tab = line.find('\t', at);
      f.push_back(line.substr(at, tab - at));
      if (tab == std::string::npos) break;
      at = tab + 1;
    }
    REQUIRE(f.size() == 4);
    CallbackGolden g{f[0], json::parse(f[1]), json::parse(f[3]), {}};
    for (const json& epoch : json::parse(f[2])) g.history.push_back(epoch.get<EpochValues>());
    out.push_back(std::move(g));
  }
  return out;
}

template <class T>
T get(const json& c, const char* key, T fallback) {
  return c.contains(key) ? c[key].get<T>() : fallback;
}

EarlyStoppingOptions early_options(const json& c) {
  EarlyStoppingOptions o;
  o.monitor = get<std::string>(c, "monitor", o.monitor);
  o.mode = get<std::string>(c, "mode", o.mode);
  o.min_delta = get<double>(c, "min_delta", 0);
  o.patience = get<int>(c, "patience", 0);
  if (c.contains("baseline")) o.baseline = c["baseline"].get<double>();
  o.restore_best_weights = get<bool>(c, "restore_best_weights", false);
  o.start_from_epoch = get<int>(c, "start_from_epoch", 0);
  return o;
}

ReduceLROnPlateauOptions plateau_options(const json& c) {
  ReduceLROnPlateauOptions o;
  o.monitor = get<std::string>(c, "monitor", o.monitor);
  o.mode = get<std::string>(c, "mode", o.mode);
  o.factor = get<double>(c, "factor", o.factor);
  o.patience = get<int>(c, "patience", o.patience);
  o.min_delta = get<double>(c, "min_delta", o.min_delta);
  o.cooldown = get<int>(c, "cooldown", o.cooldown);
  o.min_lr = get<double>(c, "min_lr", o.min_lr);
  return o;
}

BestModelOptions best_options(const json& c) {
  BestModelOptions o;
  o.monitor = get<std::string>(c, "monitor", o.monitor);
  o.mode = get<std::string>(c, "mode", o.mode);
  if (c.contains("initial_value_threshold")) o.initial_value_threshold = c["initial_value_threshold"].get<double>();
  return o;
}

// Runs the callback over the history; `checkpoint_at`: after that epoch its
// state goes through state()/restore_state() into a fresh callback, as a
// resumed run's does.
json outcome(const CallbackGolden& g, int checkpoint_at) {
  if (g.cls == "EarlyStopping") {
    auto cb = std::make_unique<EarlyStopping>(early_options(g.config));
    int kept = -1, stopped = -1;
    for (int e = 0; e < static_cast<int>(g.history.size()); ++e) {
      const EarlyStopping::Decision d = cb->on_epoch_end(e, g.history[static_cast<size_t>(e)]);
      if (d.keep_weights) kept = e;
      if (d.stop) {
        stopped = e;
        break;
      }
      if (e == checkpoint_at) {
        const std::string s = cb->state();
        cb = std::make_unique<EarlyStopping>(early_options(g.config));
        cb->restore_state(s);
      }
    }
    return {{"stopped_epoch", stopped}, {"restored_epoch", cb->restore_at_end() ? kept : -1}};
  }
  if (g.cls == "ReduceLROnPlateau") {
    auto cb = std::make_unique<ReduceLROnPlateau>(plateau_options(g.config));
    float lr = 0.1f;
    std::vector<double> lrs;
    for (int e = 0; e < static_cast<int>(g.history.size()); ++e) {
      if (const auto next = cb->on_epoch_end(e, g.history[static_cast<size_t>(e)], lr)) lr = *next;
      lrs.push_back(lr);
      if (e == checkpoint_at) {
        const std::string s = cb->state();
        cb = std::make_unique<ReduceLROnPlateau>(plateau_options(g.config));
        cb->restore_state(s);
      }
    }
    return {{"lr", lrs}};
  }
  auto cb = std::make_unique<BestModel>(best_options(g.config));
  std::vector<int> saved;
  for (int e = 0; e < static_cast<int>(g.history.size()); ++e) {
    if (cb->on_epoch_end(e, g.history[static_cast<size_t>(e)], "best.safetensors", nullptr)) saved.push_back(e);
    if (e == checkpoint_at) {
      const std::string s = cb->state();
      cb = std::make_unique<BestModel>(best_options(g.config));
      cb->restore_state(s);
    }
  }
  return {{"saved", saved}};
}

}  // namespace

TEST_CASE("EarlyStopping, ReduceLROnPlateau, ModelCheckpoint: Keras' decisions on recorded histories", "[callbacks]") {
  const std::vector<CallbackGolden> cases = callback_goldens();
  REQUIRE(cases.size() >= 60);
  for (const CallbackGolden& g : cases) {
    INFO(g.cls << " " << g.config.dump() << " on " << g.history.size() << " epochs");
    const json want = g.outcome;
    if (g.cls == "ReduceLROnPlateau") {
      // Keras' rates are float32 read as doubles; axon's floats widen to the same.
      CHECK(outcome(g, -1)["lr"].get<std::vector<double>>() == want["lr"].get<std::vector<double>>());
    } else {
      CHECK(outcome(g, -1) == want);
    }
    // The same through a checkpoint after each epoch in turn.
    for (int at = 0; at + 1 < static_cast<int>(g.history.size()); ++at) {
      INFO("state through a checkpoint after epoch " << at);
      CHECK(outcome(g, at) == outcome(g, -1));
    }
  }
}

TEST_CASE("Keras callbacks: Keras' messages", "[callbacks]") {
  EarlyStopping es({.monitor = "val_loss", .patience = 1, .restore_best_weights = true});
  es.on_epoch_end(0, {{"val_loss", 0.5}});
  es.on_epoch_end(1, {{"val_loss", 0.4}});
  CHECK(es.on_epoch_end(2, {{"val_loss", 0.45}}).stop);
  CHECK(es.stop_message() == "Epoch 3: early stopping");
  CHECK(es.restore_message() == "Restoring model weights from the end of the best epoch: 2.");
  CHECK(ReduceLROnPlateau::message(4, 0.05f) == "Epoch 5: ReduceLROnPlateau reducing learning rate to 0.05000000074505806.");
  BestModel best({});
  std::string msg;
  CHECK(best.on_epoch_end(0, {{"val_loss", 0.412341}}, "best.safetensors", &msg));
  CHECK(msg == "Epoch 1: val_loss improved from None to 0.41234, saving model to best.safetensors");
  CHECK_FALSE(best.on_epoch_end(1, {{"val_loss", 0.5}}, "best.safetensors", &msg));
  CHECK(msg == "Epoch 2: val_loss did not improve from 0.41234");
}

TEST_CASE("Keras callbacks: bad settings and missing logs, one line each", "[callbacks]") {
  CHECK_THAT(test::usage_error([] { EarlyStopping({.monitor = "val_f1"}); }),
             Contains("cannot tell whether val_f1 should rise or fall: give mode=min or mode=max"));
  CHECK_THAT(test::usage_error([] { EarlyStopping({.mode = "lowest"}); }), Contains("mode is lowest"));
  CHECK_THAT(test::usage_error([] { EarlyStopping({.patience = -1}); }), Contains("patience must be >= 0"));
  CHECK_THAT(test::usage_error([] { ReduceLROnPlateau({.factor = 1.0}); }), Contains("factor must be from 0 to below 1"));
  CHECK_THAT(test::usage_error([] { EarlyStopping({}).on_epoch_end(0, {{"loss", 1.0}}); }),
             Contains("monitors val_loss, which is not logged; the logs have loss"));
  CHECK_THAT(test::usage_error([] { EarlyStopping({}).restore_state("{\"wait\": 1}"); }),
             Contains("EarlyStopping state is malformed"));
}
