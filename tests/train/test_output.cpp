// The trainer's text and file formats: Keras' progress line, the metrics CSV,
// atomic file replacement.
#include "train_test_util.hpp"

#include <axon/error.hpp>
#include <axon/train/atomic_file.hpp>
#include <axon/train/metrics_csv.hpp>
#include <axon/train/progress.hpp>

#include <catch2/catch.hpp>

#include <cstdio>

using namespace axon;

TEST_CASE("progress: Keras' bar, times and metric format", "[output]") {
  CHECK(train::progress_bar(938, 938) == "938/938 [==============================]");
  CHECK(train::progress_bar(1, 938) == "  1/938 [..............................]");
  CHECK(train::progress_bar(469, 938) == "469/938 [==============>...............]");
  CHECK(train::progress_bar(3, 3) == "3/3 [==============================]");
  CHECK(train::time_per_step(0.0101) == "10ms/step");
  CHECK(train::time_per_step(2.4) == "2s/step");
  CHECK(train::time_per_step(0.00085) == "850us/step");
  CHECK(train::metric("loss", 0.50123) == " - loss: 0.5012");
  CHECK(train::metric("loss", 0.0005) == " - loss: 5.0000e-04");
}

TEST_CASE("progress: the epoch line", "[output]") {
  nn::EpochLogs l;
  l.epoch = 1;
  l.epochs = 5;
  l.steps = 938;
  l.samples = 60000;
  l.loss = 0.5012;
  l.accuracy = 0.817;
  l.seconds = 8.5;
  l.validation_seconds = 0.88;
  l.has_validation = true;
  l.val_loss = 0.39;
  l.val_accuracy = 0.859;
  CHECK(train::epoch_line(l) ==
        "938/938 [==============================] - 9s 10ms/step - loss: 0.5012 - accuracy: 0.8170 - val_loss: 0.3900 - "
        "val_accuracy: 0.8590");
  l.has_validation = false;
  CHECK(train::epoch_line(l) == "938/938 [==============================] - 9s 10ms/step - loss: 0.5012 - accuracy: 0.8170");
}

TEST_CASE("progress: one line per epoch when not a terminal, redraws on one", "[output]") {
  test::TempDir dir("progress");
  for (bool tty : {false, true}) {
    const auto path = dir.path / (tty ? "tty.txt" : "log.txt");
    std::FILE* f = std::fopen(path.c_str(), "w");
    REQUIRE(f != nullptr);
    train::ProgressBar bar(f, tty, 0.0);  // interval 0: redraw at every step
    nn::EpochLogs l;
    l.epoch = 1;
    l.epochs = 1;
    l.steps = 4;
    l.samples = 4;
    int reads = 0;
    const std::function<nn::MetricValues()> read = [&] {
      ++reads;
      return nn::MetricValues{1.0, 0.5, {}, 1};
    };
    bar.on_epoch_begin(1, 1, 4);
    for (int s = 0; s < 4; ++s) bar.on_batch_end(s, read);
    bar.on_epoch_end(l);
    std::fclose(f);
    const std::string text = test::read_all(path);
    if (tty) {
      CHECK(reads == 3);  // steps 1..3; the last step's line is the epoch line
      CHECK(text.find("\r1/4 [======>.......................] - ETA: ") != std::string::npos);
    } else {
      CHECK(reads == 0);  // no device syncs for a log file
      CHECK(text == "Epoch 1/1\n4/4 [==============================] - 0s 0s/step - loss: 0.0000e+00 - accuracy: 0.0000e+00\n");
    }
  }
}

TEST_CASE("metrics CSV: header and rows", "[output]") {
  nn::EpochLogs l;
  l.epoch = 2;
  l.loss = 0.25;
  l.accuracy = 0.9;
  l.samples = 1000;
  l.seconds = 2;
  l.input_wait_seconds = 0.5;
  l.learning_rate = 0.001f;  // the float32 rate, printed as the double it widens to
  CHECK(train::metrics_csv_row(l) == "2,0.25,0.9,,,2.000000,500.000000,0.500000,0.00100000005\n");
  l.has_validation = true;
  l.val_loss = 0.3;
  l.val_accuracy = 0.875;
  CHECK(train::metrics_csv_row(l) == "2,0.25,0.9,0.3,0.875,2.000000,500.000000,0.500000,0.00100000005\n");

  test::TempDir dir("csv");
  train::MetricsCsvLogger log(dir.path / "m.csv");
  log.on_epoch_end(l);
  l.epoch = 3;
  log.on_epoch_end(l);
  CHECK(test::read_all(dir.path / "m.csv") == train::metrics_csv_header() +
                                                  "2,0.25,0.9,0.3,0.875,2.000000,500.000000,0.500000,0.00100000005\n"
                                                  "3,0.25,0.9,0.3,0.875,2.000000,500.000000,0.500000,0.00100000005\n");

  // Compiled metrics: a column each after accuracy and after val_accuracy.
  l.metrics = {{"mse", 0.125}, {"top3", 0.5}};
  l.val_metrics = {{"mse", 0.25}, {"top3", 0.75}};
  CHECK(train::metrics_csv_header(l.metrics) ==
        "epoch,loss,accuracy,mse,top3,val_loss,val_accuracy,val_mse,val_top3,seconds,samples_per_second,"
        "input_wait_seconds,learning_rate\n");
  CHECK(train::metrics_csv_row(l) ==
        "3,0.25,0.9,0.125,0.5,0.3,0.875,0.25,0.75,2.000000,500.000000,0.500000,0.00100000005\n");
  l.has_validation = false;
  CHECK(train::metrics_csv_row(l) == "3,0.25,0.9,0.125,0.5,,,,,2.000000,500.000000,0.500000,0.00100000005\n");
  train::MetricsCsvLogger with_metrics(dir.path / "metrics.csv");
  with_metrics.on_epoch_end(l);
  CHECK(test::read_all(dir.path / "metrics.csv") ==
        train::metrics_csv_header(l.metrics) + "3,0.25,0.9,0.125,0.5,,,,,2.000000,500.000000,0.500000,0.00100000005\n");
}

TEST_CASE("atomic files: replaced whole, no temporary left, bad folders named", "[output]") {
  test::TempDir dir("atomic");
  const auto f = dir.path / "out.txt";
  train::write_file_atomically(f, "first");
  train::write_file_atomically(f, "second, longer");
  CHECK(test::read_all(f) == "second, longer");
  int entries = 0;
  for (auto& e : std::filesystem::directory_iterator(dir.path)) entries += e.is_regular_file();
  CHECK(entries == 1);
  CHECK_THROWS_AS(train::write_file_atomically(dir.path / "absent" / "x", "y"), UsageError);
  CHECK_THROWS_AS(train::write_file_atomically(dir.path, "y"), UsageError);
}
