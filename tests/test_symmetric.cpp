// All-to-all broadcast and reduction: all_gather, reduce_scatter, all_reduce, scan, exscan.
// Through the public API on every test topology and link mode, with every Algo (the invalid ones
// must throw AlgorithmError), a commutative integer sum, a commutative double max and the
// non-commutative MatMul, whose every result must be the left fold over VP ids in order. The
// model time of each algorithm is checked against its formula (ts = 1, tw = 0.5, th = 0).
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "support.hpp"

using hypercomm::Algo;
using hypercomm::Links;
using hypercomm::Options;
using hypercomm::Proc;
using hypercomm::Topology;

namespace {

constexpr Links kLinkModes[] = {Links::routed, Links::strict};
constexpr auto& kAllAlgos = hctest::kAllAlgos;

// (doctest prints a const char* in INFO as a pointer: hand it strings.)
std::string name_of(Links links) { return links == Links::routed ? "routed" : "strict"; }
std::string name_of(Algo a) { return hypercomm::to_string(a); }

bool power_of_two(int p) { return std::has_single_bit(static_cast<unsigned>(p)); }
bool is_mesh(const Topology& t) { return t.kind() == Topology::Kind::mesh; }
bool is_hypercube(const Topology& t) { return t.kind() == Topology::Kind::hypercube; }

// VP i and i+1 mod p are neighbours.
bool ring_adjacent(const Topology& t) {
  switch (t.kind()) {
    case Topology::Kind::ring: return true;
    // A line closes only when p <= 2 (p - 1 and 0 are then the same link or the same VP).
    case Topology::Kind::linear: return t.size() <= 2;
    case Topology::Kind::mesh:
      return (t.rows() == 1 || t.cols() == 1) && (t.wraps() || t.size() <= 2);
    case Topology::Kind::hypercube: return t.dimension() <= 1;
  }
  return false;
}

enum class Operation { all_gather, reduce_scatter, all_reduce };

// Which Algo each operation accepts (the brief's table; the cards' restrictions implement it).
// On a hypercube of d >= 2 the ring and the mesh run embedded by the Gray code, folding
// in Gray-code order: the all-gather always, the reductions for a commutative operator (or,
// routed, the ring in id order and the mesh's rows and columns laid out by id).
bool valid(Operation op, Algo a, const Topology& t, Links links, bool commutative) {
  const bool routed = links == Links::routed;
  const bool gray_ring =
      is_hypercube(t) && t.dimension() >= 2 && (op == Operation::all_gather || commutative);
  switch (a) {
    case Algo::automatic: return true;
    case Algo::hypercube:
      return power_of_two(t.size()) && (hctest::xor_partners_adjacent(t) || routed);
    case Algo::ring: return ring_adjacent(t) || routed || gray_ring;
    case Algo::mesh:  // the Gray-code mesh, alike, but laid out by id when routed
      return is_mesh(t) || gray_ring || (routed && is_hypercube(t) && t.dimension() >= 2);
    case Algo::two_phase: return op == Operation::all_reduce;
    case Algo::reduce_broadcast:  // Algorithm 4.3 then 4.1, or the ring's reduction and broadcast
      return op == Operation::all_reduce &&
             ((power_of_two(t.size()) && hctest::xor_partners_adjacent(t)) || routed ||
              ring_adjacent(t));
    default: return false;
  }
}

Options options_for(Links links, hypercomm::CostModel model = {}) {
  Options opt = hctest::test_options();
  opt.links = links;
  opt.model = model;
  return opt;
}

// Elements per block; 1000 only on the small machines (the suite also runs under TSan).
std::vector<std::size_t> counts_for(const Topology& t) {
  if (t.size() <= 8) return {0, 1, 7, 1000};
  return {0, 1, 7};
}

// ---- the operators ------------------------------------------------------------------------------
// Each: the element type, the operator, element i of VP vp's input, and a sentinel that no
// result can equal (to see what was not written).

struct PlusInt {
  using T = std::int64_t;
  using Op = std::plus<>;
  static std::string name() { return "plus<int64>"; }
  static constexpr bool commutative = true;
  static T value(int vp, std::size_t i) {
    return (vp + 1) * 1'000'003LL + static_cast<T>(i) * 7919;
  }
  static T sentinel() { return -1; }
};

struct MaxDouble {
  using T = double;
  using Op = hypercomm::max<>;
  static std::string name() { return "max<double>"; }
  static constexpr bool commutative = true;
  static T value(int vp, std::size_t i) {  // the maximum is at a different VP for each i
    return static_cast<double>((static_cast<std::size_t>(vp) * 37 + i * 11) % 101) + 0.25 * vp;
  }
  static T sentinel() { return -1.0; }
};

struct MatMulOp {
  using T = hctest::Mat;
  using Op = hctest::MatMul;
  static std::string name() { return "MatMul (non-commutative)"; }
  static constexpr bool commutative = false;
  static T value(int vp, std::size_t i) { return hctest::mat_of(vp, i); }
  static T sentinel() {
    constexpr auto big = hctest::MatMul::kPrime;  // results are reduced modulo kPrime
    return {big, big, big, big};
  }
};

std::string show(std::int64_t v) { return std::to_string(v); }
std::string show(double v) { return std::to_string(v); }
std::string show(const hctest::Mat& m) {
  return "[" + std::to_string(m.a) + " " + std::to_string(m.b) + "; " + std::to_string(m.c) + " " +
         std::to_string(m.d) + "]";
}

// K's value at index i folded over VPs first .. last-1, left to right.
template <class K>
typename K::T fold(int first, int last, std::size_t i) {
  typename K::T acc = K::value(first, i);
  for (int j = first + 1; j < last; ++j) acc = typename K::Op{}(acc, K::value(j, i));
  return acc;
}

template <class K>
std::vector<typename K::T> input(int vp, std::size_t n) {
  std::vector<typename K::T> in(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = K::value(vp, i);
  return in;
}

// "" when got[vp] == want(vp, i) for every VP and i < size, else the first difference.
template <class T, class Want>
std::string first_error(const std::vector<std::vector<T>>& got, std::size_t size, Want want) {
  for (std::size_t vp = 0; vp < got.size(); ++vp) {
    if (got[vp].size() != size) {
      return "VP " + std::to_string(vp) + " holds " + std::to_string(got[vp].size()) +
             " elements, not " + std::to_string(size);
    }
    for (std::size_t i = 0; i < size; ++i) {
      const T expected = want(static_cast<int>(vp), i);
      if (!(got[vp][i] == expected))
        return "VP " + std::to_string(vp) + " element " + std::to_string(i) + " = " +
               show(got[vp][i]) + ", expected " + show(expected);
    }
  }
  return "";
}

// One call of a collective in a suite: its algorithm, block count and form.
struct Case {
  Algo algo;
  std::size_t count;
  bool in_place;
  bool valid;
};

std::vector<Case> cases_for(Operation op, const Topology& t, Links links, bool with_in_place,
                            bool commutative = true) {
  std::vector<Case> cases;
  for (Algo a : kAllAlgos) {
    if (!valid(op, a, t, links, commutative)) {
      cases.push_back({a, 1, false, false});
      continue;
    }
    for (std::size_t count : counts_for(t)) {
      cases.push_back({a, count, false, true});
      if (with_in_place) cases.push_back({a, count, true, true});
    }
  }
  return cases;
}

// Per-VP result slots of every case (written by the VP bodies, checked on the test thread).
template <class T>
struct Slots {
  std::vector<std::vector<std::vector<T>>> out;  // [case][vp]
  std::vector<std::vector<char>> threw;          // [case][vp]: AlgorithmError (char: no races)
  Slots(std::size_t cases, int p)
      : out(cases, std::vector<std::vector<T>>(static_cast<std::size_t>(p))),
        threw(cases, std::vector<char>(static_cast<std::size_t>(p), 0)) {}
};

// Runs body on every VP; a failure is reported as a failed check (with the caller's INFO).
template <class Body>
bool run_ok(const Topology& t, Body&& body, const Options& opt) {
  try {
    hypercomm::run(t, std::forward<Body>(body), opt);
    return true;
  } catch (const std::exception& e) {
    FAIL_CHECK("run threw: " << e.what());
    return false;
  }
}

// Invalid algorithms threw AlgorithmError on every VP; valid ones' results match the oracle.
template <class T, class Want>
void check_cases(const std::vector<Case>& cases, const Slots<T>& slots, std::size_t out_per_count,
                 Want want) {
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& cs = cases[k];
    INFO("algo=" << name_of(cs.algo) << " count=" << cs.count << (cs.in_place ? " in place" : ""));
    if (!cs.valid) {
      for (char threw : slots.threw[k]) CHECK_MESSAGE(threw == 1, "no AlgorithmError");
      continue;
    }
    const std::string error = first_error(slots.out[k], out_per_count * cs.count,
                                          [&](int vp, std::size_t i) { return want(cs, vp, i); });
    CHECK_MESSAGE(error.empty(), error);
  }
}

}  // namespace

