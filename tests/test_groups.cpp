// Groups (API.md, "Groups"): vp.world(), vp.row(), vp.column(), vp.subcube(mask),
// hypercomm::split(g, color, key), the Group accessors and point-to-point, and every collective
// of API.md's "Collectives" section called with a Group in place of the VP.
//
// Every result is checked on the test thread against a sequential oracle: the oracle knows each
// group's members (machine ids by group rank) and derives every expected value from them, so a
// wrong rank order, a wrong member or a message from another group shows as a wrong value.
// All groups of a kind run at once (every row, then every column, in the same body), with every
// Algo that can run on the group's topology (the others must throw AlgorithmError), roots other
// than 0, std::plus<> on int64 and the non-commutative hctest::MatMul, whose results must be the
// left fold in group-rank order. Model times are compared with hypercomm::textbook_time for the
// group's topology.
//
// The open-mesh case (Topology::mesh(r, c, Wrap::none), Topology::linear) can be left out with
// -DHCTEST_OPEN_MESH=0 (for a library without them).
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <hypercomm/cards.hpp>
#include <hypercomm/hypercomm.hpp>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "group_info.hpp"
#include "support.hpp"

#ifndef HCTEST_OPEN_MESH
#define HCTEST_OPEN_MESH 1
#endif

namespace hc = hypercomm;
using hc::Algo;
using hc::Collective;
using hc::Group;
using hc::Proc;
using hc::Topology;
using hctest::Mat;
using hctest::MatMul;
using Int = std::int64_t;

namespace {

constexpr auto& kAllAlgos = hctest::kAllAlgos;

std::string name_of(Algo a) { return hc::to_string(a); }
std::string name_of(Collective c) { return hc::to_string(c); }

// ---- the oracle's group membership ------------------------------------------------------------
// Each function returns the machine ids of id's group in group-rank order (empty: no group).

using Members = std::vector<int>;
using MembersOf = std::function<Members(int id)>;
using IdFunction = std::function<int(int id)>;

Members world_members(const Topology& t) {
  Members m(static_cast<std::size_t>(t.size()));
  for (int i = 0; i < t.size(); ++i) m[static_cast<std::size_t>(i)] = i;
  return m;
}

Members row_members(const Topology& t, int id) {  // rank = column
  Members m;
  const int r = id / t.cols();
  for (int c = 0; c < t.cols(); ++c) m.push_back(r * t.cols() + c);
  return m;
}

Members column_members(const Topology& t, int id) {  // rank = row
  Members m;
  const int c = id % t.cols();
  for (int r = 0; r < t.rows(); ++r) m.push_back(r * t.cols() + c);
  return m;
}

// id's bits at the positions of mask, packed lowest first.
unsigned extract_bits(unsigned id, unsigned mask) {
  unsigned out = 0;
  int k = 0;
  for (int b = 0; b < 32; ++b) {
    if (((mask >> b) & 1U) == 0) continue;
    if (((id >> b) & 1U) != 0) out |= 1U << k;
    ++k;
  }
  return out;
}

// rank's bits spread over the positions of mask, lowest first.
unsigned deposit_bits(unsigned rank, unsigned mask) {
  unsigned out = 0;
  int k = 0;
  for (int b = 0; b < 32; ++b) {
    if (((mask >> b) & 1U) == 0) continue;
    if (((rank >> k) & 1U) != 0) out |= 1U << b;
    ++k;
  }
  return out;
}

Members subcube_members(int id, unsigned mask) {
  const int n = 1 << std::popcount(mask);
  Members m;
  for (int k = 0; k < n; ++k)
    m.push_back(static_cast<int>((static_cast<unsigned>(id) & ~mask) |
                                 deposit_bits(static_cast<unsigned>(k), mask)));
  return m;
}

// The members of parent (machine ids by parent rank) whose color is id's, ranked by
// (key, rank in parent); empty when id's color is negative.
Members split_members(const Members& parent, int id, const IdFunction& color,
                      const IdFunction& key) {
  const int c = color(id);
  if (c < 0) return {};
  std::vector<std::pair<std::pair<int, int>, int>> chosen;  // ((key, parent rank), id)
  for (std::size_t q = 0; q < parent.size(); ++q)
    if (color(parent[q]) == c) chosen.push_back({{key(parent[q]), static_cast<int>(q)}, parent[q]});
  std::sort(chosen.begin(), chosen.end());
  Members m;
  for (const auto& x : chosen) m.push_back(x.second);
  return m;
}

int rank_in(const Members& m, int id) {
  const auto it = std::find(m.begin(), m.end(), id);
  return it == m.end() ? -1 : static_cast<int>(it - m.begin());
}

std::string show(const Members& m) {
  std::string s = "[";
  for (std::size_t i = 0; i < m.size(); ++i) s += (i ? " " : "") + std::to_string(m[i]);
  return s + "]";
}

// ---- values -----------------------------------------------------------------------------------

// Element i of machine VP id's input: distinct for every (id, i).
Int value(int id, std::size_t i) { return (id + 1) * 1'000'003LL + static_cast<Int>(i) * 7919; }
// Element i of block `block` that VP `from` sends (scatter, all_to_all).
Int cell(int from, int block, std::size_t i) {
  return from * 1'000'000'000LL + block * 1'000'000LL + static_cast<Int>(i);
}
constexpr Int kNoInt = -1;
constexpr Mat kNoMat{MatMul::kPrime, MatMul::kPrime, MatMul::kPrime, MatMul::kPrime};

template <class T>
T elem(int id, std::size_t i);
template <>
Int elem<Int>(int id, std::size_t i) {
  return value(id, i);
}
template <>
Mat elem<Mat>(int id, std::size_t i) {
  return hctest::mat_of(id, i);
}
template <class T>
T none();
template <>
Int none<Int>() {
  return kNoInt;
}
template <>
Mat none<Mat>() {
  return kNoMat;
}
template <class T>
struct OpOf;
template <>
struct OpOf<Int> {
  using type = std::plus<>;
};
template <>
struct OpOf<Mat> {
  using type = MatMul;
};
// The model checks pass CallShape::never_throws = !matmul: std::plus folds as the message lands,
// MatMul (not noexcept) is received, then folded.
static_assert(hc::detail::never_throws_v<Int, std::plus<>>);
static_assert(!hc::detail::never_throws_v<Mat, MatMul>);

template <class T>
std::vector<T> input(int id, std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = elem<T>(id, i);
  return v;
}

std::vector<Int> cells(int id, int blocks, std::size_t count) {
  std::vector<Int> v;
  v.reserve(static_cast<std::size_t>(blocks) * count);
  for (int b = 0; b < blocks; ++b)
    for (std::size_t i = 0; i < count; ++i) v.push_back(cell(id, b, i));
  return v;
}

// Element idx folded left to right over the members of ranks first .. last-1.
template <class T>
T fold(const Members& m, int first, int last, std::size_t idx) {
  T acc = elem<T>(m[static_cast<std::size_t>(first)], idx);
  for (int k = first + 1; k < last; ++k)
    acc = typename OpOf<T>::type{}(acc, elem<T>(m[static_cast<std::size_t>(k)], idx));
  return acc;
}

std::string show(Int v) { return std::to_string(v); }
std::string show(const Mat& m) {
  return "[" + std::to_string(m.a) + " " + std::to_string(m.b) + "; " + std::to_string(m.c) + " " +
         std::to_string(m.d) + "]";
}

// "" when got == want, else the first difference.
template <class T>
std::string diff(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size())
    return "holds " + std::to_string(got.size()) + " elements, expected " +
           std::to_string(want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == want[i]))
      return "element " + std::to_string(i) + " = " + show(got[i]) + ", expected " + show(want[i]);
  return "";
}

bool close(double got, double want) {
  return std::abs(got - want) <= 1e-9 * std::max(std::abs(got), std::abs(want)) + 1e-12;
}

// Runs body on every VP; a failure is reported as a failed check (with the caller's INFO).
bool run_ok(hc::Machine& m, const std::function<void(Proc&)>& body, hc::Report* report = nullptr) {
  try {
    hc::Report r = m.run(body);
    if (report != nullptr) *report = std::move(r);
    return true;
  } catch (const std::exception& e) {
    FAIL_CHECK("run threw: " << std::string(e.what()));
    return false;
  }
}
bool run_ok(const Topology& t, const std::function<void(Proc&)>& body, const hc::Options& opt,
            hc::Report* report = nullptr) {
  try {
    hc::Report r = hc::run(t, body, opt);
    if (report != nullptr) *report = std::move(r);
    return true;
  } catch (const std::exception& e) {
    FAIL_CHECK("run threw: " << std::string(e.what()));
    return false;
  }
}

hc::Options quick_options() {  // for the runs that must fail: never wait long
  hc::Options o = hctest::test_options();
  o.deadlock_timeout = std::chrono::seconds(2);
  return o;
}

}  // namespace

// =================================================================================================
// 1. Accessors
// =================================================================================================

namespace {

// What one VP saw of its group.
struct Seen {
  int rank = -2;
  int size = -2;
  Members members;  // g.vp(k) for k < size
  std::optional<Topology> topology;
  bool self = false;  // g.vp(g.rank()) == vp.id()
  int copy_rank = -2, copy_size = -2;
};

// A kind of group: how a VP makes it, and what the oracle expects.
struct Kind {
  std::string name;
  std::function<Group(Proc&)> make;  // called by every VP (split is collective)
  MembersOf members;
  std::function<Topology(int n)> topology;  // the group's topology for n members
  Algo book;  // the book's algorithm for the group's shape (must always run)
};

Topology ring_of(int n) { return Topology::ring(n); }
Topology cube_of(int n) { return Topology::hypercube(std::countr_zero(static_cast<unsigned>(n))); }

Kind world_kind(const Topology& t) {
  Algo book = Algo::ring;
  if (t.kind() == Topology::Kind::mesh) book = Algo::mesh;
  if (t.kind() == Topology::Kind::hypercube) book = Algo::hypercube;
  return {"world of " + t.name(), [](Proc& vp) { return vp.world(); },
          [t](int) { return world_members(t); }, [t](int) { return t; }, book};
}
Kind rows_kind(const Topology& t) {
  return {"rows of " + t.name(), [](Proc& vp) { return vp.row(); },
          [t](int id) { return row_members(t, id); }, ring_of, Algo::ring};
}
Kind columns_kind(const Topology& t) {
  return {"columns of " + t.name(), [](Proc& vp) { return vp.column(); },
          [t](int id) { return column_members(t, id); }, ring_of, Algo::ring};
}
Kind subcube_kind(const Topology& t, unsigned mask) {
  return {"subcubes " + std::to_string(mask) + " of " + t.name(),
          [mask](Proc& vp) { return vp.subcube(mask); },
          [mask](int id) { return subcube_members(id, mask); }, cube_of, Algo::hypercube};
}
// A split of the world by color(id), key(id).
Kind split_kind(const Topology& t, const std::string& what, IdFunction color, IdFunction key) {
  return {"split (" + what + ") of " + t.name(),
          [color, key](Proc& vp) {
            Group w = vp.world();
            return hc::split(w, color(vp.id()), key(vp.id()));
          },
          [t, color, key](int id) { return split_members(world_members(t), id, color, key); },
          ring_of, Algo::ring};
}

Seen observe(Proc& vp, Group& g) {
  Seen s;
  s.rank = g.rank();
  s.size = g.size();
  for (int k = 0; k < s.size; ++k) s.members.push_back(g.vp(k));
  if (s.size > 0) {
    s.topology = g.topology();
    s.self = g.vp(g.rank()) == vp.id();
  }
  const Group copy = g;  // a small value
  s.copy_rank = copy.rank();
  s.copy_size = copy.size();
  return s;
}

void check_seen(const Kind& kind, const std::vector<Seen>& seen) {
  INFO(kind.name);
  for (std::size_t id = 0; id < seen.size(); ++id) {
    const Seen& s = seen[id];
    const Members want = kind.members(static_cast<int>(id));
    INFO("VP " << id << " expects members " << show(want) << ", saw " << show(s.members) << " rank "
               << s.rank << " size " << s.size);
    if (want.empty()) {  // split with color < 0
      CHECK(s.size == 0);
      CHECK(s.rank == -1);
      CHECK(s.members.empty());
      continue;
    }
    const int n = static_cast<int>(want.size());
    CHECK(s.size == n);
    CHECK(s.rank == rank_in(want, static_cast<int>(id)));
    CHECK(s.members == want);
    CHECK(s.self);
    CHECK(s.copy_rank == s.rank);
    CHECK(s.copy_size == s.size);
    REQUIRE(s.topology.has_value());
    const Topology expected = kind.topology(n);
    CHECK_MESSAGE(*s.topology == expected,
                  "topology " << s.topology->name() << ", expected " << expected.name());
    CHECK(s.topology->size() == n);
  }
}

void check_kinds_accessors(const Topology& t, const std::vector<Kind>& kinds) {
  hc::Machine m(t, hctest::test_options());
  for (const Kind& kind : kinds) {
    std::vector<Seen> seen(static_cast<std::size_t>(t.size()));
    const bool ran = run_ok(m, [&](Proc& vp) {
      Group g = kind.make(vp);
      seen[static_cast<std::size_t>(vp.id())] = observe(vp, g);
    });
    if (ran) check_seen(kind, seen);
  }
}

}  // namespace

TEST_CASE("accessors: world, rows and columns of meshes") {
  for (const char* name : {"mesh:4x4", "mesh:2x3", "mesh:3x5", "mesh:1x4", "mesh:4x1"}) {
    const Topology t = Topology::parse(name);
    check_kinds_accessors(t, {world_kind(t), rows_kind(t), columns_kind(t)});
  }
}

TEST_CASE("accessors: the world of a ring and a hypercube") {
  for (const char* name : {"ring:5", "hypercube:3", "ring:1"}) {
    const Topology t = Topology::parse(name);
    check_kinds_accessors(t, {world_kind(t)});
  }
}

