// The subcommands of the `hypercomm` command. Each registers its options on the CLI11 app and
// runs after parsing; a bad argument throws UsageError (exit code 2).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "model_file.hpp"
#include "verify.hpp"

namespace hypercomm::cli {

class Command {
 public:
  virtual ~Command() = default;
  // Runs the subcommand with the parsed options; returns the exit code.
  virtual int execute() = 0;
  // The CLI11 subcommand, to see whether it was given.
  [[nodiscard]] CLI::App* app() const noexcept { return app_; }

 protected:
  CLI::App* app_ = nullptr;
};

[[nodiscard]] std::unique_ptr<Command> make_run_command(CLI::App& parent);
[[nodiscard]] std::unique_ptr<Command> make_list_command(CLI::App& parent);
[[nodiscard]] std::unique_ptr<Command> make_calibrate_command(CLI::App& parent);
[[nodiscard]] std::unique_ptr<Command> make_sweep_command(CLI::App& parent);

// --ts, --tw, --th, shared by run and sweep.
class ModelOptions {
 public:
  void add_to(CLI::App& app);
  [[nodiscard]] ModelOverrides overrides() const;

 private:
  double ts_ = 0, tw_ = 0, th_ = 0;
  CLI::Option *ts_option_ = nullptr, *tw_option_ = nullptr, *th_option_ = nullptr;
};

// --algo, --links, --type, --repeat, --root, --shift, --counts, shared by run and sweep: what to
// call besides the operation, the machine and the size.
class CallOptions {
 public:
  explicit CallOptions(int repeat) : repeat_(repeat) {}
  void add_to(CLI::App& app, const std::string& links_help, const std::string& repeat_help);
  // The operation `op` with these options (bytes left at 0); UsageError for a bad value.
  [[nodiscard]] Spec spec(const std::string& op) const;
  [[nodiscard]] Links links() const;
  [[nodiscard]] int repeat() const noexcept { return repeat_; }

 private:
  std::string algo_ = "automatic", links_ = "routed", type_ = "int64", counts_ = "uniform";
  int repeat_, root_ = 0, shift_ = 1;
};

}  // namespace hypercomm::cli
