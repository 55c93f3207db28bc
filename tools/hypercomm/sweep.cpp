// `hypercomm sweep`: one collective over a grid of machine sizes p and message sizes, each point
// verified, timed and set beside its model time and formula; CSV out, and PNG plots by gnuplot.
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "args.hpp"
#include "commands.hpp"
#include "plot.hpp"
#include "verify.hpp"

namespace hypercomm::cli {

namespace {

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// One --p item of a topology family: "8" (ring, hypercube, square mesh) or "2x4" (mesh).
Topology machine_of(std::string_view family, const std::string& item) {
  const auto bad = [&](const std::string& why) {
    return UsageError("bad --p item '" + item + "' for " + std::string(family) + ": " + why);
  };
  try {
    if (family == "mesh") {
      const auto times = item.find('x');
      if (times != std::string::npos) {
        const auto rows = parse_int(std::string_view(item).substr(0, times));
        const auto cols = parse_int(std::string_view(item).substr(times + 1));
        if (!rows || !cols) throw bad("expected RxC with whole numbers, like 2x4");
        return Topology::mesh(*rows, *cols);
      }
    }
    const auto p = parse_int(item);
    if (!p || *p < 1) throw bad("expected a whole number of VPs >= 1");
    if (family == "ring") return Topology::ring(*p);
    if (family == "hypercube") {
      if (!std::has_single_bit(static_cast<unsigned>(*p)))
        throw bad("a hypercube needs p a power of two");
      return Topology::hypercube(std::countr_zero(static_cast<unsigned>(*p)));
    }
    const int side = static_cast<int>(std::lround(std::sqrt(static_cast<double>(*p))));
    if (side * side != *p) throw bad("a mesh needs p a square (4, 16, ...) or RxC, like 2x4");
    return Topology::mesh(side, side);
  } catch (const TopologyError& e) {
    throw bad(e.what());
  }
}

class SweepCommand final : public Command {
 public:
  explicit SweepCommand(CLI::App& parent) {
    app_ = parent.add_subcommand("sweep", "Run one collective over a grid of p and message sizes");
    app_->footer(
        "Example: hypercomm sweep --op all_gather --topology hypercube --p 2,4,8,16 "
        "--bytes 8,1K,64K --csv ag.csv --plot ag\n"
        "Without --csv the CSV goes to stdout. Exit status: 0 all verified, 1 a wrong result, "
        "2 a bad argument.");
    app_->add_option("--op,-o", op_, "the collective: " + operation_names())->required();
    app_->add_option("--topology,-t", family_, "ring, mesh or hypercube (sizes from --p)")
        ->required();
    app_->add_option("--p,-p", p_, "VP counts, comma separated; mesh: squares or RxC (2x2,4x4)")
        ->required()
        ->delimiter(',');
    app_->add_option("--bytes,-b", bytes_,
                     "bytes one VP passes, comma separated (suffix K, M, G): 8,1K,64K")
        ->required()
        ->delimiter(',');
    call_.add_to(*app_, "routed or strict", "timed runs per point; the median is reported");
    model_.add_to(*app_);
    app_->add_option("--csv", csv_, "write the CSV here (default: stdout)");
    app_->add_option("--plot", plot_,
                     "with gnuplot: PREFIX-vs-p.png and PREFIX-vs-bytes.png (and PREFIX.gp)");
  }