TEST_CASE("accessors: every subcube of hypercube:4, subcubes of hypercube:0..3") {
  {
    const Topology t = Topology::hypercube(4);
    std::vector<Kind> kinds;
    for (unsigned mask = 0; mask < 16; ++mask) kinds.push_back(subcube_kind(t, mask));
    check_kinds_accessors(t, kinds);
  }
  for (int d = 0; d <= 3; ++d) {
    const Topology t = Topology::hypercube(d);
    std::vector<Kind> kinds;
    for (unsigned mask = 0; mask < (1U << d); ++mask) kinds.push_back(subcube_kind(t, mask));
    check_kinds_accessors(t, kinds);
  }
}

TEST_CASE("accessors: subcube(0) is the VP alone, as hypercube:0") {
  const Topology t = Topology::hypercube(3);
  std::vector<int> rank(8, -2), size(8, -2), member(8, -2);
  std::vector<std::optional<Topology>> topo(8);
  REQUIRE(run_ok(
      t,
      [&](Proc& vp) {
        Group g = vp.subcube(0);
        const auto me = static_cast<std::size_t>(vp.id());
        rank[me] = g.rank();
        size[me] = g.size();
        member[me] = g.vp(0);
        topo[me] = g.topology();
      },
      hctest::test_options()));
  for (int id = 0; id < 8; ++id) {
    const auto i = static_cast<std::size_t>(id);
    INFO("VP " << id);
    CHECK(rank[i] == 0);
    CHECK(size[i] == 1);
    CHECK(member[i] == id);
    REQUIRE(topo[i].has_value());
    CHECK(*topo[i] == Topology::hypercube(0));
  }
}

TEST_CASE("accessors: split groups by several colorings") {
  for (const char* name : {"mesh:4x4", "ring:12", "hypercube:3", "ring:1"}) {
    const Topology t = Topology::parse(name);
    const int p = t.size();
    std::vector<Kind> kinds;
    kinds.push_back(split_kind(
        t, "id%3, key id", [](int id) { return id % 3; }, [](int id) { return id; }));
    kinds.push_back(split_kind(
        t, "id/4, reversed keys", [](int id) { return id / 4; }, [](int id) { return -id; }));
    kinds.push_back(split_kind(
        t, "one color, reversed keys", [](int) { return 0; }, [](int id) { return -id; }));
    kinds.push_back(split_kind(
        t, "some negative colors, tied keys", [](int id) { return id % 5 == 0 ? -1 : id % 3; },
        [](int id) { return (id * 7) % 3; }));
    kinds.push_back(split_kind(
        t, "every color negative", [](int) { return -1; }, [](int id) { return id; }));
    kinds.push_back(split_kind(
        t, "one member each", [](int id) { return id; }, [](int) { return 0; }));
    kinds.push_back(split_kind(
        t, "big colors, permuted keys", [](int id) { return 1000 + (id % 2) * 77; },
        [p](int id) { return (id * 5 + 3) % (p + 1); }));
    check_kinds_accessors(t, kinds);
  }
}

TEST_CASE("row, column and subcube are free: no message, no model time") {
  {
    const Topology t = Topology::mesh(3, 4);
    hc::Report r;
    std::vector<double> clocks(12, -1);
    REQUIRE(run_ok(
        t,
        [&](Proc& vp) {
          Group w = vp.world();
          Group row = vp.row();
          Group col = vp.column();
          clocks[static_cast<std::size_t>(vp.id())] = vp.clock();
          (void)w;
          (void)row;
          (void)col;
        },
        hctest::test_options(), &r));
    CHECK(r.messages == 0);
    CHECK(r.model_time == 0);
    for (double c : clocks) CHECK(c == 0);
  }
  {
    const Topology t = Topology::hypercube(3);
    hc::Report r;
    REQUIRE(run_ok(
        t,
        [&](Proc& vp) {
          for (unsigned mask = 0; mask < 8; ++mask) {
            Group s = vp.subcube(mask);
            (void)s;
          }
        },
        hctest::test_options(), &r));
    CHECK(r.messages == 0);
    CHECK(r.model_time == 0);
  }
}

// =================================================================================================
// 2. Every collective on groups, all groups of a kind at once
// =================================================================================================

namespace {

bool rooted(Collective op) {
  return op == Collective::broadcast || op == Collective::reduce || op == Collective::scatter ||
         op == Collective::gather;
}
bool reducing(Collective op) {
  return op == Collective::reduce || op == Collective::all_reduce ||
         op == Collective::reduce_scatter || op == Collective::scan || op == Collective::exscan;
}

// Roots other than 0: 0, the last rank, the middle one.
int root_of(int pick, int n) {
  switch (pick) {
    case 1: return n - 1;
    case 2: return n / 2;
    default: return 0;
  }
}

struct Case {
  Collective op;
  Algo algo;
  std::size_t count;  // elements of the vector, or of one block
  int pick = 0;       // root_of(pick, n)
  int shift = 0;
  bool matmul = false;
};

std::string describe(const Case& c) {
  return name_of(c.op) + " algo=" + name_of(c.algo) + " count=" + std::to_string(c.count) +
         " rootpick=" + std::to_string(c.pick) + " shift=" + std::to_string(c.shift) +
         (c.matmul ? " MatMul" : " plus");
}

std::vector<Case> group_cases() {
  std::vector<std::size_t> counts{0, 1, 7, 1000};
  if (hctest::kSanitized) counts = {0, 1, 7};
  std::vector<Case> cases;
  for (int k = static_cast<int>(Collective::broadcast); k <= static_cast<int>(Collective::barrier);
       ++k) {
    const auto op = static_cast<Collective>(k);
    std::vector<Algo> algos{Algo::automatic};
    if (hc::takes_algo(op)) algos.assign(std::begin(kAllAlgos), std::end(kAllAlgos));
    std::vector<int> picks{0};
    if (rooted(op)) picks = {0, 1, 2};
    std::vector<int> shifts{0};
    if (op == Collective::circular_shift) shifts = {1, -1, 3};
    std::vector<int> kinds{0};
    if (reducing(op)) kinds = {0, 1};
    const std::vector<std::size_t> cs =
        op == Collective::barrier ? std::vector<std::size_t>{0} : counts;
    for (Algo a : algos)
      for (std::size_t n : cs)
        for (int pick : picks)
          for (int shift : shifts)
            for (int matmul : kinds) cases.push_back({op, a, n, pick, shift, matmul == 1});
  }
  return cases;
}

// One VP's outcome of one case.
struct Slot {
  std::vector<Int> ints;
  std::vector<Mat> mats;
  char threw = 0;  // AlgorithmError
  char ran = 0;
};

template <class T>
void run_reducing(Group& g, const Case& c, int me, std::vector<T>& result) {
  using Op = typename OpOf<T>::type;
  const int n = g.size(), r = g.rank();
  const auto N = static_cast<std::size_t>(n);
  const std::size_t cnt = c.count;
  const int root = root_of(c.pick, n);
  const bool forced = c.algo != Algo::automatic;
  switch (c.op) {
    case Collective::reduce: {
      const auto in = input<T>(me, cnt);
      std::vector<T> out(r == root ? cnt : 0, none<T>());
      if (forced)
        hc::reduce(g, in, out, Op{}, root, c.algo);
      else
        hc::reduce(g, in, out, Op{}, root);
      result = std::move(out);
      break;
    }
    case Collective::all_reduce: {
      const auto in = input<T>(me, cnt);
      std::vector<T> out(cnt, none<T>());
      if (forced)
        hc::all_reduce(g, in, out, Op{}, c.algo);
      else
        hc::all_reduce(g, in, out, Op{});
      result = std::move(out);
      break;
    }
    case Collective::reduce_scatter: {
      const auto in = input<T>(me, N * cnt);
      std::vector<T> out(cnt, none<T>());
      if (forced)
        hc::reduce_scatter(g, in, out, Op{}, c.algo);
      else
        hc::reduce_scatter(g, in, out, Op{});
      result = std::move(out);
      break;
    }
    case Collective::scan: {
      const auto in = input<T>(me, cnt);
      std::vector<T> out(cnt, none<T>());
      hc::scan(g, in, out, Op{});
      result = std::move(out);
      break;
    }
    case Collective::exscan: {
      const auto in = input<T>(me, cnt);
      std::vector<T> out(cnt, none<T>());  // rank 0's stays untouched
      hc::exscan(g, in, out, Op{});
      result = std::move(out);
      break;
    }
    default: break;
  }
}

void run_case(Group& g, const Case& c, int me, Slot& s) {
  const int n = g.size(), r = g.rank();
  const auto N = static_cast<std::size_t>(n);
  const std::size_t cnt = c.count;
  const int root = root_of(c.pick, n);
  const bool forced = c.algo != Algo::automatic;
  try {
    switch (c.op) {
      case Collective::broadcast: {
        auto buf = input<Int>(me, cnt);
        if (forced)
          hc::broadcast(g, buf, root, c.algo);
        else
          hc::broadcast(g, buf, root);
        s.ints = std::move(buf);
        break;
      }
      case Collective::all_gather: {
        const auto in = input<Int>(me, cnt);
        std::vector<Int> out(N * cnt, kNoInt);
        if (forced)
          hc::all_gather(g, in, out, c.algo);
        else
          hc::all_gather(g, in, out);
        s.ints = std::move(out);
        break;
      }
      case Collective::scatter: {
        const std::vector<Int> in = r == root ? cells(me, n, cnt) : std::vector<Int>{};
        std::vector<Int> out(cnt, kNoInt);
        hc::scatter(g, in, out, root);
        s.ints = std::move(out);
        break;
      }
      case Collective::gather: {
        const auto in = input<Int>(me, cnt);
        std::vector<Int> out(r == root ? N * cnt : 0, kNoInt);
        hc::gather(g, in, out, root);
        s.ints = std::move(out);
        break;
      }
      case Collective::all_to_all: {
        const auto in = cells(me, n, cnt);
        std::vector<Int> out(N * cnt, kNoInt);
        if (forced)
          hc::all_to_all(g, in, out, c.algo);
        else
          hc::all_to_all(g, in, out);
        s.ints = std::move(out);
        break;
      }
      case Collective::circular_shift: {
        const auto in = input<Int>(me, cnt);
        std::vector<Int> out(cnt, kNoInt);
        hc::circular_shift(g, in, out, c.shift);
        s.ints = std::move(out);
        break;
      }
      case Collective::barrier: hc::barrier(g); break;
      default:
        if (c.matmul)
          run_reducing<Mat>(g, c, me, s.mats);
        else
          run_reducing<Int>(g, c, me, s.ints);
    }
    s.ran = 1;
  } catch (const hc::AlgorithmError&) {
    s.threw = 1;
  }
}

template <class T>
std::vector<T> want_reducing(const Case& c, const Members& m, int r) {
  const int n = static_cast<int>(m.size());
  const int root = root_of(c.pick, n);
  std::vector<T> want;
  for (std::size_t i = 0; i < c.count; ++i) {
    switch (c.op) {
      case Collective::reduce:
        if (r == root) want.push_back(fold<T>(m, 0, n, i));
        break;
      case Collective::all_reduce: want.push_back(fold<T>(m, 0, n, i)); break;
      case Collective::reduce_scatter:
        want.push_back(fold<T>(m, 0, n, static_cast<std::size_t>(r) * c.count + i));
        break;
      case Collective::scan: want.push_back(fold<T>(m, 0, r + 1, i)); break;
      case Collective::exscan: want.push_back(r == 0 ? none<T>() : fold<T>(m, 0, r, i)); break;
      default: break;
    }
  }
  return want;
}

std::vector<Int> want_ints(const Case& c, const Members& m, int r) {
  const int n = static_cast<int>(m.size());
  const int root = root_of(c.pick, n);
  const auto at = [&m](int rank) { return m[static_cast<std::size_t>(rank)]; };
  std::vector<Int> want;
  switch (c.op) {
    case Collective::broadcast:
      for (std::size_t i = 0; i < c.count; ++i) want.push_back(value(at(root), i));
      break;
    case Collective::all_gather:
      for (int k = 0; k < n; ++k)
        for (std::size_t i = 0; i < c.count; ++i) want.push_back(value(at(k), i));
      break;
    case Collective::scatter:
      for (std::size_t i = 0; i < c.count; ++i) want.push_back(cell(at(root), r, i));
      break;
    case Collective::gather:
      if (r == root)
        for (int k = 0; k < n; ++k)
          for (std::size_t i = 0; i < c.count; ++i) want.push_back(value(at(k), i));
      break;
    case Collective::all_to_all:
      for (int k = 0; k < n; ++k)
        for (std::size_t i = 0; i < c.count; ++i) want.push_back(cell(at(k), r, i));
      break;
    case Collective::circular_shift: {
      const int from = ((r - c.shift) % n + n) % n;
      for (std::size_t i = 0; i < c.count; ++i) want.push_back(value(at(from), i));
      break;
    }
    case Collective::barrier: break;
    default: return want_reducing<Int>(c, m, r);
  }
  return want;
}

// Whether the algorithm can run on a group of topology gt: what the collective would decide on
// a machine of that shape (API.md: "exactly as on a machine of that shape"). Used for rows,
// columns and subcubes, whose group links are machine links; under Links::strict a split group
// follows its own rule (see "groups under Links::strict").
bool can_run(const Case& c, const Topology& gt, hc::Links links) {
  if (c.algo == Algo::automatic) return true;
  try {
    // textbook_time validates as the collective does, the operator's commutativity included
    // (the Gray-code ring's reductions refuse a non-commutative one).
    (void)hc::textbook_time(c.op, c.algo, gt, links, c.count * 8, {},
                            hc::CallShape{.commutative = !c.matmul, .never_throws = !c.matmul});
    return true;
  } catch (const hc::AlgorithmError&) {
    return false;
  }
}

// The value forms and the in-place all_reduce.
struct ValueSlot {
  Int broadcast = kNoInt, all_reduce = kNoInt, scan = kNoInt;
  Mat mat_all_reduce = kNoMat, mat_scan = kNoMat;
  std::vector<Int> all_gather, in_place;
  char ran = 0;
};

void run_values(Group& g, int me, ValueSlot& v) {
  const int n = g.size();
  v.broadcast = hc::broadcast(g, value(me, 0), root_of(1, n));
  v.all_reduce = hc::all_reduce(g, value(me, 1), std::plus<>{});
  v.scan = hc::scan(g, value(me, 2), std::plus<>{});
  v.all_gather = hc::all_gather(g, value(me, 3));
  auto inout = input<Int>(me, 5);
  hc::all_reduce(g, inout, std::plus<>{});
  v.in_place = std::move(inout);
  v.mat_all_reduce = hc::all_reduce(g, hctest::mat_of(me, 4), MatMul{});
  v.mat_scan = hc::scan(g, hctest::mat_of(me, 5), MatMul{});
  v.ran = 1;
}

void check_values(const Kind& kind, const std::vector<ValueSlot>& values) {
  INFO(kind.name << ": value forms");
  for (std::size_t id = 0; id < values.size(); ++id) {
    const Members m = kind.members(static_cast<int>(id));
    if (m.empty()) continue;
    const int n = static_cast<int>(m.size()), r = rank_in(m, static_cast<int>(id));
    const ValueSlot& v = values[id];
    INFO("VP " << id << " rank " << r << " of " << show(m));
    REQUIRE(v.ran == 1);
    CHECK(v.broadcast == value(m[static_cast<std::size_t>(root_of(1, n))], 0));
    CHECK(v.all_reduce == fold<Int>(m, 0, n, 1));
    CHECK(v.scan == fold<Int>(m, 0, r + 1, 2));
    std::vector<Int> gathered;
    for (int k = 0; k < n; ++k) gathered.push_back(value(m[static_cast<std::size_t>(k)], 3));
    CHECK_MESSAGE(diff(v.all_gather, gathered).empty(), diff(v.all_gather, gathered));
    std::vector<Int> sum;
    for (std::size_t i = 0; i < 5; ++i) sum.push_back(fold<Int>(m, 0, n, i));
    CHECK_MESSAGE(diff(v.in_place, sum).empty(), "in place: " << diff(v.in_place, sum));
    CHECK(v.mat_all_reduce == fold<Mat>(m, 0, n, 4));
    CHECK(v.mat_scan == fold<Mat>(m, 0, r + 1, 5));
  }
}

void check_cases(const Kind& kind, const std::vector<Case>& cases,
                 const std::vector<std::vector<Slot>>& slots, hc::Links links) {
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    INFO(kind.name << ": " << describe(c));
    std::string error;
    for (std::size_t id = 0; id < slots[k].size() && error.empty(); ++id) {
      const Slot& s = slots[k][id];
      const Members m = kind.members(static_cast<int>(id));
      if (m.empty()) {
        if (s.ran || s.threw) error = "VP " + std::to_string(id) + " is in no group but ran";
        continue;
      }
      const int n = static_cast<int>(m.size()), r = rank_in(m, static_cast<int>(id));
      const Topology gt = kind.topology(n);
      const std::string who = "VP " + std::to_string(id) + " (rank " + std::to_string(r) + " of " +
                              show(m) + ", " + gt.name() + "): ";
      // Automatic and (routed) the book's algorithm for the group's shape always run. (Under
      // Links::strict the hypercube all-to-all, Algorithm 4.10, sends to rank XOR i: not a
      // neighbour.)
      const bool must_run =
          c.algo == Algo::automatic || (links == hc::Links::routed && c.algo == kind.book &&
                                        hc::find_card(c.op, c.algo) != nullptr);
      const bool runs = must_run || can_run(c, gt, links);
      if (!runs) {
        if (!s.threw) error = who + "no AlgorithmError for an algorithm that cannot run here";
        continue;
      }
      if (s.threw) {
        error = who + "AlgorithmError for an algorithm that can run on " + gt.name();
        continue;
      }
      if (!s.ran) {
        error = who + "did not run";
        continue;
      }
      const std::string d =
          c.matmul ? diff(s.mats, want_reducing<Mat>(c, m, r)) : diff(s.ints, want_ints(c, m, r));
      if (!d.empty()) error = who + d;
    }
    CHECK_MESSAGE(error.empty(), error);
  }
}