// ---- all_gather ---------------------------------------------------------------------------------

TEST_CASE("all_gather: every topology, algorithm and link mode") {
  using T = PlusInt::T;
  for (const Topology& t : hctest::all_topologies()) {
    for (Links links : kLinkModes) {
      INFO(t.name() << " links=" << name_of(links));
      const int p = t.size();
      const auto cases = cases_for(Operation::all_gather, t, links, false);
      Slots<T> slots(cases.size(), p);
      std::vector<std::vector<T>> value_form(static_cast<std::size_t>(p));
      const bool ran = run_ok(
          t,
          [&](Proc& vp) {
            const int me = vp.id();
            for (std::size_t k = 0; k < cases.size(); ++k) {
              const Case& cs = cases[k];
              const auto in = input<PlusInt>(me, cs.count);
              std::vector<T> out(static_cast<std::size_t>(p) * cs.count, PlusInt::sentinel());
              if (!cs.valid) {
                try {
                  hypercomm::all_gather(vp, in, out, cs.algo);
                } catch (const hypercomm::AlgorithmError&) {
                  slots.threw[k][me] = 1;
                }
                continue;
              }
              hypercomm::all_gather(vp, in, out, cs.algo);
              slots.out[k][me] = std::move(out);
            }
            value_form[me] = hypercomm::all_gather(vp, PlusInt::value(me, 0));
          },
          options_for(links));
      if (!ran) continue;
      check_cases(cases, slots, static_cast<std::size_t>(p),
                  [](const Case& cs, int, std::size_t i) {
                    return PlusInt::value(static_cast<int>(i / cs.count),
                                          i % cs.count);  // block j from VP j
                  });
      const std::string error =
          first_error(value_form, static_cast<std::size_t>(p),
                      [](int, std::size_t j) { return PlusInt::value(static_cast<int>(j), 0); });
      CHECK_MESSAGE(error.empty(), "value form: " << error);
    }
  }
}

