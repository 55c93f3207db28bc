// The rows of `hypercomm sweep`, written as CSV and drawn with gnuplot.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace hypercomm::cli {

struct SweepRow {
  std::string op, topology, algo;
  int p = 0;
  std::uint64_t bytes = 0;
  double wall_seconds = 0, model_seconds = 0, formula_seconds = 0;
  std::uint64_t messages = 0, bytes_moved = 0;
  bool verified = false;
};

inline constexpr const char* kCsvHeader =
    "op,topology,algo,p,bytes,wall_seconds,model_seconds,formula_seconds,messages,bytes_moved,"
    "verified";

void write_csv(std::FILE* out, const std::vector<SweepRow>& rows);

// An executable named `name` on $PATH, like `command -v`.
[[nodiscard]] std::optional<std::string> find_program(const std::string& name);

// Writes PREFIX.gp (a gnuplot script with the data inline) and runs `gnuplot` on it, which draws
// PREFIX-vs-p.png (time against p, one line per size) and PREFIX-vs-bytes.png (time against
// bytes, log-log, one line per p), measured, model and formula each. Returns the PNG paths, or
// throws std::runtime_error saying why not.
std::vector<std::string> plot(const std::vector<SweepRow>& rows, const std::string& prefix,
                              const std::string& gnuplot);

}  // namespace hypercomm::cli
