// The textbook side by side, part 1: every card's formula (hypercomm::textbook_time) equals the
// model time of a real run (Report::model_time) of that collective, called alone, on every VP,
// to a relative 1e-9. Through the public API only, on rings p = 2..9, 12, 16, meshes 1x3, 2x2,
// 2x3, 3x3, 3x4, 4x4, the open meshes 3x3 and 2x4, linear:5 and hypercubes d = 1..5, under
// Links::routed and Links::strict, for every algorithm that can run there and for automatic, with
// message sizes that p divides and sizes it does not, several roots and shifts, a commutative
// std::plus<> on int64 and a non-commutative operator, and a cost model where every term matters:
// ts = 1, tw = 0.01 per byte, th = 0 and th = 0.25 wherever textbook_counts_hops says the card
// counts the hop term; one port, and again all ports (CostModel::all_port, section 4.7).
//
// Kept quick (it also runs under ThreadSanitizer): each machine's VP threads are started once
// (hypercomm::Machine) and the grid of sizes is small: about 30 s in Debug.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <hypercomm/hypercomm.hpp>
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
constexpr std::size_t kElem = sizeof(std::int64_t);

// Associative, not commutative (a op b = a): the order-keeping variants run.
struct KeepLeft {
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
  // Without wraparound: the ring and mesh algorithms routed across the line (th left out of
  // their formulas, textbook_counts_hops false), the hypercube family on 2 x 4.
  for (const char* name : {"mesh:3x3:open", "mesh:2x4:open", "linear:5"})
    t.push_back(Topology::parse(name));
  for (int d = 1; d <= 5; ++d) t.push_back(Topology::hypercube(d));
  return t;
}

// One call: what runs, on what, with which arguments.
struct Call {
  Collective op;
  Algo algo;          // as requested (automatic included)
  std::size_t count;  // elements: of the vector, or of one block (all_gather, reduce_scatter,
                      // scatter, gather, all_to_all)
  int root = 0;
  int shift = 0;
  bool commutative = true;
};

std::string describe(const Call& c, const Topology& t, Links links, const hc::CostModel& model) {
  return std::string(hc::to_string(c.op)) + " algo=" + hc::to_string(c.algo) + " on " + t.name() +
         (links == Links::routed ? " routed" : " strict") + " count=" + std::to_string(c.count) +
         " root=" + std::to_string(c.root) + " shift=" + std::to_string(c.shift) +
         (c.commutative ? " plus" : " keep-left") + " th=" + std::to_string(model.th);
}

// `bytes` as textbook_time counts them.
std::size_t bytes_of(const Call& c, int p) {
  const std::size_t b = c.count * kElem;
  return c.op == Collective::all_to_all ? b * static_cast<std::size_t>(p) : b;
}

template <class Op>
void run_reducing(hc::Proc& vp, const Call& c, Op op) {
  const std::size_t n = c.count, p = static_cast<std::size_t>(vp.size());
  const bool root = vp.id() == c.root;
  switch (c.op) {
    case Collective::reduce: {
      Vec in(n, vp.id()), out(root ? n : 0);
      hc::reduce(vp, in, out, op, c.root, c.algo);
      break;
    }
    case Collective::all_reduce: {
      Vec in(n, vp.id()), out(n);
      hc::all_reduce(vp, in, out, op, c.algo);
      break;
    }
    case Collective::reduce_scatter: {
      Vec in(n * p, vp.id()), out(n);
      hc::reduce_scatter(vp, in, out, op, c.algo);
      break;
    }
    case Collective::scan: {
      Vec in(n, vp.id()), out(n);
      hc::scan(vp, in, out, op);
      break;
    }
    case Collective::exscan: {
      Vec in(n, vp.id()), out(n);
      hc::exscan(vp, in, out, op);
      break;
    }
    default: break;
  }
}

