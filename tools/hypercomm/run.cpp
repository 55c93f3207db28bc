// `hypercomm run`: one collective on one machine, verified, timed, and set beside its model time
// and its card's textbook formula.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "args.hpp"
#include "commands.hpp"
#include "verify.hpp"

#if __has_include(<hypercomm/picture.hpp>) && !defined(HYPERCOMM_CLI_NO_SVG)
#include <hypercomm/picture.hpp>
#define HYPERCOMM_CLI_HAS_SVG 1
#else
#define HYPERCOMM_CLI_HAS_SVG 0
#endif

namespace hypercomm::cli {

namespace {

bool reduces(Collective op) {
  return op == Collective::reduce || op == Collective::all_reduce ||
         op == Collective::reduce_scatter || op == Collective::scan || op == Collective::exscan;
}

void check_writable(const std::string& path, const char* option) {
  if (path.empty()) return;
  std::ofstream probe(path, std::ios::app);
  if (!probe)
    throw UsageError(std::string("cannot write the ") + option + " file '" + path +
                     "': " + std::strerror(errno));
}

void line(const char* label, const std::string& text) {
  std::printf("  %-13s %s\n", label, text.c_str());
}

std::string with_human(std::uint64_t bytes) {
  const std::string human = format_bytes(bytes);
  return human == std::to_string(bytes) + " B" ? human
                                               : std::to_string(bytes) + " B (" + human + ")";
}

class RunCommand final : public Command {
 public:
  explicit RunCommand(CLI::App& parent) {
    app_ = parent.add_subcommand("run", "Run one collective, verify it, and time it");
    app_->footer(
        "Example: hypercomm run --topology hypercube:4 --op all_reduce --bytes 1M\n"
        "Exit status: 0 verified, 1 a wrong result (or a failed run), 2 a bad argument.");
    app_->add_option("--topology,-t", topology_,
                     "ring:P, linear:P, mesh:RxC (torus), mesh:RxC:open or hypercube:D")
        ->required();
    app_->add_option("--op,-o", op_, "the collective: " + operation_names())->required();
    app_->add_option("--bytes,-b", bytes_,
                     "bytes one VP passes, as the cost formula counts them (suffix K, M, G)")
        ->capture_default_str();
    call_.add_to(*app_, "routed (any pair may talk) or strict (neighbours only)",
                 "timed runs; the median is reported");
    model_.add_to(*app_);
    app_->add_option("--trace", trace_, "write a Chrome/Perfetto trace JSON of a traced run");
    app_->add_option("--svg", svg_, "write an SVG picture of the run (when built with it)");
  }

