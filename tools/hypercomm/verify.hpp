// One collective call as a measurable, verifiable workload (the approach of tools/demo.cpp):
// per-VP input and output buffers built once, the call alone, and a check of every VP's result
// against a sequential computation. `run` and `sweep` share it.
#pragma once

#include <cstdint>
#include <hypercomm/hypercomm.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "args.hpp"

namespace hypercomm::cli {

// How an irregular collective's counts are shared out among the ranks (`--counts`): all equal;
// rank i's share proportional to 1/(i+1) (Zipf); or one rank (the last) holding 90% of the data.
// all_to_allv shares each sender's data among the receivers so.
enum class Distribution { uniform, zipf, one_heavy };
[[nodiscard]] const char* to_string(Distribution d) noexcept;
[[nodiscard]] Distribution parse_distribution(std::string_view text);

// What to run: the collective, the algorithm asked for, the element type, the bytes one VP
// passes (as textbook_time counts them; the irregular collectives: on average), the root and
// shift where they apply, and the irregular collectives' distribution of counts.
struct Spec {
  Collective op = Collective::all_reduce;
  Algo algo = Algo::automatic;
  DataType type = DataType::int64;
  std::uint64_t bytes = 0;
  int root = 0;
  int shift = 1;
  Distribution counts = Distribution::uniform;
};

// Whether op is one of the irregular ("v") collectives.
[[nodiscard]] bool irregular(Collective op) noexcept;

// What the bytes one VP passes (`--bytes`; m in the cost formulas but for all_to_all) are.
[[nodiscard]] const char* meaning_of_bytes(Collective op) noexcept;

// Whether the operation has a root (broadcast, reduce, scatter, gather) or a shift.
[[nodiscard]] bool has_root(Collective op) noexcept;

// A spec checked against a machine: the algorithm it resolves to, its card, and the size after
// rounding down to whole elements (and, for the p-block operations, whole blocks).
struct Plan {
  Spec spec;
  Algo resolved = Algo::automatic;
  const Card* card = nullptr;
  std::uint64_t bytes = 0;      // what one VP passes after rounding, as textbook_time counts it
  std::size_t elements = 0;     // bytes / element size
  std::uint64_t footprint = 0;  // bytes of all VPs' buffers together
  // The irregular collectives: the counts (elements) every member passes, p of them, or all_to_
  // allv's p x p row-major (counts[i*p + j]: from rank i to rank j); `elements` is their mean
  // per rank (all_to_allv: per sender).
  std::vector<std::size_t> counts;
  [[nodiscard]] bool rounded() const noexcept { return bytes != spec.bytes; }
  // What the formula needs besides the machine and the size: root, shift, element size, and
  // the operator (the CLI reduces with sum, which commutes).
  [[nodiscard]] CallShape shape() const noexcept {
    return CallShape{.root = spec.root,
                     .shift = spec.shift,
                     .elem_size = size_of(spec.type),
                     .commutative = true};
  }
};

// Checks the spec against the topology and link mode: root in range, the algorithm able to run
// (AlgorithmError's reason), the buffers fitting in memory. Throws UsageError otherwise.
[[nodiscard]] Plan make_plan(const Spec& spec, const Topology& topology, Links links);

// The buffers of one call on every VP.
class Workload {
 public:
  virtual ~Workload() = default;
  // Restores VP `vp`'s buffers before a call (outputs to a sentinel, a broadcast's buffer).
  virtual void reset(int vp) = 0;
  // The collective alone, on this VP.
  virtual void call(Proc& vp) = 0;
  // Compares every VP's result with the sequential computation: nothing when all agree, else
  // the first difference ("VP 3, element 17: got 5, expected 6").
  [[nodiscard]] virtual std::optional<std::string> verify() const = 0;
};

[[nodiscard]] std::unique_ptr<Workload> make_workload(const Plan& plan, const Topology& topology);

// The card's formula for the plan on this machine: textbook_time, or for an irregular
// collective textbook_time_v with the plan's counts (its uneven form).
[[nodiscard]] double formula_time(const Plan& plan, const Topology& topology, Links links,
                                  const CostModel& model);
// Bounds on it where it is NaN (the card states no closed form for the call).
[[nodiscard]] TimeBounds formula_bounds(const Plan& plan, const Topology& topology, Links links,
                                        const CostModel& model);

// "zipf: 3 to 147 elements per rank, 1000 in all" (what run prints for the counts).
[[nodiscard]] std::string describe_counts(const Plan& plan);

// One run with the collective alone (its Report: model time, messages, link traffic), then
// `repeat` timed runs, each the slowest VP's time for the call after a barrier.
struct Measurement {
  Report report;             // of the run with the collective alone
  std::vector<double> wall;  // per timed run: the slowest VP's seconds
  double wall_median = 0;
  std::optional<std::string> failure;  // verification failure, nothing when verified
};
[[nodiscard]] Measurement measure(Machine& machine, Workload& workload, int repeat);

// One run with Options::trace on a fresh machine: the events for a trace or a picture.
[[nodiscard]] Report traced_run(const Topology& topology, Options options, Workload& workload);

}  // namespace hypercomm::cli