// Runs every case on every kind of group of machine t in one body: all groups of a kind at once,
// the kinds one after the other.
void collective_suite(const Topology& t, const std::vector<Kind>& kinds,
                      hc::Links links = hc::Links::routed, bool meetings = true) {
  const auto cases = group_cases();
  const auto p = static_cast<std::size_t>(t.size());
  std::vector<std::vector<std::vector<Slot>>> slots(
      kinds.size(), std::vector<std::vector<Slot>>(cases.size(), std::vector<Slot>(p)));
  std::vector<std::vector<ValueSlot>> values(kinds.size(), std::vector<ValueSlot>(p));
  INFO(t.name() << (links == hc::Links::strict ? " strict" : " routed")
                << (meetings ? "" : " without meetings"));
  hc::Options opt = hctest::test_options();
  opt.links = links;
  opt.meetings = meetings;
  const bool ran = run_ok(
      t,
      [&](Proc& vp) {
        const int me = vp.id();
        const auto i = static_cast<std::size_t>(me);
        for (std::size_t k = 0; k < kinds.size(); ++k) {
          Group g = kinds[k].make(vp);
          if (g.size() == 0) continue;
          for (std::size_t c = 0; c < cases.size(); ++c) run_case(g, cases[c], me, slots[k][c][i]);
          run_values(g, me, values[k][i]);
        }
      },
      opt);
  if (!ran) return;
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    check_cases(kinds[k], cases, slots[k], links);
    check_values(kinds[k], values[k]);
  }
}

}  // namespace

TEST_CASE("collectives on every row, then every column, of mesh:4x4" * doctest::timeout(300)) {
  const Topology t = Topology::mesh(4, 4);
  collective_suite(t, {rows_kind(t), columns_kind(t)});
}

TEST_CASE("collectives on rows and columns of mesh:2x3, mesh:3x5 and mesh:2x8" *
          doctest::timeout(300)) {
  for (const Topology& t : {Topology::mesh(2, 3), Topology::mesh(3, 5), Topology::mesh(2, 8)})
    collective_suite(t, {rows_kind(t), columns_kind(t)});
}

TEST_CASE("collectives on subcubes of hypercube:4" * doctest::timeout(300)) {
  const Topology t = Topology::hypercube(4);
  std::vector<Kind> kinds;
  for (unsigned mask : {0b0000U, 0b0001U, 0b0110U, 0b1011U, 0b1101U, 0b1111U})
    kinds.push_back(subcube_kind(t, mask));
  collective_suite(t, kinds);
}

TEST_CASE("collectives on split groups" * doctest::timeout(300)) {
  {
    const Topology t = Topology::mesh(4, 4);
    collective_suite(
        t, {split_kind(
                t, "id%3, key id", [](int id) { return id % 3; }, [](int id) { return id; }),
            split_kind(
                t, "id/4 with -1 for id%5==4, reversed keys",
                [](int id) { return id % 5 == 4 ? -1 : id / 4; }, [](int id) { return -id; })});
  }
  {
    const Topology t = Topology::hypercube(3);
    collective_suite(t, {split_kind(
                            t, "id%2, permuted keys", [](int id) { return id % 2; },
                            [](int id) { return (id * 3) % 8; })});
  }
  {
    const Topology t = Topology::ring(7);
    collective_suite(t, {split_kind(
                            t, "one group of all, key (id*3)%7", [](int) { return 5; },
                            [](int id) { return (id * 3) % 7; })});
  }
}

TEST_CASE("collectives on rows, columns and subcubes under Links::strict" * doctest::timeout(300)) {
  // Row and column neighbours are machine neighbours on a torus, subcube partners differ in one
  // bit: what runs is what runs on ring(n) / hypercube(k) machines under Links::strict.
  const Topology mesh = Topology::mesh(4, 4);
  collective_suite(mesh, {rows_kind(mesh), columns_kind(mesh)}, hc::Links::strict);
  const Topology m23 = Topology::mesh(2, 3);
  collective_suite(m23, {rows_kind(m23), columns_kind(m23)}, hc::Links::strict);
  const Topology cube = Topology::hypercube(4);
  collective_suite(cube, {subcube_kind(cube, 0b0101U), subcube_kind(cube, 0b1110U)},
                   hc::Links::strict);
}

TEST_CASE("collectives on groups without meetings (every collective as its messages)" *
          doctest::timeout(300)) {
  const Topology mesh = Topology::mesh(4, 4);
  collective_suite(mesh, {rows_kind(mesh), columns_kind(mesh)}, hc::Links::routed, false);
  const Topology cube = Topology::hypercube(4);
  collective_suite(cube,
                   {subcube_kind(cube, 0b1011U),
                    split_kind(
                        cube, "id%3", [](int id) { return id % 3; }, [](int id) { return -id; })},
                   hc::Links::routed, false);
}

TEST_CASE("a group's messages stay on its own links") {
  // Row and column members are joined by XY routes inside their row / column; subcube members
  // by E-cube routes that flip only bits of the mask. Routed (non-neighbour) algorithms included.
  const auto all_kinds = [](Group& g, int id) {
    std::vector<Int> buf(50, id), in(50 * static_cast<std::size_t>(g.size()), id), out(in.size());
    for (Algo a : kAllAlgos) {
      try {
        hc::broadcast(g, buf, g.size() - 1, a);
      } catch (const hc::AlgorithmError&) {
      }
      try {
        hc::all_to_all(g, in, out, a);
      } catch (const hc::AlgorithmError&) {
      }
      try {
        std::vector<Int> sum(buf.size());
        hc::all_reduce(g, buf, sum, std::plus<>{}, a);
      } catch (const hc::AlgorithmError&) {
      }
    }
    std::vector<Int> shifted(50);
    hc::circular_shift(g, buf, shifted, 2);
    hc::barrier(g);
  };
  const Topology mesh = Topology::mesh(4, 4);
  for (int which = 0; which < 2; ++which) {
    INFO(std::string(which == 0 ? "rows" : "columns"));
    hc::Report r;
    REQUIRE(run_ok(
        mesh,
        [&](Proc& vp) {
          Group g = which == 0 ? vp.row() : vp.column();
          all_kinds(g, vp.id());
        },
        hctest::test_options(), &r));
    CHECK(!r.link_traffic.empty());
    for (const auto& entry : r.link_traffic) {
      // Not bound in the for: Clang before 16 cannot capture a structured binding.
      const auto& link = entry.first;
      const auto& stats = entry.second;
      INFO("link " << link.first << " -> " << link.second << ": " << stats.messages << " messages");
      if (which == 0)
        CHECK(mesh.row_of(link.first) == mesh.row_of(link.second));
      else
        CHECK(mesh.col_of(link.first) == mesh.col_of(link.second));
    }
  }
  const Topology cube = Topology::hypercube(4);
  for (unsigned mask : {0b0101U, 0b1110U}) {
    INFO("subcube " << mask);
    hc::Report r;
    REQUIRE(run_ok(
        cube,
        [&](Proc& vp) {
          Group g = vp.subcube(mask);
          all_kinds(g, vp.id());
        },
        hctest::test_options(), &r));
    CHECK(!r.link_traffic.empty());
    for (const auto& entry : r.link_traffic) {
      const auto& link = entry.first;  // not bound: Clang before 16 cannot capture a binding
      INFO("link " << link.first << " -> " << link.second);
      CHECK((static_cast<unsigned>(link.first ^ link.second) & ~mask) == 0U);
    }
  }
}

TEST_CASE("collectives on the world group of a mesh equal those on the VP") {
  const Topology t = Topology::mesh(2, 3);
  collective_suite(t, {world_kind(t)});
}

// =================================================================================================
// 3. Model time: the group's formula
// =================================================================================================

namespace {

constexpr hc::CostModel kModel{.ts = 1.0, .tw = 0.01, .th = 0.0};

// The brief's model, and the same with a hop term: a row's, a column's and a subcube's
// messages cross as many machine links as on ring(n) / hypercube(k) (XY routes along a row or
// a column of the torus; E-cube routes inside a subcube), so where the card counts hops
// (textbook_counts_hops) the group's model time is still exactly its formula.
hc::CostModel model_with(double th) { return {.ts = 1.0, .tw = 0.01, .th = th}; }

hc::Options model_options(const hc::CostModel& model = kModel) {
  hc::Options o = hctest::test_options();
  o.model = model;
  return o;
}

// The card's time for the group's topology (textbook_bounds: lower == upper == textbook_time
// where the card has a closed form for the call), or nullopt when the algorithm cannot run there.
std::optional<hc::TimeBounds> formula(Collective op, Algo a, const Topology& gt, std::size_t bytes,
                                      const hc::CallShape& shape,
                                      const hc::CostModel& model = kModel) {
  try {
    const hc::TimeBounds b = hc::textbook_bounds(op, a, gt, hc::Links::routed, bytes, model, shape);
    const double exact = hc::textbook_time(op, a, gt, hc::Links::routed, bytes, model, shape);
    CHECK((std::isnan(exact) ? b.lower <= b.upper : b.lower == exact && b.upper == exact));
    return b;
  } catch (const hc::AlgorithmError&) {
    return std::nullopt;
  }
}

// x within the bounds, to a relative 1e-9.
bool within(double x, const hc::TimeBounds& b) {
  return b.lower <= x + 1e-9 * std::max(1.0, x) && x <= b.upper + 1e-9 * std::max(1.0, x);
}

// Whether the formula with th > 0 is exact (or the algorithm cannot run: AlgorithmError).
bool hops_counted(Collective op, Algo a, const Topology& gt, std::size_t bytes) {
  try {
    return hc::textbook_counts_hops(op, a, gt, hc::Links::routed, bytes);
  } catch (const hc::AlgorithmError&) {
    return true;
  }
}

// Runs body on m; it must throw AlgorithmError when `expected` is nullopt, else take exactly
// *expected model time.
void check_model_time(hc::Machine& m, const std::function<void(Proc&)>& body,
                      const std::optional<hc::TimeBounds>& expected) {
  if (!expected) {
    CHECK_THROWS_AS(m.run(body), hc::AlgorithmError);
    return;
  }
  hc::Report r;
  if (!run_ok(m, body, &r)) return;
  CHECK_MESSAGE(within(r.model_time, *expected), "model time " << r.model_time << ", formula "
                                                               << expected->lower << " .. "
                                                               << expected->upper);
}

}  // namespace

