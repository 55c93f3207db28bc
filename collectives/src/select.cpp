// The algorithm table: {collective, algorithms, restrictions}, and automatic's choice by
// textbook cost (Grama et al., ch. 4 cost formulas) on a reference machine. A forced algorithm
// that cannot run throws AlgorithmError before any message is sent (MPICH coll_algorithms.txt;
// Open MPI coll_tuned_decision_fixed.c).
#include "select.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <hypercomm/errors.hpp>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "posted_counts.hpp"

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
    case Collective::all_gatherv: return "all_gatherv";
    case Collective::gatherv: return "gatherv";
    case Collective::scatterv: return "scatterv";
    case Collective::all_to_allv: return "all_to_allv";
    case Collective::reduce_scatterv: return "reduce_scatterv";
  }
  return "collective";
}

namespace {

// How a receiver names a header in CollectiveMismatch messages: "reduce (call 2 on row 1 of
// mesh:4x4, root 3, 24 bytes, algorithm ring)".
std::string describe_collective(const MessageTag& tag, const Topology& machine) {
  const auto op = static_cast<Collective>(tag.kind);
  std::string s = std::string(to_string(op)) + " (call " + std::to_string(tag.sequence) + " on " +
                  group_name(tag.group, machine);
  switch (op) {
    case Collective::broadcast:
    case Collective::reduce:
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
    note_described(tag);
    const auto counts = posted_counts(machine, tag.count);
    s += counts ? ", counts " + show_counts(*counts)
                : ", counts with digest " + std::to_string(tag.count);
  } else if (op != Collective::barrier) {
    s += ", " + std::to_string(tag.count) + " bytes";
  }
  return s + ", algorithm " + to_string(static_cast<Algo>(tag.algo)) + ")";
}
[[maybe_unused]] const bool describer_installed = (set_tag_describer(&describe_collective), true);

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

double log2p(const Topology& t) { return std::log2(static_cast<double>(t.size())); }

int esbt_chunks(const Topology& t, std::size_t bytes) {
  return esbt_chunk_count(t, bytes, CostModel{.ts = kTs, .tw = kTw});
}

}  // namespace

// Johnsson and Ho: k chunks through d trees take (k + d)(ts + tw*m/k), least at k* = sqrt(m d tw
// / ts), T* = m tw + d ts + 2 sqrt(m d ts tw). The run's model decides when it has a bandwidth
// term; the default unit model (tw = 0) has none, so the reference machine's ts and tw stand in
// for the hardware the broadcast runs on (a wall-time choice).
int esbt_chunk_count(const Topology& t, std::size_t bytes, const CostModel& model) {
  const double d = std::max(1.0, log2p(t));
  const bool has_bandwidth = model.tw > 0;
  const double ts = has_bandwidth ? model.ts : kTs, tw = has_bandwidth ? model.tw : kTw;
  const double most = std::max(1.0, static_cast<double>(bytes));
  if (ts <= 0) return static_cast<int>(std::min(most, 1e9));
  const double k_star = std::sqrt(static_cast<double>(bytes) * d * tw / ts);
  // The better of the two whole numbers around k*: the cost is convex in k.
  const auto cost = [&](double k) { return (k + d) * (ts + tw * static_cast<double>(bytes) / k); };
  const double lo = std::clamp(std::floor(k_star), 1.0, most);
  const double hi = std::clamp(std::ceil(k_star), 1.0, most);
  return static_cast<int>(std::min(cost(lo) <= cost(hi) ? lo : hi, 1e9));
}

// all_to_allv's members pass different counts: none knows the others' largest block or total,
// and weighing its own would let the members choose differently (a CollectiveMismatch). Without
// a message to agree on them first, automatic takes the pairwise exchange wherever it can run
// (what all_to_allv ran before it had other algorithms); where it cannot (Links::strict, more
// than 3 ranks), the others that can run are one, or the ring and the mesh on a 1 x n torus,
// which cost the same for every size (select.cpp, irregular_units), so weighing this member's
// own sizes there still chooses alike.
std::optional<Algo> automatic_without_sizes(Collective op, const Topology& t, Links links) {
  if (op == Collective::all_to_allv && restriction(op, Algo::hypercube, t, links) == nullptr)
    return Algo::hypercube;
  return std::nullopt;
}

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