void run_call(hc::Proc& vp, const Call& c) {
  const std::size_t n = c.count, p = static_cast<std::size_t>(vp.size());
  const bool root = vp.id() == c.root;
  switch (c.op) {
    case Collective::broadcast: {
      Vec buf(n, vp.id());
      hc::broadcast(vp, buf, c.root, c.algo);
      break;
    }
    case Collective::all_gather: {
      Vec in(n, vp.id()), out(n * p);
      hc::all_gather(vp, in, out, c.algo);
      break;
    }
    case Collective::scatter: {
      Vec in(root ? n * p : 0, 1), out(n);
      hc::scatter(vp, in, out, c.root);
      break;
    }
    case Collective::gather: {
      Vec in(n, vp.id()), out(root ? n * p : 0);
      hc::gather(vp, in, out, c.root);
      break;
    }
    case Collective::all_to_all: {
      Vec in(n * p, vp.id()), out(n * p);
      hc::all_to_all(vp, in, out, c.algo);
      break;
    }
    case Collective::circular_shift: {
      Vec in(n, vp.id()), out(n);
      hc::circular_shift(vp, in, out, c.shift);
      break;
    }
    case Collective::barrier: hc::barrier(vp); break;
    default:
      if (c.commutative)
        run_reducing(vp, c, std::plus<>());
      else
        run_reducing(vp, c, KeepLeft());
  }
}

bool takes_op(Collective op) {
  return op == Collective::reduce || op == Collective::all_reduce ||
         op == Collective::reduce_scatter || op == Collective::scan || op == Collective::exscan;
}
bool rooted(Collective op) {
  return op == Collective::broadcast || op == Collective::reduce || op == Collective::scatter ||
         op == Collective::gather;
}

// Element counts: 0, 1 (uneven blocks for every p > 1), 100 and 1000 (uneven for most p),
// and a multiple of p (even blocks) for the operations that cut a vector into p blocks.
std::vector<std::size_t> counts_for(Collective op, int p) {
  switch (op) {
    case Collective::barrier: return {0};
    case Collective::all_gather:
    case Collective::reduce_scatter:
    case Collective::scatter:
    case Collective::gather:
    case Collective::all_to_all: return {0, 1, 100};
    default: break;
  }
  std::vector<std::size_t> counts{0, 1, 100, 10 * static_cast<std::size_t>(p)};
  if (!kSanitized) counts.push_back(1000);
  // 30000 and 30008 bytes: ESBT pipelines 3 even and 3 uneven chunks on 8 VPs (2 on 2 and 4,
  // 4 on 16 and 32 VPs), and all_reduce's mesh phases of 3 and 4 members switch to
  // reduce-scatter + all-gather.
  if (op == Collective::broadcast) counts.push_back(3750);
  if (op == Collective::broadcast || op == Collective::all_reduce) counts.push_back(3751);
  return counts;
}

// The calls to make on one machine: every card's algorithm that can run there (those without an
// Algo argument run whatever automatic picks) and automatic, for every size, root, shift and
// operator kind.
std::vector<Call> calls_for(const Topology& t, Links links) {
  const int p = t.size();
  std::vector<Call> calls;
  for (int k = static_cast<int>(Collective::broadcast); k <= static_cast<int>(Collective::barrier);
       ++k) {
    const auto op = static_cast<Collective>(k);
    std::vector<Algo> algos{Algo::automatic};
    try {  // no algorithm of op runs here (the scan on an open mesh under Links::strict)
      (void)hc::resolve(op, Algo::automatic, t, links, 0);
    } catch (const hc::AlgorithmError&) {
      continue;
    }
    if (hc::takes_algo(op))
      for (const hc::Card& card : hc::cards())
        if (card.op == op) try {
            (void)hc::resolve(op, card.algo, t, links, 0);
            algos.push_back(card.algo);
          } catch (const hc::AlgorithmError&) {  // cannot run here
          }
    std::vector<int> roots{0};
    if (rooted(op)) roots = {0, p - 1};
    // A root inside the id order: the non-commutative ring reduction cuts its arms there.
    if (op == Collective::reduce && p > 2) roots.push_back(p / 2);
    std::vector<int> shifts{0};
    if (op == Collective::circular_shift) shifts = {1, 3, p - 1, p / 2};
    std::vector<bool> kinds{true};
    if (takes_op(op)) kinds = {true, false};
    for (Algo a : algos)
      for (std::size_t n : counts_for(op, p))
        for (int root : roots)
          for (int shift : shifts)
            for (bool commutative : kinds) calls.push_back({op, a, n, root, shift, commutative});
  }
  return calls;
}

