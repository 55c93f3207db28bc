// The textbook side by side for the irregular collectives: the cards' uneven formulas
// (hypercomm::textbook_time_v), wherever a card has one, equal the model time of a real run
// (Report::model_time) of the collective called alone on every VP, to a relative 1e-9, and the
// model time lies within textbook_bounds_v everywhere (where textbook_time_v is NaN, the card
// states no closed form), for uneven counts (all zero, zeros
// mixed in, one huge block on the first, the last and a middle rank, random, equal) and, for
// all_to_allv, per-pair counts (one huge pair, one heavy sender, random, equal). On rings p =
// 2..9, 12, 16, meshes 1x3, 2x2, 2x3, 3x3, 3x4, 4x4, the open mesh 3x3 and linear:5, and
// hypercubes d = 1..5, under Links::routed and Links::strict, with th = 0 and th = 0.25; for
// every card's algorithm that can run there and automatic (whose card must be resolve_v's); roots
// 0, p-1 and p/2; std::plus<> and a non-commutative operator in reduce_scatterv; on the whole
// machine and on rows, columns and subcubes (every group at once, each costing its topology's
// formula). Where a card states a closed form (the ring all-gatherv and reduce-scatterv, the
// hypercube recursions, the ring arms of gatherv and scatterv; all_to_allv's ring, mesh and
// dimension exchange with equal blocks) this file evaluates that form itself and compares. On
// linear:5 under Links::strict the line cards (gatherv, scatterv, all_gatherv, reduce_scatterv)
// run with their exact arm sums, and on the open mesh the open-mesh cards (the regular formulas
// for equal blocks, the bounds for uneven ones).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace hc = hypercomm;
using hc::Algo;
using hc::Collective;
using hc::Links;
using hc::Topology;