std::span<const Algo> algorithms_of(Collective op) noexcept {
  op = regular_of(op);  // all_to_allv: the pairwise exchange (Algo::hypercube), 4.5.3, 4.5.2, 4.5.1
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
  if (op == Collective::all_to_allv && algo == Algo::hypercube) {  // all_to_allv_pairwise.cpp
    if (links == Links::routed || t.size() <= 2 || (t.size() == 3 && t.ring_adjacent()))
      return nullptr;
    return "its pairwise exchange sends to every other rank, which needs Links::routed";
  }
  op = regular_of(op);
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
        if (!routed && t.size() > 2)
          return "Algorithm 4.10 sends to id XOR i, which needs Links::routed";
        return nullptr;
      }
      if (!hypercube_links)
        return "its partners id XOR 2^k are not neighbours here: it needs a hypercube topology or "
               "Links::routed";
      return nullptr;
    case Algo::esbt:
    case Algo::dimension_exchange:
      if (!power_of_two(t.size())) return "it needs p = 2^d VPs";
      if (!hypercube_links) return "it needs a hypercube topology or Links::routed";
      return nullptr;
    case Algo::ring:
      if (!t.ring_adjacent() && !routed)
        return "VPs i and i+1 are not all neighbours here: it needs a ring topology or "
               "Links::routed";
      return nullptr;
    case Algo::mesh:
      if (t.kind() != Topology::Kind::mesh) return "it needs a mesh topology";
      if (!routed && !t.lines_ring_adjacent())
        return "its row and column rings need the wraparound links of a torus: it needs "
               "Links::routed on a mesh without wraparound";
      return nullptr;
    case Algo::two_phase:  // its phases are the hypercube, mesh or ring pair of the machine
      if (routed || (power_of_two(t.size()) && t.kind() == Topology::Kind::hypercube))
        return nullptr;
      if (t.kind() == Topology::Kind::mesh ? !t.lines_ring_adjacent() : !t.ring_adjacent())
        return "its ring phases need wraparound links: it needs Links::routed here";
      return nullptr;
  }
  return "unknown algorithm";
}

// The cards' exact formulas (cards.cpp, textbook_time) for th = 0, a commutative operator and
// blocks of m/p bytes, on the reference machine. What this function cannot see is bounded:
// the split-message family is taken as the hypercube one whenever p = 2^d (true on a hypercube
// and under the default Links::routed; under Links::strict on a ring or mesh of 2^d VPs the
// ring or mesh pair runs), and the circular shift, whose q is not known here, is costed at its
// worst q. The sums are taken in units of 0.1 ns (ts = 10000, tw = 1 per byte), where they are
// exact for whole byte counts, so that algorithms of equal cost compare equal and the table's
// order decides (not rounding), and scaled to seconds at the end. To the book's formulas the
// reductions add the time to combine what arrives, tc per byte on a VP's critical path (tc = tw
// on the reference machine: a combine streams memory like a copy), which the book leaves out
// but which decides, for large vectors, between folding the whole vector log p times
// (hypercube) and each VP folding one block (reduce-scatter first: two_phase, ring).
namespace {

// The most messages that share one directed link when every VP sends to id XOR x along the
// topology's routes: 1 for x = 2^k on a hypercube (its own links), more where the pattern is
// mapped onto a ring or mesh (Grama et al. section 4.5: the congestion of the mapping). Exact
// (every route walked) up to 256 VPs, else the average load over the used links, a lower bound.
// Computed once per topology and x, shared by every thread.
double xor_congestion_shared(const Topology& t, int x);

// The irregular collectives consult the table on most calls (their counts change from call to
// call): this thread's last topology keeps its congestions of x = 2^k, without the shared lock.
double xor_congestion(const Topology& t, int x) {
  if (t.kind() == Topology::Kind::hypercube) return 1.0;
  if (!is_power_of_two(x)) return xor_congestion_shared(t, x);
  thread_local std::optional<Topology> topology;
  thread_local std::array<double, 13> by_bit{};  // 0: not yet known
  if (topology != t) topology = t, by_bit.fill(0.0);
  double& c = by_bit[static_cast<std::size_t>(log2_of(x))];
  if (c == 0.0) c = xor_congestion_shared(t, x);
  return c;
}

double xor_congestion_shared(const Topology& t, int x) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, int>, double> cache;
  const std::lock_guard lock(mutex);
  const auto key = std::make_pair(t.name(), x);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  const int p = t.size();
  double congestion = 1.0;
  if (p <= 256) {
    std::map<std::pair<int, int>, int> load;
    for (int id = 0; id < p; ++id)
      for (int at = id, to = id ^ x; at != to;) {
        const int next = t.next_hop(at, to);
        congestion = std::max(congestion, static_cast<double>(++load[{at, next}]));
        at = next;
      }
  } else {
    double hops = 0;
    for (int id = 0; id < p; ++id) hops += t.distance(id, id ^ x);
    congestion = std::max(1.0, hops / (static_cast<double>(p) * std::max(1, t.max_degree())));
  }
  cache.emplace(key, congestion);
  return congestion;
}

}  // namespace