// ---- reduce_scatter -----------------------------------------------------------------------------

template <class K>
void reduce_scatter_suite() {
  using T = typename K::T;
  for (const Topology& t : hctest::all_topologies()) {
    for (Links links : kLinkModes) {
      INFO(t.name() << " links=" << name_of(links) << " op=" << K::name());
      const int p = t.size();
      const auto cases = cases_for(Operation::reduce_scatter, t, links, false, K::commutative);
      Slots<T> slots(cases.size(), p);
      const bool ran = run_ok(
          t,
          [&](Proc& vp) {
            const int me = vp.id();
            for (std::size_t k = 0; k < cases.size(); ++k) {
              const Case& cs = cases[k];
              const auto in = input<K>(me, static_cast<std::size_t>(p) * cs.count);
              std::vector<T> out(cs.count, K::sentinel());
              if (!cs.valid) {
                try {
                  hypercomm::reduce_scatter(vp, in, out, typename K::Op{}, cs.algo);
                } catch (const hypercomm::AlgorithmError&) {
                  slots.threw[k][me] = 1;
                }
                continue;
              }
              hypercomm::reduce_scatter(vp, in, out, typename K::Op{}, cs.algo);
              slots.out[k][me] = std::move(out);
            }
          },
          options_for(links));
      if (!ran) continue;
      check_cases(cases, slots, 1, [p](const Case& cs, int vp, std::size_t i) {
        return fold<K>(0, p, static_cast<std::size_t>(vp) * cs.count + i);  // block vp
      });
    }
  }
}

TEST_CASE("reduce_scatter: plus on int64") { reduce_scatter_suite<PlusInt>(); }
TEST_CASE("reduce_scatter: max on double") { reduce_scatter_suite<MaxDouble>(); }
TEST_CASE("reduce_scatter: non-commutative MatMul folds in id order") {
  reduce_scatter_suite<MatMulOp>();
}

// ---- all_reduce ---------------------------------------------------------------------------------

template <class K>
void all_reduce_suite() {
  using T = typename K::T;
  for (const Topology& t : hctest::all_topologies()) {
    for (Links links : kLinkModes) {
      INFO(t.name() << " links=" << name_of(links) << " op=" << K::name());
      const int p = t.size();
      const auto cases = cases_for(Operation::all_reduce, t, links, true, K::commutative);
      Slots<T> slots(cases.size(), p);
      std::vector<std::vector<T>> in_place_form(static_cast<std::size_t>(p));
      std::vector<std::vector<T>> value_form(static_cast<std::size_t>(p));
      const bool ran = run_ok(
          t,
          [&](Proc& vp) {
            const int me = vp.id();
            for (std::size_t k = 0; k < cases.size(); ++k) {
              const Case& cs = cases[k];
              const auto in = input<K>(me, cs.count);
              std::vector<T> out(cs.count, K::sentinel());
              if (!cs.valid) {
                try {
                  hypercomm::all_reduce(vp, in, out, typename K::Op{}, cs.algo);
                } catch (const hypercomm::AlgorithmError&) {
                  slots.threw[k][me] = 1;
                }
                continue;
              }
              if (cs.in_place) {
                out = in;
                hypercomm::all_reduce(vp, out, out, typename K::Op{}, cs.algo);
              } else {
                hypercomm::all_reduce(vp, in, out, typename K::Op{}, cs.algo);
              }
              slots.out[k][me] = std::move(out);
            }
            auto inout = input<K>(me, 7);
            hypercomm::all_reduce(vp, inout, typename K::Op{});
            in_place_form[me] = std::move(inout);
            value_form[me] = {hypercomm::all_reduce(vp, K::value(me, 3), typename K::Op{})};
          },
          options_for(links));
      if (!ran) continue;
      check_cases(cases, slots, 1,
                  [p](const Case&, int, std::size_t i) { return fold<K>(0, p, i); });
      std::string error =
          first_error(in_place_form, 7, [p](int, std::size_t i) { return fold<K>(0, p, i); });
      CHECK_MESSAGE(error.empty(), "in-place form: " << error);
      error = first_error(value_form, 1, [p](int, std::size_t) { return fold<K>(0, p, 3); });
      CHECK_MESSAGE(error.empty(), "value form: " << error);
    }
  }
}