TEST_CASE("model time: every row broadcasts at once, at ring(cols)'s cost") {
  // API.md: "a row broadcast on mesh:4x8 costs what a ring:8 broadcast costs".
  for (const char* name : {"mesh:4x4", "mesh:2x8", "mesh:3x5"}) {
    const Topology t = Topology::parse(name);
    const Topology gt = Topology::ring(t.cols());
    for (double th : {0.0, 0.25}) {
      const hc::CostModel model = model_with(th);
      hc::Machine m(t, model_options(model));
      for (Algo a : kAllAlgos)
        for (std::size_t count : {0, 1, 7, 1000})
          for (int root : {0, 1, t.cols() - 1}) {
            INFO(std::string(name) << " row broadcast algo=" << name_of(a) << " count=" << count
                                   << " root=" << root << " th=" << th);
            if (th != 0 && !hops_counted(Collective::broadcast, a, gt, count * sizeof(Int)))
              continue;
            const auto expected = formula(Collective::broadcast, a, gt, count * sizeof(Int),
                                          {.root = root, .elem_size = sizeof(Int)}, model);
            check_model_time(
                m,
                [&](Proc& vp) {
                  Group row = vp.row();
                  std::vector<Int> buf(count, vp.id());
                  if (a == Algo::automatic)
                    hc::broadcast(row, buf, root);
                  else
                    hc::broadcast(row, buf, root, a);
                },
                expected);
          }
    }
  }
}

TEST_CASE("model time: every column reduces at once, at ring(rows)'s cost") {
  for (const char* name : {"mesh:4x4", "mesh:8x2", "mesh:3x5"}) {
    const Topology t = Topology::parse(name);
    const Topology gt = Topology::ring(t.rows());
    for (double th : {0.0, 0.25}) {
      const hc::CostModel model = model_with(th);
      hc::Machine m(t, model_options(model));
      for (Algo a : kAllAlgos)
        for (std::size_t count : {0, 1, 7, 1000})
          for (int root : {0, t.rows() - 1})
            for (bool matmul : {false, true}) {
              INFO(std::string(name)
                   << " column reduce algo=" << name_of(a) << " count=" << count << " root=" << root
                   << (matmul ? " MatMul" : " plus") << " th=" << th);
              const std::size_t elem = matmul ? sizeof(Mat) : sizeof(Int);
              if (th != 0 && !hops_counted(Collective::reduce, a, gt, count * elem)) continue;
              const auto expected = formula(Collective::reduce, a, gt, count * elem,
                                            {.root = root,
                                             .elem_size = elem,
                                             .commutative = !matmul,
                                             .never_throws = !matmul},
                                            model);
              check_model_time(
                  m,
                  [&](Proc& vp) {
                    Group col = vp.column();
                    const bool at_root = col.rank() == root;
                    if (matmul) {
                      const auto in = input<Mat>(vp.id(), count);
                      std::vector<Mat> out(at_root ? count : 0);
                      if (a == Algo::automatic)
                        hc::reduce(col, in, out, MatMul{}, root);
                      else
                        hc::reduce(col, in, out, MatMul{}, root, a);
                    } else {
                      const auto in = input<Int>(vp.id(), count);
                      std::vector<Int> out(at_root ? count : 0);
                      if (a == Algo::automatic)
                        hc::reduce(col, in, out, std::plus<>{}, root);
                      else
                        hc::reduce(col, in, out, std::plus<>{}, root, a);
                    }
                  },
                  expected);
            }
    }
  }
}

TEST_CASE("model time: subcube all_gather on hypercube:4 at hypercube(popcount)'s cost") {
  const Topology t = Topology::hypercube(4);
  for (double th : {0.25, 0.0}) {
    const hc::CostModel model = model_with(th);
    hc::Machine mt(t, model_options(model));
    for (unsigned mask : {0b0011U, 0b1010U, 0b0100U, 0b1111U, 0b0000U}) {
      const Topology gt = Topology::hypercube(std::popcount(mask));
      for (Algo a : kAllAlgos)
        for (std::size_t count : {0, 1, 7, 1000}) {
          INFO("subcube " << mask << " all_gather algo=" << name_of(a) << " count=" << count
                          << " th=" << th);
          if (th != 0 && !hops_counted(Collective::all_gather, a, gt, count * sizeof(Int)))
            continue;
          const auto expected = formula(Collective::all_gather, a, gt, count * sizeof(Int),
                                        {.elem_size = sizeof(Int)}, model);
          check_model_time(
              mt,
              [&](Proc& vp) {
                Group s = vp.subcube(mask);
                const auto in = input<Int>(vp.id(), count);
                std::vector<Int> out(count * static_cast<std::size_t>(s.size()));
                if (a == Algo::automatic)
                  hc::all_gather(s, in, out);
                else
                  hc::all_gather(s, in, out, a);
              },
              expected);
        }
    }
  }
  // The book's hypercube:2 formula, spelled out: ts log p + tw m (p - 1).
  hc::Machine m(t, model_options());
  hc::Report r;
  REQUIRE(run_ok(
      m,
      [](Proc& vp) {
        Group s = vp.subcube(0b11);
        const auto in = input<Int>(vp.id(), 10);
        std::vector<Int> out(40);
        hc::all_gather(s, in, out, Algo::hypercube);
      },
      &r));
  CHECK(close(r.model_time, kModel.ts * 2 + kModel.tw * 80 * 3));
}

TEST_CASE("model time: a split group's all_reduce costs ring(n)'s formula") {
  const Topology t = Topology::mesh(4, 4);
  const auto p = static_cast<std::size_t>(t.size());
  hc::Machine m(t, model_options());
  struct Coloring {
    std::string name;
    IdFunction color, key;
  };
  const std::vector<Coloring> colorings{
      {"id%2", [](int id) { return id % 2; }, [](int id) { return id; }},
      {"id%3 reversed", [](int id) { return id % 3; }, [](int id) { return -id; }},
      {"id/4 with -1", [](int id) { return id == 5 ? -1 : id / 4; }, [](int id) { return id; }}};
  for (const Coloring& col : colorings)
    for (Algo a : kAllAlgos)
      for (std::size_t count : {0, 1, 7, 1000})
        for (bool matmul : {false, true}) {
          INFO("split " << col.name << " all_reduce algo=" << name_of(a) << " count=" << count
                        << (matmul ? " MatMul" : " plus"));
          std::vector<double> before(p, -1), after(p, -1);
          std::vector<char> threw(p, 0);
          const bool ran = run_ok(m, [&](Proc& vp) {
            const auto me = static_cast<std::size_t>(vp.id());
            Group w = vp.world();
            Group s = hc::split(w, col.color(vp.id()), col.key(vp.id()));
            if (s.size() == 0) return;
            before[me] = vp.clock();
            try {
              if (matmul) {
                const auto in = input<Mat>(vp.id(), count);
                std::vector<Mat> out(count);
                if (a == Algo::automatic)
                  hc::all_reduce(s, in, out, MatMul{});
                else
                  hc::all_reduce(s, in, out, MatMul{}, a);
              } else {
                const auto in = input<Int>(vp.id(), count);
                std::vector<Int> out(count);
                if (a == Algo::automatic)
                  hc::all_reduce(s, in, out, std::plus<>{});
                else
                  hc::all_reduce(s, in, out, std::plus<>{}, a);
              }
            } catch (const hc::AlgorithmError&) {
              threw[me] = 1;
            }
            after[me] = vp.clock();
          });
          if (!ran) continue;
          std::vector<char> seen(p, 0);
          for (std::size_t id = 0; id < p; ++id) {
            const Members mem =
                split_members(world_members(t), static_cast<int>(id), col.color, col.key);
            if (mem.empty() || seen[id]) continue;
            for (int x : mem) seen[static_cast<std::size_t>(x)] = 1;
            const int n = static_cast<int>(mem.size());
            const std::size_t elem = matmul ? sizeof(Mat) : sizeof(Int);
            const auto expected =
                formula(Collective::all_reduce, a, Topology::ring(n), count * elem,
                        {.elem_size = elem, .commutative = !matmul, .never_throws = !matmul});
            INFO("group " << show(mem));
            double lo = 1e300, hi = -1e300, end = -1e300;
            for (int x : mem) {
              const auto i = static_cast<std::size_t>(x);
              CHECK_MESSAGE(
                  threw[i] == (expected ? 0 : 1),
                  "VP " << x << (threw[i] ? " threw" : " did not throw") << " AlgorithmError");
              lo = std::min(lo, before[i]);
              hi = std::max(hi, before[i]);
              end = std::max(end, after[i]);
            }
            if (!expected) continue;
            if (lo == hi) {
              CHECK_MESSAGE(within(end - lo, *expected),
                            "all_reduce took " << end - lo << " model time, formula "
                                               << expected->lower << " .. " << expected->upper);
            } else {
              // Unequal start clocks after the split: the model is monotone and shift-invariant,
              // so the collective's span lies between these bounds.
              CHECK(end - hi <= expected->upper + 1e-9);
              CHECK(expected->lower <= end - lo + 1e-9);
            }
          }
        }
}

// =================================================================================================
// 4. Concurrency and isolation
// =================================================================================================

