// The algorithm table (DESIGN.md example 3): which algorithms each collective has, what each
// needs, and which one `automatic` picks.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "blocks.hpp"
#include "comm.hpp"
#include "ring.hpp"
#include "scratch.hpp"

namespace hypercomm::detail {

struct Choice {
  Algo algo = Algo::automatic;
  Family family = Family::ring;  // for two_phase and the operations without an Algo argument
  int chunks = 1;                // ESBT pipeline depth
};

// Resolves `requested` for this call on group g (its topology; under Links::strict also whether
// its members are machine neighbours), or throws AlgorithmError (on every member alike, before
// any message is sent) naming why it cannot run there; vp_id is the calling VP's machine id.
// `bytes` is what selection_cost takes: for an irregular collective its largest block, with
// `total` the bytes of all its blocks (0 for the regular collectives).
[[nodiscard]] Choice select(Collective op, const GroupInfo& g, Links links, std::size_t bytes,
                            Algo requested, int vp_id, const CostModel& model,
                            std::size_t total = 0);

// "VP 5", or "VP 5 (rank 1 of row 1 of mesh:4x4)" on a group smaller than the machine.
[[nodiscard]] std::string who(const GroupInfo& g, int vp_id);

// The regular collective whose algorithms an irregular one runs (itself for the regular ones).
[[nodiscard]] Collective regular_of(Collective op) noexcept;

// automatic's choice where it must not weigh the sizes (all_to_allv, whose members' counts
// differ, when the pairwise exchange can run), else nullopt: weigh selection_cost.
[[nodiscard]] std::optional<Algo> automatic_without_sizes(Collective op, const Topology& t,
                                                          Links links);

// The algorithms a collective can run, in the order automatic prefers on equal cost.
[[nodiscard]] std::span<const Algo> algorithms_of(Collective op) noexcept;

// Why `algo` cannot run for this collective on this machine, or nullptr when it can.
[[nodiscard]] const char* restriction(Collective op, Algo algo, const Topology& t, Links links);

// The cost the table compares, in seconds of a fixed reference machine (not Options::model:
// the choice should suit the hardware, not the model being taught). For an irregular collective
// `bytes` is its largest block and `total` the bytes of all its blocks: each step's message is
// costed at the most it can carry, k blocks of at most `bytes` and never more than `total` (with
// equal blocks, the regular formula of the same blocks).
[[nodiscard]] double selection_cost(Collective op, Algo algo, const Topology& t, std::size_t bytes,
                                    std::size_t total = 0);

// Whether op is one of the irregular ("v") collectives.
[[nodiscard]] constexpr bool is_irregular(Collective op) noexcept {
  return op >= Collective::all_gatherv;
}

// ESBT pipeline depth for a broadcast of `bytes`: the whole k next to k* = sqrt(m*d*tw/ts) with
// the smaller (k + d)(ts + tw*m/k), in [1, max(m, 1)] (d = max(1, log p)); ts and tw from `model`
// when it has tw > 0, else the reference machine's. The broadcast and its card use this one k.
[[nodiscard]] int esbt_chunk_count(const Topology& t, std::size_t bytes, const CostModel& model);

}  // namespace hypercomm::detail