TEST_CASE("all_reduce: plus on int64") { all_reduce_suite<PlusInt>(); }
TEST_CASE("all_reduce: max on double") { all_reduce_suite<MaxDouble>(); }
TEST_CASE("all_reduce: non-commutative MatMul folds in id order") { all_reduce_suite<MatMulOp>(); }

// Every VP of an all_reduce gets the same bits, whatever the algorithm, for a sum of doubles whose
// rounding depends on the order of the fold (1e16 + 1 is 1e16; +1 -1e16 ... cancel): a program
// that branches on the result (a convergence test) takes the same branch on every VP. Also with
// more VPs than cores (meetings) and on groups' rows and columns.
TEST_CASE("all_reduce of doubles: every VP gets the same bits, every algorithm") {
  const auto value = [](int vp, std::size_t i) {
    const int k = (vp + static_cast<int>(i)) % 5;
    return k == 0 ? 1e16 : k == 3 ? -1e16 : k == 4 ? 0.1 * (vp + 1) : 1.0;
  };
  std::vector<Topology> topologies = hctest::all_topologies();
  for (const char* name : {"mesh:3x4", "mesh:3x4:open", "mesh:1x7", "mesh:5x2", "linear:6"})
    topologies.push_back(Topology::parse(name));
  for (const Topology& t : topologies) {
    for (Links links : kLinkModes) {
      // (valid() knows the strict links of the rings, tori and hypercubes.)
      const bool open =
          t.kind() == Topology::Kind::linear || (t.kind() == Topology::Kind::mesh && !t.wraps());
      if (open && links == Links::strict) continue;
      for (const bool meetings : {true, false}) {
        INFO(t.name() << " links=" << name_of(links) << " meetings=" << meetings);
        const int p = t.size();
        const auto cases = cases_for(Operation::all_reduce, t, links, false, true);
        Slots<double> slots(cases.size(), p);
        std::vector<std::vector<double>> rows(static_cast<std::size_t>(p));
        Options o = options_for(links);
        o.meetings = meetings;
        const bool ran = run_ok(
            t,
            [&](Proc& vp) {
              const int me = vp.id();
              for (std::size_t k = 0; k < cases.size(); ++k) {
                const Case& cs = cases[k];
                if (!cs.valid) continue;
                std::vector<double> in(cs.count), out(cs.count);
                for (std::size_t i = 0; i < cs.count; ++i) in[i] = value(me, i);
                hypercomm::all_reduce(vp, in, out, std::plus<>{}, cs.algo);
                slots.out[k][static_cast<std::size_t>(me)] = std::move(out);
              }
              if (t.kind() == Topology::Kind::mesh && t.wraps()) {
                // Along the row, then the column: each row's members agree, then all.
                std::vector<double> x{value(me, 0), value(me, 1)};
                hypercomm::all_reduce(vp.row(), x, x, std::plus<>{});
                hypercomm::all_reduce(vp.column(), x, x, std::plus<>{});
                rows[static_cast<std::size_t>(me)] = std::move(x);
              }
            },
            o);
        if (!ran) continue;
        for (std::size_t k = 0; k < cases.size(); ++k) {
          if (!cases[k].valid) continue;
          INFO("Algo::" << name_of(cases[k].algo) << " count=" << cases[k].count);
          const auto& got = slots.out[k];
          for (int v = 1; v < p; ++v) {
            const auto& theirs = got[static_cast<std::size_t>(v)];
            CHECK_MESSAGE((theirs.size() == got[0].size() &&
                           (theirs.empty() || std::memcmp(theirs.data(), got[0].data(),
                                                          theirs.size() * sizeof(double)) == 0)),
                          "VP " << v << " differs from VP 0");
          }
        }
        if (!rows[0].empty())
          for (int v = 1; v < p; ++v)
            CHECK_MESSAGE(std::memcmp(rows[static_cast<std::size_t>(v)].data(), rows[0].data(),
                                      2 * sizeof(double)) == 0,
                          "rows and columns: VP " << v << " differs from VP 0");
      }
    }
  }
}

