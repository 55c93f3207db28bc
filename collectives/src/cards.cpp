// The algorithm cards (collectives/ALGORITHMS.md) as data, and each card's cost formula
// evaluated for a machine. tests/test_fidelity.cpp checks every formula against the model time
// of a real run.
#include <hypercomm/cards.hpp>
#include <hypercomm/errors.hpp>

#include "kit.hpp"
#include "select.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

namespace hypercomm {

namespace {

using C = Collective;
using A = Algo;

constexpr const char* kHypercubeNeeds = "p = 2^d; a hypercube topology or Links::routed";
constexpr const char* kRingNeeds = "any p; a ring (or 1 x n mesh) topology or Links::routed";
constexpr const char* kMeshNeeds = "a rows x cols mesh topology; neighbours only";

constexpr std::array kCards{
    Card{C::broadcast, A::hypercube, "Grama et al., Algorithms 4.1 and 4.2", "(ts + tw*m) * log p", kHypercubeNeeds},
    Card{C::broadcast, A::esbt, "Johnsson and Ho 1989: d edge-disjoint spanning binomial trees, k chunks pipelined", "(k + log p) * (ts + tw*m/k), k = sqrt(m*log p*tw/ts)", kHypercubeNeeds},
    Card{C::broadcast, A::two_phase, "Grama et al., section 4.7: scatter, then all-gather", "2*ts*log p + 2*tw*m*(p-1)/p (hypercube)", "any topology; sub-algorithms of the topology's family"},
    Card{C::broadcast, A::mesh, "CS 584 lecture: ring broadcast along the root's row, then down every column", "(ts + tw*m) * (ceil((cols-1)/2) + ceil((rows-1)/2))", kMeshNeeds},
    Card{C::broadcast, A::ring, "CS 584 lecture: two-way ring broadcast", "(ts + tw*m) * ceil((p-1)/2)", kRingNeeds},
    Card{C::reduce, A::hypercube, "Grama et al., Algorithm 4.3 (any root via id XOR root)", "(ts + tw*m) * log p", kHypercubeNeeds},
    Card{C::reduce, A::two_phase, "Grama et al., section 4.7: reduce-scatter, then gather", "2*ts*log p + 2*tw*m*(p-1)/p (hypercube)", "any topology; sub-algorithms of the topology's family"},
    Card{C::reduce, A::mesh, "Grama et al., section 4.2: rows into the root's column, then the column", "(ts + tw*m) * (ceil((cols-1)/2) + ceil((rows-1)/2))", kMeshNeeds},
    Card{C::reduce, A::ring, "Grama et al., section 4.1: the two-way ring broadcast reversed", "(ts + tw*m) * ceil((p-1)/2)", kRingNeeds},
    Card{C::all_reduce, A::hypercube, "Grama et al., section 4.3: butterfly (Algorithm 4.7 with a combine)", "(ts + tw*m) * log p", kHypercubeNeeds},
    Card{C::all_reduce, A::two_phase, "Grama et al., section 4.7: reduce-scatter, then all-gather", "2*ts*log p + 2*tw*m*(p-1)/p (hypercube)", "any topology; sub-algorithms of the topology's family"},
    Card{C::all_reduce, A::mesh, "Grama et al., section 4.3 on a mesh: row all-reduce, then column all-reduce", "2*ts*(rows-1 + cols-1) + 2*tw*m*((cols-1)/cols + (rows-1)/rows)", kMeshNeeds},
    Card{C::all_reduce, A::ring, "reduce-scatter (Algorithm 4.5), then all-gather (Algorithm 4.4) on the ring", "2*(p-1)*(ts + tw*m/p)", kRingNeeds},
    Card{C::all_gather, A::hypercube, "Grama et al., Algorithm 4.7", "ts*log p + tw*m*(p-1)", kHypercubeNeeds},
    Card{C::all_gather, A::mesh, "Grama et al., Algorithm 4.6", "ts*(rows-1 + cols-1) + tw*m*(p-1)", kMeshNeeds},
    Card{C::all_gather, A::ring, "Grama et al., Algorithm 4.4", "(ts + tw*m) * (p-1)", kRingNeeds},
    Card{C::reduce_scatter, A::hypercube, "Grama et al., Algorithm 4.8", "ts*log p + tw*m*(p-1)", kHypercubeNeeds},
    Card{C::reduce_scatter, A::mesh, "Grama et al., section 4.2: the dual of Algorithm 4.6", "ts*(rows-1 + cols-1) + tw*m*(p-1)", kMeshNeeds},
    Card{C::reduce_scatter, A::ring, "Grama et al., Algorithm 4.5", "(ts + tw*m) * (p-1)", kRingNeeds},
    Card{C::scan, A::hypercube, "Grama et al., Algorithm 4.9", "(ts + tw*m) * log p", kHypercubeNeeds},
    Card{C::scan, A::mesh, "Algorithm 4.9 mapped on a mesh: row chains, the last column, row broadcasts", "(ts + tw*m) * (cols-1 + rows-1 + ceil((cols-1)/2))", kMeshNeeds},
    Card{C::scan, A::ring, "ring pipeline: VP i passes the prefix of 0..i to i+1", "(ts + tw*m) * (p-1)", kRingNeeds},
    Card{C::exscan, A::hypercube, "Grama et al., Algorithm 4.9 (exclusive)", "(ts + tw*m) * log p", kHypercubeNeeds},
    Card{C::exscan, A::mesh, "Algorithm 4.9 mapped on a mesh (exclusive)", "(ts + tw*m) * (cols-1 + rows-1 + ceil((cols-1)/2))", kMeshNeeds},
    Card{C::exscan, A::ring, "ring pipeline (exclusive)", "(ts + tw*m) * (p-1)", kRingNeeds},
    Card{C::scatter, A::hypercube, "Grama et al., section 4.4: binomial tree, recursive halving", "ts*log p + tw*m*(p-1)", kHypercubeNeeds},
    Card{C::scatter, A::mesh, "Grama et al., section 4.4 on a mesh: the root's row, then the columns", "see ALGORITHMS.md", kMeshNeeds},
    Card{C::scatter, A::ring, "Grama et al., section 4.4 on a ring: both directions, farthest blocks first", "see ALGORITHMS.md", kRingNeeds},
    Card{C::gather, A::hypercube, "Grama et al., section 4.4: binomial tree, recursive doubling", "ts*log p + tw*m*(p-1)", kHypercubeNeeds},
    Card{C::gather, A::mesh, "Grama et al., section 4.4 on a mesh: the columns, then the root's row", "see ALGORITHMS.md", kMeshNeeds},
    Card{C::gather, A::ring, "Grama et al., section 4.4 on a ring: both directions", "see ALGORITHMS.md", kRingNeeds},
    Card{C::all_to_all, A::hypercube, "Grama et al., Algorithm 4.10: pairwise exchange, E-cube routed", "(ts + tw*m)*(p-1), m = a block", "p = 2^d; Links::routed (p > 2)"},
    Card{C::all_to_all, A::dimension_exchange, "Grama et al., section 4.5: one dimension per step, store and forward", "(ts + tw*m*p/2) * log p", kHypercubeNeeds},
    Card{C::all_to_all, A::mesh, "Grama et al., section 4.5.2: row phase, then column phase", "(2*ts + tw*m*p) * (sqrt p - 1) on a square mesh", kMeshNeeds},
    Card{C::all_to_all, A::ring, "Grama et al., section 4.5.1: ring personalized exchange", "(ts + tw*m*p/2) * (p-1)", kRingNeeds},
    Card{C::circular_shift, A::hypercube, "Grama et al., section 4.6: E-cube routed (strict: dimension by dimension)", "ts + tw*m (routed); <= (ts + tw*m) * log p (strict)", kHypercubeNeeds},
    Card{C::circular_shift, A::mesh, "Grama et al., section 4.6: row shift, compensating column shift, column shift", "(ts + tw*m) * (min(q mod cols, cols - q mod cols) + 1 + min(...rows...))", kMeshNeeds},
    Card{C::circular_shift, A::ring, "Grama et al., section 4.6: min(q, p-q) neighbour steps", "(ts + tw*m) * min(q, p-q)", kRingNeeds},
    Card{C::barrier, A::hypercube, "butterfly: log p zero-byte exchanges", "ts * log p", kHypercubeNeeds},
    Card{C::barrier, A::mesh, "ring barrier along the rows, then along the columns", "see ALGORITHMS.md", kMeshNeeds},
    Card{C::barrier, A::ring, "ring barrier (dissemination under Links::routed: ts * ceil(log p))", "see ALGORITHMS.md", kRingNeeds},
};

double ceil_half(double x) { return std::ceil(x / 2); }

}  // namespace

bool takes_algo(Collective op) noexcept {
  switch (op) {
    case C::broadcast:
    case C::reduce:
    case C::all_reduce:
    case C::all_gather:
    case C::reduce_scatter:
    case C::all_to_all: return true;
    default: return false;
  }
}

std::optional<Collective> parse_collective(std::string_view name) noexcept {
  for (int k = 1; k <= static_cast<int>(C::barrier); ++k) {
    const auto c = static_cast<C>(k);
    if (name == to_string(c)) return c;
  }
  return std::nullopt;
}

std::optional<Algo> parse_algo(std::string_view name) noexcept {
  for (int k = 0; k <= static_cast<int>(A::dimension_exchange); ++k) {
    const auto a = static_cast<A>(k);
    if (name == to_string(a)) return a;
  }
  return std::nullopt;
}

std::span<const Card> cards() noexcept { return kCards; }

const Card* find_card(Collective op, Algo algo) noexcept {
  for (const Card& c : kCards)
    if (c.op == op && c.algo == algo) return &c;
  return nullptr;
}

Algo resolve(Collective op, Algo requested, const Topology& t, Links links, std::size_t bytes) {
  if (!takes_algo(op) && requested != A::automatic)
    throw AlgorithmError(std::string(to_string(op)) + " takes no algorithm: it always chooses for itself");
  const auto algos = detail::algorithms_of(op);
  if (requested == A::automatic) {
    A best = algos.back();
    double best_cost = INFINITY;
    for (A a : algos) {
      if (detail::restriction(op, a, t, links) != nullptr) continue;
      const double cost = detail::selection_cost(op, a, t, bytes);
      if (cost < best_cost) best_cost = cost, best = a;
    }
    return best;
  }
  if (std::find(algos.begin(), algos.end(), requested) == algos.end())
    throw AlgorithmError(std::string(to_string(op)) + " has no " + to_string(requested) + " algorithm");
  if (const char* why = detail::restriction(op, requested, t, links))
    throw AlgorithmError(std::string(to_string(op)) + " with Algo::" + to_string(requested) +
                         " cannot run on " + t.name() + ": " + why);
  return requested;
}

double textbook_time(Collective op, Algo algo, const Topology& t, Links links, std::size_t bytes,
                     const CostModel& model, int shift) {
  const double ts = model.ts, tw = model.tw;
  const double p = t.size(), m = static_cast<double>(bytes);
  const double lg = std::log2(p), rows = t.rows(), cols = t.cols();
  if (t.size() == 1) return 0;
  (void)links;
  (void)shift;
  switch (op) {
    case C::broadcast:
    case C::reduce:
      switch (algo) {
        case A::hypercube: return (ts + tw * m) * lg;
        case A::esbt: {
          const double k = std::max(1.0, std::round(std::sqrt(m * std::max(1.0, lg) * 1e-10 / 1e-6)));
          return (k + lg) * (ts + tw * m / k);
        }
        case A::two_phase: return 2 * ts * lg + 2 * tw * m * (p - 1) / p;
        case A::mesh: return (ts + tw * m) * (ceil_half(cols - 1) + ceil_half(rows - 1));
        default: return (ts + tw * m) * ceil_half(p - 1);
      }
    case C::all_reduce:
      switch (algo) {
        case A::hypercube: return (ts + tw * m) * lg;
        case A::two_phase: return 2 * ts * lg + 2 * tw * m * (p - 1) / p;
        case A::mesh:
          return 2 * ts * (rows - 1 + cols - 1) + 2 * tw * m * ((cols - 1) / cols + (rows - 1) / rows);
        default: return 2 * (p - 1) * (ts + tw * m / p);
      }
    case C::all_gather:
    case C::reduce_scatter:
      switch (algo) {
        case A::hypercube: return ts * lg + tw * m * (p - 1);
        case A::mesh: return ts * (rows - 1 + cols - 1) + tw * m * (p - 1);
        default: return (ts + tw * m) * (p - 1);
      }
    case C::scan:
    case C::exscan:
      switch (algo) {
        case A::hypercube: return (ts + tw * m) * lg;
        case A::mesh: return (ts + tw * m) * (cols - 1 + rows - 1 + ceil_half(cols - 1));
        default: return (ts + tw * m) * (p - 1);
      }
    case C::scatter:
    case C::gather: return ts * lg + tw * m * (p - 1);
    case C::all_to_all: {
      const double block = m / p;
      switch (algo) {
        case A::hypercube: return (ts + tw * block) * (p - 1);
        case A::dimension_exchange: return (ts + tw * block * p / 2) * lg;
        case A::mesh: return (2 * ts + tw * block * p) * (std::sqrt(p) - 1);
        default: return (ts + tw * block * p / 2) * (p - 1);
      }
    }
    case C::circular_shift: {
      const int q = ((shift % t.size()) + t.size()) % t.size();
      switch (algo) {
        case A::hypercube: return ts + tw * m;
        case A::ring: return (ts + tw * m) * std::min(q, t.size() - q);
        default: return (ts + tw * m) * (std::sqrt(p) + 1);
      }
    }
    case C::barrier: return ts * std::ceil(lg);
  }
  return NAN;
}

}  // namespace hypercomm