bool close(double formula, double model) {
  return std::abs(formula - model) <= 1e-9 * std::max(1.0, std::abs(model));
}

using Covered = std::set<std::pair<Collective, Algo>>;

// Calls checked against a closed form, and against bounds where the card states none.
struct Tally {
  int exact = 0;
  int bounded = 0;
  double slack = 0;  // the widest (upper - lower) / model time
};

void check_machine(const Topology& t, Links links, const hc::CostModel& model, Covered& covered,
                   Tally& tally) {
  hc::Options opt;
  opt.links = links;
  opt.model = model;
  opt.pinning = hc::Pinning::none;
  opt.deadlock_timeout = std::chrono::seconds(20);
  hc::Machine machine(t, opt);
  const bool verbose = std::getenv("FIDELITY_VERBOSE") != nullptr;
  for (const Call& c : calls_for(t, links)) {
    const std::size_t bytes = bytes_of(c, t.size());
    if (model.th != 0 && !hc::textbook_counts_hops(c.op, c.algo, t, links, bytes)) continue;
    const hc::CallShape shape{.root = c.root,
                              .shift = c.shift,
                              .elem_size = kElem,
                              .commutative = c.commutative,
                              .never_throws = c.commutative};
    try {  // an algorithm that folds in another order than the ids refuses a non-commutative op
      (void)hc::textbook_time(c.op, c.algo, t, links, bytes, model, shape);
    } catch (const hc::AlgorithmError&) {
      INFO(describe(c, t, links, model));
      CHECK(!c.commutative);
      CHECK_THROWS_AS(machine.run([&](hc::Proc& vp) { run_call(vp, c); }), hc::AlgorithmError);
      continue;
    }
    const hc::Report r = machine.run([&](hc::Proc& vp) { run_call(vp, c); });
    const double formula = hc::textbook_time(c.op, c.algo, t, links, bytes, model, shape);
    const hc::TimeBounds bounds = hc::textbook_bounds(c.op, c.algo, t, links, bytes, model, shape);
    // Automatic is exactly the card of the algorithm find_card names for this call's shape (its
    // operator's included).
    const Algo chosen = hc::find_card(c.op, c.algo, t, links, bytes, shape)->algo;
    covered.insert({c.op, chosen});
    const double card = hc::textbook_time(c.op, chosen, t, links, bytes, model, shape);
    INFO(describe(c, t, links, model), " runs ", std::string(hc::to_string(chosen)));
    if (std::isnan(formula)) {
      // No closed form for this call: the card's bounds hold, and they are bounds (not one value
      // passed off as two).
      ++tally.bounded;
      if (verbose &&
          !(bounds.lower <= r.model_time * (1 + 1e-9) && r.model_time <= bounds.upper * (1 + 1e-9)))
        std::printf("OUT OF BOUNDS %s (%s): [%.6f, %.6f] model %.6f\n",
                    describe(c, t, links, model).c_str(), hc::to_string(chosen), bounds.lower,
                    bounds.upper, r.model_time);
      if (hc::find_card(c.op, c.algo, t, links, bytes, shape) ==
          hc::find_card(c.op, chosen, t, links, bytes, shape))
        CHECK(std::isnan(card));
      CHECK(bounds.lower <= bounds.upper);
      CHECK_MESSAGE(bounds.lower <= r.model_time * (1 + 1e-9), "lower ", bounds.lower, " model ",
                    r.model_time);
      CHECK_MESSAGE(r.model_time <= bounds.upper * (1 + 1e-9), "upper ", bounds.upper, " model ",
                    r.model_time);
      tally.slack = std::max(tally.slack, (bounds.upper - bounds.lower) / r.model_time);
      continue;
    }
    ++tally.exact;
    if (verbose && !close(formula, r.model_time))
      std::printf("MISMATCH %s (%s): formula %.6f model %.6f\n",
                  describe(c, t, links, model).c_str(), hc::to_string(chosen), formula,
                  r.model_time);
    // (A forced Algo runs its first card that can run; automatic may pick another variant of
    // the same Algo, the line's beside the ring's.)
    if (hc::find_card(c.op, c.algo, t, links, bytes, shape) ==
        hc::find_card(c.op, chosen, t, links, bytes, shape))
      CHECK(formula == card);
    CHECK(bounds.lower == formula);
    CHECK(bounds.upper == formula);
    CHECK_MESSAGE(close(formula, r.model_time), "formula ", formula, " model ", r.model_time);
  }
}

