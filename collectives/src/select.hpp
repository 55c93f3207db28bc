// Choosing an algorithm (DESIGN.md example 3): validation and automatic's choice, both read off
// the registry of cards (registry.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "card.hpp"
#include "comm.hpp"
#include "ring.hpp"

namespace hypercomm::detail {

// The size of the elements of the collective call this thread runs (Call sets it for the call's
// span, 0 outside one), so that a CollectiveMismatch it raises counts elements beside bytes
// ("13 elements (104 bytes)"). Other threads (the watchdog, run's end) name bytes.
// Inline, as the memo below: each collective call sets and reads it three times, and three calls
// out of line cost it about 20 instructions.
inline constinit thread_local std::size_t tl_call_element = 0;
inline void set_call_element(std::size_t element) noexcept { tl_call_element = element; }
[[nodiscard]] inline std::size_t call_element() noexcept { return tl_call_element; }

struct Choice {
  const AlgorithmCard* card = nullptr;
  Family family = Family::ring;  // the composite algorithms' sub-algorithms (family_of)
  int chunks = 1;                // ESBT pipeline depth
  bool all_ports = false;        // ESBT: the all-port schedule
  [[nodiscard]] Algo algo() const noexcept { return card->text.algo; }
};

// The header's algorithm byte: the algorithm run (low nibble) and the one asked for (high), so
// that VPs passing Algo::ring and Algo::automatic disagree on the algorithm (API.md) even where
// automatic runs the ring's.
static_assert(static_cast<unsigned>(Algo::reduce_broadcast) < 16);
[[nodiscard]] inline std::uint8_t tag_algo(Algo run, Algo requested) noexcept {
  return static_cast<std::uint8_t>(static_cast<unsigned>(run) | static_cast<unsigned>(requested)
                                                                    << 4);
}
[[nodiscard]] inline Algo tag_algo_run(std::uint8_t algo) noexcept {
  return static_cast<Algo>(algo & 0xF);
}
[[nodiscard]] inline Algo tag_algo_requested(std::uint8_t algo) noexcept {
  return static_cast<Algo>(algo >> 4);
}

// What automatic's choice knows of a reduction's operator (the other collectives: the defaults).
// A non-commutative one rules out the cards that do not fold in id order (keeps_id_order); one
// that never throws is folded as the message lands where a card receives so (Comm::recv_fold),
// and those folds cost the choice nothing beyond the transfer (CostQuery::landing_tc).
struct OperatorTraits {
  bool commutative = true;
  bool never_throws = true;
  bool operator==(const OperatorTraits&) const = default;
};
[[nodiscard]] inline OperatorTraits traits_of(const Reducer& op) noexcept {
  return {.commutative = op.commutative, .never_throws = op.never_throws};
}

// The one validation and choice of an algorithm, for the collectives (select) and for resolve
// and textbook_time alike: Algo::automatic takes the card of op that costs least on the
// reference machine (selection_cost), ties by the critical path where VPs share cores, then in
// registry order; any other Algo the first card of that Algo (in registry order) that can run
// here. Otherwise AlgorithmError, its message `prefix` +
// what went wrong, naming `where` (the machine, or the group on it). `bytes` is what selection_cost
// takes: for an irregular collective its largest block, with `total` the bytes of all its blocks
// (0 for the regular collectives); `shift` the circular shift's q; `op_traits` the reduction's
// operator; gray_ring says that t is a ring embedded in a hypercube by the Gray code (a split
// group's, GroupInfo::gray_ring), which the cards that need one (needs_gray_ring_group) ask;
// shared_cores the cores the machine's VPs share, or 0 (CallShape::shared_cores).
[[nodiscard]] const AlgorithmCard& choose(Collective op, Algo requested, const Topology& t,
                                          Links links, std::size_t bytes, std::size_t total,
                                          int shift, const std::string& where,
                                          const std::string& prefix = {},
                                          OperatorTraits op_traits = {}, bool gray_ring = false,
                                          int shared_cores = 0);

// A VP calls the same collective with the same size again and again: it remembers its last
// choice per operation, and what it was made for, so that the registry is consulted once, not on
// every call. The group stands for its topology and shape and the machine's options (links, cost
// model, shared cores): GroupInfo::serial, 0 for none yet.
struct ChoiceMemo {
  std::uint64_t group = 0;
  Algo requested = Algo::automatic;
  std::size_t bytes = 0;
  std::size_t total = 0;
  int shift = 0;
  OperatorTraits op_traits{};
  Choice choice{};
};
inline constinit thread_local std::array<ChoiceMemo,
                                         static_cast<std::size_t>(Collective::reduce_scatterv) + 1>
    tl_choice_memo{};
// The registry consulted, the choice remembered in m (select's slow path, out of line).
[[gnu::noinline]] Choice select_and_remember(ChoiceMemo& m, Collective op, const GroupInfo& g,
                                             Links links, std::size_t bytes, Algo requested,
                                             int vp_id, const CostModel& model, std::size_t total,
                                             int shift, OperatorTraits op_traits, int shared_cores);

// Resolves `requested` for this call on group g (its topology; under Links::strict also whether
// its members are machine neighbours), or throws AlgorithmError (on every member alike, before
// any message is sent) naming why it cannot run there; vp_id is the calling VP's machine id;
// links, model and shared_cores are its machine's (Options, Port::shared_core_count), the same
// on every call on g (the memo keys on g.serial, not on them). The memo's look is inline, a few
// compares in the collective's frame: out of line, its call, frame and eleven arguments (five
// pushed on the stack) took about 55 instructions a call, and a broadcast of 8 B at p = 2 takes
// 23 fewer so (back to back 0.94-0.97x the time, docs/performance.md).
[[nodiscard]] inline Choice select(Collective op, const GroupInfo& g, Links links,
                                   std::size_t bytes, Algo requested, int vp_id,
                                   const CostModel& model, std::size_t total = 0, int shift = 0,
                                   OperatorTraits op_traits = {}, int shared_cores = 0) {
  ChoiceMemo& m = tl_choice_memo[static_cast<std::size_t>(op)];
  if (m.group == g.serial && m.bytes == bytes && m.requested == requested && m.total == total &&
      m.shift == shift && m.op_traits == op_traits) [[likely]]
    return m.choice;
  return select_and_remember(m, op, g, links, bytes, requested, vp_id, model, total, shift,
                             op_traits, shared_cores);
}

// "VP 5", or "VP 5 (rank 1 of row 1 of mesh:4x4)" on a group smaller than the machine.
[[nodiscard]] std::string who(const GroupInfo& g, int vp_id);

// The regular collective whose algorithms an irregular one runs (itself for the regular ones).
[[nodiscard]] Collective regular_of(Collective op) noexcept;

// The cost automatic compares: the card's formula on a fixed reference machine (not
// Options::model: the choice should suit the hardware, not the model being taught), with the
// time to combine a byte (none for a fold as the message lands, op_traits.never_throws) and the
// congestion of the XOR exchanges counted, blocks of m/p, th = 0, in seconds. It is evaluated in
// units of 0.1 ns (ts = 10000, tw = 1 per byte), where the sums are exact for whole byte counts, so
// that algorithms of equal cost compare equal and the registry's order decides (not rounding).
// Where the VPs share cores (shared_cores > 0, fewer than p) and the card states its work
// (AlgorithmCard::work), the larger of that cost and the work of all VPs spread over the cores,
// a message costing ts for each VP of a core (its receiver is one of them): a VP's core also runs
// the others, so what all of them send and combine bounds the time as the critical path does
// (choose breaks ties by the critical path).
[[nodiscard]] double selection_cost(const AlgorithmCard& card, const Topology& t, Links links,
                                    std::size_t bytes, std::size_t total = 0, int shift = 0,
                                    OperatorTraits op_traits = {}, int shared_cores = 0);

// Whether op is one of the irregular ("v") collectives.
[[nodiscard]] constexpr bool is_irregular(Collective op) noexcept {
  return op >= Collective::all_gatherv;
}

}  // namespace hypercomm::detail
