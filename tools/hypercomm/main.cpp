// The `hypercomm` command: run, list, calibrate and sweep the collectives of Grama et al., ch. 4
// on a message-passing machine of VP threads.
//
// Every bad argument ends as one line "hypercomm: error: ..." on stderr and exit status 2; a
// wrong result (or a run that failed) exits 1; nothing escapes as an uncaught exception.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string_view>

#include "args.hpp"
#include "commands.hpp"

#ifndef HYPERCOMM_VERSION
#define HYPERCOMM_VERSION "unknown"
#endif

namespace hypercomm::cli {

void ModelOptions::add_to(CLI::App& app) {
  // A finite number >= 0 (CLI11's NonNegativeNumber prints DBL_MAX's 300 digits when it fails).
  const CLI::Validator seconds(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !std::isfinite(v) || v < 0)
          return "expected a number of seconds >= 0, got '" + text + "'";
        return {};
      },
      "SECONDS");
  ts_option_ = app.add_option("--ts", ts_, "start-up time per message")->check(seconds);
  tw_option_ = app.add_option("--tw", tw_, "time per byte")->check(seconds);
  th_option_ = app.add_option("--th", th_, "time per hop")->check(seconds);
  for (CLI::Option* option : {ts_option_, tw_option_, th_option_})
    option->group(
        "Cost model (default: the values `hypercomm calibrate` saved, else 1e-6, "
        "1e-10, 0)");
}

void CallOptions::add_to(CLI::App& app, const std::string& links_help,
                         const std::string& repeat_help) {
  app.add_option("--algo,-a", algo_, "algorithm: " + algorithm_names())->capture_default_str();
  app.add_option("--links", links_, links_help)->capture_default_str();
  app.add_option("--type", type_, "element type: int64 or double")->capture_default_str();
  app.add_option("--repeat,-r", repeat_, repeat_help)
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--root", root_, "root VP of broadcast, reduce, scatter, gather")
      ->capture_default_str();
  app.add_option("--shift", shift_, "circular_shift's distance q")->capture_default_str();
  app.add_option("--counts", counts_,
                 "irregular collectives: how the counts are shared out, uniform, zipf (rank i's "
                 "share as 1/(i+1)) or one-heavy (the last rank holds 90%)")
      ->capture_default_str();
}

Spec CallOptions::spec(const std::string& op) const {
  Spec spec;
  spec.op = parse_op(op);
  spec.algo = parse_algo_name(algo_);
  spec.type = parse_type(type_);
  spec.root = root_;
  spec.shift = shift_;
  spec.counts = parse_distribution(counts_);
  return spec;
}

Links CallOptions::links() const { return parse_links(links_); }

ModelOverrides ModelOptions::overrides() const {
  ModelOverrides o;
  if (ts_option_->count() > 0) o.ts = ts_;
  if (tw_option_->count() > 0) o.tw = tw_;
  if (th_option_->count() > 0) o.th = th_;
  return o;
}

namespace {

void error_line(std::string_view what) {
  std::string text(what);
  for (char& c : text)
    if (c == '\n') c = ' ';  // one line, whatever the message
  std::fprintf(stderr, "hypercomm: error: %s\n", text.c_str());
}

// The subcommand named on the command line, if any (for "see hypercomm X --help").
std::string selected(const CLI::App& app) {
  const auto subs = app.get_subcommands();
  return subs.empty() ? "" : subs.front()->get_name();
}

int main_checked(int argc, char** argv) {
  CLI::App app(
      "hypercomm: collective communication on ring, mesh and hypercube machines of VP "
      "threads, with the textbook cost model of Grama et al., ch. 4",
      "hypercomm");
  app.set_version_flag("--version", "hypercomm " HYPERCOMM_VERSION);
  app.require_subcommand(0, 1);
  app.footer("Run `hypercomm <subcommand> --help` for a subcommand's options.");
  std::unique_ptr<Command> commands[] = {make_run_command(app), make_list_command(app),
                                         make_calibrate_command(app), make_sweep_command(app)};

  // An unknown subcommand gets its own message rather than CLI11's "not expected".
  if (argc > 1 && argv[1][0] != '-') {
    const std::string_view name = argv[1];
    bool known = false;
    for (const auto& command : commands) known = known || command->app()->get_name() == name;
    if (!known) {
      error_line("unknown subcommand '" + std::string(name) +
                 "' (expected run, list, calibrate or sweep; see hypercomm --help)");
      return kExitUsage;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
      return app.exit(e);  // --help, --version
    const std::string sub = selected(app);
    error_line(std::string(e.what()) + " (see hypercomm" + (sub.empty() ? "" : " " + sub) +
               " --help)");
    return kExitUsage;
  }
  for (const auto& command : commands)
    if (command->app()->parsed()) return command->execute();
  error_line("a subcommand is required: run, list, calibrate or sweep (see hypercomm --help)");
  return kExitUsage;
}

}  // namespace
}  // namespace hypercomm::cli

int main(int argc, char** argv) {
  using namespace hypercomm::cli;
  try {
    return main_checked(argc, argv);
  } catch (const UsageError& e) {
    error_line(e.what());
    return kExitUsage;
  } catch (const hypercomm::TopologyError& e) {
    error_line(std::string("bad topology: ") + e.what());
    return kExitUsage;
  } catch (const hypercomm::AlgorithmError& e) {
    error_line(e.what());
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    error_line("out of memory (try smaller --bytes or fewer VPs)");
    return kExitWrong;
  } catch (const std::exception& e) {
    error_line(std::string("the run failed: ") + e.what());
    return kExitWrong;
  } catch (...) {
    error_line("the run failed with an unknown exception");
    return kExitWrong;
  }
}