// The whole grid under one port or all ports (CostModel::all_port, Grama et al. section 4.7:
// a VP's sends on different links leave together; every card's formula says what its schedule
// then costs); every card ran at least once (the irregular ones: test_fidelity_irregular.cpp).
void check_grid(bool all_port) {
  Covered covered;
  Tally tally;
  for (const Topology& t : machines())
    for (Links links : {Links::routed, Links::strict})
      for (double th : {0.0, 0.25}) {
        CAPTURE(t.name());
        check_machine(t, links, {.ts = 1.0, .tw = 0.01, .th = th, .all_port = all_port}, covered,
                      tally);
      }
  std::printf(
      "fidelity%s: %d calls equal their card's closed form; %d without one lie within its "
      "bounds (widest: %.0f%% of the model time)\n",
      all_port ? ", all ports" : "", tally.exact, tally.bounded, 100 * tally.slack);
  CHECK(tally.exact > tally.bounded);
  for (const hc::Card& card : hc::cards()) {
    if (card.op >= Collective::all_gatherv) continue;
    INFO(hc::to_string(card.op), " ", hc::to_string(card.algo));
    CHECK(covered.count({card.op, card.algo}) == 1);
  }
}

}  // namespace

TEST_CASE("every card's formula is the model time of a run" * doctest::timeout(600)) {
  check_grid(false);
}

TEST_CASE("every card's formula is the model time of a run under all ports" *
          doctest::timeout(600)) {
  check_grid(true);
}

TEST_CASE("textbook_time: the old spelling, p = 1, and algorithms that cannot run") {
  const hc::CostModel model{.ts = 1.0, .tw = 0.01, .th = 0.0};
  const Topology ring8 = Topology::ring(8);
  CHECK(hc::textbook_time(Collective::circular_shift, Algo::ring, ring8, Links::strict, 80, model,
                          3) == hc::textbook_time(Collective::circular_shift, Algo::ring, ring8,
                                                  Links::strict, 80, model,
                                                  hc::CallShape{.shift = 3}));
  CHECK(hc::textbook_time(Collective::circular_shift, Algo::ring, ring8, Links::strict, 80, model,
                          3) == doctest::Approx(3 * (1 + 0.01 * 80)));
  CHECK(hc::textbook_time(Collective::barrier, Algo::automatic, Topology::ring(1), Links::routed, 0,
                          model) == 0);
  // The cards of the operations without an Algo argument can be asked for by name.
  CHECK(hc::textbook_time(Collective::scan, Algo::ring, ring8, Links::routed, 8, model) ==
        doctest::Approx(7 * (1 + 0.01 * 8)));
  CHECK_THROWS_AS((void)hc::textbook_time(Collective::broadcast, Algo::hypercube, Topology::ring(6),
                                          Links::routed, 8, model),
                  hc::AlgorithmError);
  CHECK_THROWS_AS(
      (void)hc::textbook_time(Collective::broadcast, Algo::mesh, ring8, Links::routed, 8, model),
      hc::AlgorithmError);
  CHECK_THROWS_AS(
      (void)hc::textbook_time(Collective::scan, Algo::esbt, ring8, Links::routed, 8, model),
      hc::AlgorithmError);
  CHECK_THROWS_AS((void)hc::textbook_counts_hops(Collective::all_to_all, Algo::hypercube, ring8,
                                                 Links::strict, 64),
                  hc::AlgorithmError);
  // Where the hop term is left out: a ring broadcast routed over a mesh.
  CHECK_FALSE(hc::textbook_counts_hops(Collective::broadcast, Algo::ring, Topology::mesh(2, 3),
                                       Links::routed, 8));
  CHECK(hc::textbook_counts_hops(Collective::broadcast, Algo::ring, Topology::mesh(1, 3),
                                 Links::strict, 8));
}