namespace {

using Vec = std::vector<std::int64_t>;
using Counts = std::vector<std::size_t>;
constexpr std::size_t kElem = sizeof(std::int64_t);

struct KeepLeft {  // associative, not commutative
  std::int64_t operator()(std::int64_t a, std::int64_t) const { return a; }
};
static_assert(!hc::is_commutative_v<KeepLeft>);
// Nor noexcept: its folds are weighed as a receive, then a combine (CallShape::never_throws);
// std::plus's as they land.
static_assert(!hc::detail::never_throws_v<std::int64_t, KeepLeft>);

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

std::vector<Topology> machines() {
  std::vector<Topology> t;
  for (int p : {2, 3, 4, 5, 6, 7, 8, 9, 12, 16}) t.push_back(Topology::ring(p));
  for (auto [r, c] : {std::pair{1, 3}, {2, 2}, {2, 3}, {3, 3}, {3, 4}, {4, 4}})
    t.push_back(Topology::mesh(r, c));
  t.push_back(Topology::parse("mesh:3x3:open"));
  t.push_back(Topology::linear(5));
  for (int d = 1; d <= 5; ++d) t.push_back(Topology::hypercube(d));
  return t;
}

// One count per rank: the patterns of the issue (zeros, one huge block, random) and equal ones.
std::vector<Counts> patterns(int n, std::uint64_t seed) {
  const auto un = static_cast<std::size_t>(n);
  std::vector<Counts> all;
  all.emplace_back(un, 0);  // all zero
  Counts mixed(un);
  for (std::size_t i = 0; i < un; ++i) mixed[i] = i % 2 == 0 ? 0 : 3 + i;
  all.push_back(mixed);
  for (const std::size_t at : {un - 1, std::size_t{0}, un / 2}) {  // one huge block
    Counts huge(un, 0);
    huge[at] = 700;
    all.push_back(huge);
  }
  std::mt19937_64 rng(seed);
  Counts random(un);
  for (auto& c : random) c = rng() % 60;
  all.push_back(random);
  all.emplace_back(un, 5);  // equal
  return all;
}

// all_to_allv: p*p counts, row-major (counts[i*p + j]: from rank i to rank j).
std::vector<Counts> matrices(int n, std::uint64_t seed) {
  const auto un = static_cast<std::size_t>(n);
  std::vector<Counts> all;
  Counts pair(un * un, 0);  // one huge pair, the rest empty
  pair[(un - 1) * un + 0] = 900;
  all.push_back(pair);
  Counts heavy(un * un, 2);  // one heavy sender
  for (std::size_t j = 0; j < un; ++j) heavy[1 % un * un + j] = 300;
  all.push_back(heavy);
  std::mt19937_64 rng(seed);
  Counts random(un * un);
  for (auto& c : random) c = rng() % 80;
  all.push_back(random);
  all.emplace_back(un * un, 6);
  return all;
}

// One call of the test: op, algorithm asked for, counts, root, operator.
struct Call {
  Collective op;
  Algo algo;
  Counts counts;
  int root = 0;
  bool commutative = true;
};

std::size_t sum(const Counts& c) { return std::accumulate(c.begin(), c.end(), std::size_t{0}); }

template <class C>
void run_call(C& comm, int me, int n, const Call& c) {
  const auto um = static_cast<std::size_t>(me);
  switch (c.op) {
    case Collective::all_gatherv: {
      Vec in(c.counts[um], me), out(sum(c.counts));
      hc::all_gatherv(comm, in, out, c.counts, c.algo);
      break;
    }
    case Collective::gatherv: {
      Vec in(c.counts[um], me), out(me == c.root ? sum(c.counts) : 0);
      hc::gatherv(comm, in, out, c.counts, c.root);
      break;
    }
    case Collective::scatterv: {
      Vec in(me == c.root ? sum(c.counts) : 0, 1), out(c.counts[um]);
      hc::scatterv(comm, in, out, c.counts, c.root);
      break;
    }
    case Collective::reduce_scatterv: {
      Vec in(sum(c.counts), me), out(c.counts[um]);
      if (c.commutative)
        hc::reduce_scatterv(comm, in, out, std::plus<>(), c.counts, c.algo);
      else
        hc::reduce_scatterv(comm, in, out, KeepLeft(), c.counts, c.algo);
      break;
    }
    case Collective::all_to_allv: {
      const auto un = static_cast<std::size_t>(n);
      Counts send(c.counts.begin() + static_cast<std::ptrdiff_t>(um * un),
                  c.counts.begin() + static_cast<std::ptrdiff_t>((um + 1) * un));
      Counts recv(un);
      for (std::size_t i = 0; i < un; ++i) recv[i] = c.counts[i * un + um];
      Vec in(sum(send), me), out(sum(recv));
      hc::all_to_allv(comm, in, send, out, recv, c.algo);
      break;
    }
    default: break;
  }
}

constexpr Collective kOps[] = {Collective::all_gatherv, Collective::gatherv, Collective::scatterv,
                               Collective::reduce_scatterv, Collective::all_to_allv};

// Every call to make on a machine (or group) of topology t.
std::vector<Call> calls_for(const Topology& t, Links links) {
  const int p = t.size();
  std::vector<Call> calls;
  for (const Collective op : kOps) {
    try {  // (every irregular collective runs on these machines, strict or routed)
      (void)hc::resolve(op, Algo::automatic, t, links, 8);
    } catch (const hc::AlgorithmError&) {
      continue;
    }
    std::vector<Algo> algos{Algo::automatic};
    if (hc::takes_algo(op))
      for (const hc::Card& card : hc::cards())
        if (card.op == op) try {
            (void)hc::resolve(op, card.algo, t, links, 0);
            algos.push_back(card.algo);
          } catch (const hc::AlgorithmError&) {
          }
    std::vector<int> roots{0};
    if (op == Collective::gatherv || op == Collective::scatterv) {
      roots = {0, p - 1, p / 2};
      std::sort(roots.begin(), roots.end());
      roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
    }
    std::vector<bool> kinds{true};
    if (op == Collective::reduce_scatterv) kinds = {true, false};
    const auto sets = op == Collective::all_to_allv ? matrices(p, 7u + static_cast<unsigned>(p))
                                                    : patterns(p, 11u + static_cast<unsigned>(p));
    for (const Algo a : algos)
      for (const Counts& counts : sets)
        for (const int root : roots)
          for (const bool commutative : kinds) calls.push_back({op, a, counts, root, commutative});
  }
  return calls;
}

bool close(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); }

