// The cost model file that `hypercomm calibrate` writes and `run` and `sweep` read: three lines
// "ts = <seconds>", "tw = <seconds per byte>", "th = <seconds per hop>".
//
// Where it lives: $HYPERCOMM_MODEL_FILE if set, else $XDG_CONFIG_HOME/hypercomm/model, else
// ~/.config/hypercomm/model.
#pragma once

#include <filesystem>
#include <hypercomm/options.hpp>
#include <optional>
#include <string>

namespace hypercomm::cli {

// The built-in model when nothing was calibrated: 1 us per message, 10 GB/s, no per-hop time.
inline constexpr CostModel kDefaultModel{.ts = 1e-6, .tw = 1e-10, .th = 0};

// The model file's path, or nothing when neither HYPERCOMM_MODEL_FILE, XDG_CONFIG_HOME nor HOME
// is set.
[[nodiscard]] std::optional<std::filesystem::path> model_file_path();

// Reads a model file; nothing when it does not exist, UsageError when it does not parse.
[[nodiscard]] std::optional<CostModel> load_model(const std::filesystem::path& path);

// Writes a model file, creating its folder; UsageError when that fails.
void save_model(const std::filesystem::path& path, const CostModel& model);

// Values given on the command line (--ts, --tw, --th), each optional.
struct ModelOverrides {
  std::optional<double> ts, tw, th;
};

// The model a run uses, and a line saying where each value came from.
struct ModelChoice {
  CostModel model;
  std::string origin;
};
[[nodiscard]] ModelChoice choose_model(const ModelOverrides& overrides);

}  // namespace hypercomm::cli