// The mesh all-reduce on large vectors (its phases gather and fold whatever the size), uneven
// blocks, both operator kinds.
template <class K>
void all_reduce_mesh_large(std::size_t count) {
  using T = typename K::T;
  for (const char* name : {"mesh:1x3", "mesh:3x1", "mesh:2x3", "mesh:3x3", "mesh:4x4"}) {
    const Topology t = Topology::parse(name);
    const int p = t.size();
    for (Links links : kLinkModes) {
      INFO(name << " links=" << name_of(links) << " op=" << K::name() << " count=" << count);
      std::vector<std::vector<T>> got(static_cast<std::size_t>(p));
      const bool ran = run_ok(
          t,
          [&](Proc& vp) {
            auto buf = input<K>(vp.id(), count);
            hypercomm::all_reduce(vp, buf, buf, typename K::Op{}, Algo::mesh);
            got[vp.id()] = std::move(buf);
          },
          options_for(links));
      if (!ran) continue;
      const std::string error =
          first_error(got, count, [p](int, std::size_t i) { return fold<K>(0, p, i); });
      CHECK_MESSAGE(error.empty(), error);
    }
  }
}

TEST_CASE("all_reduce mesh: large vectors") {
  all_reduce_mesh_large<PlusInt>(7001);   // 56008 bytes
  all_reduce_mesh_large<MatMulOp>(1751);  // 56032 bytes
}

// ---- scan and exscan ----------------------------------------------------------------------------

template <class K>
void scan_suite() {
  using T = typename K::T;
  for (const Topology& t : hctest::all_topologies()) {
    for (Links links : kLinkModes) {
      INFO(t.name() << " links=" << name_of(links) << " op=" << K::name());
      const int p = t.size();
      const auto counts = counts_for(t);
      // [count][vp] for scan, scan in place and exscan.
      std::vector<std::vector<std::vector<T>>> scans(counts.size()), in_place(counts.size()),
          exscans(counts.size());
      for (auto* slots : {&scans, &in_place, &exscans})
        for (auto& s : *slots) s.resize(static_cast<std::size_t>(p));
      std::vector<std::vector<T>> value_form(static_cast<std::size_t>(p));
      const bool ran = run_ok(
          t,
          [&](Proc& vp) {
            const int me = vp.id();
            for (std::size_t k = 0; k < counts.size(); ++k) {
              const auto in = input<K>(me, counts[k]);
              std::vector<T> out(counts[k], K::sentinel());
              hypercomm::scan(vp, in, out, typename K::Op{});
              scans[k][me] = std::move(out);
              auto buf = in;
              hypercomm::scan(vp, buf, buf, typename K::Op{});
              in_place[k][me] = std::move(buf);
              std::vector<T> ex(counts[k], K::sentinel());  // VP 0's must stay the sentinel
              hypercomm::exscan(vp, in, ex, typename K::Op{});
              exscans[k][me] = std::move(ex);
            }
            value_form[me] = {hypercomm::scan(vp, K::value(me, 5), typename K::Op{})};
          },
          options_for(links));
      if (!ran) continue;
      for (std::size_t k = 0; k < counts.size(); ++k) {
        INFO("count=" << counts[k]);
        const auto inclusive = [](int vp, std::size_t i) { return fold<K>(0, vp + 1, i); };
        std::string error = first_error(scans[k], counts[k], inclusive);
        CHECK_MESSAGE(error.empty(), "scan: " << error);
        error = first_error(in_place[k], counts[k], inclusive);
        CHECK_MESSAGE(error.empty(), "scan in place: " << error);
        error = first_error(exscans[k], counts[k], [](int vp, std::size_t i) {
          return vp == 0 ? K::sentinel() : fold<K>(0, vp, i);
        });
        CHECK_MESSAGE(error.empty(), "exscan: " << error);
      }
      const std::string error =
          first_error(value_form, 1, [](int vp, std::size_t) { return fold<K>(0, vp + 1, 5); });
      CHECK_MESSAGE(error.empty(), "scan value form: " << error);
    }
  }
}

TEST_CASE("scan and exscan: plus on int64") { scan_suite<PlusInt>(); }
TEST_CASE("scan and exscan: max on double") { scan_suite<MaxDouble>(); }
TEST_CASE("scan and exscan: non-commutative MatMul folds in id order") { scan_suite<MatMulOp>(); }

// ---- errors -------------------------------------------------------------------------------------