std::string show(const Counts& c) {
  std::string s;
  for (std::size_t i = 0; i < c.size() && i < 24; ++i) s += (i ? "," : "") + std::to_string(c[i]);
  return "{" + s + (c.size() > 24 ? ",..." : "") + "}";
}

using Covered = std::set<std::pair<Collective, Algo>>;

// Where the group kind puts each VP: the whole machine, its row, its column, or a subcube.
enum class Where { machine, row, column, subcube };

template <class F>
void on(hc::Proc& vp, Where where, unsigned mask, F&& f) {
  switch (where) {
    case Where::machine: return f(vp, vp.id(), vp.size());
    case Where::row: {
      const hc::Group g = vp.row();
      return f(g, g.rank(), g.size());
    }
    case Where::column: {
      const hc::Group g = vp.column();
      return f(g, g.rank(), g.size());
    }
    case Where::subcube: {
      const hc::Group g = vp.subcube(mask);
      return f(g, g.rank(), g.size());
    }
  }
}

// Calls checked against their card's closed form, and against its bounds where it has none.
struct Tally {
  int exact = 0;
  int bounded = 0;
  double slack = 0;  // the widest (upper - lower) / model time
};

// Runs every call on `machine` where `where` puts it, each group's topology `t`, and compares.
void check(const Topology& machine_topology, Where where, unsigned mask, const Topology& t,
           Links links, const hc::CostModel& model, Covered& covered, Tally& tally) {
  hc::Options opt;
  opt.links = links;
  opt.model = model;
  opt.pinning = hc::Pinning::none;
  opt.deadlock_timeout = std::chrono::seconds(20);
  hc::Machine machine(machine_topology, opt);
  for (const Call& c : calls_for(t, links)) {
    const hc::Report r = machine.run([&](hc::Proc& vp) {
      on(vp, where, mask, [&](auto& comm, int me, int n) { run_call(comm, me, n, c); });
    });
    const hc::CallShape shape{.root = c.root,
                              .elem_size = kElem,
                              .commutative = c.commutative,
                              .never_throws = c.commutative};
    INFO(std::string(hc::to_string(c.op)), " algo=", std::string(hc::to_string(c.algo)), " on ",
         t.name(), " in ", machine_topology.name(), links == Links::routed ? " routed" : " strict",
         " th=", model.th, " root=", c.root, c.commutative ? " plus" : " keep-left",
         " counts=", show(c.counts));
    const double formula = hc::textbook_time_v(c.op, c.algo, t, links, c.counts, model, shape);
    const Algo chosen = hc::resolve_v(c.op, c.algo, t, links, c.counts, kElem);
    covered.insert({c.op, chosen});
    const double card = hc::textbook_time_v(c.op, chosen, t, links, c.counts, model, shape);
    const hc::TimeBounds b = hc::textbook_bounds_v(c.op, c.algo, t, links, c.counts, model, shape);
    CHECK_MESSAGE(b.lower <= r.model_time * (1 + 1e-9) + 1e-9, "lower bound ", b.lower);
    CHECK_MESSAGE(r.model_time <= b.upper * (1 + 1e-9) + 1e-9, "upper bound ", b.upper);
    if (std::isnan(formula)) {  // the card states no closed form here: the bounds above
      CHECK(std::isnan(card));
      CHECK(b.lower <= b.upper);
      ++tally.bounded;
      tally.slack = std::max(tally.slack, (b.upper - b.lower) / r.model_time);
      continue;
    }
    ++tally.exact;
    CHECK(formula == card);
    CHECK(b.lower == formula);
    CHECK(b.upper == formula);
    CHECK_MESSAGE(close(formula, r.model_time), "formula ", formula, " model ", r.model_time);
  }
}

}  // namespace

