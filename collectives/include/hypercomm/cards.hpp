// The algorithm cards of collectives/ALGORITHMS.md as data: source, cost formula, restrictions,
// and the formula evaluated for a machine, so that every run can show its textbook time beside
// its wall time and model time.
#pragma once

#include <cstddef>
#include <hypercomm/detail/core.hpp>
#include <hypercomm/export.hpp>
#include <hypercomm/options.hpp>
#include <hypercomm/topology.hpp>
#include <optional>
#include <span>
#include <string>

HYPERCOMM_PUBLIC_BEGIN

namespace hypercomm {

using Collective = detail::Collective;

using detail::to_string;  // to_string(Collective)
[[nodiscard]] std::optional<Collective> parse_collective(std::string_view name) noexcept;
[[nodiscard]] std::optional<Algo> parse_algo(std::string_view name) noexcept;

struct Card {
  Collective op;
  Algo algo;
  const char* source;        // "Grama et al., Algorithm 4.1"
  const char* formula;       // the exact cost, m as the card defines it (ALGORITHMS.md)
  const char* restrictions;  // "p = 2^d; a hypercube topology or Links::routed"
  // The book's formula for the operation on this topology (Grama et al. chapter 4 and its
  // Table 4.1, cut-through: hop term dropped), or nullptr where the book gives none.
  const char* book = nullptr;
  // Where two cards share an Algo (the circular shift's E-cube routed message and its
  // dimension-by-dimension exchanges), what tells them apart; nullptr elsewhere.
  const char* variant = nullptr;
};

// Whether the collective takes an Algo argument (scan, exscan, scatter, gather, circular_shift
// and barrier always choose for themselves).
[[nodiscard]] bool takes_algo(Collective op) noexcept;

// Every algorithm of every collective.
[[nodiscard]] std::span<const Card> cards() noexcept;
// The first card of (op, algo), or nullptr.
[[nodiscard]] const Card* find_card(Collective op, Algo algo) noexcept;
// The card that runs `algo` (automatic resolved) for this call, where two cards share an Algo
// (the circular shift's E-cube routed message and its dimension-by-dimension exchanges); else
// AlgorithmError, as resolve.
[[nodiscard]] const Card* find_card(Collective op, Algo algo, const Topology& t, Links links,
                                    std::size_t bytes, int shift = 0);

// The algorithm `requested` resolves to for this call (automatic's choice), or the reason it
// cannot run (AlgorithmError) exactly as the collective itself would decide.
[[nodiscard]] Algo resolve(Collective op, Algo requested, const Topology& t, Links links,
                           std::size_t bytes);

// What else a call's cost depends on besides the machine and the message size.
struct CallShape {
  int root = 0;               // broadcast, reduce, scatter, gather
  int shift = 0;              // circular_shift (any integer; taken mod p)
  std::size_t elem_size = 1;  // bytes per element: where a vector is cut into p blocks
  bool commutative = true;    // the reduction operator (hypercomm::is_commutative_v<Op>)
  // The reduction operator cannot throw (hypercomm::detail::never_throws_v<T, Op>: noexcept, or
  // a standard arithmetic or bitwise function object on an arithmetic T). Then the cards that
  // receive by folding (the hypercube, ring, line and mesh reductions, the last step of the
  // hypercube reduce-scatter) fold each message as it lands, and automatic charges those folds
  // no combine time; the model time (textbook_time) does not charge combines either way.
  bool never_throws = true;
  // The ring is a group of a hypercube's VPs in reflected Gray-code order (rank r is VP
  // gray(r), as split(vp.world(), 0, gray_inverse(id)) makes it; Grama et al. section 2.7):
  // circular_shift's Algo::hypercube then names the book's q-shift on it (section 4.6.2).
  bool gray_ring = false;
  // The cores the VPs share when they outnumber them, or 0: a core each (what
  // Machine::shared_core_count() says of a machine); -1: as a machine of this topology in this
  // process (hypercomm::shared_core_count). Where VPs share cores, automatic's choice of a
  // broadcast, reduce, scan or exscan weighs beside the card's critical path the work of all VPs
  // spread over the cores (collectives/ALGORITHMS.md, "VPs that share cores"). The overloads
  // without a CallShape take -1.
  int shared_cores = -1;
};

// find_card for a call of this shape: its shift, its operator (a non-commutative one rules out
// the cards that fold in another order than the ids; one that may throw is weighed with its
// combines), gray_ring and shared_cores.
[[nodiscard]] const Card* find_card(Collective op, Algo algo, const Topology& t, Links links,
                                    std::size_t bytes, const CallShape& shape);

// The card's cost formula for this machine and message, exactly: it equals Report::model_time
// of a run that makes this one call on every VP (tests/test_fidelity.cpp checks it), or NaN
// where the card states no closed form for this call (uneven blocks of a split vector, a hop
// term whose count varies along the schedule, some order-keeping variants: the card's formula
// text says which; textbook_bounds bounds those). `bytes`
// is what one VP passes (the whole buffer for broadcast/reduce/all_reduce/scan/exscan, one
// block for all_gather/reduce_scatter/scatter/gather, the whole in for all_to_all/
// circular_shift, 0 for barrier). Algo::automatic is resolved first (resolve); any other
// algorithm must be able to run here (else AlgorithmError), and the operations without an Algo
// argument accept their cards' names too. The hop term th*hops is counted where
// textbook_counts_hops says so; elsewhere the formula leaves it out, as the book's cut-through
// formulas do. The overload without a CallShape takes root 0, 1-byte elements and a commutative
// operator: exact whenever those do not matter (they matter for a non-commutative operator, and
// for the element size only where p blocks of a vector come out uneven).
[[nodiscard]] double textbook_time(Collective op, Algo algo, const Topology& t, Links links,
                                   std::size_t bytes, const CostModel& model,
                                   const CallShape& shape);
[[nodiscard]] double textbook_time(Collective op, Algo algo, const Topology& t, Links links,
                                   std::size_t bytes, const CostModel& model, int shift = 0);

// Lower and upper bounds on that model time, from closed forms of the same card: both equal
// textbook_time where it is a number. Where it is NaN: below, equal blocks of the smaller size
// with no hop term and a commutative operator; above, equal blocks of the larger size with each
// message charged its longest route (one hop for an algorithm on neighbour links) in ts.
struct TimeBounds {
  double lower = 0;
  double upper = 0;
};
[[nodiscard]] TimeBounds textbook_bounds(Collective op, Algo algo, const Topology& t, Links links,
                                         std::size_t bytes, const CostModel& model,
                                         const CallShape& shape = {});

// The irregular collectives (API.md, "Irregular collectives"), uneven blocks and all. `counts`
// are elements of shape.elem_size bytes: one per rank for all_gatherv, gatherv, scatterv and
// reduce_scatterv (the counts every member passes), p*p for all_to_allv, row-major (counts[i*p +
// j]: the elements rank i sends to rank j). std::invalid_argument when there are not as many, or
// op is a regular collective. (The regular textbook_time takes an irregular op too, with equal
// blocks of `bytes`: all_to_allv's `bytes` is the whole in.)
//
// resolve_v: the algorithm `requested` resolves to, as the collective decides it (automatic
// weighs the largest block and the total), or AlgorithmError.
[[nodiscard]] Algo resolve_v(Collective op, Algo requested, const Topology& t, Links links,
                             std::span<const std::size_t> counts, std::size_t elem_size);
// The card that runs `algo` for this irregular call (where two cards share an Algo: the ring's
// and the linear array's, the torus's and the open mesh's), or AlgorithmError, as resolve_v.
[[nodiscard]] const Card* find_card_v(Collective op, Algo algo, const Topology& t, Links links,
                                      std::span<const std::size_t> counts, std::size_t elem_size);

// The card's uneven formula for these counts, exactly: the longest path of the algorithm's
// schedule, every message ts + tw*bytes (+ th*hops where received), each VP's clock the cost
// model's (a sendrecv takes the later of its send and its receive). It equals Report::model_time
// of a run that makes this one call (tests/test_fidelity.cpp), hops counted everywhere. Where the
// card states a closed form it is this value (the ring all-gatherv: (p-1)*(ts + tw*b_max + th)).
[[nodiscard]] double textbook_time_v(Collective op, Algo algo, const Topology& t, Links links,
                                     std::span<const std::size_t> counts, const CostModel& model,
                                     const CallShape& shape = {});

// Where the card has no closed form for uneven blocks (the mesh all-gatherv and reduce-scatterv,
// all_to_allv, the non-commutative reduce-scatterv), the simple bounds it states: no VP finishes
// before its own sends add up (lower), and no step lengthens the longest clock by more than the
// step's largest message (upper: the sum over the steps of ts + tw*bytes + th*hops of it). For
// all_gatherv, reduce_scatterv and all_to_allv these; for gatherv and scatterv, whose cards are
// exact, both are textbook_time_v.
[[nodiscard]] TimeBounds textbook_bounds_v(Collective op, Algo algo, const Topology& t, Links links,
                                           std::span<const std::size_t> counts,
                                           const CostModel& model, const CallShape& shape = {});

// Whether textbook_time counts the hop term exactly here (where it is a number). It does
// wherever it can: when every message crosses one link (an algorithm on its own topology), when
// a step's routes have the same length for every VP (the hypercube algorithms routed over a ring
// or mesh of 2^d VPs, the dissemination barrier on a ring, the pairwise all-to-all on a
// hypercube), for the routed circular shift (its longest route), and for the ring all-gather and
// reduce-scatter routed over a mesh or hypercube (their longest chain). It does not for the
// other ring algorithms (broadcast, reduce, scan, scatter, gather, all_to_all, circular_shift)
// routed over a mesh, a hypercube or a linear array, nor for the torus's mesh algorithms routed
// on a mesh without wraparound (nor the split-message algorithms whose family is one of those),
// whose routes differ in length from VP to VP: there the formula leaves th out, as the book's
// cut-through formulas do. The irregular collectives' formulas count every hop.
[[nodiscard]] bool textbook_counts_hops(Collective op, Algo algo, const Topology& t, Links links,
                                        std::size_t bytes);

}  // namespace hypercomm

HYPERCOMM_PUBLIC_END
