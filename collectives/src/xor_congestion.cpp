// The congestion of the XOR exchanges (xor_congestion, card.hpp) that automatic's choice weighs
// on a ring or mesh: the most messages sharing a directed link in a step (Grama et al. section
// 4.5), and the step's length as the contention model re-times it.
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "card.hpp"

namespace hypercomm::detail {

namespace {

// The congestion of one step in which every VP sends one message of unit time to id XOR x:
// `load`, the most messages that share one directed link (Grama et al. section 4.5), and
// `chained`, when the step ends as CostModel::contention re-times it (replay.cpp: cut-through, a
// directed link carries one message at a time, first come first served, ties to the smaller id):
// where routes chain (message A's second link is B's first, and so on round a ring) the waits
// add up beyond the load. Exact up to 256 VPs; above, both the average load over the used links
// (a lower bound).
struct XorCongestion {
  double load = 1.0;
  double chained = 1.0;
};

XorCongestion compute_xor_congestion(const Topology& t, int x) {
  const int p = t.size();
  XorCongestion congestion;
  if (p <= 256) {
    std::map<std::pair<int, int>, int> load;
    // Directed link -> the message times in which it is busy; a message takes the first time
    // in which every link of its route is idle, as replay.cpp's contention does.
    std::map<std::pair<int, int>, std::set<int>> busy;
    std::vector<std::pair<int, int>> route;
    for (int id = 0; id < p; ++id) {
      route.clear();
      for (int at = id, to = id ^ x; at != to;) {
        const int next = t.next_hop(at, to);
        route.emplace_back(at, next);
        congestion.load = std::max(congestion.load, static_cast<double>(++load[{at, next}]));
        at = next;
      }
      int start = 0;
      while (std::any_of(route.begin(), route.end(),
                         [&](const auto& link) { return busy[link].contains(start); }))
        ++start;
      for (const auto& link : route) busy[link].insert(start);
      congestion.chained = std::max(congestion.chained, static_cast<double>(start + 1));
    }
  } else {
    double hops = 0;
    for (int id = 0; id < p; ++id) hops += t.distance(id, id ^ x);
    congestion.load = congestion.chained =
        std::max(1.0, hops / (static_cast<double>(p) * std::max(1, t.max_degree())));
  }
  return congestion;
}

// One topology's congestions, x = 1 .. p-1, each computed once (under the table's lock) by the
// first thread to ask and then read without a lock: the pairwise all-to-alls' selection asks for
// every x on every VP (p^2 lookups a call; under one shared lock, 4096 VPs took 15 s).
class XorCongestionTable {
 public:
  explicit XorCongestionTable(const Topology& t)
      : topology_(t),
        values_(static_cast<std::size_t>(t.size())),
        ready_(static_cast<std::size_t>(t.size())) {}
  XorCongestion operator()(int x) {
    const auto i = static_cast<std::size_t>(x);
    if (!ready_[i].load(std::memory_order_acquire)) {
      const std::lock_guard lock(mutex_);
      if (!ready_[i].load(std::memory_order_relaxed)) {
        values_[i] = compute_xor_congestion(topology_, x);
        ready_[i].store(true, std::memory_order_release);
      }
    }
    return values_[i];
  }

 private:
  const Topology topology_;
  std::mutex mutex_;
  std::vector<XorCongestion> values_;
  std::vector<std::atomic<bool>> ready_;
};

// The table of t, shared by every thread and kept for the process's life (one per shape used).
XorCongestionTable& xor_congestion_table(const Topology& t) {
  static std::mutex mutex;
  static std::map<std::tuple<int, int, int, bool>, std::unique_ptr<XorCongestionTable>> tables;
  const std::lock_guard lock(mutex);
  auto& table = tables[{static_cast<int>(t.kind()), t.rows(), t.cols(), t.wraps()}];
  if (!table) table = std::make_unique<XorCongestionTable>(t);
  return *table;
}

}  // namespace

// This thread's last topology keeps a reference to its table, found without the shared lock.
double xor_congestion(const Topology& t, int x, bool chained) {
  if (t.kind() == Topology::Kind::hypercube) return 1.0;
  thread_local std::optional<Topology> topology;
  thread_local XorCongestionTable* table = nullptr;
  if (topology != t) table = &xor_congestion_table(t), topology = t;
  const XorCongestion c = (*table)(x);
  return chained ? c.chained : c.load;
}

}  // namespace hypercomm::detail