TEST_CASE("every irregular card's uneven formula is the model time of a run" *
          doctest::timeout(600)) {
  Covered covered;
  Tally tally;
  for (const Topology& t : machines())
    for (Links links : {Links::routed, Links::strict})
      for (double th : {0.0, 0.25}) {
        if (kSanitized && th != 0) continue;
        CAPTURE(t.name());
        check(t, Where::machine, 0, t, links, {.ts = 1.0, .tw = 0.01, .th = th}, covered, tally);
      }
  std::printf(
      "irregular fidelity: %d calls equal their card's closed form; %d without one lie "
      "within its bounds (widest: %.0f%% of the model time)\n",
      tally.exact, tally.bounded, 100 * tally.slack);
  for (const hc::Card& card : hc::cards()) {
    if (card.op < Collective::all_gatherv) continue;  // test_fidelity.cpp
    INFO(hc::to_string(card.op), " ", hc::to_string(card.algo));
    CHECK(covered.count({card.op, card.algo}) == 1);
  }
}

TEST_CASE("irregular formulas on groups: rows, columns and subcubes, each at its topology's cost") {
  Covered covered;
  Tally tally;
  const hc::CostModel model{.ts = 1.0, .tw = 0.01, .th = 0.25};
  for (Links links : {Links::routed, Links::strict}) {
    const Topology mesh34 = Topology::mesh(3, 4), open = Topology::parse("mesh:3x3:open");
    const Topology cube = Topology::hypercube(4);
    check(mesh34, Where::row, 0, Topology::ring(4), links, model, covered, tally);
    check(mesh34, Where::column, 0, Topology::ring(3), links, model, covered, tally);
    check(open, Where::row, 0, Topology::linear(3), links, model, covered, tally);
    check(cube, Where::subcube, 0b0101, Topology::hypercube(2), links, model, covered, tally);
    check(cube, Where::subcube, 0b1110, Topology::hypercube(3), links, model, covered, tally);
  }
}

namespace {

// The cards' closed forms, evaluated here from their text.
double w(const hc::CostModel& m, double bytes) { return m.ts + m.tw * bytes; }
double bytes_of(const Counts& c, std::size_t first, std::size_t count) {
  return static_cast<double>(std::accumulate(c.begin() + static_cast<std::ptrdiff_t>(first),
                                             c.begin() + static_cast<std::ptrdiff_t>(first + count),
                                             std::size_t{0})) *
         kElem;
}

// all_gatherv / hypercube (th = 0): T(g) = max over the halves h of g of T(h) + ts + tw*B(h).
double cube_all_gather(const hc::CostModel& m, const Counts& c, std::size_t first,
                       std::size_t size) {
  if (size == 1) return 0;
  const std::size_t half = size / 2;
  return std::max(
      cube_all_gather(m, c, first, half) + w(m, bytes_of(c, first, half)),
      cube_all_gather(m, c, first + half, half) + w(m, bytes_of(c, first + half, half)));
}
// reduce_scatterv / hypercube, commutative (th = 0): R(g) = ts + tw*max(B(g1), B(g2)) +
// max(R(g1), R(g2)).
double cube_reduce_scatter(const hc::CostModel& m, const Counts& c, std::size_t first,
                           std::size_t size) {
  if (size == 1) return 0;
  const std::size_t half = size / 2;
  return w(m, std::max(bytes_of(c, first, half), bytes_of(c, first + half, half))) +
         std::max(cube_reduce_scatter(m, c, first, half),
                  cube_reduce_scatter(m, c, first + half, half));
}
// gatherv / hypercube to root 0 (th = 0 or on a hypercube): G(g) = max(G(g_r), G(g_o) + ts +
// tw*B(g_o) + th) over the halves; g_r is the lower half (it holds rank 0).
double cube_gather(const hc::CostModel& m, const Counts& c, std::size_t first, std::size_t size) {
  if (size == 1) return 0;
  const std::size_t half = size / 2;
  return std::max(cube_gather(m, c, first, half), cube_gather(m, c, first + half, half) +
                                                      w(m, bytes_of(c, first + half, half)) + m.th);
}
// scatterv / hypercube from root 0: S(g, t) = max(S(g_r, t + c), S(g_o, t + c + th)).
double cube_scatter(const hc::CostModel& m, const Counts& c, std::size_t first, std::size_t size,
                    double t) {
  if (size == 1) return t;
  const std::size_t half = size / 2;
  const double cost = w(m, bytes_of(c, first + half, half));
  return std::max(cube_scatter(m, c, first, half, t + cost),
                  cube_scatter(m, c, first + half, half, t + cost + m.th));
}
// gatherv / ring to root 0: the longer arm, each the sum over its members v from the root's
// neighbour to the far end e of (ts + tw*B(v..e) + th). The up arm is ranks 1..a, a = floor(p/2);
// the down arm ranks p-1 down to p-b, b = floor((p-1)/2).
double ring_gather(const hc::CostModel& m, const Counts& c) {
  const std::size_t p = c.size(), a = p / 2, b = (p - 1) / 2;
  double up = 0, down = 0;
  for (std::size_t v = 1; v <= a; ++v) up += w(m, bytes_of(c, v, a - v + 1)) + m.th;
  for (std::size_t k = 1; k <= b; ++k) down += w(m, bytes_of(c, p - b, b - k + 1)) + m.th;
  return std::max(up, down);
}
// scatterv / ring from root 0: the up arm's far end receives after the sum over u = 1..a of
// (ts + tw*B(u..a) + th); the down arm's after ts + tw*B(1..a) and the same sum over its own.
double ring_scatter(const hc::CostModel& m, const Counts& c) {
  const std::size_t p = c.size(), a = p / 2, b = (p - 1) / 2;
  double up = 0, down = a > 0 ? w(m, bytes_of(c, 1, a)) : 0;
  for (std::size_t u = 1; u <= a; ++u) up += w(m, bytes_of(c, u, a - u + 1)) + m.th;
  for (std::size_t k = 1; k <= b; ++k) down += w(m, bytes_of(c, p - b, b - k + 1)) + m.th;
  return b == 0 ? up : std::max(up, down);
}

}  // namespace

