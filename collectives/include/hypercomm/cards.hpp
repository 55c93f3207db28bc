// The algorithm cards of collectives/ALGORITHMS.md as data: source, cost formula, restrictions,
// and the formula evaluated for a machine, so that every run can show its textbook time beside
// its wall time and model time.
#pragma once

#include <hypercomm/detail/core.hpp>
#include <hypercomm/options.hpp>
#include <hypercomm/topology.hpp>

#include <optional>
#include <span>
#include <string>

namespace hypercomm {

using Collective = detail::Collective;

using detail::to_string;  // to_string(Collective)
[[nodiscard]] std::optional<Collective> parse_collective(std::string_view name) noexcept;
[[nodiscard]] std::optional<Algo> parse_algo(std::string_view name) noexcept;

struct Card {
  Collective op;
  Algo algo;
  const char* source;        // "Grama et al., Algorithm 4.1"
  const char* formula;       // "(ts + tw*m) * log p", m as the card defines it
  const char* restrictions;  // "p = 2^d; a hypercube topology or Links::routed"
};

// Whether the collective takes an Algo argument (scan, exscan, scatter, gather, circular_shift
// and barrier always choose for themselves).
[[nodiscard]] bool takes_algo(Collective op) noexcept;

// Every algorithm of every collective.
[[nodiscard]] std::span<const Card> cards() noexcept;
[[nodiscard]] const Card* find_card(Collective op, Algo algo) noexcept;

// The algorithm `requested` resolves to for this call (automatic's choice), or the reason it
// cannot run (AlgorithmError) exactly as the collective itself would decide.
[[nodiscard]] Algo resolve(Collective op, Algo requested, const Topology& t, Links links,
                           std::size_t bytes);

// The card's cost formula for this machine and message: `bytes` is what one VP passes (the
// whole buffer for broadcast/reduce/all_reduce/scan, one block for all_gather/reduce_scatter/
// scatter/gather, the whole in for all_to_all/circular_shift); `shift` is circular_shift's.
[[nodiscard]] double textbook_time(Collective op, Algo algo, const Topology& t, Links links,
                                   std::size_t bytes, const CostModel& model, int shift = 0);

}  // namespace hypercomm
