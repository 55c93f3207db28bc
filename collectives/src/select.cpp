// Validation and automatic's choice, read off the registry of cards (registry.hpp): automatic
// takes the card that costs least on a reference machine (its closed form, Grama et al. ch. 4;
// where VPs share cores, also the work of all VPs over them), ties in registry order, the one
// rule for every collective (where Open MPI writes one decision
// function per collective, coll_tuned_decision_fixed.c, each card here carries its own cost); a
// forced algorithm that cannot run throws AlgorithmError before any message is sent.
#include "select.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <hypercomm/errors.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "operator_names.hpp"
#include "posted_counts.hpp"
#include "registry.hpp"

namespace hypercomm {

const char* to_string(Algo a) noexcept {
  switch (a) {
    case Algo::automatic: return "automatic";
    case Algo::hypercube: return "hypercube";
    case Algo::ring: return "ring";
    case Algo::mesh: return "mesh";
    case Algo::esbt: return "esbt";
    case Algo::two_phase: return "two_phase";
    case Algo::dimension_exchange: return "dimension_exchange";
    case Algo::dissemination: return "dissemination";
    case Algo::reduce_broadcast: return "reduce_broadcast";
  }
  return "unknown";
}

namespace detail {

namespace {

// The collectives that fold with a user's operator (Reducer).
bool is_reduction(Collective op) noexcept {
  switch (op) {
    case Collective::reduce:
    case Collective::all_reduce:
    case Collective::reduce_scatter:
    case Collective::scan:
    case Collective::exscan:
    case Collective::reduce_scatterv: return true;
    default: return false;
  }
}

// The bits of a reduction's root field that hold its operator's digest (operator_names.hpp).
std::uint16_t operator_bits(Collective op) noexcept {
  if (!is_reduction(op)) return 0;
  return op == Collective::reduce ? static_cast<std::uint16_t>(~kRootMask) : 0xFFFF;
}

// How a receiver names a header in CollectiveMismatch messages: "reduce (call 2 on row 1 of
// mesh:4x4, root 3, 3 elements (24 bytes), operator std::plus<void> on double, algorithm ring)";
// bytes alone on a thread outside a call, or where they are no whole number of this VP's
// elements.
std::string describe_collective(const MessageTag& tag, const Topology& machine) {
  const auto op = static_cast<Collective>(tag.kind);
  std::string s = std::string(to_string(op)) + " (call " + std::to_string(tag.sequence) + " on " +
                  group_name(tag.group, machine);
  switch (op) {
    case Collective::reduce: s += ", root " + std::to_string(tag.root & kRootMask); break;
    case Collective::broadcast:
    case Collective::scatter:
    case Collective::gather:
    case Collective::gatherv:
    case Collective::scatterv: s += ", root " + std::to_string(tag.root); break;
    case Collective::circular_shift: s += ", shift " + std::to_string(tag.root); break;
    default: break;
  }
  if (op == Collective::all_to_allv) {
    // Its members' counts differ by design: each receive checks its own size.
  } else if (op >= Collective::all_gatherv) {
    // The header carries a digest of the counts; the counts themselves are posted
    // (posted_counts.hpp). The irregular collectives read back which headers were described.
    note_described(tag, naming_vp());
    const auto counts = posted_counts(machine, tag.count);
    s += counts ? ", counts " + show_counts(*counts)
                : ", counts with digest " + std::to_string(tag.count);
  } else if (op != Collective::barrier) {
    const std::size_t element = call_element();
    const std::string bytes = std::to_string(tag.count) + " bytes";
    s += ", " + (element != 0 && tag.count % element == 0
                     ? std::to_string(tag.count / element) +
                           (tag.count == element ? " element (" : " elements (") + bytes + ")"
                     : bytes);
  }
  if (const std::uint16_t bits = operator_bits(op); bits != 0)
    if (const std::string name = operator_name(tag.root, bits); !name.empty())
      s += ", operator " + name;
  const Algo run = tag_algo_run(tag.algo);
  const Algo requested = tag_algo_requested(tag.algo);
  s += ", algorithm ";
  if (requested == Algo::automatic) s += std::string("automatic -> ");
  return s + to_string(run) + ")";
}
[[maybe_unused]] const bool describer_installed = (set_tag_describer(&describe_collective), true);

// What a difference in two headers' root fields is, in the contract's words: the root, a
// circular shift's shift, or a reduction's operator (operator_names.hpp).
void name_root_difference(const MessageTag& mine, const MessageTag& theirs,
                          std::vector<std::string>& fields) {
  const auto op = static_cast<Collective>(mine.kind);
  const auto add = [&](const char* field) {
    if (std::find(fields.begin(), fields.end(), field) == fields.end()) fields.emplace_back(field);
  };
  if (theirs.kind != mine.kind) {  // the collective differs: its fields mean other things
    if (!is_reduction(op) && !is_reduction(static_cast<Collective>(theirs.kind))) add("root");
    return;
  }
  const std::uint16_t bits = operator_bits(op);
  if (((mine.root ^ theirs.root) & ~bits & 0xFFFF) != 0)
    add(op == Collective::circular_shift ? "shift" : "root");
  if (((mine.root ^ theirs.root) & bits) != 0) add("operator");
}
[[maybe_unused]] const bool namer_installed = (set_root_namer(&name_root_difference), true);

}  // namespace

// The regular collective whose algorithms an irregular one runs, with its blocks uneven.
Collective regular_of(Collective op) noexcept {
  switch (op) {
    case Collective::all_gatherv: return Collective::all_gather;
    case Collective::gatherv: return Collective::gather;
    case Collective::scatterv: return Collective::scatter;
    case Collective::all_to_allv: return Collective::all_to_all;
    case Collective::reduce_scatterv: return Collective::reduce_scatter;
    default: return op;
  }
}

double selection_cost(const AlgorithmCard& card, const Topology& t, Links links, std::size_t bytes,
                      std::size_t total, int shift, OperatorTraits op_traits, int shared_cores) {
  constexpr double unit = 1e-10;  // kReferenceTw: ts = 10000 units, tw = 1 unit per byte
  static_assert(kReferenceTs == 10'000 * unit && kReferenceTw == unit);
  const CostQuery q{.t = t,
                    .links = links,
                    .bytes = bytes,
                    .model = {.ts = 10'000, .tw = 1, .th = 0},
                    .shape = {.shift = shift, .never_throws = op_traits.never_throws},
                    .selection = true,
                    .tc = 1,  // a combine streams memory like a copy
                    .total = total};
  const double cost = card.cost(q);
  if (shared_cores <= 0 || card.work == nullptr || t.size() <= shared_cores) return cost * unit;
  CostQuery shared = q;
  shared.vps_per_core = (t.size() + shared_cores - 1) / shared_cores;
  return std::max(cost, card.work(shared) / shared_cores) * unit;
}

namespace {

// all_to_allv's members pass different counts: none knows the others' largest block or total,
// and weighing its own would let the members choose differently (a CollectiveMismatch). Without
// a message to agree on them first, automatic takes the pairwise exchange wherever it can run
// (what all_to_allv ran before it had other algorithms); where it cannot (Links::strict, more
// than 3 ranks), the others that can run are one, or the ring and the mesh on a 1 x n torus,
// which cost the same for every size (their cards' costs), so weighing this member's own sizes
// there still chooses alike.
const AlgorithmCard* automatic_without_sizes(Collective op, const Topology& t, Links links) {
  if (op != Collective::all_to_allv) return nullptr;
  const AlgorithmCard* pairwise = cards_of(op).front();
  return pairwise->restriction(t, links) == nullptr ? pairwise : nullptr;
}

std::string strict_note(Links links) { return links == Links::strict ? " with Links::strict" : ""; }

}  // namespace

constexpr const char* kNeedsCommutative =
    "it folds in another order than the VPs' ids, so it needs a commutative operator";

const AlgorithmCard& choose(Collective op, Algo requested, const Topology& t, Links links,
                            std::size_t bytes, std::size_t total, int shift,
                            const std::string& where, const std::string& prefix,
                            OperatorTraits op_traits, bool gray_ring, int shared_cores) {
  const auto cards = cards_of(op);
  if (requested == Algo::automatic)
    if (const AlgorithmCard* agreed = automatic_without_sizes(op, t, links)) return *agreed;
  const AlgorithmCard* best = nullptr;
  double best_cost = INFINITY;
  double best_path = INFINITY;  // where VPs share cores: its critical path, which breaks ties
  std::string why;              // of the cards considered that cannot run
  // A card of the requested Algo that runs here but for a non-commutative operator: that is
  // the reason to give, not the other cards' topologies (the Gray-code mesh on a hypercube).
  bool needs_commutative = false;
  for (const AlgorithmCard* card : cards) {
    if (requested != Algo::automatic && card->text.algo != requested) continue;
    const char* reason = card->restriction(t, links);
    if (reason == nullptr && card->needs_gray_ring_group && !gray_ring)
      reason =
          "it needs a group whose ranks are a hypercube's VPs in reflected Gray-code order "
          "(split(vp.world(), 0, hypercomm::gray_inverse(id)))";
    if (reason == nullptr && !op_traits.commutative && !card->keeps_id_order &&
        !(card->id_order_when_routed && links == Links::routed)) {
      reason = kNeedsCommutative;
      needs_commutative = true;
    }
    if (reason != nullptr) {
      // Each reason once (an Algo's cards for several topologies share theirs).
      std::string piece = requested == Algo::automatic
                              ? std::string(to_string(card->text.algo)) + ": " + reason
                              : std::string(reason);
      if (why.find(piece) == std::string::npos) why += (why.empty() ? "" : "; ") + piece;
      continue;
    }
    if (requested != Algo::automatic) return *card;  // the first of that Algo that can run
    const double cost =
        selection_cost(*card, t, links, bytes, total, shift, op_traits, shared_cores);
    const double path =
        shared_cores > 0 ? selection_cost(*card, t, links, bytes, total, shift, op_traits) : cost;
    if (best == nullptr || cost < best_cost || (cost == best_cost && path < best_path))
      best = card, best_cost = cost, best_path = path;
  }
  if (best != nullptr) return *best;
  const std::string name = to_string(op);
  if (requested == Algo::automatic)
    throw AlgorithmError(prefix + "no " + name + " algorithm can run on " + where +
                         strict_note(links) + " (" + why + ")");
  if (why.empty()) {
    std::string valid;
    for (std::size_t i = 0; i < cards.size(); ++i)
      if (i == 0 || cards[i]->text.algo != cards[i - 1]->text.algo)  // one name per Algo
        valid += std::string(", ") + to_string(cards[i]->text.algo);
    if (std::string_view(to_string(requested)) == "unknown")  // an integer cast to Algo
      throw AlgorithmError(prefix + name + " has no algorithm Algo(" +
                           std::to_string(static_cast<int>(requested)) +
                           "), a value Algo does not name (it has: automatic" + valid + ")");
    throw AlgorithmError(prefix + name + " has no " + to_string(requested) +
                         " algorithm (it has: automatic" + valid + ")");
  }
  throw AlgorithmError(prefix + name + " with Algo::" + to_string(requested) + " cannot run on " +
                       where + strict_note(links) + ": " +
                       (needs_commutative ? std::string(kNeedsCommutative) +
                                                " (hypercomm::is_commutative<Op> declares one)"
                                          : why));
}

namespace {

// A split group's ring is routed over the machine: under Links::strict its collectives run only
// when every message they send is between machine neighbours, that is, when consecutive members
// are neighbours (then the ring algorithms run on it as on a ring), or, where its last and first
// members are not, when the others are (then the linear array's algorithms run on it, which
// never send between them).
const char* group_restriction(const GroupInfo& g, Links links) {
  if (links == Links::strict && !g.machine_links() && !g.neighbour_ring && !g.neighbour_line)
    return "its members are not machine neighbours in rank order, and Links::strict allows "
           "messages between neighbours only";
  return nullptr;
}

// The topology whose algorithms a group runs: its own, or under Links::strict a linear array
// where its ring's wrap link is no machine link (group_restriction).
const Topology& algorithm_topology(const GroupInfo& g, Links links, Topology& storage) {
  if (links != Links::strict || g.machine_links() || g.neighbour_ring) return g.topology;
  storage = Topology::linear(g.size);
  return storage;
}

Choice select_uncached(Collective op, const GroupInfo& g, Links links, std::size_t bytes,
                       Algo requested, int vp_id, const CostModel& model, std::size_t total,
                       int shift, OperatorTraits op_traits, int shared_cores) {
  Topology line = Topology::ring(1);
  const Topology& t = algorithm_topology(g, links, line);
  const std::string prefix = who(g, vp_id) + ": ";
  const std::string where =
      g.shape == GroupInfo::Shape::world ? t.name() : g.name() + " (" + g.topology.name() + ")";
  if (const char* why = group_restriction(g, links))
    throw AlgorithmError(prefix + to_string(op) + " cannot run on " + where + ": " + why);
  Choice choice;
  choice.card = &choose(op, requested, t, links, bytes, total, shift, where, prefix, op_traits,
                        g.gray_ring, shared_cores);
  choice.family = family_of(t, links);
  if (choice.algo() == Algo::esbt) {
    choice.chunks = esbt_chunk_count(t, bytes, model);
    choice.all_ports = esbt_all_ports(t, model);
  }
  return choice;
}

}  // namespace

std::string who(const GroupInfo& g, int vp_id) {
  std::string s = "VP " + std::to_string(vp_id);
  if (g.shape != GroupInfo::Shape::world)
    s += " (rank " + std::to_string(g.rank) + " of " + g.name() + ")";
  return s;
}

// The registry consulted, the choice remembered (select's slow path).
Choice select_and_remember(ChoiceMemo& m, Collective op, const GroupInfo& g, Links links,
                           std::size_t bytes, Algo requested, int vp_id, const CostModel& model,
                           std::size_t total, int shift, OperatorTraits op_traits,
                           int shared_cores) {
  const Choice choice = select_uncached(op, g, links, bytes, requested, vp_id, model, total, shift,
                                        op_traits, shared_cores);  // may throw
  m = ChoiceMemo{g.serial, requested, bytes, total, shift, op_traits, choice};
  return choice;
}

}  // namespace detail
}  // namespace hypercomm