TEST_CASE("the irregular cards' closed forms are the formula") {
  for (const double th : {0.0, 0.25}) {
    const hc::CostModel m{.ts = 1.0, .tw = 0.01, .th = th};
    for (int p : {2, 3, 4, 5, 7, 8, 16}) {
      const Topology ring = Topology::ring(p);
      for (const Counts& c : patterns(p, 3u + static_cast<unsigned>(p))) {
        INFO("ring:", p, " th=", th, " counts=", show(c));
        const double b_max = static_cast<double>(*std::max_element(c.begin(), c.end()) * kElem);
        for (const Collective op : {Collective::all_gatherv, Collective::reduce_scatterv})
          CHECK(close(
              hc::textbook_time_v(op, Algo::ring, ring, Links::strict, c, m, {.elem_size = kElem}),
              (p - 1) * (w(m, b_max) + th)));
        CHECK(close(hc::textbook_time_v(Collective::gatherv, Algo::ring, ring, Links::strict, c, m,
                                        {.elem_size = kElem}),
                    ring_gather(m, c)));
        CHECK(close(hc::textbook_time_v(Collective::scatterv, Algo::ring, ring, Links::strict, c, m,
                                        {.elem_size = kElem}),
                    ring_scatter(m, c)));
      }
    }
    for (int d = 1; d <= 5; ++d) {
      const Topology cube = Topology::hypercube(d);
      const auto p = static_cast<std::size_t>(cube.size());
      for (const Counts& c : patterns(cube.size(), 5u + static_cast<unsigned>(d))) {
        INFO("hypercube:", d, " th=", th, " counts=", show(c));
        const hc::CallShape shape{.elem_size = kElem};
        CHECK(close(hc::textbook_time_v(Collective::gatherv, Algo::hypercube, cube, Links::strict,
                                        c, m, shape),
                    cube_gather(m, c, 0, p)));
        CHECK(close(hc::textbook_time_v(Collective::scatterv, Algo::hypercube, cube, Links::strict,
                                        c, m, shape),
                    cube_scatter(m, c, 0, p, 0)));
        if (th != 0) continue;  // the all-gather and reduce-scatter recursions are for th = 0
        CHECK(close(hc::textbook_time_v(Collective::all_gatherv, Algo::hypercube, cube,
                                        Links::strict, c, m, shape),
                    cube_all_gather(m, c, 0, p)));
        CHECK(close(hc::textbook_time_v(Collective::reduce_scatterv, Algo::hypercube, cube,
                                        Links::strict, c, m, shape),
                    cube_reduce_scatter(m, c, 0, p)));
      }
    }
  }
}