  int execute() override {
    const Topology topology = parse_topology(topology_);
    Spec spec = call_.spec(op_);
    spec.bytes = parse_bytes(bytes_, "--bytes");
    const Links links = call_.links();
    const Plan plan = make_plan(spec, topology, links);
    const ModelChoice model = choose_model(model_.overrides());
    check_writable(trace_, "--trace");
    check_writable(svg_, "--svg");

    Options options;
    options.links = links;
    options.model = model.model;
    std::unique_ptr<Workload> workload = make_workload(plan, topology);
    Measurement m;
    {
      Machine machine(topology, options);
      m = measure(machine, *workload, call_.repeat());
    }
    const double formula = formula_time(plan, topology, links, model.model);

    const int p = topology.size();
    std::printf("hypercomm run\n");
    line("topology",
         topology.name() + " (" + std::to_string(p) + " VP" + (p == 1 ? "" : "s") + ")");
    std::string op = std::string(to_string(spec.op)) + " (" + to_string(spec.type);
    if (reduces(spec.op)) op += ", sum";
    if (has_root(spec.op)) op += ", root " + std::to_string(spec.root);
    if (spec.op == Collective::circular_shift) op += ", shift " + std::to_string(spec.shift);
    line("operation", op + ")");
    if (irregular(spec.op)) line("counts", describe_counts(plan));
    const std::string variant = plan.card != nullptr && plan.card->variant != nullptr
                                    ? std::string(" (") + plan.card->variant + ")"
                                    : "";
    line("algorithm", std::string(to_string(spec.algo)) + " -> " + to_string(plan.resolved) +
                          variant + (takes_algo(spec.op) ? "" : " (chooses for itself)"));
    line("links", to_string(links));
    char text[256];
    std::snprintf(text, sizeof text, "ts = %.4g s, tw = %.4g s/byte, th = %.4g s", model.model.ts,
                  model.model.tw, model.model.th);
    line("cost model", std::string(text) + " (" + model.origin + ")");
    std::string bytes = plan.rounded() ? std::to_string(spec.bytes) + " B requested, " +
                                             with_human(plan.bytes) + " used"
                                       : with_human(plan.bytes);
    bytes += " per VP, " + std::string(meaning_of_bytes(spec.op)) + "; " +
             std::to_string(plan.elements) + " " + to_string(spec.type) + " elements" +
             (irregular(spec.op) ? " on average" : "");
    line("bytes", bytes);
    line("verified", m.failure ? "WRONG: " + *m.failure : "ok");
    line("wall time",
         format_seconds(m.wall_median) + " (median of " + std::to_string(call_.repeat()) + " run" +
             (call_.repeat() == 1 ? "" : "s") + "; the slowest VP's call, after a barrier)");
    line("model time", format_seconds(m.report.model_time) + " (Report::model_time)");
    if (plan.card != nullptr) {
      // The irregular cards' formula is their uneven form, evaluated for these counts.
      if (std::isnan(formula)) {  // no closed form for this call: the card's bounds
        const TimeBounds b = formula_bounds(plan, topology, links, model.model);
        line("formula", "no closed form for this call: between " + format_seconds(b.lower) +
                            " and " + format_seconds(b.upper) + "; " + plan.card->formula);
      } else {
        line("formula", format_seconds(formula) + (irregular(spec.op) ? " for these counts" : "") +
                            " = " + plan.card->formula);
      }
      line("source", plan.card->source);
    }
    line("messages", std::to_string(m.report.messages));
    line("bytes moved", with_human(m.report.bytes));
    line("busiest link", busiest_link(m.report));

    if (!trace_.empty() || !svg_.empty()) {
      const Report traced = traced_run(topology, options, *workload);
      if (!trace_.empty()) {
        traced.write_chrome_trace(trace_);
        line("trace", trace_ + " (" + std::to_string(traced.events.size()) +
                          " events; open in https://ui.perfetto.dev)");
      }
      if (!svg_.empty()) {
#if HYPERCOMM_CLI_HAS_SVG
        write_svg(traced, topology, svg_);
        line("svg output", svg_);
#else
        line("svg output", "not available in this build");
#endif
      }
    }
    return m.failure ? kExitWrong : kExitOk;
  }

 private:
  static std::string busiest_link(const Report& report) {
    const std::pair<const std::pair<int, int>, LinkStats>* busiest = nullptr;
    for (const auto& entry : report.link_traffic)
      if (busiest == nullptr || entry.second.bytes > busiest->second.bytes ||
          (entry.second.bytes == busiest->second.bytes &&
           entry.second.messages > busiest->second.messages))
        busiest = &entry;
    if (busiest == nullptr) return "none (no messages)";
    std::size_t ties = 0;
    for (const auto& entry : report.link_traffic)
      ties += entry.second.bytes == busiest->second.bytes ? 1 : 0;
    const std::size_t used = report.link_traffic.size();
    return std::to_string(busiest->first.first) + " -> " + std::to_string(busiest->first.second) +
           ": " + std::to_string(busiest->second.messages) + " message" +
           (busiest->second.messages == 1 ? "" : "s") + ", " + with_human(busiest->second.bytes) +
           " (" + std::to_string(used) + " link" + (used == 1 ? "" : "s") + " used" +
           (ties > 1 ? ", " + std::to_string(ties) + " of them as busy" : "") + ")";
  }

  std::string topology_, op_, bytes_ = "1K", trace_, svg_;
  CallOptions call_{5};
  ModelOptions model_;
};

}  // namespace

std::unique_ptr<Command> make_run_command(CLI::App& parent) {
  return std::make_unique<RunCommand>(parent);
}

}  // namespace hypercomm::cli