TEST_CASE("wrong local buffer sizes throw SizeMismatch") {
  const Topology t = Topology::ring(4);
  const Options opt = options_for(Links::routed);
  using T = std::int64_t;
  CHECK_THROWS_AS(hypercomm::run(
                      t,
                      [](Proc& vp) {
                        std::vector<T> in(3), out(11);  // needs 4 * 3
                        hypercomm::all_gather(vp, in, out);
                      },
                      opt),
                  hypercomm::SizeMismatch);
  CHECK_THROWS_AS(hypercomm::run(
                      t,
                      [](Proc& vp) {
                        std::vector<T> in(13), out(3);  // needs 4 * 3
                        hypercomm::reduce_scatter(vp, in, out, std::plus<>{});
                      },
                      opt),
                  hypercomm::SizeMismatch);
  CHECK_THROWS_AS(hypercomm::run(
                      t,
                      [](Proc& vp) {
                        std::vector<T> in(5), out(4);
                        hypercomm::all_reduce(vp, in, out, std::plus<>{});
                      },
                      opt),
                  hypercomm::SizeMismatch);
  CHECK_THROWS_AS(hypercomm::run(
                      t,
                      [](Proc& vp) {
                        std::vector<T> in(5), out(6);
                        hypercomm::scan(vp, in, out, std::plus<>{});
                      },
                      opt),
                  hypercomm::SizeMismatch);
  CHECK_THROWS_AS(hypercomm::run(
                      t,
                      [](Proc& vp) {
                        std::vector<T> in(5), out(0);
                        hypercomm::exscan(vp, in, out, std::plus<>{});
                      },
                      opt),
                  hypercomm::SizeMismatch);
}

TEST_CASE("an algorithm that cannot run throws AlgorithmError out of run") {
  const auto gather_with = [](Algo a) {
    return [a](Proc& vp) {
      std::vector<std::int64_t> in(2), out(2 * static_cast<std::size_t>(vp.size()));
      hypercomm::all_gather(vp, in, out, a);
    };
  };
  CHECK_THROWS_AS(
      hypercomm::run(Topology::ring(6), gather_with(Algo::hypercube), options_for(Links::routed)),
      hypercomm::AlgorithmError);
  CHECK_THROWS_AS(hypercomm::run(Topology::mesh(3, 3, hypercomm::Wrap::none),
                                 gather_with(Algo::ring), options_for(Links::strict)),
                  hypercomm::AlgorithmError);
  CHECK_THROWS_AS(
      hypercomm::run(Topology::ring(4), gather_with(Algo::two_phase), options_for(Links::routed)),
      hypercomm::AlgorithmError);
}

// ---- model time ---------------------------------------------------------------------------------

namespace {

constexpr hypercomm::CostModel kModel{.ts = 1.0, .tw = 0.5, .th = 0.0};

template <class Body>
double model_time(const Topology& t, Body&& body) {
  return hypercomm::run(t, std::forward<Body>(body), options_for(Links::routed, kModel)).model_time;
}

// Model time of one collective call with `count` elements per block (K's elements).
template <class K>
double all_gather_time(const Topology& t, Algo a, std::size_t count) {
  return model_time(t, [&](Proc& vp) {
    const auto in = input<K>(vp.id(), count);
    std::vector<typename K::T> out(count * static_cast<std::size_t>(vp.size()));
    hypercomm::all_gather(vp, in, out, a);
  });
}
template <class K>
double reduce_scatter_time(const Topology& t, Algo a, std::size_t count) {
  return model_time(t, [&](Proc& vp) {
    const auto in = input<K>(vp.id(), count * static_cast<std::size_t>(vp.size()));
    std::vector<typename K::T> out(count);
    hypercomm::reduce_scatter(vp, in, out, typename K::Op{}, a);
  });
}
template <class K>
double all_reduce_time(const Topology& t, Algo a, std::size_t count) {
  return model_time(t, [&](Proc& vp) {
    const auto in = input<K>(vp.id(), count);
    std::vector<typename K::T> out(count);
    hypercomm::all_reduce(vp, in, out, typename K::Op{}, a);
  });
}
template <class K>
double scan_time(const Topology& t, std::size_t count, bool exclusive) {
  return model_time(t, [&](Proc& vp) {
    const auto in = input<K>(vp.id(), count);
    std::vector<typename K::T> out(count);
    if (exclusive) {
      hypercomm::exscan(vp, in, out, typename K::Op{});
    } else {
      hypercomm::scan(vp, in, out, typename K::Op{});
    }
  });
}

double lg(int p) { return std::countr_zero(static_cast<unsigned>(p)); }

}  // namespace

TEST_CASE("model time: all_gather equals the textbook formulas") {
  const double ts = kModel.ts, tw = kModel.tw;
  for (std::size_t count : {0, 1, 7, 100}) {
    const double m = 8.0 * static_cast<double>(count);  // bytes per block
    INFO("count=" << count);
    for (int d : {3, 4}) {  // Algorithm 4.7: ts log p + tw m (p - 1)
      const Topology t = Topology::hypercube(d);
      const double p = t.size();
      CHECK(all_gather_time<PlusInt>(t, Algo::hypercube, count) ==
            doctest::Approx(ts * d + tw * m * (p - 1)).epsilon(1e-12));
    }
    {  // Algorithm 4.4: (ts + tw m)(p - 1)
      const Topology t = Topology::ring(5);
      CHECK(all_gather_time<PlusInt>(t, Algo::ring, count) ==
            doctest::Approx((ts + tw * m) * 4).epsilon(1e-12));
    }
    for (const char* name : {"mesh:2x3", "mesh:4x4", "mesh:1x3"}) {  // 4.6: rows x cols
      INFO(name);
      const Topology t = Topology::parse(name);
      const double p = t.size();
      CHECK(all_gather_time<PlusInt>(t, Algo::mesh, count) ==
            doctest::Approx(ts * (t.rows() + t.cols() - 2) + tw * m * (p - 1)).epsilon(1e-12));
    }
  }
}