TEST_CASE("the all_to_allv cards' equal-block closed forms") {
  // Equal blocks of m bytes (+ 8 bytes of size per forwarded block): ring ts + (ts + tw*(m+8)*
  // p/2)*(p-1) + th*p; torus mesh 2*ts + (ts + tw*(m+8)*p/2)*(rows+cols-2) + th*(rows+cols);
  // hypercube dimension exchange (2*ts + tw*(m+8)*p/2)*log p + 2*th*log p.
  for (const double th : {0.0, 0.25}) {
    const hc::CostModel m{.ts = 1.0, .tw = 0.01, .th = th};
    const std::size_t count = 6;
    const double b = static_cast<double>(count * kElem) + 8;
    const auto equal = [&](const Topology& t) {
      return Counts(static_cast<std::size_t>(t.size() * t.size()), count);
    };
    for (int p : {2, 3, 5, 8, 12}) {
      const Topology t = Topology::ring(p);
      INFO("ring:", p, " th=", th);
      CHECK(close(hc::textbook_time_v(Collective::all_to_allv, Algo::ring, t, Links::strict,
                                      equal(t), m, {.elem_size = kElem}),
                  m.ts + (m.ts + m.tw * b * p / 2) * (p - 1) + th * p));
    }
    for (auto [r, c] : {std::pair{2, 2}, {2, 3}, {3, 4}, {4, 4}}) {
      const Topology t = Topology::mesh(r, c);
      INFO(t.name(), " th=", th);
      CHECK(close(hc::textbook_time_v(Collective::all_to_allv, Algo::mesh, t, Links::strict,
                                      equal(t), m, {.elem_size = kElem}),
                  2 * m.ts + (m.ts + m.tw * b * t.size() / 2) * (r + c - 2) + th * (r + c)));
    }
    for (int d = 1; d <= 5; ++d) {
      const Topology t = Topology::hypercube(d);
      INFO(t.name(), " th=", th);
      CHECK(close(hc::textbook_time_v(Collective::all_to_allv, Algo::dimension_exchange, t,
                                      Links::strict, equal(t), m, {.elem_size = kElem}),
                  (2 * m.ts + m.tw * b * t.size() / 2) * d + 2 * th * d));
    }
    // The line's two streams over n members, bundles of `bundle` bytes with `entry` bytes of
    // sizes each: L(n) = 2n*ts + 2(n-1)*th + tw*max_{j=0..n-2}(bundle*(n(n-1) - 2j) +
    // entry*(j+1)*(2n-2-j)), whose j = 0 term wins when bundle >= entry*(n-2); the open mesh
    // L(cols) along the rows (bundles of rows blocks) plus L(rows) along the columns.
    const auto line = [&](int n, double bundle, double entry) {
      if (n <= 1) return 0.0;
      double most = 0;
      for (int j = 0; j <= n - 2; ++j)
        most = std::max(most, bundle * (n * (n - 1) - 2 * j) + entry * (j + 1) * (2 * n - 2 - j));
      return 2 * n * m.ts + 2 * (n - 1) * th + m.tw * most;
    };
    for (const std::size_t elements : {std::size_t{1}, count}) {
      const double block = static_cast<double>(elements * kElem);
      const auto same = [&](const Topology& t) {
        return Counts(static_cast<std::size_t>(t.size() * t.size()), elements);
      };
      for (int p : {3, 5, 8}) {  // (linear:2 is a ring of 2: the ring card runs)
        const Topology t = Topology::linear(p);
        INFO(t.name(), " th=", th, " block ", block);
        const double formula = line(p, block, 8);
        CHECK(close(hc::textbook_time_v(Collective::all_to_allv, Algo::ring, t, Links::strict,
                                        same(t), m, {.elem_size = kElem}),
                    formula));
        if (block >= 8.0 * (p - 2))
          CHECK(
              close(formula, 2 * p * m.ts + 2 * (p - 1) * th + m.tw * (block * p + 16) * (p - 1)));
      }
      for (const char* name :
           {"mesh:2x3:open", "mesh:3x3:open", "mesh:4x3:open", "mesh:1x4:open"}) {
        const Topology t = Topology::parse(name);
        const int r = t.rows(), c = t.cols();
        INFO(t.name(), " th=", th, " block ", block);
        CHECK(close(hc::textbook_time_v(Collective::all_to_allv, Algo::mesh, t, Links::strict,
                                        same(t), m, {.elem_size = kElem}),
                    line(c, r * block, 8.0 * r) + line(r, c * block, 8.0 * c)));
      }
    }
  }
}