namespace {

// The irregular collectives' costs for selection_cost, from their largest block `b` and total
// `total` alone (the table must not walk p counts on every call): a step that moves k blocks is
// costed at cap(k) = min(k*b, total) bytes, the most it can carry. One huge block among empty
// ones then costs what carrying it does (it crosses every step of a ring, log p steps of a
// hypercube, rows + cols - 2 of a mesh), and equal blocks cost the regular formula.
double irregular_units(Collective op, Algo algo, const Topology& t, std::size_t largest,
                       std::size_t total_bytes) {
  constexpr double ts = 10'000, tw = 1;  // the reference machine in units of kTw (below)
  const int n = t.size(), rows = t.rows(), cols = t.cols();
  const double b = static_cast<double>(largest), total = static_cast<double>(total_bytes);
  const auto cap = [&](double k) { return std::min(k * b, total); };
  const auto w = [](double bytes) { return ts + tw * bytes; };
  const bool hypercube_family = power_of_two(n);
  const auto cong = [&](int x) { return hypercube_family ? xor_congestion(t, x) : 1.0; };
  // Two-way ring scatter and gather (rooted_util.hpp) of k parts of at most `part` bytes: arm
  // messages carry j parts, j = a .. 1 (a = floor(k/2)); the other arm (b = floor((k-1)/2))
  // leaves after the first.
  const auto arm = [&](int members, double part) {
    double s = 0;
    for (int j = 1; j <= members; ++j) s += w(std::min(j * part, total));
    return s;
  };
  const auto ring_scatter = [&](int k, double part) {
    const int a = k / 2, down = (k - 1) / 2;
    const double up = arm(a, part);
    return down == 0 ? up : std::max(up, w(std::min(a * part, total)) + arm(down, part));
  };
  const auto ring_gather = [&](int k, double part) { return arm(k / 2, part); };
  switch (op) {
    case Collective::all_gatherv:
    case Collective::reduce_scatterv:
      switch (algo) {
        case Algo::hypercube: {
          double cost = 0;
          for (int k = 0; (1 << k) < n; ++k) cost += w(cap(1 << k) * cong(1 << k));
          return cost;
        }
        case Algo::mesh: return (cols - 1) * w(cap(1)) + (rows - 1) * w(cap(cols));
        default: return (n - 1) * w(cap(1));
      }
    case Collective::gatherv:
    case Collective::scatterv:
      switch (algo) {
        case Algo::hypercube: {
          double cost = 0;
          for (int k = 0; (1 << k) < n; ++k) cost += w(cap(1 << k));
          return cost;
        }
        case Algo::mesh:
          return op == Collective::scatterv ? ring_scatter(cols, rows * b) + ring_scatter(rows, b)
                                            : ring_gather(rows, b) + ring_gather(cols, rows * b);
        default: return op == Collective::scatterv ? ring_scatter(n, b) : ring_gather(n, b);
      }
    case Collective::all_to_allv: {
      // The ring all-to-allv of n members with bundles of `width` blocks (all_to_allv_ring.cpp):
      // the sizes step (8 bytes a block), then n-1 steps of the travelling bundles and the next
      // step's sizes. The mesh's phases are this with bundles of rows and cols blocks, so that
      // a 1 x n mesh costs exactly what the ring of n does.
      constexpr double entry = 8;
      const auto phase = [&](int members, int width) {
        if (members <= 1) return 0.0;
        double s = w(entry * width * (members - 1));
        for (int i = 1; i < members; ++i)
          s += w(cap(static_cast<double>(members - i) * width) + entry * width * (members - i - 1));
        return s;
      };
      switch (algo) {
        case Algo::hypercube: {  // pairwise: one block a step
          double cost = 0;
          for (int i = 1; i < n; ++i) cost += w(cap(1) * cong(i));
          return cost;
        }
        case Algo::dimension_exchange: {  // the p/2 sizes, then p/2 blocks, per dimension
          double cost = 0;
          for (int k = 0; (1 << k) < n; ++k)
            cost += w(entry * (n / 2) * cong(1 << k)) + w(cap(n / 2) * cong(1 << k));
          return cost;
        }
        case Algo::mesh: return phase(cols, rows) + phase(rows, cols);
        default: return phase(n, 1);
      }
    }
    default: return 0;
  }
}

}  // namespace

