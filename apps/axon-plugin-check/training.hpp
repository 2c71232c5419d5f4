// A short training run on the plugin's device against the same run on the
// CPU: axon-train (next to this program) for one epoch of 640 images, seed 1,
// with the plugin's folder on AXON_PLUGIN_PATH; the final loss and accuracy
// (training and validation, from --metrics-csv) must agree within
// kLossTolerance (relative) and kAccuracyTolerance (absolute).
#pragma once

#include "report.hpp"

#include <string>

namespace axon::plugin_check {

inline constexpr double kLossTolerance = 0.02;      // 2% of the CPU's loss
inline constexpr double kAccuracyTolerance = 0.02;  // 2 points

struct TrainSettings {
  std::string program_dir;  // where axon-train is looked for
  std::string plugin_file;
  std::string device_type;  // "CHK"
  int device_index = 0;     // N of /device:TYPE:N
  std::string data_dir;
};

void check_training(const TrainSettings& s, Report& report);

}  // namespace axon::plugin_check