TEST_CASE("automatic weighs the largest block and the total") {
  // Equal blocks choose what the regular collective chooses for one such block.
  for (const Topology& t : machines())
    for (Links links : {Links::routed, Links::strict})
      for (const std::size_t block : {std::size_t{8}, std::size_t{4096}, std::size_t{1} << 20}) {
        INFO(t.name(), links == Links::routed ? " routed" : " strict", " block ", block);
        const Counts equal(static_cast<std::size_t>(t.size()), block);
        // (Under Links::strict an open mesh of several rows and columns runs the open-mesh cards,
        // a linear array the line cards.)
        CHECK(hc::resolve_v(Collective::all_gatherv, Algo::automatic, t, links, equal, 1) ==
              hc::resolve(Collective::all_gather, Algo::automatic, t, links, block));
        CHECK(hc::resolve_v(Collective::reduce_scatterv, Algo::automatic, t, links, equal, 1) ==
              hc::resolve(Collective::reduce_scatter, Algo::automatic, t, links, block));
        CHECK(hc::resolve_v(Collective::gatherv, Algo::automatic, t, links, equal, 1) ==
              hc::resolve(Collective::gather, Algo::automatic, t, links, block));
        CHECK(hc::resolve_v(Collective::scatterv, Algo::automatic, t, links, equal, 1) ==
              hc::resolve(Collective::scatter, Algo::automatic, t, links, block));
      }
  // One huge block on ring:8 under Links::routed. Eight blocks of the mean (1/8 of it) take the
  // ring all-gather: the butterfly's step k sends 2^k blocks over routes whose links 2^k
  // messages share (1 + 2 + 4 = 7 blocks' time per byte against the ring's 7 single blocks,
  // and 21 against 7 counting the bytes). The one block costs both 7 block-times (the ring
  // carries it 7 steps; the butterfly 3, over links shared 1, 2 and 4 times), and the
  // butterfly's 4 fewer start-ups decide: the hypercube algorithm. Without contention its model
  // time is far the smaller (3 steps).
  const Topology ring8 = Topology::ring(8);
  Counts huge(8, 0);
  huge[5] = std::size_t{1} << 20;
  const Counts mean(8, huge[5] / 8);
  CHECK(hc::resolve_v(Collective::all_gatherv, Algo::automatic, ring8, Links::routed, mean, 1) ==
        Algo::ring);
  CHECK(hc::resolve_v(Collective::all_gatherv, Algo::automatic, ring8, Links::routed, huge, 1) ==
        Algo::hypercube);
  const hc::CostModel machine{.ts = 1e-6, .tw = 1e-10, .th = 0.0};
  CHECK(hc::textbook_time_v(Collective::all_gatherv, Algo::hypercube, ring8, Links::routed, huge,
                            machine) < hc::textbook_time_v(Collective::all_gatherv, Algo::ring,
                                                           ring8, Links::routed, huge, machine));
  // ... and a run under that model takes it (the model time is the hypercube card's).
  hc::Options opt;
  opt.pinning = hc::Pinning::none;
  opt.model = machine;
  const hc::Report r = hc::run(
      ring8,
      [&](hc::Proc& vp) {
        std::vector<char> in(huge[static_cast<std::size_t>(vp.id())]), out(sum(huge));
        hc::all_gatherv(vp, in, out, huge);
      },
      opt);
  CHECK(close(r.model_time, hc::textbook_time_v(Collective::all_gatherv, Algo::hypercube, ring8,
                                                Links::routed, huge, machine)));
}