namespace {

// Element i of VP id's input in round `round`, for the round's operation `tag`.
Int tagged(int round, int tag, int id, std::size_t i) {
  return (static_cast<Int>(round) * 8 + tag) * 10'000'000'000LL + value(id, i);
}
std::vector<Int> tagged_input(int round, int tag, int id, std::size_t n) {
  std::vector<Int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = tagged(round, tag, id, i);
  return v;
}
Int tagged_sum(const Members& m, int first, int last, int round, int tag, std::size_t i) {
  Int s = 0;
  for (int k = first; k < last; ++k) s += tagged(round, tag, m[static_cast<std::size_t>(k)], i);
  return s;
}
Mat round_mat(int round, int id, std::size_t i) { return hctest::mat_of(id + 32 * (round + 1), i); }

std::size_t random_count(std::mt19937& rng) {
  static constexpr std::size_t kCounts[] = {0, 1, 2, 3, 7, 16, 100, 1000};
  const std::size_t k = std::uniform_int_distribution<std::size_t>(0, 7)(rng);
  return hctest::kSanitized ? std::min<std::size_t>(kCounts[k], 100) : kCounts[k];
}

struct MeshRound {
  std::size_t n_row, n_col, n_world, n_split;
  int row_root, col_root, split_mod, split_salt, split_root;
};

struct MeshOut {
  std::vector<Int> row_sum, row_bcast, col_sum, world_sum, split_scan, split_bcast;
  std::vector<Mat> col_reduce;
  int split_rank = -2;
};

void mesh_rounds(bool meetings, int count) {
  const Topology t = Topology::mesh(4, 4);
  const auto p = static_cast<std::size_t>(t.size());
  std::mt19937 rng(20240611U + (meetings ? 0U : 1U));
  std::vector<MeshRound> rounds;
  for (int k = 0; k < count; ++k) {
    MeshRound r{};
    r.n_row = random_count(rng);
    r.n_col = random_count(rng);
    r.n_world = random_count(rng);
    r.n_split = random_count(rng);
    r.row_root = std::uniform_int_distribution<int>(0, 3)(rng);
    r.col_root = std::uniform_int_distribution<int>(0, 3)(rng);
    r.split_mod = std::uniform_int_distribution<int>(1, 5)(rng);
    r.split_salt = std::uniform_int_distribution<int>(1, 6)(rng);
    r.split_root = std::uniform_int_distribution<int>(0, 100)(rng);
    rounds.push_back(r);
  }
  const auto split_color = [&rounds](int k) {
    return [&rounds, k](int id) {
      const MeshRound& r = rounds[static_cast<std::size_t>(k)];
      return (id * 5 + k) % r.split_mod == 0 && id % 7 == 3 ? -1 : (id * 5 + k) % r.split_mod;
    };
  };
  const auto split_key = [&rounds](int k) {
    return
        [&rounds, k](int id) { return (id * rounds[static_cast<std::size_t>(k)].split_salt) % 7; };
  };
  std::vector<std::vector<MeshOut>> out(rounds.size(), std::vector<MeshOut>(p));
  hc::Options opt = hctest::test_options();
  opt.meetings = meetings;
  INFO("meetings=" << meetings);
  const bool ran = run_ok(
      t,
      [&](Proc& vp) {
        const int me = vp.id();
        const auto i = static_cast<std::size_t>(me);
        for (int k = 0; k < count; ++k) {
          const MeshRound& r = rounds[static_cast<std::size_t>(k)];
          MeshOut& o = out[static_cast<std::size_t>(k)][i];
          Group row = vp.row();
          Group col = vp.column();
          Group world = vp.world();
          {
            const auto in = tagged_input(k, 0, me, r.n_row);
            std::vector<Int> res(r.n_row, kNoInt);
            hc::all_reduce(row, in, res, std::plus<>{});
            o.row_sum = std::move(res);
          }
          {
            auto buf = tagged_input(k, 1, me, r.n_row);
            hc::broadcast(row, buf, r.row_root);
            o.row_bcast = std::move(buf);
          }
          {
            const auto in = tagged_input(k, 2, me, r.n_col);
            std::vector<Int> res(r.n_col, kNoInt);
            hc::all_reduce(col, in, res, std::plus<>{});
            o.col_sum = std::move(res);
          }
          {
            std::vector<Mat> in(r.n_col);
            for (std::size_t e = 0; e < r.n_col; ++e) in[e] = round_mat(k, me, e);
            std::vector<Mat> res(col.rank() == r.col_root ? r.n_col : 0, kNoMat);
            hc::reduce(col, in, res, MatMul{}, r.col_root);
            o.col_reduce = std::move(res);
          }
          {
            const auto in = tagged_input(k, 3, me, r.n_world);
            std::vector<Int> res(r.n_world, kNoInt);
            hc::all_reduce(world, in, res, std::plus<>{});
            o.world_sum = std::move(res);
          }
          Group s = hc::split(world, split_color(k)(me), split_key(k)(me));
          o.split_rank = s.rank();
          if (s.size() > 0) {
            const auto in = tagged_input(k, 4, me, r.n_split);
            std::vector<Int> res(r.n_split, kNoInt);
            hc::scan(s, in, res, std::plus<>{});
            o.split_scan = std::move(res);
            auto buf = tagged_input(k, 5, me, r.n_split);
            hc::broadcast(s, buf, r.split_root % s.size());
            o.split_bcast = std::move(buf);
          }
        }
      },
      opt);
  if (!ran) return;
  for (int k = 0; k < count; ++k) {
    const MeshRound& r = rounds[static_cast<std::size_t>(k)];
    std::string error;
    for (std::size_t id = 0; id < p && error.empty(); ++id) {
      const int me = static_cast<int>(id);
      const MeshOut& o = out[static_cast<std::size_t>(k)][id];
      const std::string who = "round " + std::to_string(k) + " VP " + std::to_string(id) + " ";
      const Members rm = row_members(t, me), cm = column_members(t, me), wm = world_members(t);
      const Members sm = split_members(wm, me, split_color(k), split_key(k));
      std::vector<Int> want;
      for (std::size_t e = 0; e < r.n_row; ++e) want.push_back(tagged_sum(rm, 0, 4, k, 0, e));
      if (auto d = diff(o.row_sum, want); !d.empty()) error = who + "row all_reduce: " + d;
      want.clear();
      for (std::size_t e = 0; e < r.n_row; ++e)
        want.push_back(tagged(k, 1, rm[static_cast<std::size_t>(r.row_root)], e));
      if (auto d = diff(o.row_bcast, want); !d.empty() && error.empty())
        error = who + "row broadcast: " + d;
      want.clear();
      for (std::size_t e = 0; e < r.n_col; ++e) want.push_back(tagged_sum(cm, 0, 4, k, 2, e));
      if (auto d = diff(o.col_sum, want); !d.empty() && error.empty())
        error = who + "column all_reduce: " + d;
      std::vector<Mat> mwant;
      if (rank_in(cm, me) == r.col_root)
        for (std::size_t e = 0; e < r.n_col; ++e) {
          Mat acc = round_mat(k, cm[0], e);
          for (std::size_t q = 1; q < cm.size(); ++q) acc = MatMul{}(acc, round_mat(k, cm[q], e));
          mwant.push_back(acc);
        }
      if (auto d = diff(o.col_reduce, mwant); !d.empty() && error.empty())
        error = who + "column reduce (MatMul): " + d;
      want.clear();
      for (std::size_t e = 0; e < r.n_world; ++e)
        want.push_back(tagged_sum(wm, 0, static_cast<int>(p), k, 3, e));
      if (auto d = diff(o.world_sum, want); !d.empty() && error.empty())
        error = who + "world all_reduce: " + d;
      if (o.split_rank != rank_in(sm, me) && error.empty())
        error = who + "split rank " + std::to_string(o.split_rank) + ", expected " +
                std::to_string(rank_in(sm, me)) + " in " + show(sm);
      if (!sm.empty()) {
        const int sr = rank_in(sm, me);
        want.clear();
        for (std::size_t e = 0; e < r.n_split; ++e)
          want.push_back(tagged_sum(sm, 0, sr + 1, k, 4, e));
        if (auto d = diff(o.split_scan, want); !d.empty() && error.empty())
          error = who + "split scan in " + show(sm) + ": " + d;
        want.clear();
        const int root = r.split_root % static_cast<int>(sm.size());
        for (std::size_t e = 0; e < r.n_split; ++e)
          want.push_back(tagged(k, 5, sm[static_cast<std::size_t>(root)], e));
        if (auto d = diff(o.split_bcast, want); !d.empty() && error.empty())
          error = who + "split broadcast in " + show(sm) + ": " + d;
      }
    }
    CHECK_MESSAGE(error.empty(), error);
  }
}

struct CubeRound {
  unsigned mask1, mask2;
  std::size_t n1, n2, nw;
  int root;
};
struct CubeOut {
  std::vector<Mat> sub_reduce;
  std::vector<Int> sub_bcast, world_sum, sub_gather, split_scan;
};

void cube_rounds(int count) {
  const Topology t = Topology::hypercube(4);
  const auto p = static_cast<std::size_t>(t.size());
  std::mt19937 rng(777U);
  std::vector<CubeRound> rounds;
  for (int k = 0; k < count; ++k) {
    CubeRound r{};
    r.mask1 = std::uniform_int_distribution<unsigned>(1, 15)(rng);
    r.mask2 = std::uniform_int_distribution<unsigned>(0, 15)(rng);
    r.n1 = random_count(rng);
    r.n2 = random_count(rng);
    r.nw = random_count(rng);
    r.root = std::uniform_int_distribution<int>(0, 100)(rng);
    rounds.push_back(r);
  }
  std::vector<std::vector<CubeOut>> out(rounds.size(), std::vector<CubeOut>(p));
  const bool ran = run_ok(
      t,
      [&](Proc& vp) {
        const int me = vp.id();
        const auto i = static_cast<std::size_t>(me);
        for (int k = 0; k < count; ++k) {
          const CubeRound& r = rounds[static_cast<std::size_t>(k)];
          CubeOut& o = out[static_cast<std::size_t>(k)][i];
          Group s1 = vp.subcube(r.mask1);
          {
            std::vector<Mat> in(r.n1), res(r.n1, kNoMat);
            for (std::size_t e = 0; e < r.n1; ++e) in[e] = round_mat(k, me, e);
            hc::all_reduce(s1, in, res, MatMul{});
            o.sub_reduce = std::move(res);
          }
          {
            auto buf = tagged_input(k, 0, me, r.n1);
            hc::broadcast(s1, buf, r.root % s1.size());
            o.sub_bcast = std::move(buf);
          }
          {
            Group w = vp.world();
            const auto in = tagged_input(k, 1, me, r.nw);
            std::vector<Int> res(r.nw, kNoInt);
            hc::all_reduce(w, in, res, std::plus<>{});
            o.world_sum = std::move(res);
          }
          {
            Group s2 = vp.subcube(r.mask2);
            const auto in = tagged_input(k, 2, me, r.n2);
            std::vector<Int> res(r.n2 * static_cast<std::size_t>(s2.size()), kNoInt);
            hc::all_gather(s2, in, res);
            o.sub_gather = std::move(res);
          }
          {
            Group sp = hc::split(s1, s1.rank() % 2, -s1.rank());
            const auto in = tagged_input(k, 3, me, r.n2);
            std::vector<Int> res(r.n2, kNoInt);
            hc::scan(sp, in, res, std::plus<>{});
            o.split_scan = std::move(res);
          }
        }
      },
      hctest::test_options());
  if (!ran) return;
  for (int k = 0; k < count; ++k) {
    const CubeRound& r = rounds[static_cast<std::size_t>(k)];
    std::string error;
    for (std::size_t id = 0; id < p && error.empty(); ++id) {
      const int me = static_cast<int>(id);
      const CubeOut& o = out[static_cast<std::size_t>(k)][id];
      const std::string who = "round " + std::to_string(k) + " VP " + std::to_string(id) +
                              " mask1=" + std::to_string(r.mask1) +
                              " mask2=" + std::to_string(r.mask2) + " ";
      const Members m1 = subcube_members(me, r.mask1), m2 = subcube_members(me, r.mask2);
      std::vector<Mat> mwant;
      for (std::size_t e = 0; e < r.n1; ++e) {
        Mat acc = round_mat(k, m1[0], e);
        for (std::size_t q = 1; q < m1.size(); ++q) acc = MatMul{}(acc, round_mat(k, m1[q], e));
        mwant.push_back(acc);
      }
      if (auto d = diff(o.sub_reduce, mwant); !d.empty()) error = who + "subcube all_reduce: " + d;
      std::vector<Int> want;
      const int root = r.root % static_cast<int>(m1.size());
      for (std::size_t e = 0; e < r.n1; ++e)
        want.push_back(tagged(k, 0, m1[static_cast<std::size_t>(root)], e));
      if (auto d = diff(o.sub_bcast, want); !d.empty() && error.empty())
        error = who + "subcube broadcast: " + d;
      want.clear();
      for (std::size_t e = 0; e < r.nw; ++e)
        want.push_back(tagged_sum(world_members(t), 0, 16, k, 1, e));
      if (auto d = diff(o.world_sum, want); !d.empty() && error.empty())
        error = who + "world all_reduce: " + d;
      want.clear();
      for (int q : m2)
        for (std::size_t e = 0; e < r.n2; ++e) want.push_back(tagged(k, 2, q, e));
      if (auto d = diff(o.sub_gather, want); !d.empty() && error.empty())
        error = who + "subcube all_gather: " + d;
      const unsigned mask1 = r.mask1;
      const Members sm = split_members(
          m1, me,
          [mask1](int x) {
            return static_cast<int>(extract_bits(static_cast<unsigned>(x), mask1) % 2);
          },
          [mask1](int x) {
            return -static_cast<int>(extract_bits(static_cast<unsigned>(x), mask1));
          });
      want.clear();
      for (std::size_t e = 0; e < r.n2; ++e)
        want.push_back(tagged_sum(sm, 0, rank_in(sm, me) + 1, k, 3, e));
      if (auto d = diff(o.split_scan, want); !d.empty() && error.empty())
        error = who + "split-of-subcube scan in " + show(sm) + ": " + d;
    }
    CHECK_MESSAGE(error.empty(), error);
  }
}

}  // namespace

TEST_CASE("rows, columns, the world and split groups interleaved for 50 rounds" *
          doctest::timeout(300)) {
  mesh_rounds(true, hctest::kSanitized ? 10 : 50);
  mesh_rounds(false, hctest::kSanitized ? 5 : 20);  // every collective as messages
}

TEST_CASE("subcubes, the world and splits of subcubes interleaved for 50 rounds" *
          doctest::timeout(300)) {
  cube_rounds(hctest::kSanitized ? 10 : 50);
}

// =================================================================================================
// 5. Group point-to-point
// =================================================================================================

TEST_CASE("group point-to-point: shifts along rows, exchanges, column pairs") {
  for (const char* name : {"mesh:4x4", "mesh:3x5", "mesh:2x3"}) {
    const Topology t = Topology::parse(name);
    const auto p = static_cast<std::size_t>(t.size());
    INFO(std::string(name));
    struct Got {
      std::vector<Int> shifted, exchanged, col_got, col_reply;
    };
    std::vector<Got> got(p);
    REQUIRE(run_ok(
        t,
        [&](Proc& vp) {
          const int me = vp.id();
          Got& o = got[static_cast<std::size_t>(me)];
          Group row = vp.row();
          const int n = row.size(), r = row.rank();
          // Ring shift by one along the row: send right, receive from the left.
          const std::vector<Int> msg{me, r, 42};
          row.send((r + 1) % n, msg);
          o.shifted.assign(3, kNoInt);
          row.recv((r - 1 + n) % n, o.shifted);
          // Pairwise exchange with rank r ^ 1.
          const int partner = r ^ 1;
          if (partner < n) {
            const std::vector<Int> out{me, r, 7, 8};
            o.exchanged.assign(4, kNoInt);
            row.sendrecv(partner, out, o.exchanged);
          }
          // Ranks 0 and 1 of every column: a message and its reply.
          Group col = vp.column();
          if (col.rank() == 0) {
            col.send(1, std::vector<Int>{me, 100});
            o.col_reply.assign(2, kNoInt);
            col.recv(1, o.col_reply);
          } else if (col.rank() == 1) {
            o.col_got.assign(2, kNoInt);
            col.recv(0, o.col_got);
            col.send(0, std::vector<Int>{me, 200});
          }
        },
        hctest::test_options()));
    for (std::size_t id = 0; id < p; ++id) {
      const int me = static_cast<int>(id);
      INFO("VP " << id);
      const Members rm = row_members(t, me), cm = column_members(t, me);
      const int n = static_cast<int>(rm.size()), r = rank_in(rm, me);
      const int left = (r - 1 + n) % n;
      CHECK(got[id].shifted == std::vector<Int>{rm[static_cast<std::size_t>(left)], left, 42});
      const int partner = r ^ 1;
      if (partner < n)
        CHECK(got[id].exchanged ==
              std::vector<Int>{rm[static_cast<std::size_t>(partner)], partner, 7, 8});
      const int cr = rank_in(cm, me);
      if (cr == 0) CHECK(got[id].col_reply == std::vector<Int>{cm[1], 200});
      if (cr == 1) CHECK(got[id].col_got == std::vector<Int>{cm[0], 100});
    }
  }
}