TEST_CASE("model time: reduce_scatter equals its formulas") {
  const double ts = kModel.ts, tw = kModel.tw;
  for (std::size_t count : {0, 1, 7, 100}) {
    INFO("count=" << count);
    const double m = 8.0 * static_cast<double>(count);    // bytes per block, int64
    const double mm = 32.0 * static_cast<double>(count);  // bytes per block, Mat
    for (int d : {1, 3, 4}) {  // Algorithm 4.8, both forms: ts log p + tw m (p - 1)
      const Topology t = Topology::hypercube(d);
      const double p = t.size();
      INFO(t.name());
      CHECK(reduce_scatter_time<PlusInt>(t, Algo::hypercube, count) ==
            doctest::Approx(ts * d + tw * m * (p - 1)).epsilon(1e-12));
      CHECK(reduce_scatter_time<MatMulOp>(t, Algo::hypercube, count) ==
            doctest::Approx(ts * d + tw * mm * (p - 1)).epsilon(1e-12));
    }
    for (int p : {2, 5, 8}) {  // Algorithm 4.5; in order: ts (p - 1) + tw m (2p - 3)
      const Topology t = Topology::ring(p);
      INFO(t.name());
      CHECK(reduce_scatter_time<PlusInt>(t, Algo::ring, count) ==
            doctest::Approx((ts + tw * m) * (p - 1)).epsilon(1e-12));
      CHECK(reduce_scatter_time<MatMulOp>(t, Algo::ring, count) ==
            doctest::Approx(ts * (p - 1) + tw * mm * (2 * p - 3)).epsilon(1e-12));
    }
    for (const char* name : {"mesh:2x3", "mesh:3x3", "mesh:4x4", "mesh:2x2"}) {
      INFO(name);
      const Topology t = Topology::parse(name);
      const double rows = t.rows(), cols = t.cols(), p = t.size();
      CHECK(reduce_scatter_time<PlusInt>(t, Algo::mesh, count) ==
            doctest::Approx(ts * (rows + cols - 2) + tw * m * (p - 1)).epsilon(1e-12));
      CHECK(
          reduce_scatter_time<MatMulOp>(t, Algo::mesh, count) ==
          doctest::Approx(ts * (rows + cols - 2) + tw * mm * (rows * (2 * cols - 3) + 2 * rows - 3))
              .epsilon(1e-12));
    }
  }
}

TEST_CASE("model time: all_reduce equals its formulas") {
  const double ts = kModel.ts, tw = kModel.tw;
  for (std::size_t count : {0, 8, 64}) {  // divisible by p below
    INFO("count=" << count);
    const double m = 8.0 * static_cast<double>(count);  // bytes of the vector
    for (int d : {1, 3}) {
      const Topology t = Topology::hypercube(d);
      const double p = t.size();
      INFO(t.name());
      // butterfly: (ts + tw m) log p; two-phase: 2 (ts log p + tw m (p - 1)/p)
      CHECK(all_reduce_time<PlusInt>(t, Algo::hypercube, count) ==
            doctest::Approx((ts + tw * m) * d).epsilon(1e-12));
      CHECK(all_reduce_time<MatMulOp>(t, Algo::hypercube, count) ==
            doctest::Approx((ts + tw * 4 * m) * d).epsilon(1e-12));
      CHECK(all_reduce_time<PlusInt>(t, Algo::two_phase, count) ==
            doctest::Approx(2 * (ts * d + tw * m * (p - 1) / p)).epsilon(1e-12));
      CHECK(all_reduce_time<MatMulOp>(t, Algo::two_phase, count) ==
            doctest::Approx(2 * (ts * d + tw * 4 * m * (p - 1) / p)).epsilon(1e-12));
    }
    for (int p : {2, 4, 8}) {  // 2 (ts (p - 1) + tw m (p - 1)/p); in order: tw m (3p - 4)/p
      const Topology t = Topology::ring(p);
      INFO(t.name());
      CHECK(all_reduce_time<PlusInt>(t, Algo::ring, count) ==
            doctest::Approx(2 * (ts * (p - 1) + tw * m * (p - 1) / p)).epsilon(1e-12));
      CHECK(all_reduce_time<MatMulOp>(t, Algo::ring, count) ==
            doctest::Approx(2 * ts * (p - 1) + tw * 4 * m * (3 * p - 4) / p).epsilon(1e-12));
    }
    for (const char* name : {"mesh:2x2", "mesh:2x4", "mesh:4x4"}) {  // gather-and-fold phases
      INFO(name);
      const Topology t = Topology::parse(name);
      const double steps = t.rows() + t.cols() - 2;
      CHECK(all_reduce_time<PlusInt>(t, Algo::mesh, count) ==
            doctest::Approx((ts + tw * m) * steps).epsilon(1e-12));
      CHECK(all_reduce_time<MatMulOp>(t, Algo::mesh, count) ==
            doctest::Approx((ts + tw * 4 * m) * steps).epsilon(1e-12));
    }
  }
  {  // a large vector on a mesh: the gather-and-fold phases still (no size switch inside)
    const Topology t = Topology::parse("mesh:1x3");
    const double m = 48000;
    CHECK(all_reduce_time<PlusInt>(t, Algo::mesh, 6000) ==
          doctest::Approx((ts + tw * m) * 2).epsilon(1e-12));
    CHECK(all_reduce_time<MatMulOp>(t, Algo::mesh, 1500) ==
          doctest::Approx((ts + tw * m) * 2).epsilon(1e-12));
  }
}

