// The cost model file (model_file.hpp).
#include "model_file.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

#include "args.hpp"

namespace hypercomm::cli {

namespace {

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

}  // namespace

std::optional<std::filesystem::path> model_file_path() {
  if (const char* file = env("HYPERCOMM_MODEL_FILE")) return std::filesystem::path(file);
  if (const char* config = env("XDG_CONFIG_HOME"))
    return std::filesystem::path(config) / "hypercomm" / "model";
  if (const char* home = env("HOME"))
    return std::filesystem::path(home) / ".config" / "hypercomm" / "model";
  return std::nullopt;
}

std::optional<CostModel> load_model(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read the model file " + path.string());
  CostModel model = kDefaultModel;
  bool seen_ts = false, seen_tw = false;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto bad = [&](const std::string& why) {
      return UsageError("model file " + path.string() + " line " + std::to_string(number) + ": " +
                        why +
                        " (expected lines 'ts = <s>', 'tw = <s/byte>', 'th = <s>'; run "
                        "`hypercomm calibrate` to rewrite it)");
    };
    const auto equals = line.find('=');
    if (equals == std::string::npos) throw bad("no '='");
    std::istringstream key_in(line.substr(0, equals));
    std::string key;
    key_in >> key;
    const std::string text = line.substr(equals + 1);
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || errno != 0 || !std::isfinite(value) || value < 0 ||
        text.find_first_not_of(" \t\r", static_cast<std::size_t>(end - text.c_str())) !=
            std::string::npos)
      throw bad("'" + text + "' is not a non-negative number");
    if (key == "ts")
      model.ts = value, seen_ts = true;
    else if (key == "tw")
      model.tw = value, seen_tw = true;
    else if (key == "th")
      model.th = value;
    else
      throw bad("unknown key '" + key + "'");
  }
  if (!seen_ts || !seen_tw)
    throw UsageError("model file " + path.string() + " lacks " + (seen_ts ? "tw" : "ts") +
                     " (run `hypercomm calibrate` to rewrite it)");
  return model;
}

void save_model(const std::filesystem::path& path, const CostModel& model) {
  std::error_code ec;
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec)
      throw UsageError("cannot create the folder " + path.parent_path().string() + ": " +
                       ec.message());
  }
  std::ofstream out(path);
  char text[160];
  std::snprintf(text, sizeof text, "ts = %.6g\ntw = %.6g\nth = %.6g\n", model.ts, model.tw,
                model.th);
  out << text;
  out.close();
  if (!out) throw UsageError("cannot write the model file " + path.string());
}

ModelChoice choose_model(const ModelOverrides& overrides) {
  ModelChoice choice{kDefaultModel, ""};
  std::string base = "built-in defaults";
  if (const auto path = model_file_path()) {
    if (const auto saved = load_model(*path)) {
      choice.model = *saved;
      base = "calibrated, from " + path->string();
    } else {
      base =
          "built-in defaults; no model file at " + path->string() + ", run `hypercomm calibrate`";
    }
  }
  std::string given;
  const auto take = [&](const std::optional<double>& value, double& into, const char* name) {
    if (!value) return;
    into = *value;
    given += std::string(given.empty() ? "" : ", ") + name;
  };
  take(overrides.ts, choice.model.ts, "ts");
  take(overrides.tw, choice.model.tw, "tw");
  take(overrides.th, choice.model.th, "th");
  if (given.empty())
    choice.origin = base;
  else if (overrides.ts && overrides.tw && overrides.th)
    choice.origin = "command line";
  else
    choice.origin = given + " from the command line, the rest " + base;
  return choice;
}

}  // namespace hypercomm::cli