TEST_CASE("group point-to-point on subcubes and split groups") {
  const Topology t = Topology::hypercube(4);
  const unsigned mask = 0b0110;
  const IdFunction color = [](int id) { return id % 3 == 2 ? -1 : id % 2; };
  const IdFunction key = [](int id) { return -id; };
  struct Got {
    std::vector<Int> dim0, dim1, shifted;
  };
  std::vector<Got> got(16);
  REQUIRE(run_ok(
      t,
      [&](Proc& vp) {
        const int me = vp.id();
        Got& o = got[static_cast<std::size_t>(me)];
        Group s = vp.subcube(mask);
        const std::vector<Int> out{me, s.rank()};
        o.dim0.assign(2, kNoInt);
        s.sendrecv(s.rank() ^ 1, out, o.dim0);  // machine partner: id ^ 0b0010
        o.dim1.assign(2, kNoInt);
        s.sendrecv(s.rank() ^ 2, out, o.dim1);  // machine partner: id ^ 0b0100
        Group w = vp.world();
        Group sp = hc::split(w, color(me), key(me));
        if (sp.size() > 1) {
          const int n = sp.size(), r = sp.rank();
          sp.send((r + 1) % n, std::vector<Int>{me, r});
          o.shifted.assign(2, kNoInt);
          sp.recv((r - 1 + n) % n, o.shifted);
        }
      },
      hctest::test_options()));
  for (int id = 0; id < 16; ++id) {
    INFO("VP " << id);
    const Got& o = got[static_cast<std::size_t>(id)];
    const auto u = static_cast<unsigned>(id);
    CHECK(o.dim0 == std::vector<Int>{static_cast<Int>(u ^ 0b0010U),
                                     static_cast<Int>(extract_bits(u ^ 0b0010U, mask))});
    CHECK(o.dim1 == std::vector<Int>{static_cast<Int>(u ^ 0b0100U),
                                     static_cast<Int>(extract_bits(u ^ 0b0100U, mask))});
    const Members sm = split_members(world_members(t), id, color, key);
    if (sm.size() > 1) {
      const int n = static_cast<int>(sm.size()), r = rank_in(sm, id), left = (r - 1 + n) % n;
      CHECK(o.shifted == std::vector<Int>{sm[static_cast<std::size_t>(left)], left});
    }
  }
}

// =================================================================================================
// 6. split
// =================================================================================================

TEST_CASE("split: nested splits, ranks by (key, parent rank)") {
  const Topology t = Topology::mesh(4, 4);
  const auto p = static_cast<std::size_t>(t.size());
  // Level 1: even and odd ids, reversed. Level 2: by g1 rank / 3, keys g1 rank % 2 (ties).
  const IdFunction c1 = [](int id) { return id % 2; };
  const IdFunction k1 = [](int id) { return -id; };
  const auto g1_of = [&](int id) { return split_members(world_members(t), id, c1, k1); };
  const IdFunction c2 = [&](int id) { return rank_in(g1_of(id), id) / 3; };
  const IdFunction k2 = [&](int id) { return rank_in(g1_of(id), id) % 2; };
  struct Got {
    int r1 = -2, r2 = -2, n2 = -2;
    Members m2;
    std::optional<Topology> t2;
    std::vector<Int> ids;
    Mat fold = kNoMat;
    Int scan1 = kNoInt;
  };
  std::vector<Got> got(p);
  REQUIRE(run_ok(
      t,
      [&](Proc& vp) {
        const int me = vp.id();
        Got& o = got[static_cast<std::size_t>(me)];
        Group w = vp.world();
        Group g1 = hc::split(w, me % 2, -me);
        Group g2 = hc::split(g1, g1.rank() / 3, g1.rank() % 2);
        o.r1 = g1.rank();
        o.r2 = g2.rank();
        o.n2 = g2.size();
        for (int k = 0; k < g2.size(); ++k) o.m2.push_back(g2.vp(k));
        o.t2 = g2.topology();
        o.ids = hc::all_gather(g2, static_cast<Int>(me));
        o.fold = hc::all_reduce(g2, hctest::mat_of(me, 9), MatMul{});
        o.scan1 = hc::scan(g1, value(me, 0), std::plus<>{});
      },
      hctest::test_options()));
  for (std::size_t id = 0; id < p; ++id) {
    const int me = static_cast<int>(id);
    const Members m1 = g1_of(me);
    const Members m2 = split_members(m1, me, c2, k2);
    INFO("VP " << id << " g1 " << show(m1) << " g2 " << show(m2));
    const Got& o = got[id];
    CHECK(o.r1 == rank_in(m1, me));
    CHECK(o.r2 == rank_in(m2, me));
    CHECK(o.n2 == static_cast<int>(m2.size()));
    CHECK(o.m2 == m2);
    REQUIRE(o.t2.has_value());
    CHECK(*o.t2 == Topology::ring(static_cast<int>(m2.size())));
    CHECK(o.ids == std::vector<Int>(m2.begin(), m2.end()));
    CHECK(o.fold == fold<Mat>(m2, 0, static_cast<int>(m2.size()), 9));
    CHECK(o.scan1 == fold<Int>(m1, 0, rank_in(m1, me) + 1, 0));
  }
  // Spelled out for VP 0: g1 (even ids, reversed) = [14 12 10 8 6 4 2 0], VP 0 has g1 rank 7;
  // g2 color 7/3 = 2: g1 ranks 6, 7 (ids 2, 0), keys 0, 1 -> [2 0].
  CHECK(got[0].m2 == Members{2, 0});
  // VP 14: g1 rank 0, color 0: g1 ranks 0, 1, 2 (ids 14, 12, 10), keys 0, 1, 0 -> [14 10 12].
  CHECK(got[14].m2 == Members{14, 10, 12});
}

TEST_CASE("split: key ties are broken by rank in the parent, not by machine id") {
  const Topology t = Topology::mesh(2, 3);
  std::vector<Members> members(6);
  std::vector<Int> bcast(6, kNoInt);
  REQUIRE(run_ok(
      t,
      [&](Proc& vp) {
        const int me = vp.id();
        Group w = vp.world();
        Group rev = hc::split(w, 0, -me);  // parent ranks: id 5 -> 0, ..., id 0 -> 5
        Group g = hc::split(rev, 0, me % 3);
        Members& m = members[static_cast<std::size_t>(me)];
        for (int k = 0; k < g.size(); ++k) m.push_back(g.vp(k));
        bcast[static_cast<std::size_t>(me)] = hc::broadcast(g, value(me, 0), 1);
      },
      hctest::test_options()));
  // keys: id 0,3 -> 0; 1,4 -> 1; 2,5 -> 2; ties by parent rank (descending id).
  const Members want{3, 0, 4, 1, 5, 2};
  for (std::size_t id = 0; id < 6; ++id) {
    INFO("VP " << id << " sees " << show(members[id]));
    CHECK(members[id] == want);
    CHECK(bcast[id] == value(0, 0));  // rank 1 is VP 0
  }
}

TEST_CASE("split of a row, and colors with one member") {
  const Topology t = Topology::mesh(4, 4);
  const auto p = static_cast<std::size_t>(t.size());
  struct Got {
    Members pairs, trio, alone;
    int trio_rank = -2, alone_rank = -2;
    std::optional<Topology> alone_topology;
    std::vector<Int> pair_ids;
    Int alone_sum = kNoInt, alone_bcast = kNoInt;
    std::vector<Int> alone_shift, alone_a2a, alone_ex;
  };
  std::vector<Got> got(p);
  REQUIRE(run_ok(
      t,
      [&](Proc& vp) {
        const int me = vp.id();
        Got& o = got[static_cast<std::size_t>(me)];
        Group row = vp.row();
        // Columns of equal parity within the row, higher column first.
        Group pairs = hc::split(row, row.rank() % 2, -row.rank());
        for (int k = 0; k < pairs.size(); ++k) o.pairs.push_back(pairs.vp(k));
        o.pair_ids = hc::all_gather(pairs, static_cast<Int>(me));
        // Rank 0 of the row left out.
        Group trio = hc::split(row, row.rank() == 0 ? -1 : 7, 0);
        o.trio_rank = trio.rank();
        for (int k = 0; k < trio.size(); ++k) o.trio.push_back(trio.vp(k));
        if (trio.size() > 0) hc::barrier(trio);
        // Every VP its own color.
        Group w = vp.world();
        Group alone = hc::split(w, me, 0);
        o.alone_rank = alone.rank();
        o.alone_topology = alone.topology();
        for (int k = 0; k < alone.size(); ++k) o.alone.push_back(alone.vp(k));
        o.alone_sum = hc::all_reduce(alone, value(me, 0), std::plus<>{});
        o.alone_bcast = hc::broadcast(alone, value(me, 1), 0);
        const auto in = input<Int>(me, 3);
        o.alone_shift.assign(3, kNoInt);
        hc::circular_shift(alone, in, o.alone_shift, 1);
        o.alone_a2a.assign(3, kNoInt);
        hc::all_to_all(alone, in, o.alone_a2a);
        o.alone_ex.assign(3, kNoInt);
        hc::exscan(alone, in, o.alone_ex, std::plus<>{});  // untouched at rank 0
        hc::barrier(alone);
      },
      hctest::test_options()));
  for (std::size_t id = 0; id < p; ++id) {
    const int me = static_cast<int>(id);
    INFO("VP " << id);
    const Got& o = got[id];
    const Members rm = row_members(t, me);
    const int c = rank_in(rm, me);
    const Members pairs = c % 2 == 0 ? Members{rm[2], rm[0]} : Members{rm[3], rm[1]};
    CHECK(o.pairs == pairs);
    CHECK(o.pair_ids == std::vector<Int>(pairs.begin(), pairs.end()));
    if (c == 0) {
      CHECK(o.trio_rank == -1);
      CHECK(o.trio.empty());
    } else {
      CHECK(o.trio_rank == c - 1);
      CHECK(o.trio == Members{rm[1], rm[2], rm[3]});
    }
    CHECK(o.alone_rank == 0);
    CHECK(o.alone == Members{me});
    REQUIRE(o.alone_topology.has_value());
    CHECK(*o.alone_topology == Topology::ring(1));
    CHECK(o.alone_sum == value(me, 0));
    CHECK(o.alone_bcast == value(me, 1));
    CHECK(o.alone_shift == input<Int>(me, 3));
    CHECK(o.alone_a2a == input<Int>(me, 3));
    CHECK(o.alone_ex == std::vector<Int>(3, kNoInt));
  }
}

TEST_CASE("split costs model time; a split group's members get their own clocks") {
  for (const char* name : {"mesh:2x2", "ring:2", "hypercube:3"}) {
    INFO(std::string(name));
    hc::Options opt = hctest::test_options();
    opt.model = {.ts = 1.0, .tw = 0.0, .th = 0.0};
    hc::Report r;
    REQUIRE(run_ok(
        Topology::parse(name),
        [](Proc& vp) {
          Group w = vp.world();
          Group s = hc::split(w, vp.id() % 2, vp.id());
          (void)s;
        },
        opt, &r));
    CHECK(r.model_time > 0);
  }
  {  // A split group's collective starts from its members' own clocks (after the split).
    hc::Options opt = hctest::test_options();
    opt.model = {.ts = 1.0, .tw = 0.0, .th = 0.0};
    std::vector<double> after_split(4, -1), after_barrier(4, -1);
    REQUIRE(run_ok(
        Topology::mesh(2, 2),
        [&](Proc& vp) {
          Group w = vp.world();
          Group s = hc::split(w, vp.id() % 2, vp.id());
          after_split[static_cast<std::size_t>(vp.id())] = vp.clock();
          hc::barrier(s);
          after_barrier[static_cast<std::size_t>(vp.id())] = vp.clock();
        },
        opt));
    for (std::size_t id = 0; id < 4; ++id) {
      INFO("VP " << id);
      CHECK(after_split[id] > 0);
      CHECK(after_barrier[id] > after_split[id]);  // a barrier of 2 sends a message
    }
  }
}

// =================================================================================================
// 7. Errors
// =================================================================================================

TEST_CASE("errors: row, column and subcube on the wrong topology or mask") {
  const hc::Options opt = quick_options();
  const auto row = [](Proc& vp) { (void)vp.row(); };
  const auto column = [](Proc& vp) { (void)vp.column(); };
  const auto subcube = [](unsigned mask) { return [mask](Proc& vp) { (void)vp.subcube(mask); }; };
  CHECK_THROWS_AS(hc::run(Topology::ring(4), row, opt), hc::TopologyError);
  CHECK_THROWS_AS(hc::run(Topology::ring(4), column, opt), hc::TopologyError);
  CHECK_THROWS_AS(hc::run(Topology::hypercube(2), row, opt), hc::TopologyError);
  CHECK_THROWS_AS(hc::run(Topology::hypercube(2), column, opt), hc::TopologyError);
  CHECK_THROWS_AS(hc::run(Topology::ring(4), subcube(1), opt), hc::TopologyError);
  CHECK_THROWS_AS(hc::run(Topology::ring(4), subcube(0), opt), hc::TopologyError);
  CHECK_THROWS_AS(hc::run(Topology::mesh(2, 2), subcube(1), opt), hc::TopologyError);
  CHECK_THROWS_AS(hc::run(Topology::mesh(2, 2), subcube(0), opt), hc::TopologyError);
  // Mask bits at or above d.
  CHECK_THROWS_AS(hc::run(Topology::hypercube(2), subcube(0b100), opt), hc::TopologyError);
  CHECK_THROWS_AS(hc::run(Topology::hypercube(4), subcube(0b10000), opt), hc::TopologyError);
  CHECK_THROWS_AS(hc::run(Topology::hypercube(4), subcube(0b10001), opt), hc::TopologyError);
  CHECK_THROWS_AS(hc::run(Topology::hypercube(0), subcube(1), opt), hc::TopologyError);
  CHECK_THROWS_AS(hc::run(Topology::hypercube(3), subcube(0x80000000U), opt), hc::TopologyError);
  // The valid ones do not throw.
  CHECK_NOTHROW(hc::run(Topology::hypercube(0), subcube(0), opt));
  CHECK_NOTHROW(hc::run(Topology::hypercube(2), subcube(0b11), opt));
  CHECK_NOTHROW(hc::run(Topology::mesh(1, 1), row, opt));
  CHECK_NOTHROW(hc::run(Topology::mesh(1, 1), column, opt));
}