  int execute() override {
    Spec spec = call_.spec(op_);
    const Links links = call_.links();
    if (family_ != "ring" && family_ != "mesh" && family_ != "hypercube")
      throw UsageError("bad --topology '" + family_ +
                       "' for sweep: expected a family, ring, mesh or hypercube (the sizes come "
                       "from --p)");
    std::vector<Topology> machines;
    for (const std::string& item : split_list(p_, "--p"))
      machines.push_back(machine_of(family_, item));
    std::vector<std::uint64_t> sizes;
    for (const std::string& item : split_list(bytes_, "--bytes"))
      sizes.push_back(parse_bytes(item, "--bytes"));
    const ModelChoice model = choose_model(model_.overrides());

    // Every point is checked before any runs.
    std::vector<std::vector<Plan>> plans;
    for (const Topology& t : machines) {
      plans.emplace_back();
      for (const std::uint64_t bytes : sizes) {
        spec.bytes = bytes;
        try {
          plans.back().push_back(make_plan(spec, t, links));
        } catch (const UsageError& e) {
          throw UsageError("at " + t.name() + ", " + format_bytes(bytes) + ": " + e.what());
        }
      }
    }
    std::FILE* csv = stdout;
    if (!csv_.empty()) {
      csv = std::fopen(csv_.c_str(), "w");
      if (csv == nullptr)
        throw UsageError("cannot write the --csv file '" + csv_ + "': " + std::strerror(errno));
    }
    std::optional<std::string> gnuplot;
    if (!plot_.empty()) gnuplot = find_program("gnuplot");

    Options options;
    options.links = links;
    options.model = model.model;
    const int total = static_cast<int>(machines.size() * sizes.size());
    const bool bar = isatty(STDERR_FILENO) != 0;
    std::fprintf(stderr,
                 "hypercomm sweep: %s on %d machine%s x %zu size%s, %d timed run%s each; "
                 "model ts = %.3g s, tw = %.3g s/byte, th = %.3g s (%s)\n",
                 to_string(spec.op), static_cast<int>(machines.size()),
                 machines.size() == 1 ? "" : "s", sizes.size(), sizes.size() == 1 ? "" : "s",
                 call_.repeat(), call_.repeat() == 1 ? "" : "s", model.model.ts, model.model.tw,
                 model.model.th, model.origin.c_str());
    std::vector<SweepRow> rows;
    int done = 0;
    for (std::size_t i = 0; i < machines.size(); ++i) {
      const Topology& t = machines[i];
      Machine machine(t, options);
      for (const Plan& plan : plans[i]) {
        if (bar) progress(done, total, t.name() + ", " + format_bytes(plan.bytes));
        std::unique_ptr<Workload> workload = make_workload(plan, t);
        const Measurement m = measure(machine, *workload, call_.repeat());
        SweepRow row{irregular(spec.op)
                         ? std::string(to_string(spec.op)) + "/" + to_string(spec.counts)
                         : std::string(to_string(spec.op)),
                     t.name(),
                     to_string(plan.resolved),
                     t.size(),
                     plan.bytes,
                     m.wall_median,
                     m.report.model_time,
                     formula_time(plan, t, links, model.model),
                     m.report.messages,
                     m.report.bytes,
                     !m.failure};
        ++done;
        if (!bar)
          std::fprintf(stderr, "sweep %d/%d: %s, %s, %s: %s, wall %s, model %s, formula %s\n", done,
                       total, t.name().c_str(), format_bytes(plan.bytes).c_str(), row.algo.c_str(),
                       m.failure ? ("WRONG: " + *m.failure).c_str() : "ok",
                       format_seconds(row.wall_seconds).c_str(),
                       format_seconds(row.model_seconds).c_str(),
                       format_seconds(row.formula_seconds).c_str());
        else if (m.failure)
          std::fprintf(stderr, "\r\033[K%s, %s: WRONG: %s\n", t.name().c_str(),
                       format_bytes(plan.bytes).c_str(), m.failure->c_str());
        rows.push_back(std::move(row));
      }
    }
    if (bar) {
      progress(done, total, "done");
      std::fprintf(stderr, "\n");
    }

    write_csv(csv, rows);
    if (csv != stdout) {
      const bool ok = std::fclose(csv) == 0;
      if (!ok) throw UsageError("writing the --csv file '" + csv_ + "' failed");
      print_table(rows);
      std::printf("csv: %s (%zu rows)\n", csv_.c_str(), rows.size());
    }
    if (!plot_.empty()) {
      FILE* notes = csv == stdout ? stderr : stdout;  // keep a CSV on stdout clean
      if (!gnuplot) {
        std::fprintf(notes,
                     "plot: gnuplot is not installed (no `gnuplot` on PATH), so no PNG "
                     "plots; the CSV has every number (apt-get install gnuplot)\n");
      } else {
        try {
          for (const std::string& png : plot(rows, plot_, *gnuplot))
            std::fprintf(notes, "plot: %s\n", png.c_str());
        } catch (const std::exception& e) {
          std::fprintf(stderr, "hypercomm: warning: no plots: %s\n", e.what());
        }
      }
    }
    for (const SweepRow& r : rows)
      if (!r.verified) return kExitWrong;
    return kExitOk;
  }

 private:
  static void progress(int done, int total, const std::string& what) {
    constexpr int kWidth = 30;
    const int filled = total == 0 ? kWidth : done * kWidth / total;
    std::fprintf(stderr, "\r\033[K[%s%s] %d/%d %s",
                 std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(kWidth - filled), '.').c_str(), done, total,
                 what.c_str());
    std::fflush(stderr);
  }

  static void print_table(const std::vector<SweepRow>& rows) {
    std::printf("%-14s %-19s %10s %7s %12s %12s %12s %9s\n", "topology", "algorithm", "bytes",
                "check", "wall", "model", "formula", "messages");
    for (const SweepRow& r : rows)
      std::printf("%-14s %-19s %10s %7s %12s %12s %12s %9llu\n", r.topology.c_str(), r.algo.c_str(),
                  format_bytes(r.bytes).c_str(), r.verified ? "ok" : "WRONG",
                  format_seconds(r.wall_seconds).c_str(), format_seconds(r.model_seconds).c_str(),
                  format_seconds(r.formula_seconds).c_str(),
                  static_cast<unsigned long long>(r.messages));
  }

  std::string op_, family_, csv_, plot_;
  std::vector<std::string> p_, bytes_;
  CallOptions call_{3};
  ModelOptions model_;
};

}  // namespace

std::unique_ptr<Command> make_sweep_command(CLI::App& parent) {
  return std::make_unique<SweepCommand>(parent);
}

}  // namespace hypercomm::cli
