// The public face of the registry (hypercomm/cards.hpp): the cards as data, resolve, and each
// card's cost evaluated for a machine: textbook_time, the card's closed form (its file,
// card.hpp), NaN where it has none for the call, and textbook_bounds (cost_bounds, card.cpp).
// tests/test_fidelity.cpp checks every one against the model time of real runs.
#include <algorithm>
#include <cmath>
#include <hypercomm/cards.hpp>
#include <hypercomm/errors.hpp>
#include <hypercomm/machine.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "registry.hpp"
#include "select.hpp"

namespace hypercomm {

namespace {

using C = Collective;
using A = Algo;
using detail::AlgorithmCard;

void check_counts_v(Collective op, const Topology& t, std::span<const std::size_t> counts) {
  if (!detail::is_irregular(op))
    throw std::invalid_argument(std::string(to_string(op)) + " is not an irregular collective");
  const auto p = static_cast<std::size_t>(t.size());
  const std::size_t want = op == C::all_to_allv ? p * p : p;
  if (counts.size() != want)
    throw std::invalid_argument(std::string(to_string(op)) + " on " + t.name() + " takes " +
                                std::to_string(want) + " counts" +
                                (op == C::all_to_allv ? " (p x p, row-major)" : "") + ", not " +
                                std::to_string(counts.size()));
}

// Equal blocks of `bytes` (all_to_allv: the whole in, p blocks), as counts of shape.elem_size.
std::vector<std::size_t> equal_counts(Collective op, const Topology& t, std::size_t bytes,
                                      std::size_t elem_size) {
  const auto p = static_cast<std::size_t>(t.size());
  const std::size_t elements = elem_size == 0 ? 0 : bytes / elem_size;
  if (op == C::all_to_allv) return std::vector<std::size_t>(p * p, elements / p);
  return std::vector<std::size_t>(p, elements);
}

// The card that runs `requested` (automatic resolved) for a call of `bytes` (the irregular
// collectives: the largest block, of `total`), by the collectives' own rule (detail::choose).
const AlgorithmCard& card_for(Collective op, Algo requested, const Topology& t, Links links,
                              std::size_t bytes, std::size_t total, const CallShape& shape = {}) {
  return detail::choose(op, requested, t, links, bytes, total, shape.shift, t.name(), {},
                        {.commutative = shape.commutative, .never_throws = shape.never_throws},
                        shape.gray_ring,
                        shape.shared_cores < 0 ? shared_core_count(t) : shape.shared_cores);
}

const AlgorithmCard& checked_v(Collective op, Algo algo, const Topology& t, Links links,
                               std::span<const std::size_t> counts, std::size_t elem_size) {
  check_counts_v(op, t, counts);
  std::size_t largest = 0, total = 0;
  for (const std::size_t n : counts)
    largest = std::max(largest, n * elem_size), total += n * elem_size;
  return card_for(op, algo, t, links, largest, total);
}

// An irregular call as its card's cost function takes it: bytes the largest block.
detail::CostQuery query_v(const Topology& t, Links links, std::span<const std::size_t> counts,
                          const CostModel& model, const CallShape& shape) {
  const std::size_t largest = counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
  return {.t = t,
          .links = links,
          .bytes = largest * shape.elem_size,
          .model = model,
          .shape = shape,
          .counts = counts};
}

}  // namespace

bool takes_algo(Collective op) noexcept {
  switch (op) {
    case C::broadcast:
    case C::reduce:
    case C::all_reduce:
    case C::all_gather:
    case C::reduce_scatter:
    case C::all_to_all:
    case C::all_gatherv:
    case C::all_to_allv:
    case C::reduce_scatterv: return true;
    default: return false;
  }
}

std::optional<Collective> parse_collective(std::string_view name) noexcept {
  for (int k = 1; k <= static_cast<int>(C::reduce_scatterv); ++k) {
    const auto c = static_cast<C>(k);
    if (name == to_string(c)) return c;
  }
  return std::nullopt;
}

std::optional<Algo> parse_algo(std::string_view name) noexcept {
  for (int k = 0; k <= 255; ++k) {  // every enumerator has a name; the others are "unknown"
    const auto a = static_cast<A>(k);
    if (name != "unknown" && name == to_string(a)) return a;
  }
  return std::nullopt;
}

std::span<const Card> cards() noexcept {
  static const std::vector<Card> all = [] {
    std::vector<Card> v;
    for (const AlgorithmCard* card : detail::registry()) v.push_back(card->text);
    return v;
  }();
  return all;
}

const Card* find_card(Collective op, Algo algo) noexcept {
  for (const Card& card : cards())
    if (card.op == op && card.algo == algo) return &card;
  return nullptr;
}

const Card* find_card(Collective op, Algo algo, const Topology& t, Links links, std::size_t bytes,
                      int shift) {
  return find_card(op, algo, t, links, bytes, CallShape{.shift = shift});
}

namespace {
const Card* public_card(const AlgorithmCard& card) {
  const auto all = detail::registry();
  const auto at = std::find(all.begin(), all.end(), &card) - all.begin();
  return &cards()[static_cast<std::size_t>(at)];
}
}  // namespace

const Card* find_card(Collective op, Algo algo, const Topology& t, Links links, std::size_t bytes,
                      const CallShape& shape) {
  if (detail::is_irregular(op))  // equal blocks of `bytes`, as resolve
    return find_card_v(op, algo, t, links, equal_counts(op, t, bytes, 1), 1);
  return public_card(card_for(op, algo, t, links, bytes, 0, shape));
}

const Card* find_card_v(Collective op, Algo algo, const Topology& t, Links links,
                        std::span<const std::size_t> counts, std::size_t elem_size) {
  return public_card(checked_v(op, algo, t, links, counts, elem_size));
}

Algo resolve(Collective op, Algo requested, const Topology& t, Links links, std::size_t bytes) {
  if (detail::is_irregular(op))  // equal blocks of `bytes`
    return resolve_v(op, requested, t, links, equal_counts(op, t, bytes, 1), 1);
  if (!takes_algo(op) && requested != A::automatic)
    throw AlgorithmError(std::string(to_string(op)) +
                         " takes no algorithm: it always chooses for itself");
  return card_for(op, requested, t, links, bytes, 0).text.algo;
}

Algo resolve_v(Collective op, Algo requested, const Topology& t, Links links,
               std::span<const std::size_t> counts, std::size_t elem_size) {
  if (!takes_algo(op) && requested != A::automatic)
    throw AlgorithmError(std::string(to_string(op)) +
                         " takes no algorithm: it always chooses for itself");
  return checked_v(op, requested, t, links, counts, elem_size).text.algo;
}

double textbook_time_v(Collective op, Algo algo, const Topology& t, Links links,
                       std::span<const std::size_t> counts, const CostModel& model,
                       const CallShape& shape) {
  const AlgorithmCard& card = checked_v(op, algo, t, links, counts, shape.elem_size);
  if (t.size() == 1) return 0;
  return card.cost(query_v(t, links, counts, model, shape));
}

TimeBounds textbook_bounds_v(Collective op, Algo algo, const Topology& t, Links links,
                             std::span<const std::size_t> counts, const CostModel& model,
                             const CallShape& shape) {
  const AlgorithmCard& card = checked_v(op, algo, t, links, counts, shape.elem_size);
  if (t.size() == 1) return {0, 0};
  return detail::cost_bounds(card, query_v(t, links, counts, model, shape));
}

double textbook_time(Collective op, Algo algo, const Topology& t, Links links, std::size_t bytes,
                     const CostModel& model, const CallShape& shape) {
  if (detail::is_irregular(op))  // equal blocks of `bytes`
    return textbook_time_v(op, algo, t, links, equal_counts(op, t, bytes, shape.elem_size), model,
                           shape);
  const AlgorithmCard& card = card_for(op, algo, t, links, bytes, 0, shape);
  if (t.size() == 1) return 0;
  return card.cost({.t = t, .links = links, .bytes = bytes, .model = model, .shape = shape});
}

TimeBounds textbook_bounds(Collective op, Algo algo, const Topology& t, Links links,
                           std::size_t bytes, const CostModel& model, const CallShape& shape) {
  if (detail::is_irregular(op))  // equal blocks of `bytes`
    return textbook_bounds_v(op, algo, t, links, equal_counts(op, t, bytes, shape.elem_size), model,
                             shape);
  const AlgorithmCard& card = card_for(op, algo, t, links, bytes, 0, shape);
  if (t.size() == 1) return {0, 0};
  return detail::cost_bounds(
      card, {.t = t, .links = links, .bytes = bytes, .model = model, .shape = shape});
}

double textbook_time(Collective op, Algo algo, const Topology& t, Links links, std::size_t bytes,
                     const CostModel& model, int shift) {
  return textbook_time(op, algo, t, links, bytes, model, CallShape{.shift = shift});
}

bool textbook_counts_hops(Collective op, Algo algo, const Topology& t, Links links,
                          std::size_t bytes) {
  // The irregular collectives' formulas count every hop (NaN where they cannot).
  const AlgorithmCard& card = card_for(op, algo, t, links, bytes, 0);
  if (detail::is_irregular(op) || card.counts_hops == nullptr) return true;
  return card.counts_hops(t, links);
}

}  // namespace hypercomm