TEST_CASE("errors: a forced algorithm that cannot run on the group's topology") {
  const hc::Options opt = quick_options();
  const auto on_rows = [](auto call) {
    return [call](Proc& vp) {
      Group g = vp.row();
      call(g);
    };
  };
  const auto bcast = [](Algo a) {
    return [a](Group& g) {
      std::vector<Int> buf(4, 1);
      hc::broadcast(g, buf, 0, a);
    };
  };
  const auto gather_all = [](Algo a) {
    return [a](Group& g) {
      std::vector<Int> in(2, 1), out(2 * static_cast<std::size_t>(g.size()));
      hc::all_gather(g, in, out, a);
    };
  };
  const auto a2a = [](Algo a) {
    return [a](Group& g) {
      std::vector<Int> in(2 * static_cast<std::size_t>(g.size()), 1), out(in.size());
      hc::all_to_all(g, in, out, a);
    };
  };
  const auto allred = [](Algo a) {
    return [a](Group& g) {
      std::vector<Int> in(4, 1), out(4);
      hc::all_reduce(g, in, out, std::plus<>{}, a);
    };
  };
  const Topology m23 = Topology::mesh(2, 3);  // rows ring(3), columns ring(2)
  CHECK_THROWS_AS(hc::run(m23, on_rows(bcast(Algo::hypercube)), opt), hc::AlgorithmError);
  CHECK_THROWS_AS(hc::run(m23, on_rows(bcast(Algo::esbt)), opt), hc::AlgorithmError);
  CHECK_THROWS_AS(hc::run(m23, on_rows(bcast(Algo::mesh)), opt), hc::AlgorithmError);
  CHECK_THROWS_AS(hc::run(m23, on_rows(gather_all(Algo::hypercube)), opt), hc::AlgorithmError);
  CHECK_THROWS_AS(hc::run(m23, on_rows(gather_all(Algo::two_phase)), opt), hc::AlgorithmError);
  CHECK_THROWS_AS(hc::run(m23, on_rows(a2a(Algo::dimension_exchange)), opt), hc::AlgorithmError);
  CHECK_THROWS_AS(hc::run(m23, on_rows(allred(Algo::mesh)), opt), hc::AlgorithmError);
  // A mesh algorithm on a subcube of d = 1 (a hypercube too small for the Gray-code mesh), and
  // on a 4x4 mesh's rows.
  CHECK_THROWS_AS(hc::run(
                      Topology::hypercube(3),
                      [&](Proc& vp) {
                        Group g = vp.subcube(0b010);
                        bcast(Algo::mesh)(g);
                      },
                      opt),
                  hc::AlgorithmError);
  CHECK_THROWS_AS(hc::run(Topology::mesh(4, 4), on_rows(allred(Algo::mesh)), opt),
                  hc::AlgorithmError);
  // A hypercube algorithm on a split group of 3.
  CHECK_THROWS_AS(hc::run(
                      Topology::ring(6),
                      [&](Proc& vp) {
                        Group w = vp.world();
                        Group g = hc::split(w, vp.id() % 2, vp.id());
                        gather_all(Algo::hypercube)(g);
                      },
                      opt),
                  hc::AlgorithmError);
}

TEST_CASE("errors: group point-to-point to a rank outside [0, size) or to itself") {
  const hc::Options opt = quick_options();
  const Topology t = Topology::mesh(2, 3);  // rows of 3
  const auto on_row = [](auto action) {
    return [action](Proc& vp) {
      Group g = vp.row();
      action(g);
    };
  };
  const std::vector<Int> v{1, 2};
  CHECK_THROWS_AS(hc::run(t, on_row([&](Group& g) { g.send(-1, v); }), opt), hc::LinkError);
  CHECK_THROWS_AS(hc::run(t, on_row([&](Group& g) { g.send(3, v); }), opt), hc::LinkError);
  CHECK_THROWS_AS(hc::run(t, on_row([&](Group& g) { g.send(g.rank(), v); }), opt), hc::LinkError);
  CHECK_THROWS_AS(hc::run(t, on_row([&](Group& g) {
                            std::vector<Int> buf(2);
                            g.recv(3, buf);
                          }),
                          opt),
                  hc::LinkError);
  CHECK_THROWS_AS(hc::run(t, on_row([&](Group& g) {
                            std::vector<Int> buf(2);
                            g.recv(-1, buf);
                          }),
                          opt),
                  hc::LinkError);
  CHECK_THROWS_AS(hc::run(t, on_row([&](Group& g) {
                            std::vector<Int> buf(2);
                            g.recv(g.rank(), buf);
                          }),
                          opt),
                  hc::LinkError);
  CHECK_THROWS_AS(hc::run(t, on_row([&](Group& g) {
                            std::vector<Int> buf(2);
                            g.sendrecv(g.rank(), v, buf);
                          }),
                          opt),
                  hc::LinkError);
  CHECK_THROWS_AS(hc::run(t, on_row([&](Group& g) {
                            std::vector<Int> buf(2);
                            g.sendrecv(g.size(), v, buf);
                          }),
                          opt),
                  hc::LinkError);
  // A machine id that is valid but not a rank of this group (rows of 3 on 6 VPs).
  CHECK_THROWS_AS(hc::run(t, on_row([&](Group& g) { g.send(4, v); }), opt), hc::LinkError);
  // A split group of 3 and a subcube of 2.
  CHECK_THROWS_AS(hc::run(
                      Topology::ring(6),
                      [&](Proc& vp) {
                        Group w = vp.world();
                        Group g = hc::split(w, vp.id() % 2, 0);
                        g.send(3, v);
                      },
                      opt),
                  hc::LinkError);
  CHECK_THROWS_AS(hc::run(
                      Topology::hypercube(3),
                      [&](Proc& vp) {
                        Group g = vp.subcube(0b100);
                        g.send(g.rank(), v);
                      },
                      opt),
                  hc::LinkError);
}

namespace {

// Runs body, which must fail; returns (threw CollectiveMismatch, the message).
std::pair<bool, std::string> expect_failure(const Topology& t,
                                            const std::function<void(Proc&)>& body) {
  const auto start = std::chrono::steady_clock::now();
  bool threw = false, mismatch = false;
  std::string what;
  try {
    hc::run(t, body, quick_options());
  } catch (const hc::CollectiveMismatch& e) {
    threw = mismatch = true;
    what = e.what();
  } catch (const hc::Error& e) {
    threw = true;
    what = e.what();
  } catch (const std::exception& e) {
    FAIL_CHECK("run threw something that is not a hypercomm::Error: " << std::string(e.what()));
    return {false, e.what()};
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK_MESSAGE(threw, "run returned normally");
  CHECK_MESSAGE(seconds < 30, "took " << seconds << " s");
  return {mismatch, what};
}

}  // namespace

TEST_CASE("errors: a mismatch inside one row is reported, never a hang") {
  const Topology t = Topology::mesh(4, 4);
  {  // In row 1, VP (1,0) broadcasts while the rest of its row reduces; the other rows agree.
    const auto failure = expect_failure(t, [](Proc& vp) {
      Group row = vp.row();
      std::vector<Int> buf(8, vp.id());
      if (vp.id() / 4 == 1 && vp.id() != 4) {
        std::vector<Int> out;  // non-roots: may be empty
        hc::reduce(row, buf, out, std::plus<>{}, 0);
      } else {
        hc::broadcast(row, buf, 0);
      }
    });
    // Not bound: Clang before 16 cannot capture a structured binding.
    const bool mismatch = failure.first;
    const std::string& what = failure.second;
    INFO("run threw: " << what);
    WARN_MESSAGE(mismatch,
                 "not CollectiveMismatch (API.md: CollectiveMismatch on at least one "
                 "VP, and run rethrows the first original exception)");
    // API.md: "a mismatch inside one group is reported as such", "Errors name the group".
    if (mismatch)
      CHECK_MESSAGE(what.find("row 1 of mesh:4x4") != std::string::npos,
                    "the CollectiveMismatch does not name the group \"row 1 of mesh:4x4\"");
  }
  {  // In row 2, VP (2,3) names a different root.
    const auto failure = expect_failure(t, [](Proc& vp) {
      Group row = vp.row();
      std::vector<Int> buf(8, vp.id());
      hc::broadcast(row, buf, vp.id() == 11 ? 1 : 0);
    });
    // Not bound: Clang before 16 cannot capture a structured binding.
    const bool mismatch = failure.first;
    const std::string& what = failure.second;
    INFO("run threw: " << what);
    WARN_MESSAGE(mismatch, "not CollectiveMismatch");
    if (mismatch)
      CHECK_MESSAGE(what.find("row 2 of mesh:4x4") != std::string::npos,
                    "the CollectiveMismatch does not name the group \"row 2 of mesh:4x4\"");
  }
  {  // In one subcube, counts disagree.
    const auto failure = expect_failure(Topology::hypercube(3), [](Proc& vp) {
      Group s = vp.subcube(0b011);
      std::vector<Int> in(vp.id() == 5 ? 3 : 2, 1), out(in.size());
      hc::all_reduce(s, in, out, std::plus<>{});
    });
    // Not bound: Clang before 16 cannot capture a structured binding.
    const bool mismatch = failure.first;
    const std::string& what = failure.second;
    INFO("run threw: " << what);
    WARN_MESSAGE(mismatch, "not CollectiveMismatch");
    if (mismatch)
      CHECK_MESSAGE(what.find("subcube 0b") != std::string::npos,
                    "the CollectiveMismatch does not name the subcube");
  }
  {  // In split color 2 (ids 2, 5 of ring:6, split by id % 3), the algorithms disagree.
    const auto failure = expect_failure(Topology::ring(6), [](Proc& vp) {
      Group w = vp.world();
      Group s = hc::split(w, vp.id() % 3, vp.id());
      std::vector<Int> in(4, 1), out(8);
      hc::all_gather(s, in, out, vp.id() == 5 ? Algo::hypercube : Algo::ring);
    });
    // Not bound: Clang before 16 cannot capture a structured binding.
    const bool mismatch = failure.first;
    const std::string& what = failure.second;
    INFO("run threw: " << what);
    WARN_MESSAGE(mismatch, "not CollectiveMismatch");
    if (mismatch)
      CHECK_MESSAGE(what.find("split color 2") != std::string::npos,
                    "the CollectiveMismatch does not name the group \"split color 2\"");
  }
}

TEST_CASE("a subcube is named by the VP whose call is described, as API.md's example does") {
  // VP 3's subcube 0b0101 of hypercube:4 is {2, 3, 6, 7}: "subcube 0b0101 of VP 3 of
  // hypercube:4" for VP 3's call, "... of VP 6 ..." for VP 6's, never by a VP outside it. The
  // reporter names its own call's group by itself; VP 3's call (the odd one out) by VP 3, so
  // whichever member reports, the message carries API.md's example name.
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<std::string> caught(16);
    std::string rethrown;
    try {
      hc::run(
          Topology::hypercube(4),
          [&](Proc& vp) {
            try {
              Group s = vp.subcube(0b0101);
              std::vector<Int> buf(vp.id() == 3 ? 4 : 3, 1);
              hc::broadcast(s, buf, 0);
            } catch (const hc::CollectiveMismatch& e) {
              caught[static_cast<std::size_t>(vp.id())] = e.what();
              throw;
            }
          },
          quick_options());
    } catch (const hc::Error& e) {
      rethrown = e.what();
    }
    INFO("run rethrew: " << rethrown);
    CHECK(rethrown.find("subcube 0b0101 of VP 3 of hypercube:4") != std::string::npos);
    int named = 0;
    for (int id = 0; id < 16; ++id) {
      const std::string& what = caught[static_cast<std::size_t>(id)];
      if (what.find("subcube 0b0101 of VP") == std::string::npos) continue;
      ++named;
      INFO("VP " << id << " caught: " << what);
      CHECK(what.find("on subcube 0b0101 of VP " + std::to_string(id) + " of hypercube:4") !=
            std::string::npos);
      CHECK(what.find("subcube 0b0101 of VP 3 of hypercube:4") != std::string::npos);
      for (std::size_t at = what.find("subcube 0b0101 of VP "); at != std::string::npos;
           at = what.find("subcube 0b0101 of VP ", at + 1)) {
        const int k = std::stoi(what.substr(at + 21));
        CHECK((k == 2 || k == 3 || k == 6 || k == 7));
      }
    }
    CHECK(named >= 1);
  }
}

// =================================================================================================
// Links::strict: a group's collectives may use machine neighbours only
// =================================================================================================