// The butterfly-style exchanges (every VP swaps with id XOR x in each step) pay the mapping's
// congestion on every byte when they run on a ring or mesh under Links::routed: messages that
// share a link serialize (CostModel::contention). automatic counts it whatever that flag says, so
// it never picks an algorithm that wins only because congestion was ignored (Algorithm 4.10 on
// ring:8). The other terms of the table assume none, as the book's formulas do.
double selection_cost(Collective op, Algo algo, const Topology& t, std::size_t bytes,
                      std::size_t total) {
  if (is_irregular(op)) return irregular_units(op, algo, t, bytes, total) * 1e-10;
  op = regular_of(op);
  constexpr double ts = 10'000, tw = 1, tc = tw, seconds = 1e-10;  // kTs, kTw in units of kTw
  const int n = t.size(), rows = t.rows(), cols = t.cols();
  const double p = n, m = static_cast<double>(bytes), lg = std::max(1.0, log2p(t));
  const auto w = [](double b) { return ts + tw * b; };
  // Two-way ring broadcast over k members: ceil(k/2) sends on its longer path.
  const auto ring_broadcast = [](int k) { return k <= 1 ? 0.0 : static_cast<double>((k + 1) / 2); };
  // Two-way ring scatter / gather of k parts of `part` bytes (rooted_util.hpp).
  const auto ring_scatter = [](int k, double part) {
    if (k <= 1) return 0.0;
    const double a = k / 2, b = (k - 1) / 2;
    const double up = a * ts + tw * part * a * (a + 1) / 2;
    return b == 0 ? up : std::max(up, (b + 1) * ts + tw * part * (a + b * (b + 1) / 2));
  };
  const auto ring_gather = [](int k, double part) {
    const double a = k / 2;
    return k <= 1 ? 0.0 : a * ts + tw * part * a * (a + 1) / 2;
  };
  const double block = m / p;
  // The combine time of the reductions: a VP folds the whole vector once a step, or (reduce-
  // scatter first) its own block once for each other VP.
  const double fold_whole = tc * m, fold_block = tc * block * (p - 1);
  const bool hypercube_family = power_of_two(n);
  const bool mesh_family = !hypercube_family && t.kind() == Topology::Kind::mesh;
  // Congestion of the XOR-x exchange here (1 off the hypercube family, where it is not used).
  const auto cong = [&](int x) { return hypercube_family ? xor_congestion(t, x) : 1.0; };
  const auto units = [&]() -> double {
    switch (op) {
      case Collective::broadcast:
        switch (algo) {
          case Algo::hypercube: return w(m) * lg;
          case Algo::esbt: {
            const double k = esbt_chunks(t, bytes);
            return (lg == 1 ? k : k + lg) * w(m / k);
          }
          case Algo::two_phase:
            if (hypercube_family) return 2 * (ts * lg + tw * block * (p - 1));
            if (mesh_family)
              return ring_scatter(cols, rows * block) + ring_scatter(rows, block) +
                     ts * (rows + cols - 2) + tw * block * (p - 1);
            return ring_scatter(n, block) + (p - 1) * w(block);
          case Algo::mesh: return w(m) * (ring_broadcast(cols) + ring_broadcast(rows));
          default: return w(m) * ring_broadcast(n);
        }
      case Collective::reduce:
        switch (algo) {
          case Algo::hypercube: return (w(m) + fold_whole) * lg;
          case Algo::two_phase:
            if (hypercube_family) return 2 * (ts * lg + tw * block * (p - 1)) + fold_block;
            if (mesh_family)
              return ts * (rows + cols - 2) + tw * block * (p - 1) + ring_gather(rows, block) +
                     ring_gather(cols, rows * block) + fold_block;
            return (p - 1) * w(block) + ring_gather(n, block) + fold_block;
          case Algo::mesh: return (w(m) + fold_whole) * (cols / 2 + rows / 2);
          default: return (w(m) + fold_whole) * (n / 2);
        }
      case Collective::all_reduce:
        switch (algo) {
          case Algo::hypercube: {
            double cost = 0;
            for (int k = 0; (1 << k) < n; ++k) cost += w(m * cong(1 << k)) + fold_whole;
            return cost;
          }
          case Algo::two_phase:
            if (hypercube_family) return 2 * (ts * lg + tw * block * (p - 1)) + fold_block;
            if (mesh_family)
              return 2 * (ts * (rows + cols - 2) + tw * block * (p - 1)) + fold_block;
            return 2 * (p - 1) * w(block) + fold_block;
          case Algo::mesh: {  // all_reduce_mesh.cpp: each phase gathers and folds, or splits
            double cost = 0;
            for (const int k : {cols, rows}) {
              if (k == 1) continue;
              const auto members = static_cast<std::size_t>(k);
              if (bytes * (members - 2) <= members * 10'000)
                cost += (k - 1) * (w(m) + fold_whole);
              else
                cost += 2 * (k - 1) * w(m / k) + tc * (k - 1) * (m / k);
            }
            return cost;
          }
          default: return 2 * (p - 1) * w(block) + fold_block;
        }
      case Collective::all_gather:
      case Collective::reduce_scatter:
        switch (algo) {
          case Algo::hypercube: {
            double cost = 0;
            for (int k = 0; (1 << k) < n; ++k) cost += w(m * (1 << k) * cong(1 << k));
            return cost;
          }
          case Algo::mesh: return ts * (rows + cols - 2) + tw * m * (p - 1);
          default: return w(m) * (p - 1);
        }
      case Collective::all_to_all:
        switch (algo) {
          case Algo::hypercube: {
            double cost = 0;
            for (int i = 1; i < n; ++i) cost += w(block * cong(i));
            return cost;
          }
          case Algo::dimension_exchange: {
            double cost = 0;
            for (int k = 0; (1 << k) < n; ++k) cost += w(m / 2 * cong(1 << k));
            return cost;
          }
          case Algo::mesh: return w(m / 2) * (rows + cols - 2);
          default: return w(m / 2) * (p - 1);
        }
      case Collective::circular_shift:
        switch (algo) {
          case Algo::hypercube:  // strict: one exchange per dimension at worst; routed: one message
            return t.kind() == Topology::Kind::hypercube ? w(m) * lg : w(m);
          case Algo::mesh: return w(m) * (cols / 2 + rows / 2);
          default: return w(m) * (n / 2);
        }
      case Collective::scan:
      case Collective::exscan:
        switch (algo) {
          case Algo::hypercube: return w(m) * lg;
          case Algo::mesh: return w(m) * (rows + cols - 2 + (rows > 1 ? ring_broadcast(cols) : 0));
          default: return w(m) * (p - 1);
        }
      case Collective::scatter:
        switch (algo) {
          case Algo::hypercube: return ts * lg + tw * m * (p - 1);
          case Algo::mesh: return ring_scatter(cols, rows * m) + ring_scatter(rows, m);
          default: return ring_scatter(n, m);
        }
      case Collective::gather:
        switch (algo) {
          case Algo::hypercube: return ts * lg + tw * m * (p - 1);
          case Algo::mesh: return ring_gather(rows, m) + ring_gather(cols, rows * m);
          default: return ring_gather(n, m);
        }
      case Collective::barrier:  // under Links::routed anything but the butterfly disseminates
        switch (algo) {
          case Algo::hypercube: return ts * lg;
          case Algo::mesh: return ts * (rows + cols - 2);
          default: return ts * (p - 1);
        }
      default: break;  // the irregular collectives are costed above
    }
    return INFINITY;
  };
  return units() * seconds;
}

namespace {
Choice select_uncached(Collective op, const GroupInfo& g, Links links, std::size_t bytes,
                       Algo requested, int vp_id, const CostModel& model, std::size_t total);

// A split group's ring is routed over the machine: under Links::strict its collectives run only
// when every message they send is between machine neighbours, that is, when consecutive members
// are neighbours (then the ring algorithms run on it as on a ring).
const char* group_restriction(const GroupInfo& g, Links links) {
  if (links == Links::strict && !g.machine_links() && !g.neighbour_ring)
    return "its members are not machine neighbours in rank order, and Links::strict allows "
           "messages between neighbours only";
  return nullptr;
}
}  // namespace

// A VP calls the same collective with the same size again and again: remember its last choice
// per operation so that the table is consulted once, not on every call.
std::string who(const GroupInfo& g, int vp_id) {
  std::string s = "VP " + std::to_string(vp_id);
  if (g.shape != GroupInfo::Shape::world)
    s += " (rank " + std::to_string(g.rank) + " of " + g.name() + ")";
  return s;
}

Choice select(Collective op, const GroupInfo& g, Links links, std::size_t bytes, Algo requested,
              int vp_id, const CostModel& model, std::size_t total) {
  struct Memo {
    std::optional<Topology> topology;
    Links links = Links::routed;
    bool routed_group = false;
    Algo requested = Algo::automatic;
    std::size_t bytes = 0;
    std::size_t total = 0;
    double ts = 0;
    double tw = 0;
    Choice choice{};
  };
  thread_local std::array<Memo, static_cast<std::size_t>(Collective::reduce_scatterv) + 1> memo;
  Memo& m = memo[static_cast<std::size_t>(op)];
  const bool routed_group = group_restriction(g, links) != nullptr;
  if (m.topology == g.topology && m.links == links && m.routed_group == routed_group &&
      m.requested == requested && m.bytes == bytes && m.total == total && m.ts == model.ts &&
      m.tw == model.tw)
    return m.choice;
  const Choice choice =
      select_uncached(op, g, links, bytes, requested, vp_id, model, total);  // may throw
  m = Memo{g.topology, links, routed_group, requested, bytes, total, model.ts, model.tw, choice};
  return choice;
}

namespace {
Choice select_uncached(Collective op, const GroupInfo& g, Links links, std::size_t bytes,
                       Algo requested, int vp_id, const CostModel& model, std::size_t total) {
  const Topology& t = g.topology;
  const std::string who = detail::who(g, vp_id);
  const auto algos = algorithms_of(op);
  const std::string where =
      g.shape == GroupInfo::Shape::world ? t.name() : g.name() + " (" + t.name() + ")";
  if (const char* why = group_restriction(g, links))
    throw AlgorithmError(who + ": " + to_string(op) + " cannot run on " + where + ": " + why);
  Choice choice;
  if (requested == Algo::automatic) {
    double best = INFINITY;
    if (const auto agreed = automatic_without_sizes(op, t, links)) best = 0, choice.algo = *agreed;
    for (Algo a : algos) {
      if (best == 0) break;
      if (restriction(op, a, t, links) != nullptr) continue;
      const double cost = selection_cost(op, a, t, bytes, total);
      if (cost < best) best = cost, choice.algo = a;
    }
    if (choice.algo == Algo::automatic) {
      std::string why;
      for (Algo a : algos)
        why += std::string(why.empty() ? "" : "; ") + to_string(a) + ": " +
               restriction(op, a, t, links);
      throw AlgorithmError(who + ": no " + to_string(op) + " algorithm can run on " + where +
                           (links == Links::strict ? " with Links::strict" : "") + " (" + why +
                           ")");
    }
  } else {
    if (std::find(algos.begin(), algos.end(), requested) == algos.end()) {
      std::string valid;
      for (Algo a : algos) valid += std::string(valid.empty() ? "" : ", ") + to_string(a);
      throw AlgorithmError(who + ": " + to_string(op) + " has no " + to_string(requested) +
                           " algorithm (it has: automatic, " + valid + ")");
    }
    if (const char* why = restriction(op, requested, t, links))
      throw AlgorithmError(who + ": " + to_string(op) + " with Algo::" + to_string(requested) +
                           " cannot run on " + where +
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
  if (choice.algo == Algo::esbt) choice.chunks = esbt_chunk_count(t, bytes, model);
  return choice;
}
}  // namespace

}  // namespace detail
}  // namespace hypercomm