TEST_CASE("textbook_time_v: wrong numbers of counts, regular operations, p = 1") {
  const hc::CostModel model{.ts = 1.0, .tw = 0.01, .th = 0.0};
  const Topology ring4 = Topology::ring(4);
  CHECK_THROWS_AS((void)hc::textbook_time_v(Collective::all_gatherv, Algo::automatic, ring4,
                                            Links::routed, Counts(3, 1), model),
                  std::invalid_argument);
  CHECK_THROWS_AS((void)hc::textbook_time_v(Collective::all_to_allv, Algo::automatic, ring4,
                                            Links::routed, Counts(4, 1), model),
                  std::invalid_argument);
  CHECK_THROWS_AS((void)hc::textbook_time_v(Collective::all_gather, Algo::automatic, ring4,
                                            Links::routed, Counts(4, 1), model),
                  std::invalid_argument);
  CHECK_THROWS_AS((void)hc::textbook_time_v(Collective::all_gatherv, Algo::hypercube,
                                            Topology::ring(6), Links::routed, Counts(6, 1), model),
                  hc::AlgorithmError);
  CHECK(hc::textbook_time_v(Collective::gatherv, Algo::automatic, Topology::ring(1), Links::routed,
                            Counts(1, 9), model) == 0);
  // The regular spelling takes an irregular operation with equal blocks.
  CHECK(hc::textbook_time(Collective::all_gatherv, Algo::ring, ring4, Links::routed, 80, model) ==
        hc::textbook_time(Collective::all_gather, Algo::ring, ring4, Links::routed, 80, model));
}

TEST_CASE("find_card_v names the card that runs, where two share an Algo") {
  // all_to_allv's Algo::ring is the ring's card on a ring, the linear array's on a line under
  // Links::strict; Algo::mesh the torus's on a torus, the open mesh's on one under strict.
  const Counts five(25, 3), nine(81, 3);
  const Topology line = Topology::linear(5), ring = Topology::ring(5);
  const Topology open = Topology::parse("mesh:3x3:open"), torus = Topology::mesh(3, 3);
  const auto variant = [](const hc::Card* card) {
    return std::string(card->variant != nullptr ? card->variant : "");
  };
  for (const Algo a : {Algo::automatic, Algo::ring}) {
    const hc::Card* on_line =
        hc::find_card_v(Collective::all_to_allv, a, line, Links::strict, five, kElem);
    CHECK(on_line->algo == Algo::ring);
    CHECK(variant(on_line) == "linear array");
    CHECK(variant(hc::find_card_v(Collective::all_to_allv, a, ring, Links::strict, five, kElem)) ==
          "");
    // The regular find_card takes the irregular op with equal blocks of `bytes`, alike.
    CHECK(hc::find_card(Collective::all_to_allv, a, line, Links::strict, 5 * kElem) == on_line);
  }
  for (const Algo a : {Algo::automatic, Algo::mesh}) {
    CHECK(variant(hc::find_card_v(Collective::all_to_allv, a, open, Links::strict, nine, kElem)) ==
          "open mesh");
    CHECK(variant(hc::find_card_v(Collective::all_to_allv, a, torus, Links::strict, nine, kElem)) ==
          "");
  }
  // Where nothing can run, AlgorithmError as resolve_v.
  CHECK_THROWS_AS((void)hc::find_card_v(Collective::all_to_allv, Algo::dimension_exchange, line,
                                        Links::strict, five, kElem),
                  hc::AlgorithmError);
}
