// The algorithm table: {collective, algorithms, restrictions}, and automatic's choice by
// textbook cost (Grama et al., ch. 4 cost formulas) on a reference machine. A forced algorithm
// that cannot run throws AlgorithmError before any message is sent (MPICH coll_algorithms.txt;
// Open MPI coll_tuned_decision_fixed.c).
#include "select.hpp"

#include <hypercomm/errors.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>

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
  }
  return "unknown";
}

namespace detail {

const char* to_string(Collective c) noexcept {
  switch (c) {
    case Collective::broadcast: return "broadcast";
    case Collective::reduce: return "reduce";
    case Collective::all_reduce: return "all_reduce";
    case Collective::all_gather: return "all_gather";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::scan: return "scan";
    case Collective::exscan: return "exscan";
    case Collective::scatter: return "scatter";
    case Collective::gather: return "gather";
    case Collective::all_to_all: return "all_to_all";
    case Collective::circular_shift: return "circular_shift";
    case Collective::barrier: return "barrier";
  }
  return "collective";
}

namespace {

// Reference machine for automatic's choice: 1 us per message, 10 GB/s.
constexpr double kTs = 1e-6;
constexpr double kTw = 1e-10;

using A = Algo;
constexpr std::array kBroadcast{A::hypercube, A::esbt, A::two_phase, A::mesh, A::ring};
constexpr std::array kReduce{A::hypercube, A::two_phase, A::mesh, A::ring};
constexpr std::array kAllReduce{A::hypercube, A::two_phase, A::mesh, A::ring};
constexpr std::array kAllGather{A::hypercube, A::mesh, A::ring};
constexpr std::array kAllToAll{A::hypercube, A::dimension_exchange, A::mesh, A::ring};
// Operations without an Algo argument choose among these.
constexpr std::array kHypercubeMeshRing{A::hypercube, A::mesh, A::ring};

bool power_of_two(int p) noexcept { return is_power_of_two(p); }

// VP i and i+1 (mod p) are topology neighbours.
bool ring_adjacent(const Topology& t) noexcept {
  switch (t.kind()) {
    case Topology::Kind::ring: return true;
    case Topology::Kind::mesh: return t.rows() == 1 || t.cols() == 1;
    case Topology::Kind::hypercube: return t.dimension() <= 1;
  }
  return false;
}

double log2p(const Topology& t) { return std::log2(static_cast<double>(t.size())); }

int esbt_chunks(const Topology& t, std::size_t bytes) {
  const double d = std::max(1.0, log2p(t));
  const double k = std::round(std::sqrt(static_cast<double>(bytes) * d * kTw / kTs));
  return static_cast<int>(std::clamp(k, 1.0, std::max(1.0, static_cast<double>(bytes))));
}

}  // namespace

std::span<const Algo> algorithms_of(Collective op) noexcept {
  switch (op) {
    case Collective::broadcast: return kBroadcast;
    case Collective::reduce: return kReduce;
    case Collective::all_reduce: return kAllReduce;
    case Collective::all_gather:
    case Collective::reduce_scatter: return kAllGather;
    case Collective::all_to_all: return kAllToAll;
    default: return kHypercubeMeshRing;
  }
}

const char* restriction(Collective op, Algo algo, const Topology& t, Links links) {
  const bool routed = links == Links::routed;
  const bool hypercube_links = t.kind() == Topology::Kind::hypercube || routed;
  switch (algo) {
    case Algo::automatic: return nullptr;
    case Algo::hypercube:
      if (op == Collective::circular_shift) {  // routed: one E-cube-routed message, any p
        if (routed || t.kind() == Topology::Kind::hypercube) return nullptr;
        return "it needs a hypercube topology or Links::routed";
      }
      if (!power_of_two(t.size())) return "it needs p = 2^d VPs";
      if (op == Collective::all_to_all) {  // partners id XOR i: neighbours only when p <= 2
        if (!routed && t.size() > 2) return "Algorithm 4.10 sends to id XOR i, which needs Links::routed";
        return nullptr;
      }
      if (!hypercube_links) return "its partners id XOR 2^k are not neighbours here: it needs a hypercube topology or Links::routed";
      return nullptr;
    case Algo::esbt:
    case Algo::dimension_exchange:
      if (!power_of_two(t.size())) return "it needs p = 2^d VPs";
      if (!hypercube_links) return "it needs a hypercube topology or Links::routed";
      return nullptr;
    case Algo::ring:
      if (!ring_adjacent(t) && !routed)
        return "VPs i and i+1 are not all neighbours here: it needs a ring topology or Links::routed";
      return nullptr;
    case Algo::mesh:
      if (t.kind() != Topology::Kind::mesh) return "it needs a mesh topology";
      return nullptr;
    case Algo::two_phase: return nullptr;
  }
  return "unknown algorithm";
}

double selection_cost(Collective op, Algo algo, const Topology& t, std::size_t bytes) {
  const double p = t.size(), m = static_cast<double>(bytes), lg = std::max(1.0, log2p(t));
  const double rows = t.rows(), cols = t.cols();
  const double ring_steps = std::floor(p / 2), mesh_steps = std::floor(rows / 2) + std::floor(cols / 2);
  switch (op) {
    case Collective::broadcast:
    case Collective::reduce:
      switch (algo) {
        case Algo::hypercube: return (kTs + kTw * m) * lg;
        case Algo::esbt: {
          const double k = esbt_chunks(t, bytes);
          return (k + lg) * (kTs + kTw * m / k) + kTs;  // + kTs: prefer 4.1 when equal
        }
        case Algo::two_phase: return 2 * (kTs * lg + kTw * m * (p - 1) / p);
        case Algo::mesh: return (kTs + kTw * m) * mesh_steps;
        default: return (kTs + kTw * m) * ring_steps;
      }
    case Collective::all_reduce:
      switch (algo) {
        case Algo::hypercube: return (kTs + kTw * m) * lg;
        case Algo::two_phase: return 2 * (kTs * lg + kTw * m * (p - 1) / p);
        case Algo::mesh: return 2 * (kTs * (rows + cols - 2) + kTw * m * 2);
        default: return 2 * (kTs + kTw * m / p) * (p - 1);
      }
    case Collective::all_gather:
    case Collective::reduce_scatter:
      switch (algo) {
        case Algo::hypercube: return kTs * lg + kTw * m * (p - 1);
        case Algo::mesh: return kTs * (rows + cols - 2) + kTw * m * (p - 1);
        default: return (kTs + kTw * m) * (p - 1);
      }
    case Collective::all_to_all: {
      const double block = m / p;
      switch (algo) {
        case Algo::hypercube: return (kTs + kTw * block) * (p - 1);
        case Algo::dimension_exchange: return (kTs + kTw * block * p / 2) * lg;
        case Algo::mesh: return (2 * kTs + kTw * block * p) * (std::max(rows, cols) - 1);
        default: return (kTs + kTw * block * p / 2) * (p - 1);
      }
    }
    case Collective::circular_shift:
      switch (algo) {
        case Algo::hypercube:  // routed: one message; strict: up to log p exchanges
          return t.kind() == Topology::Kind::hypercube ? (kTs + kTw * m) * lg : kTs + kTw * m;
        case Algo::mesh: return (kTs + kTw * m) * mesh_steps;
        default: return (kTs + kTw * m) * ring_steps;
      }
    default:
      switch (algo) {
        case Algo::hypercube: return (kTs + kTw * m) * lg;
        case Algo::mesh: return (kTs + kTw * m) * (rows + cols);
        default: return (kTs + kTw * m) * (p - 1);
      }
  }
}

namespace {
Choice select_uncached(Collective op, const Proc& vp, std::size_t bytes, Algo requested);
}  // namespace

// A VP calls the same collective with the same size again and again: remember its last choice
// per operation so that the table is consulted once, not on every call.
Choice select(Collective op, const Proc& vp, std::size_t bytes, Algo requested) {
  struct Memo {
    std::optional<Topology> topology;
    Links links = Links::routed;
    Algo requested = Algo::automatic;
    std::size_t bytes = 0;
    Choice choice{};
  };
  thread_local std::array<Memo, static_cast<std::size_t>(Collective::barrier) + 1> memo;
  Memo& m = memo[static_cast<std::size_t>(op)];
  if (m.topology == vp.topology() && m.links == vp.options().links && m.requested == requested &&
      m.bytes == bytes)
    return m.choice;
  const Choice choice = select_uncached(op, vp, bytes, requested);  // may throw: not memoised
  m = Memo{vp.topology(), vp.options().links, requested, bytes, choice};
  return choice;
}

namespace {
Choice select_uncached(Collective op, const Proc& vp, std::size_t bytes, Algo requested) {
  const Topology& t = vp.topology();
  const Links links = vp.options().links;
  const auto algos = algorithms_of(op);
  Choice choice;
  if (requested == Algo::automatic) {
    double best = INFINITY;
    for (Algo a : algos) {
      if (restriction(op, a, t, links) != nullptr) continue;
      const double cost = selection_cost(op, a, t, bytes);
      if (cost < best) best = cost, choice.algo = a;
    }
  } else {
    if (std::find(algos.begin(), algos.end(), requested) == algos.end()) {
      std::string valid;
      for (Algo a : algos) valid += std::string(valid.empty() ? "" : ", ") + to_string(a);
      throw AlgorithmError("VP " + std::to_string(vp.id()) + ": " + to_string(op) + " has no " +
                           to_string(requested) + " algorithm (it has: automatic, " + valid + ")");
    }
    if (const char* why = restriction(op, requested, t, links))
      throw AlgorithmError("VP " + std::to_string(vp.id()) + ": " + to_string(op) +
                           " with Algo::" + to_string(requested) + " cannot run on " + t.name() +
                           (links == Links::strict ? " with Links::strict" : "") + ": " + why);
    choice.algo = requested;
  }
  // The sub-algorithm family of the composite algorithms.
  if (power_of_two(t.size()) && (t.kind() == Topology::Kind::hypercube || links == Links::routed))
    choice.family = Family::hypercube;
  else if (t.kind() == Topology::Kind::mesh)
    choice.family = Family::mesh;
  else
    choice.family = Family::ring;
  if (choice.algo == Algo::esbt) choice.chunks = esbt_chunks(t, bytes);
  return choice;
}
}  // namespace

}  // namespace detail
}  // namespace hypercomm