TEST_CASE("model time: scan and exscan equal their formulas") {
  const double ts = kModel.ts, tw = kModel.tw;
  for (std::size_t count : {0, 1, 7, 100}) {
    INFO("count=" << count);
    const double m = 8.0 * static_cast<double>(count);
    for (bool exclusive : {false, true}) {
      INFO("exclusive=" << exclusive);
      for (int d : {1, 3, 4}) {  // Algorithm 4.9: (ts + tw m) log p
        const Topology t = Topology::hypercube(d);
        CHECK(scan_time<PlusInt>(t, count, exclusive) ==
              doctest::Approx((ts + tw * m) * lg(t.size())).epsilon(1e-12));
      }
      for (int p : {3, 5}) {  // the ring pipeline: (ts + tw m)(p - 1)
        CHECK(scan_time<PlusInt>(Topology::ring(p), count, exclusive) ==
              doctest::Approx((ts + tw * m) * (p - 1)).epsilon(1e-12));
      }
    }
  }
}

// The pipeline's last VP folds a large message as it lands (scan_ring.cpp), by whichever VP
// delivers it, past the fold-on-landing bound and past the shared copy's (both VPs fold chunks):
// the result must be the left fold in id order, in place or not, call after call. The operator
// is neither commutative nor associative, so any other order or grouping shows; automatic takes
// the pipeline on ring:2 and ring:3 (p - 1 messages a call, checked).
TEST_CASE("scan: the pipeline's last VP folds large messages as they land") {
  using T = std::uint64_t;
  const auto op = [](T a, T b) { return a * 31 + b; };
  const auto value = [](int vp, std::size_t i, int call) {
    return static_cast<T>(vp + 1) * 1'000'003u + i * 7919u + static_cast<T>(call);
  };
  for (const int p : {2, 3}) {
    for (const std::size_t count : {std::size_t{5000}, std::size_t{40'000}}) {  // 40, 320 KB
      for (const bool in_place : {false, true}) {
        INFO("ring:" << p << " count=" << count << (in_place ? " in place" : ""));
        constexpr int kCalls = 3;
        std::vector<std::vector<T>> got(static_cast<std::size_t>(p));
        const hypercomm::Report r = hypercomm::run(
            Topology::ring(p),
            [&](Proc& vp) {
              std::vector<T> in(count), out(count);
              for (int call = 0; call < kCalls; ++call) {
                for (std::size_t i = 0; i < count; ++i) in[i] = value(vp.id(), i, call);
                if (in_place) {
                  hypercomm::scan(vp, std::span<const T>(in), std::span<T>(in), op);
                  out = in;
                } else {
                  hypercomm::scan(vp, std::span<const T>(in), std::span<T>(out), op);
                }
                const auto me = static_cast<std::size_t>(vp.id());
                got[me].insert(got[me].end(), out.begin(), out.end());
              }
            },
            options_for(Links::routed));
        CHECK(r.messages == static_cast<std::uint64_t>(kCalls * (p - 1)));
        std::size_t wrong = 0;
        for (int vp = 0; vp < p; ++vp)
          for (int call = 0; call < kCalls; ++call)
            for (std::size_t i = 0; i < count; ++i) {
              T fold = value(0, i, call);
              for (int k = 1; k <= vp; ++k) fold = op(fold, value(k, i, call));
              wrong +=
                  got[static_cast<std::size_t>(vp)][static_cast<std::size_t>(call) * count + i] !=
                  fold;
            }
        CHECK(wrong == 0);
      }
    }
  }
}