TEST_CASE("groups under Links::strict") {
  hc::Options opt = hctest::test_options();
  opt.links = hc::Links::strict;
  hc::Options failing = quick_options();
  failing.links = hc::Links::strict;
  {  // Rows of a torus are rings of neighbours: ring and automatic run, hypercube does not.
    const Topology t = Topology::mesh(4, 4);
    std::vector<std::vector<Int>> ring_out(16), auto_out(16);
    REQUIRE(run_ok(
        t,
        [&](Proc& vp) {
          Group row = vp.row();
          const auto in = input<Int>(vp.id(), 3);
          std::vector<Int> a(12), b(3);
          hc::all_gather(row, in, a, Algo::ring);
          hc::all_reduce(row, in, b, std::plus<>{});
          ring_out[static_cast<std::size_t>(vp.id())] = a;
          auto_out[static_cast<std::size_t>(vp.id())] = b;
        },
        opt));
    for (int id = 0; id < 16; ++id) {
      INFO("VP " << id);
      const Members m = row_members(t, id);
      std::vector<Int> want;
      for (int q : m)
        for (std::size_t i = 0; i < 3; ++i) want.push_back(value(q, i));
      CHECK(ring_out[static_cast<std::size_t>(id)] == want);
      want.clear();
      for (std::size_t i = 0; i < 3; ++i) want.push_back(fold<Int>(m, 0, 4, i));
      CHECK(auto_out[static_cast<std::size_t>(id)] == want);
    }
    // Rank r ^ 2 is two links away along a row of 4.
    CHECK_THROWS_AS(hc::run(
                        t,
                        [](Proc& vp) {
                          Group row = vp.row();
                          std::vector<Int> buf(3, 1);
                          hc::broadcast(row, buf, 0, Algo::hypercube);
                        },
                        failing),
                    hc::AlgorithmError);
    // Group point-to-point between non-neighbours.
    CHECK_THROWS_AS(hc::run(
                        t,
                        [](Proc& vp) {
                          Group row = vp.row();
                          if (row.rank() == 0) row.send(2, std::vector<Int>{1});
                          if (row.rank() == 2) {
                            std::vector<Int> in(1);
                            row.recv(0, in);
                          }
                        },
                        failing),
                    hc::LinkError);
  }
  {  // Subcube members differ in one bit per dimension: the hypercube algorithms run.
    const Topology t = Topology::hypercube(4);
    std::vector<std::vector<Int>> gathered(16);
    std::vector<Mat> folded(16, kNoMat);
    REQUIRE(run_ok(
        t,
        [&](Proc& vp) {
          Group s = vp.subcube(0b1101);
          const auto in = input<Int>(vp.id(), 2);
          std::vector<Int> out(16);
          hc::all_gather(s, in, out, Algo::hypercube);
          gathered[static_cast<std::size_t>(vp.id())] = out;
          const std::vector<Mat> m{hctest::mat_of(vp.id(), 0)};
          std::vector<Mat> r(1);
          hc::all_reduce(s, m, r, MatMul{}, Algo::hypercube);
          folded[static_cast<std::size_t>(vp.id())] = r[0];
        },
        opt));
    for (int id = 0; id < 16; ++id) {
      INFO("VP " << id);
      const Members m = subcube_members(id, 0b1101);
      std::vector<Int> want;
      for (int q : m)
        for (std::size_t i = 0; i < 2; ++i) want.push_back(value(q, i));
      CHECK(gathered[static_cast<std::size_t>(id)] == want);
      CHECK(folded[static_cast<std::size_t>(id)] == fold<Mat>(m, 0, 8, 0));
    }
  }
  {  // A split group that is the machine's own ring: every ring message is between neighbours.
    const Topology t = Topology::ring(8);
    std::vector<std::vector<Int>> gathered(8);
    REQUIRE(run_ok(
        t,
        [&](Proc& vp) {
          Group w = vp.world();
          Group s = hc::split(w, 0, vp.id());
          const auto in = input<Int>(vp.id(), 2);
          std::vector<Int> out(16);
          hc::all_gather(s, in, out, Algo::ring);
          gathered[static_cast<std::size_t>(vp.id())] = out;
        },
        opt));
    std::vector<Int> want;
    for (int q = 0; q < 8; ++q)
      for (std::size_t i = 0; i < 2; ++i) want.push_back(value(q, i));
    for (int id = 0; id < 8; ++id) CHECK(gathered[static_cast<std::size_t>(id)] == want);
  }
  {  // A split group that is a path of machine neighbours, its last and first members not
     // neighbours (ids 2..7 of ring:8; the whole of linear:5): the linear array's algorithms
     // run, which never send between them, with non-commutative folds in rank order.
    for (const Topology& t : {Topology::ring(8), Topology::linear(5)}) {
      const int first = t.kind() == Topology::Kind::ring ? 2 : 0;
      const int n = t.size() - first;
      Members m;
      for (int q = first; q < t.size(); ++q) m.push_back(q);
      std::vector<std::vector<Int>> gathered(static_cast<std::size_t>(t.size()));
      std::vector<Mat> scanned(static_cast<std::size_t>(t.size()), kNoMat);
      std::vector<Mat> folded(static_cast<std::size_t>(t.size()), kNoMat);
      REQUIRE(run_ok(
          t,
          [&](Proc& vp) {
            Group s = hc::split(vp.world(), vp.id() >= first ? 0 : -1, vp.id());
            if (s.size() == 0) return;
            const auto in = input<Int>(vp.id(), 2);
            std::vector<Int> out(static_cast<std::size_t>(2 * n));
            hc::all_gather(s, in, out);
            gathered[static_cast<std::size_t>(vp.id())] = out;
            const std::vector<Mat> mine{hctest::mat_of(vp.id(), 0)};
            std::vector<Mat> r(1);
            hc::scan(s, mine, r, MatMul{});
            scanned[static_cast<std::size_t>(vp.id())] = r[0];
            hc::all_reduce(s, mine, r, MatMul{});
            folded[static_cast<std::size_t>(vp.id())] = r[0];
            hc::barrier(s);
          },
          opt));
      std::vector<Int> want;
      for (int q : m)
        for (std::size_t i = 0; i < 2; ++i) want.push_back(value(q, i));
      for (int r = 0; r < n; ++r) {
        const auto id = static_cast<std::size_t>(m[static_cast<std::size_t>(r)]);
        INFO(t.name() << " VP " << id);
        CHECK(gathered[id] == want);
        CHECK(scanned[id] == fold<Mat>(m, 0, r + 1, 0));
        CHECK(folded[id] == fold<Mat>(m, 0, n, 0));
      }
    }
    // The ring's own algorithm needs the wrap link there.
    CHECK_THROWS_AS(hc::run(
                        Topology::linear(5),
                        [](Proc& vp) {
                          Group s = hc::split(vp.world(), 0, vp.id());
                          std::vector<Int> in(2, 1), out(10);
                          hc::all_gather(s, in, out, Algo::hypercube);
                        },
                        failing),
                    hc::AlgorithmError);
  }
  // A split group whose ring neighbours are not machine neighbours (API.md: under
  // Links::strict its collectives throw AlgorithmError unless every message is between machine
  // neighbours): even ids of hypercube:3, 2 -> 4 is two links.
  CHECK_THROWS_AS(hc::run(
                      Topology::hypercube(3),
                      [](Proc& vp) {
                        Group w = vp.world();
                        Group s = hc::split(w, vp.id() % 2, vp.id());
                        std::vector<Int> in(2, 1), out(8);
                        hc::all_gather(s, in, out, Algo::ring);
                      },
                      failing),
                  hc::AlgorithmError);
}

// =================================================================================================
// An open mesh: rows and columns are linear arrays
// =================================================================================================

#if HCTEST_OPEN_MESH
TEST_CASE("groups on an open mesh: rows are linear(cols), columns linear(rows)") {
  const Topology t = Topology::mesh(3, 4, hc::Wrap::none);
  CHECK(t == Topology::parse("mesh:3x4:open"));
  const Kind rows{"rows of the open mesh:3x4", [](Proc& vp) { return vp.row(); },
                  [t](int id) { return row_members(t, id); },
                  [](int n) { return Topology::linear(n); }, Algo::ring};
  const Kind columns{"columns of the open mesh:3x4", [](Proc& vp) { return vp.column(); },
                     [t](int id) { return column_members(t, id); },
                     [](int n) { return Topology::linear(n); }, Algo::ring};
  check_kinds_accessors(t, {rows, columns});
  // The collectives (automatic, the ring algorithms routed over the linear array, ...).
  collective_suite(t, {rows, columns});
  // Strict links: a row's automatic collectives use neighbours only.
  // Links::strict: the ring all-gather (Algorithm 4.4) needs the wraparound link from rank n-1
  // to rank 0, which a linear array lacks, so Algo::ring runs the line all-gather (gather into
  // the middle, broadcast back: all_gather_line.cpp) and the line all-to-all (up the line, then
  // down: all_to_all_line.cpp); automatic either runs correctly or (nothing can run) throws
  // AlgorithmError on every VP.
  hc::Options opt = quick_options();
  opt.links = hc::Links::strict;
  std::vector<std::vector<Int>> gathered(12);
  REQUIRE(run_ok(
      t,
      [&](Proc& vp) {
        Group row = vp.row();
        std::vector<Int> in(2, vp.id()), out(8);
        hc::all_gather(row, in, out, Algo::ring);
        gathered[static_cast<std::size_t>(vp.id())] = out;
      },
      opt));
  for (int id = 0; id < 12; ++id) {
    std::vector<Int> want;
    for (int c = 0; c < 4; ++c) want.insert(want.end(), 2, (id / 4) * 4 + c);
    CHECK(gathered[static_cast<std::size_t>(id)] == want);
  }
  // The line all-to-all (all_to_all_line.cpp) on every row at once: block c of (r, k)'s in goes
  // to block k of (r, c)'s out.
  std::vector<std::vector<Int>> exchanged(12);
  REQUIRE(run_ok(
      t,
      [&](Proc& vp) {
        Group row = vp.row();
        std::vector<Int> in(8), out(8, -1);
        for (int c = 0; c < 4; ++c)
          for (int i = 0; i < 2; ++i) in[static_cast<std::size_t>(2 * c + i)] = vp.id() * 100 + c;
        hc::all_to_all(row, in, out, Algo::ring);
        exchanged[static_cast<std::size_t>(vp.id())] = out;
      },
      opt));
  for (int id = 0; id < 12; ++id) {
    std::vector<Int> want;
    for (int k = 0; k < 4; ++k) want.insert(want.end(), 2, ((id / 4) * 4 + k) * 100 + id % 4);
    CHECK(exchanged[static_cast<std::size_t>(id)] == want);
  }
  std::vector<std::vector<Int>> got(12);
  std::vector<char> threw(12, 0);
  REQUIRE(run_ok(
      t,
      [&](Proc& vp) {
        Group row = vp.row();
        const auto in = input<Int>(vp.id(), 3);
        std::vector<Int> out(3);
        try {
          hc::all_reduce(row, in, out, std::plus<>{});
        } catch (const hc::AlgorithmError&) {
          threw[static_cast<std::size_t>(vp.id())] = 1;
          return;
        }
        got[static_cast<std::size_t>(vp.id())] = out;
      },
      opt));
  for (int id = 0; id < 12; ++id) {
    INFO("VP " << id);
    CHECK(threw[static_cast<std::size_t>(id)] == threw[0]);
    if (threw[static_cast<std::size_t>(id)]) continue;
    const Members m = row_members(t, id);
    std::vector<Int> want;
    for (std::size_t i = 0; i < 3; ++i) want.push_back(fold<Int>(m, 0, 4, i));
    CHECK(got[static_cast<std::size_t>(id)] == want);
  }
}
#endif

// A split group's header id folds the parent's split count into 13 bits, so two splits of one
// parent can make groups of one id: the world's 41,891st and 41,892nd splits do. A member that
// has not yet entered the second group's call 1 still shows the first group's call 1 among its
// published calls; a VP waiting in the second's must not take it for this call (the calls
// published before the split that made the group are not read).
TEST_CASE("split groups that share an id: a member's calls on the older are not the newer's") {
  hc::Options o = hctest::test_options();
  o.deadlock_timeout = std::chrono::seconds(5);
  const auto r = hc::run(
      hc::Topology::ring(2),
      [](hc::Proc& vp) {
        // A parent's splits 8192 apart share an id (its 13 bits; split_id_bits, group.cpp).
        const hc::Group first = hc::split(vp.world(), 0, vp.id());
        const std::vector<int> one{vp.id() + 1};
        std::vector<int> sum(1);
        hc::all_reduce(first, one, sum, std::plus<>{});
        CHECK(sum[0] == 3);
        for (int k = 1; k < 8192; ++k) (void)hc::split(vp.world(), -1, 0);
        const hc::Group second = hc::split(vp.world(), 0, vp.id());
        CHECK(second.info().id == first.info().id);
        if (vp.id() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const std::vector<int> two{vp.id() + 1, 10};
        std::vector<int> sums(2);
        hc::all_reduce(second, two, sums, std::plus<>{});
        CHECK(sums == std::vector<int>{3, 20});
      },
      o);
  CHECK(r.clocks.size() == 2);
}

TEST_CASE("split groups of different parents: a member gone on to the other is no disagreement") {
  // The world's first split and column 0's first split, one color: their header ids once were
  // one (the parents' ids have no low bits), and a VP still in a call on the first read VP 0's
  // call on the second, of the same number, as a disagreement. Here VP 0, the root of a
  // broadcast on the first (ranks {0, 3, 7, 5} of mesh:2x4), goes on to the second while rank 3
  // waits for rank 2, held up.
  hc::Options o = hctest::test_options();
  o.deadlock_timeout = std::chrono::seconds(5);
  for (const bool meetings : {true, false}) {
    o.meetings = meetings;
    INFO((meetings ? "meetings" : "messages"));
    hc::Machine m(hc::Topology::mesh(2, 4), o);
    for (int trial = 0; trial < 3; ++trial) {
      m.run([](hc::Proc& vp) {
        const int id = vp.id();
        constexpr int kRank[8] = {0, -1, -1, 1, -1, 3, -1, 2};  // VPs 0, 3, 7, 5
        const int rank = kRank[id];
        const hc::Group a = hc::split(vp.world(), rank >= 0 ? 1 : 0, rank >= 0 ? rank : id);
        std::vector<int> data(8, a.rank() == 0 ? 42 : 0);
        if (rank == 2) std::this_thread::sleep_for(std::chrono::milliseconds(60));
        hc::broadcast(a, data, 0);
        CHECK(data == std::vector<int>(8, 42));
        const hc::Group b = hc::split(vp.column(), id == 0 ? 1 : 2, 0);
        CHECK(b.info().id != a.info().id);
        const std::vector<int> mine(3, id);
        CHECK(hc::all_gatherv(b, std::span<const int>(mine)).size() == 3 * b.size());
      });
    }
  }
}
