// Irregular collectives (API.md, "Irregular collectives"): all_gatherv, gatherv, scatterv,
// all_to_allv, reduce_scatterv and the two count-discovering forms, against sequential oracles.
//
// Every form runs on rings 1..9 and 16, meshes 1x1, 1x3, 5x1, 2x3, 3x3, 4x4, hypercubes d = 0..5,
// linear:5 and mesh:3x3:open; on the whole machine (through vp and through vp.world()), on rows
// and columns, on subcubes of several masks and on split groups (one with a VP of color < 0 that
// calls nothing, its ranks in reverse id order; one of id pairs); with all-zero counts, zeros
// mixed in, one huge block (5000 elements on the last, the first, then a seeded rank; 0
// elsewhere), seeded random counts (the seed agreed by the members) and equal counts; on int,
// double and a 24-byte struct (the discovering forms: int and the struct); under Links::routed
// with Options::meetings true and false (false: one variant of each pattern, int only), and
// under Links::strict, where a call that no neighbour algorithm can run must
// throw AlgorithmError (all_to_allv's pairwise exchange on more than 2 ranks, unless every pair
// is adjacent). reduce_scatterv folds with std::plus<> and with the non-commutative MatMul, whose
// result must be the left fold in group-rank order. all_gatherv and reduce_scatterv (plus and
// MatMul) also run with each algorithm forced (hypercube, mesh, ring) on every machine and group:
// correct where it can run, AlgorithmError on every member where it cannot.
//
// Then the errors: wrong numbers of counts and buffers that do not match the counts throw
// SizeMismatch; members that disagree on the counts throw CollectiveMismatch naming the ranks and
// the first differing entry with both values; an all_to_allv sender that disagrees with its
// receiver gives SizeMismatch naming both ranks and both counts in elements; none may hang or
// return.
//
// The VP bodies compare with the oracle and write the first difference into a per-VP slot; the
// test thread asserts after run returns (support.hpp). One Machine per topology and mode runs
// every case of a collective, so the threads are spawned once. Under a sanitizer the machines,
// the variants and the element types are fewer.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"

using hypercomm::Group;
using hypercomm::Links;
using hypercomm::Options;
using hypercomm::Proc;
using hypercomm::Topology;

namespace {

// ---- element types ------------------------------------------------------------------------------

struct Rec {  // 24 bytes, trivially copyable; + adds componentwise (exact on the values below)
  std::int64_t key;
  double weight;
  std::int32_t a, b;
  bool operator==(const Rec&) const = default;
};
static_assert(sizeof(Rec) == 24);
Rec operator+(const Rec& x, const Rec& y) {
  return {x.key + y.key, x.weight + y.weight, x.a + y.a, x.b + y.b};
}

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
std::uint64_t hash3(int rank, std::size_t i, std::uint64_t salt) {
  return mix(mix(salt ^ static_cast<std::uint64_t>(rank) * 0x100000001B3ull) + i);
}

// Element i of rank `rank`'s data in the case with seed `salt`, a sentinel that no value equals,
// and the type's name. Values are small enough that a sum over 32 ranks is exact.
template <class T>
struct Elem;
template <>
struct Elem<int> {
  static std::string name() { return "int"; }
  static int value(int rank, std::size_t i, std::uint64_t salt) {
    return static_cast<int>(hash3(rank, i, salt) & 0x1FFFFFFu);
  }
  static int sentinel() { return -7; }
  static std::string show(int v) { return std::to_string(v); }
};
template <>
struct Elem<double> {
  static std::string name() { return "double"; }
  static double value(int rank, std::size_t i, std::uint64_t salt) {
    return static_cast<double>(hash3(rank, i, salt) & 0xFFFFFu) + 0.5;
  }
  static double sentinel() { return -1.25; }
  static std::string show(double v) { return std::to_string(v); }
};
template <>
struct Elem<Rec> {
  static std::string name() { return "Rec (24 bytes)"; }
  static Rec value(int rank, std::size_t i, std::uint64_t salt) {
    const std::uint64_t h = hash3(rank, i, salt);
    return {static_cast<std::int64_t>(h >> 24), static_cast<double>((h >> 8) & 0xFFFFu) + 0.25,
            rank, static_cast<std::int32_t>(h & 0xFFFFu)};
  }
  static Rec sentinel() { return {-1, -1.0, -1, -1}; }
  static std::string show(const Rec& r) {
    return "{" + std::to_string(r.key) + ", " + std::to_string(r.weight) + ", " +
           std::to_string(r.a) + ", " + std::to_string(r.b) + "}";
  }
};
template <>
struct Elem<hctest::Mat> {
  static std::string name() { return "Mat"; }
  static hctest::Mat value(int rank, std::size_t i, std::uint64_t salt) {
    return hctest::mat_of(rank, i + salt % 1000);
  }
  static hctest::Mat sentinel() {
    constexpr auto big = hctest::MatMul::kPrime;  // results are reduced modulo kPrime
    return {big, big, big, big};
  }
  static std::string show(const hctest::Mat& m) {
    return "[" + std::to_string(m.a) + " " + std::to_string(m.b) + "; " + std::to_string(m.c) +
           " " + std::to_string(m.d) + "]";
  }
};

// all_to_allv: element k of the block rank `from` sends to rank `to`.
template <class T>
T pair_value(int from, int to, std::size_t k, std::uint64_t salt) {
  return Elem<T>::value(from, static_cast<std::size_t>(to) * 8192 + k, salt);
}

// ---- count patterns ---------------------------------------------------------------------------

enum class Pattern { zeros, mixed, huge, random, equal };
constexpr Pattern kPatterns[] = {Pattern::zeros, Pattern::mixed, Pattern::huge, Pattern::random,
                                 Pattern::equal};
constexpr std::size_t kHuge = 5000;

std::string name_of(Pattern p) {
  switch (p) {
    case Pattern::zeros: return "all zero";
    case Pattern::mixed: return "zeros mixed in";
    case Pattern::huge: return "one huge block";
    case Pattern::random: return "random";
    case Pattern::equal: return "all equal";
  }
  return "?";
}
std::string name_of(Links links) { return links == Links::routed ? "routed" : "strict"; }

// The rank of the huge block: the last, the first, then one chosen by the seed.
int huge_rank(int n, int variant, std::uint64_t seed) {
  return variant == 0   ? n - 1
         : variant == 1 ? 0
                        : static_cast<int>(seed % static_cast<unsigned>(n));
}

// One count per rank, the same on every member (a function of the agreed seed).
std::vector<std::size_t> counts_of(Pattern pattern, int n, std::uint64_t seed, int variant) {
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> c(static_cast<std::size_t>(n), 0);
  const int h = huge_rank(n, variant, seed);
  for (int i = 0; i < n; ++i) {
    auto& x = c[static_cast<std::size_t>(i)];
    switch (pattern) {
      case Pattern::zeros: x = 0; break;
      case Pattern::mixed: x = (i % 2) == static_cast<int>(seed % 2) ? 0 : 1 + rng() % 12; break;
      case Pattern::huge: x = i == h ? kHuge : 0; break;
      case Pattern::random: x = rng() % 41; break;
      case Pattern::equal: x = 3; break;
    }
  }
  return c;
}

// all_to_allv: m[i][j] elements from rank i to rank j, the same matrix on every member.
std::vector<std::vector<std::size_t>> matrix_of(Pattern pattern, int n, std::uint64_t seed,
                                                int variant) {
  std::mt19937_64 rng(seed);
  const auto un = static_cast<std::size_t>(n);
  std::vector<std::vector<std::size_t>> m(un, std::vector<std::size_t>(un, 0));
  const int h = huge_rank(n, variant, seed);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      auto& x = m[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
      switch (pattern) {
        case Pattern::zeros: x = 0; break;
        case Pattern::mixed:
          x = (i + j + static_cast<int>(seed % 2)) % 2 ? 0 : 1 + rng() % 12;
          break;
        case Pattern::huge: {  // to the next rank, the previous one (the far end of a one-way
                               // ring), or half way round
          const int far = variant == 0 ? 1 : variant == 1 ? n - 1 : n / 2;
          x = i == h && j == (h + far) % n ? kHuge : 0;
          break;
        }
        case Pattern::random: x = rng() % 31; break;
        case Pattern::equal: x = 4; break;
      }
    }
  }
  return m;
}

std::vector<std::size_t> offsets(const std::vector<std::size_t>& counts) {
  std::vector<std::size_t> off(counts.size() + 1, 0);
  std::partial_sum(counts.begin(), counts.end(), off.begin() + 1);
  return off;
}

// "" when out holds the blocks want(r, k), k < counts[r], in rank order; else the first difference.
template <class T, class Want>
std::string check_blocks(const std::vector<T>& out, const std::vector<std::size_t>& counts,
                         Want want) {
  const auto off = offsets(counts);
  if (out.size() != off.back())
    return "holds " + std::to_string(out.size()) + " elements, not " + std::to_string(off.back());
  for (std::size_t r = 0; r < counts.size(); ++r) {
    for (std::size_t k = 0; k < counts[r]; ++k) {
      const T expected = want(static_cast<int>(r), k);
      if (!(out[off[r] + k] == expected))
        return "element " + std::to_string(k) + " of rank " + std::to_string(r) +
               "'s block = " + Elem<T>::show(out[off[r] + k]) + ", expected " +
               Elem<T>::show(expected);
    }
  }
  return "";
}

template <class T>
std::string check_untouched(const std::vector<T>& buf, const char* what) {
  for (std::size_t i = 0; i < buf.size(); ++i)
    if (!(buf[i] == Elem<T>::sentinel()))
      return std::string(what) + " element " + std::to_string(i) + " was written";
  return "";
}

// ---- the groups -------------------------------------------------------------------------------

enum class Kind { proc, world, row, column, subcube, split_mod3, split_pairs };
struct GroupKind {
  Kind kind;
  unsigned mask = 0;
};

std::string name_of(const GroupKind& k) {
  switch (k.kind) {
    case Kind::proc: return "the machine (vp)";
    case Kind::world: return "vp.world()";
    case Kind::row: return "vp.row()";
    case Kind::column: return "vp.column()";
    case Kind::subcube: return "vp.subcube(" + std::to_string(k.mask) + ")";
    case Kind::split_mod3: return "split(vp, id % 3 (VP p-1: -1), -id)";
    case Kind::split_pairs: return "split(vp.world(), id / 2, id)";
  }
  return "?";
}

// VP p-1 (p > 1) takes color -1 in split_mod3: it is in no group and calls nothing after split.
int mod3_color(int id, int p) { return p > 1 && id == p - 1 ? -1 : id % 3; }

std::vector<GroupKind> group_kinds(const Topology& t) {
  std::vector<GroupKind> kinds{{Kind::proc}, {Kind::world}};
  if (t.kind() == Topology::Kind::mesh) {
    kinds.push_back({Kind::row});
    kinds.push_back({Kind::column});
  }
  if (t.kind() == Topology::Kind::hypercube) {
    const int d = t.dimension();
    const unsigned full = (1u << d) - 1;
    std::vector<unsigned> masks{0u,           1u & full, full, d > 0 ? 1u << (d - 1) : 0u,
                                0x15u & full, full & ~1u};
    std::sort(masks.begin(), masks.end());
    masks.erase(std::unique(masks.begin(), masks.end()), masks.end());
    for (unsigned m : masks) kinds.push_back({Kind::subcube, m});
  }
  kinds.push_back({Kind::split_mod3});
  kinds.push_back({Kind::split_pairs});
  return kinds;
}

// Calls f(comm, g) on this VP's group of kind k: comm is what the collectives take (vp itself
// for Kind::proc, else the Group), g the group (ranks, size, members). Split groups are checked
// against their definition first; a VP in no group returns without calling f.
template <class F>
void on_group(Proc& vp, const GroupKind& k, std::string& error, F&& f) {
  const int id = vp.id(), p = vp.size();
  switch (k.kind) {
    case Kind::proc: {
      const Group w = vp.world();
      f(vp, w);
      return;
    }
    case Kind::world: {
      const Group g = vp.world();
      f(g, g);
      return;
    }
    case Kind::row: {
      const Group g = vp.row();
      f(g, g);
      return;
    }
    case Kind::column: {
      const Group g = vp.column();
      f(g, g);
      return;
    }
    case Kind::subcube: {
      const Group g = vp.subcube(k.mask);
      f(g, g);
      return;
    }
    case Kind::split_mod3:
    case Kind::split_pairs: {
      const bool mod3 = k.kind == Kind::split_mod3;
      const int color = mod3 ? mod3_color(id, p) : id / 2;
      const Group g =
          mod3 ? hypercomm::split(vp, color, -id) : hypercomm::split(vp.world(), color, id);
      std::vector<int> members;  // the definition: equal color, ranked by key
      for (int j = 0; j < p && color >= 0; ++j)
        if ((mod3 ? mod3_color(j, p) : j / 2) == color) members.push_back(j);
      if (mod3) std::reverse(members.begin(), members.end());  // key -id
      bool same = g.size() == static_cast<int>(members.size()) && (color >= 0) == (g.rank() >= 0);
      for (int r = 0; same && r < g.size(); ++r)
        same = g.vp(r) == members[static_cast<std::size_t>(r)];
      if (!same && error.empty())
        error = name_of(k) + ": the group's members are not its definition's";
      if (g.size() == 0) return;
      f(g, g);
      return;
    }
  }
}

enum class Op { all_gatherv, gatherv, scatterv, all_to_allv, reduce_scatterv };

// Whether a neighbour-only algorithm runs `op` on g under Links::strict (API.md: a split group's
// collectives need consecutive members to be machine neighbours; the ring algorithms need VPs
// i and i+1 mod n adjacent, the line ones i and i+1 for i < n-1, the mesh ones a torus or no
// line longer than 2, the hypercube ones a hypercube; all_to_allv's pairwise exchange talks to
// every rank).
bool strict_runs(Op op, const Topology& machine, const Group& g, Kind kind) {
  const int n = g.size();
  bool ring_of_neighbours = true;
  for (int r = 0; n > 1 && r < n; ++r)
    if (!machine.adjacent(g.vp(r), g.vp((r + 1) % n))) ring_of_neighbours = false;
  if ((kind == Kind::split_mod3 || kind == Kind::split_pairs) && !ring_of_neighbours) return false;
  // all_to_allv: the pairwise exchange talks to every rank, but automatic takes the ring, mesh
  // or dimension exchange there, which run where the other collectives' neighbour algorithms do.
  if (op == Op::all_to_allv && (n <= 2 || (n == 3 && ring_of_neighbours))) return true;
  const Topology& t = g.topology();
  switch (t.kind()) {
    case Topology::Kind::hypercube:
    case Topology::Kind::ring: return true;
    // A line (and a 1 x n or n x 1 open mesh): the line cards; an open mesh: the open-mesh
    // cards (all_to_allv's included: the line's streams along the rows, then the columns).
    case Topology::Kind::linear:
    case Topology::Kind::mesh: return true;
  }
  return false;
}

// ---- the machines -----------------------------------------------------------------------------

// Under a sanitizer (5-20x slower) a smaller set with every kind of machine and group: the
// point there is the races, not the coverage of shapes.
std::vector<Topology> irregular_topologies() {
  std::vector<Topology> t;
  if (hctest::kSanitized) {
    for (const char* name :
         {"ring:1", "ring:3", "ring:5", "ring:8", "mesh:2x3", "mesh:3x3", "hypercube:0",
          "hypercube:2", "hypercube:4", "linear:5", "mesh:3x3:open"})
      t.push_back(Topology::parse(name));
    return t;
  }
  for (int p : {1, 2, 3, 4, 5, 6, 7, 8, 9, 16}) t.push_back(Topology::ring(p));
  // (1x3 and 5x1: the mesh algorithms' one-row and one-column paths.)
  for (auto [r, c] : {std::pair{1, 1}, {1, 3}, {5, 1}, {2, 3}, {3, 3}, {4, 4}})
    t.push_back(Topology::mesh(r, c));
  for (int d = 0; d <= 5; ++d) t.push_back(Topology::hypercube(d));
  t.push_back(Topology::parse("linear:5"));
  t.push_back(Topology::parse("mesh:3x3:open"));
  return t;
}

struct Mode {
  Links links;
  bool meetings;
};
// Meetings must not change a result: routed runs with them on and off.
std::vector<Mode> modes() {
  if (hctest::kSanitized) return {{Links::routed, true}, {Links::strict, true}};
  return {{Links::routed, true}, {Links::routed, false}, {Links::strict, true}};
}

// Per-VP first error (and how many), written by the VP bodies only.
struct Errors {
  std::vector<std::string> first;
  std::vector<int> count;
  explicit Errors(int p)
      : first(static_cast<std::size_t>(p)), count(static_cast<std::size_t>(p), 0) {}
  void add(int vp, const std::string& what) {
    if (count[static_cast<std::size_t>(vp)]++ == 0) first[static_cast<std::size_t>(vp)] = what;
  }
};

// The case the body runs: one collective on one group with one pattern and element type.
enum class Types { one, int_and_rec, all };  // int; int and Rec; int, double and Rec
struct Case {
  const GroupKind& kind;
  Pattern pattern;
  std::uint64_t seed;  // the same on every member of the group
  int variant;         // of the pattern: which rank holds the huge block
  Types types;         // of the element types (see each_type)
  hypercomm::Algo algo = hypercomm::Algo::automatic;  // all_gatherv, reduce_scatterv, all_to_allv
};

// Whether a forced algorithm (of all_gatherv, reduce_scatterv or all_to_allv) runs on
// g: its restrictions on g's topology (hypercomm::resolve), and under Links::strict a split
// group's consecutive members must be machine neighbours.
bool forced_runs(Op op, hypercomm::Algo a, const Topology& machine, const Group& g, Kind kind,
                 Links links) {
  try {
    const auto collective = op == Op::all_to_allv       ? hypercomm::Collective::all_to_allv
                            : op == Op::reduce_scatterv ? hypercomm::Collective::reduce_scatterv
                                                        : hypercomm::Collective::all_gatherv;
    (void)hypercomm::resolve(collective, a, g.topology(), links, 0);
  } catch (const hypercomm::AlgorithmError&) {
    return false;
  }
  if (links == Links::strict && (kind == Kind::split_mod3 || kind == Kind::split_pairs))
    for (int r = 0; g.size() > 1 && r < g.size(); ++r)
      if (!machine.adjacent(g.vp(r), g.vp((r + 1) % g.size()))) return false;
  return true;
}

// Runs `one(vp, comm, g, case)` for every group kind, pattern and seed on every topology and
// mode; `one` returns "" or the first difference from the oracle. Under Links::strict a call
// that cannot run must throw AlgorithmError on every member. With `forced` (all_gatherv and
// reduce_scatterv), the cases ask for that algorithm: where it cannot run (its restrictions on
// the group's topology and links) every member must throw AlgorithmError; one element type, and
// meetings on only.
template <class One>
void suite(Op op, const char* what, One one, Types max_types = Types::all,
           hypercomm::Algo forced = hypercomm::Algo::automatic) {
  const bool forcing = forced != hypercomm::Algo::automatic;
  for (const Topology& t : irregular_topologies()) {
    const int p = t.size();
    const auto kinds = group_kinds(t);
    for (const Mode mode : modes()) {
      if (forcing && !mode.meetings) continue;
      INFO(what << " on " << t.name() << ", links=" << name_of(mode.links)
                << ", meetings=" << (mode.meetings ? "true" : "false"));
      Options opt = hctest::test_options();
      opt.links = mode.links;
      opt.meetings = mode.meetings;
      hypercomm::Machine machine(t, opt);
      // Under strict, split itself (an all-gather over the machine) needs a neighbour algorithm.
      const bool splits =
          mode.links == Links::routed || t.kind() == Topology::Kind::ring ||
          t.kind() == Topology::Kind::hypercube ||
          (t.kind() == Topology::Kind::mesh && (t.wraps() || (t.rows() <= 2 && t.cols() <= 2)));
      Errors errors(p);
      try {
        machine.run([&](Proc& vp) {
          std::string group_error;
          for (const GroupKind& kind : kinds) {
            if ((kind.kind == Kind::split_mod3 || kind.kind == Kind::split_pairs) && !splits)
              continue;
            on_group(vp, kind, group_error, [&](auto& comm, const Group& g) {
              const bool runs =
                  forcing ? forced_runs(op, forced, t, g, kind.kind, mode.links)
                          : mode.links == Links::routed || strict_runs(op, t, g, kind.kind);
              std::uint64_t serial = 0;
              for (const Pattern pattern : kPatterns) {
                // Meetings off repeats the routed run: one variant of each pattern and one
                // element type suffice (and under a sanitizer).
                const int repeats = !mode.meetings || hctest::kSanitized ? 1
                                    : pattern == Pattern::huge           ? 3
                                    : pattern == Pattern::random         ? 2
                                                                         : 1;
                for (int repeat = 0; repeat < repeats; ++repeat) {
                  // Agreed by the members: the group's first member and the case's serial.
                  const std::uint64_t seed =
                      mix(static_cast<std::uint64_t>(g.vp(0)) * 1000 + ++serial);
                  const Case cs{
                      kind,
                      pattern,
                      seed,
                      repeat,
                      !mode.meetings || hctest::kSanitized || forcing ? Types::one : max_types,
                      forced};
                  const std::string where = name_of(kind) + " (rank " + std::to_string(g.rank()) +
                                            " of " + std::to_string(g.size()) + "), " +
                                            name_of(pattern) + " " + std::to_string(repeat) +
                                            ", seed " + std::to_string(seed) + ": ";
                  if (!runs) {
                    try {
                      const std::string e = one(vp, comm, g, cs);
                      errors.add(
                          vp.id(),
                          where + "ran " +
                              (forcing ? std::string("Algo::") + hypercomm::to_string(forced) +
                                             ", which cannot run here"
                                       : std::string("under Links::strict")) +
                              " (" + (e.empty() ? "correctly" : e) + "), expected AlgorithmError");
                    } catch (const hypercomm::AlgorithmError&) {
                    }
                    continue;
                  }
                  const std::string e = one(vp, comm, g, cs);
                  if (!e.empty()) errors.add(vp.id(), where + e);
                }
              }
            });
          }
          if (!group_error.empty()) errors.add(vp.id(), group_error);
        });
      } catch (const std::exception& e) {
        FAIL_CHECK("run threw: " << std::string(e.what()));
        continue;
      }
      for (int v = 0; v < p; ++v) {
        const auto i = static_cast<std::size_t>(v);
        CHECK_MESSAGE(errors.count[i] == 0, "VP " << v << ": " << errors.count[i]
                                                  << " wrong results, first: " << errors.first[i]);
      }
    }
  }
}

// The element types of the data-moving collectives, one after the other: the first difference.
// int always; double and the 24-byte Rec where the case asks for every type (the element size
// changes every offset; the values' type changes nothing in the algorithms).
template <template <class> class F, class C>
std::string each_type(Proc& vp, C& comm, const Group& g, const Case& cs) {
  std::string e = F<int>{}(vp, comm, g, cs);
  if (cs.types == Types::all) {
    const std::string d = F<double>{}(vp, comm, g, cs);
    if (e.empty()) e = d;
  }
  if (cs.types != Types::one) {
    const std::string r = F<Rec>{}(vp, comm, g, cs);
    if (e.empty()) e = r;
  }
  return e;
}

// ---- the collectives, each against its oracle ---------------------------------------------------

template <class T>
struct AllGatherv {
  template <class C>
  std::string operator()(Proc&, C& comm, const Group& g, const Case& cs) const {
    const int n = g.size(), me = g.rank();
    const auto counts = counts_of(cs.pattern, n, cs.seed, cs.variant);
    std::vector<T> in(counts[static_cast<std::size_t>(me)]);
    for (std::size_t k = 0; k < in.size(); ++k) in[k] = Elem<T>::value(me, k, cs.seed);
    std::vector<T> out(offsets(counts).back(), Elem<T>::sentinel());
    hypercomm::all_gatherv(comm, in, out, counts, cs.algo);
    const std::string e = check_blocks(
        out, counts, [&](int r, std::size_t k) { return Elem<T>::value(r, k, cs.seed); });
    return e.empty() ? "" : Elem<T>::name() + ": " + e;
  }
};

template <class T>
struct AllGathervDiscovering {
  template <class C>
  std::string operator()(Proc&, C& comm, const Group& g, const Case& cs) const {
    const int n = g.size(), me = g.rank();
    const auto counts = counts_of(cs.pattern, n, cs.seed, cs.variant);
    std::vector<T> in(counts[static_cast<std::size_t>(me)]);
    for (std::size_t k = 0; k < in.size(); ++k) in[k] = Elem<T>::value(me, k, cs.seed);
    const std::vector<T> out = hypercomm::all_gatherv(comm, in);
    const std::string e = check_blocks(
        out, counts, [&](int r, std::size_t k) { return Elem<T>::value(r, k, cs.seed); });
    return e.empty() ? "" : Elem<T>::name() + " (discovered counts): " + e;
  }
};

template <class T>
struct Gatherv {
  template <class C>
  std::string operator()(Proc&, C& comm, const Group& g, const Case& cs) const {
    const int n = g.size(), me = g.rank();
    const int root = static_cast<int>((cs.seed >> 8) % static_cast<std::uint64_t>(n));
    const auto counts = counts_of(cs.pattern, n, cs.seed, cs.variant);
    std::vector<T> in(counts[static_cast<std::size_t>(me)]);
    for (std::size_t k = 0; k < in.size(); ++k) in[k] = Elem<T>::value(me, k, cs.seed);
    // A non-root's out may be empty; when it is not, it must not be touched.
    const bool full = me == root || (cs.seed & 1) != 0;
    std::vector<T> out(full ? offsets(counts).back() : 0, Elem<T>::sentinel());
    hypercomm::gatherv(comm, in, out, counts, root);
    std::string e;
    if (me == root) {
      e = check_blocks(out, counts,
                       [&](int r, std::size_t k) { return Elem<T>::value(r, k, cs.seed); });
    } else {
      e = check_untouched(out, "a non-root's out");
    }
    return e.empty() ? "" : Elem<T>::name() + " root " + std::to_string(root) + ": " + e;
  }
};

template <class T>
struct Scatterv {
  template <class C>
  std::string operator()(Proc&, C& comm, const Group& g, const Case& cs) const {
    const int n = g.size(), me = g.rank();
    const int root = static_cast<int>((cs.seed >> 8) % static_cast<std::uint64_t>(n));
    const auto counts = counts_of(cs.pattern, n, cs.seed, cs.variant);
    const auto off = offsets(counts);
    // The root's in: block r for rank r. A non-root's in may be empty (or anything: not read).
    std::vector<T> in;
    if (me == root) {
      in.resize(off.back());
      for (int r = 0; r < n; ++r)
        for (std::size_t k = 0; k < counts[static_cast<std::size_t>(r)]; ++k)
          in[off[static_cast<std::size_t>(r)] + k] = Elem<T>::value(r, k, cs.seed);
    } else if ((cs.seed & 1) != 0) {
      in.assign(off.back(), Elem<T>::sentinel());
    }
    std::vector<T> out(counts[static_cast<std::size_t>(me)], Elem<T>::sentinel());
    hypercomm::scatterv(comm, in, out, counts, root);
    std::string e;
    for (std::size_t k = 0; k < out.size() && e.empty(); ++k)
      if (!(out[k] == Elem<T>::value(me, k, cs.seed)))
        e = "out element " + std::to_string(k) + " = " + Elem<T>::show(out[k]) + ", expected " +
            Elem<T>::show(Elem<T>::value(me, k, cs.seed));
    return e.empty() ? "" : Elem<T>::name() + " root " + std::to_string(root) + ": " + e;
  }
};

// in: this rank's blocks for every rank, in rank order, with the matrix's counts.
template <class T>
std::vector<T> all_to_allv_input(const std::vector<std::vector<std::size_t>>& m, int me,
                                 std::uint64_t seed) {
  std::vector<T> in;
  for (std::size_t j = 0; j < m.size(); ++j)
    for (std::size_t k = 0; k < m[static_cast<std::size_t>(me)][j]; ++k)
      in.push_back(pair_value<T>(me, static_cast<int>(j), k, seed));
  return in;
}

template <class T>
struct AllToAllv {
  template <class C>
  std::string operator()(Proc&, C& comm, const Group& g, const Case& cs) const {
    const int n = g.size(), me = g.rank();
    const auto m = matrix_of(cs.pattern, n, cs.seed, cs.variant);
    const auto um = static_cast<std::size_t>(me);
    const std::vector<std::size_t> send_counts = m[um];
    std::vector<std::size_t> recv_counts(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < recv_counts.size(); ++i) recv_counts[i] = m[i][um];
    const std::vector<T> in = all_to_allv_input<T>(m, me, cs.seed);
    std::vector<T> out(offsets(recv_counts).back(), Elem<T>::sentinel());
    if (cs.algo == hypercomm::Algo::automatic)  // the spelling without an algorithm
      hypercomm::all_to_allv(comm, in, send_counts, out, recv_counts);
    else
      hypercomm::all_to_allv(comm, in, send_counts, out, recv_counts, cs.algo);
    const std::string e = check_blocks(
        out, recv_counts, [&](int i, std::size_t k) { return pair_value<T>(i, me, k, cs.seed); });
    return e.empty() ? "" : Elem<T>::name() + ": " + e;
  }
};

template <class T>
struct AllToAllvDiscovering {
  template <class C>
  std::string operator()(Proc&, C& comm, const Group& g, const Case& cs) const {
    const int n = g.size(), me = g.rank();
    const auto m = matrix_of(cs.pattern, n, cs.seed, cs.variant);
    const auto um = static_cast<std::size_t>(me);
    std::vector<std::vector<T>> out_per_rank(static_cast<std::size_t>(n));
    for (std::size_t j = 0; j < out_per_rank.size(); ++j)
      for (std::size_t k = 0; k < m[um][j]; ++k)
        out_per_rank[j].push_back(pair_value<T>(me, static_cast<int>(j), k, cs.seed));
    const std::vector<std::vector<T>> got = hypercomm::all_to_allv(comm, out_per_rank);
    if (got.size() != static_cast<std::size_t>(n))
      return Elem<T>::name() + ": " + std::to_string(got.size()) + " blocks, not " +
             std::to_string(n);
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (got[i].size() != m[i][um])
        return Elem<T>::name() + ": block from rank " + std::to_string(i) + " holds " +
               std::to_string(got[i].size()) + " elements, not " + std::to_string(m[i][um]);
      for (std::size_t k = 0; k < got[i].size(); ++k)
        if (!(got[i][k] == pair_value<T>(static_cast<int>(i), me, k, cs.seed)))
          return Elem<T>::name() + ": element " + std::to_string(k) + " from rank " +
                 std::to_string(i) + " = " + Elem<T>::show(got[i][k]) + ", expected " +
                 Elem<T>::show(pair_value<T>(static_cast<int>(i), me, k, cs.seed));
    }
    return "";
  }
};

// reduce_scatterv with op on T: rank me's out = the left fold over ranks 0..n-1 of the elements
// at its counts' offset.
template <class T, class Fn>
struct ReduceScatterv {
  template <class C>
  std::string operator()(Proc&, C& comm, const Group& g, const Case& cs) const {
    const int n = g.size(), me = g.rank();
    const auto counts = counts_of(cs.pattern, n, cs.seed, cs.variant);
    const auto off = offsets(counts);
    std::vector<T> in(off.back());
    for (std::size_t x = 0; x < in.size(); ++x) in[x] = Elem<T>::value(me, x, cs.seed);
    std::vector<T> out(counts[static_cast<std::size_t>(me)], Elem<T>::sentinel());
    hypercomm::reduce_scatterv(comm, in, out, Fn{}, counts, cs.algo);
    for (std::size_t k = 0; k < out.size(); ++k) {
      const std::size_t x = off[static_cast<std::size_t>(me)] + k;
      T want = Elem<T>::value(0, x, cs.seed);
      for (int r = 1; r < n; ++r) want = Fn{}(want, Elem<T>::value(r, x, cs.seed));
      if (!(out[k] == want))
        return Elem<T>::name() + ": out element " + std::to_string(k) + " = " +
               Elem<T>::show(out[k]) + ", expected " + Elem<T>::show(want);
    }
    return "";
  }
};
template <class T>
using ReduceScattervPlus = ReduceScatterv<T, std::plus<>>;

}  // namespace

TEST_CASE("all_gatherv: every topology, group, count pattern and element type") {
  suite(Op::all_gatherv, "all_gatherv", [](Proc& vp, auto& comm, const Group& g, const Case& cs) {
    return each_type<AllGatherv>(vp, comm, g, cs);
  });
}

TEST_CASE("all_gatherv: every algorithm forced (hypercube, mesh, ring), or AlgorithmError") {
  for (const auto a : {hypercomm::Algo::hypercube, hypercomm::Algo::mesh, hypercomm::Algo::ring})
    suite(
        Op::all_gatherv, (std::string("all_gatherv Algo::") + hypercomm::to_string(a)).c_str(),
        [](Proc& vp, auto& comm, const Group& g, const Case& cs) {
          return each_type<AllGatherv>(vp, comm, g, cs);
        },
        Types::one, a);
}

TEST_CASE("all_gatherv(g, in): the counts discovered") {
  suite(
      Op::all_gatherv, "all_gatherv(g, in)",
      [](Proc& vp, auto& comm, const Group& g, const Case& cs) {
        return each_type<AllGathervDiscovering>(vp, comm, g, cs);
      },
      Types::int_and_rec);
}

TEST_CASE("gatherv: every topology, group, count pattern, root and element type") {
  suite(Op::gatherv, "gatherv", [](Proc& vp, auto& comm, const Group& g, const Case& cs) {
    return each_type<Gatherv>(vp, comm, g, cs);
  });
}

TEST_CASE("scatterv: every topology, group, count pattern, root and element type") {
  suite(Op::scatterv, "scatterv", [](Proc& vp, auto& comm, const Group& g, const Case& cs) {
    return each_type<Scatterv>(vp, comm, g, cs);
  });
}

TEST_CASE("all_to_allv: every topology, group, count matrix and element type") {
  suite(Op::all_to_allv, "all_to_allv", [](Proc& vp, auto& comm, const Group& g, const Case& cs) {
    return each_type<AllToAllv>(vp, comm, g, cs);
  });
}

TEST_CASE(
    "all_to_allv: every algorithm forced (pairwise, dimension_exchange, mesh, ring), or "
    "AlgorithmError") {
  for (const auto a : {hypercomm::Algo::hypercube, hypercomm::Algo::dimension_exchange,
                       hypercomm::Algo::mesh, hypercomm::Algo::ring})
    suite(
        Op::all_to_allv, (std::string("all_to_allv Algo::") + hypercomm::to_string(a)).c_str(),
        [](Proc& vp, auto& comm, const Group& g, const Case& cs) {
          return each_type<AllToAllv>(vp, comm, g, cs);
        },
        Types::one, a);
}

TEST_CASE("all_to_allv(g, out_per_rank): the counts discovered") {
  suite(
      Op::all_to_allv, "all_to_allv(g, out_per_rank)",
      [](Proc& vp, auto& comm, const Group& g, const Case& cs) {
        return each_type<AllToAllvDiscovering>(vp, comm, g, cs);
      },
      Types::int_and_rec);
}

TEST_CASE("reduce_scatterv: std::plus<> on every element type") {
  suite(Op::reduce_scatterv, "reduce_scatterv plus",
        [](Proc& vp, auto& comm, const Group& g, const Case& cs) {
          return each_type<ReduceScattervPlus>(vp, comm, g, cs);
        });
}

TEST_CASE("reduce_scatterv: every algorithm forced, std::plus<> and MatMul, or AlgorithmError") {
  for (const auto a : {hypercomm::Algo::hypercube, hypercomm::Algo::mesh, hypercomm::Algo::ring}) {
    const std::string name = std::string("reduce_scatterv Algo::") + hypercomm::to_string(a);
    suite(
        Op::reduce_scatterv, (name + " plus").c_str(),
        [](Proc& vp, auto& comm, const Group& g, const Case& cs) {
          return each_type<ReduceScattervPlus>(vp, comm, g, cs);
        },
        Types::one, a);
    suite(
        Op::reduce_scatterv, (name + " MatMul").c_str(),
        [](Proc& vp, auto& comm, const Group& g, const Case& cs) {
          return ReduceScatterv<hctest::Mat, hctest::MatMul>{}(vp, comm, g, cs);
        },
        Types::one, a);
  }
}

TEST_CASE("reduce_scatterv: non-commutative MatMul is the left fold in group-rank order") {
  suite(Op::reduce_scatterv, "reduce_scatterv MatMul",
        [](Proc& vp, auto& comm, const Group& g, const Case& cs) {
          return ReduceScatterv<hctest::Mat, hctest::MatMul>{}(vp, comm, g, cs);
        });
}

// ---- errors -------------------------------------------------------------------------------------

namespace {

Options error_options(Links links = Links::routed) {
  Options opt = hctest::test_options();
  opt.links = links;
  opt.deadlock_timeout = std::chrono::seconds(2);  // a hang would be a Deadlock, not a pass
  return opt;
}

// Each VP's rank and group size in the error tests' group (-1, 0: in none), written by the VP.
struct Members {
  std::vector<int> rank, size;
  explicit Members(int p)
      : rank(static_cast<std::size_t>(p), -1), size(static_cast<std::size_t>(p), 0) {}
  void note(int vp, const Group& g) {
    rank[static_cast<std::size_t>(vp)] = g.rank();
    size[static_cast<std::size_t>(vp)] = g.size();
  }
  [[nodiscard]] int rank_of(int vp) const {
    return vp >= 0 && vp < static_cast<int>(rank.size()) ? rank[static_cast<std::size_t>(vp)] : -1;
  }
};

// The numbers an error text names after `word` ("rank", "VP"): "rank 3", "ranks 0, 2",
// "VPs 0, 2-5, 9" (ranges expanded). Not "of VP 3" (a subcube's name).
std::set<int> named(const std::string& text, const std::string& word) {
  std::set<int> found;
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    if (at > 0 && std::isalnum(static_cast<unsigned char>(text[at - 1]))) continue;
    if (at >= 3 && text.compare(at - 3, 3, "of ") == 0) continue;
    std::size_t i = at + word.size();
    if (i < text.size() && text[i] == 's') ++i;
    if (i >= text.size() || text[i] != ' ') continue;
    ++i;
    const auto number = [&](int& n) {
      if (i >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) return false;
      n = 0;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
        n = n * 10 + (text[i++] - '0');
      return true;
    };
    for (int lo = 0; number(lo);) {
      int hi = lo;
      if (i < text.size() && text[i] == '-') {
        ++i;
        if (!number(hi)) hi = lo;
      }
      for (int n = lo; n <= hi; ++n) found.insert(n);
      if (text.compare(i, 2, ", ") != 0) break;
      i += 2;
    }
  }
  return found;
}

// Whether the text names a member of rank `rank` ("rank r", or a VP whose rank it is) and, if
// `other`, a member of another rank.
bool names_rank(const std::string& text, const Members& members, int rank, bool other) {
  const std::set<int> ranks = named(text, "rank"), vps = named(text, "VP");
  const auto found = [&](auto match) {
    for (const int r : ranks)
      if (match(r)) return true;
    for (const int v : vps)
      if (members.rank_of(v) >= 0 && match(members.rank_of(v))) return true;
    return false;
  };
  return other ? found([&](int r) { return r != rank; }) : found([&](int r) { return r == rank; });
}

// The VP an error text is about: its first "VP n".
int reporter(const std::string& text) {
  const std::size_t at = text.find("VP ");
  if (at == std::string::npos) return -1;
  return std::atoi(text.c_str() + at + 3);
}

// "" when the run threw `Want` whose text `check` accepts (check returns "" or what is missing),
// else what happened instead.
template <class Want, class Check>
std::string error_outcome(hypercomm::Machine& m, const std::function<void(Proc&)>& body,
                          Check check) {
  try {
    m.run(body);
  } catch (const Want& e) {
    const std::string missing = check(std::string(e.what()));
    return missing.empty() ? "" : missing + ": " + e.what();
  } catch (const std::exception& e) {
    return std::string("threw another error: ") + e.what();
  }
  return "run returned without an error";
}

std::size_t sum(const std::vector<std::size_t>& c) {
  return std::accumulate(c.begin(), c.end(), std::size_t{0});
}

// One rooted or symmetric irregular call with int data: `counts` is this member's view, the
// buffers are sized from it (own count, sum) plus the deltas; root 0 unless given.
struct Call {
  Op op;
  std::vector<std::size_t> counts;
  int root = 0;
  std::ptrdiff_t in_delta = 0;
  std::ptrdiff_t out_delta = 0;
};

template <class C>
void invoke(C& comm, int me, const Call& c) {
  const std::size_t own =
      static_cast<std::size_t>(me) < c.counts.size() ? c.counts[static_cast<std::size_t>(me)] : 0;
  const std::size_t total = sum(c.counts);
  const auto sized = [](std::size_t n, std::ptrdiff_t delta) {
    return std::vector<int>(static_cast<std::size_t>(static_cast<std::ptrdiff_t>(n) + delta), 1);
  };
  switch (c.op) {
    case Op::all_gatherv: {
      auto in = sized(own, c.in_delta), out = sized(total, c.out_delta);
      hypercomm::all_gatherv(comm, in, out, c.counts);
      return;
    }
    case Op::gatherv: {
      auto in = sized(own, c.in_delta);
      auto out = me == c.root ? sized(total, c.out_delta) : std::vector<int>{};
      hypercomm::gatherv(comm, in, out, c.counts, c.root);
      return;
    }
    case Op::scatterv: {
      auto in = me == c.root ? sized(total, c.in_delta) : std::vector<int>{};
      auto out = sized(own, c.out_delta);
      hypercomm::scatterv(comm, in, out, c.counts, c.root);
      return;
    }
    case Op::reduce_scatterv: {
      auto in = sized(total, c.in_delta), out = sized(own, c.out_delta);
      hypercomm::reduce_scatterv(comm, in, out, std::plus<>{}, c.counts);
      return;
    }
    case Op::all_to_allv: break;  // its counts are per member: see all_to_allv_call
  }
}

// all_to_allv with int data: this member's send and receive counts, buffers sized from them.
template <class C>
void all_to_allv_call(C& comm, const std::vector<std::size_t>& send_counts,
                      const std::vector<std::size_t>& recv_counts, std::ptrdiff_t in_delta = 0,
                      std::ptrdiff_t out_delta = 0,
                      hypercomm::Algo algo = hypercomm::Algo::automatic) {
  std::vector<int> in(
      static_cast<std::size_t>(static_cast<std::ptrdiff_t>(sum(send_counts)) + in_delta), 1);
  std::vector<int> out(
      static_cast<std::size_t>(static_cast<std::ptrdiff_t>(sum(recv_counts)) + out_delta), 0);
  hypercomm::all_to_allv(comm, in, send_counts, out, recv_counts, algo);
}

// A symmetric count matrix with zeros: row i is both rank i's send and receive counts.
std::vector<std::size_t> symmetric_row(int n, int i) {
  std::vector<std::size_t> row(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j)
    row[static_cast<std::size_t>(j)] = static_cast<std::size_t>((i * j + i + j) % 4);
  return row;
}

// The machines and groups of the error tests.
struct Where {
  const char* topology;
  GroupKind kind;
};
const Where kErrorPlaces[] = {
    {"ring:4", {Kind::proc}},
    {"ring:5", {Kind::proc}},
    {"hypercube:3", {Kind::proc}},
    {"mesh:3x3", {Kind::world}},
    {"mesh:3x3", {Kind::row}},
    {"mesh:2x3", {Kind::column}},
    {"hypercube:4", {Kind::subcube, 0b1010}},
    {"ring:8", {Kind::split_mod3}},
    {"ring:6", {Kind::split_pairs}},
};

constexpr Op kCountedOps[] = {Op::all_gatherv, Op::gatherv, Op::scatterv, Op::reduce_scatterv};
std::string name_of(Op op) {
  switch (op) {
    case Op::all_gatherv: return "all_gatherv";
    case Op::gatherv: return "gatherv";
    case Op::scatterv: return "scatterv";
    case Op::all_to_allv: return "all_to_allv";
    case Op::reduce_scatterv: return "reduce_scatterv";
  }
  return "?";
}

// Counts of n ranks, 3, 0, 1, 2, 3, 0, ...: the same on every member, a zero among them, and
// counts[0] != counts[1].
std::vector<std::size_t> base_counts(int n) {
  std::vector<std::size_t> c(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    c[static_cast<std::size_t>(i)] = static_cast<std::size_t>((i + 3) % 4);
  return c;
}

}  // namespace

TEST_CASE("irregular errors: counts with one entry too few or too many throw SizeMismatch") {
  for (const Where& w : kErrorPlaces) {
    const Topology t = Topology::parse(w.topology);
    hypercomm::Machine m(t, error_options());
    INFO(w.topology << " " << name_of(w.kind));
    for (const Op op : kCountedOps) {
      for (const int delta : {-1, 1}) {
        for (const bool everyone : {true, false}) {
          INFO(name_of(op) << ": " << (delta < 0 ? "one entry short" : "one entry too many")
                           << (everyone ? " on every member" : " on rank 1 (rank 0 if alone)"));
          CHECK_THROWS_AS(m.run([&](Proc& vp) {
            std::string unused;
            on_group(vp, w.kind, unused, [&](auto& comm, const Group& g) {
              const int n = g.size(), me = g.rank();
              const bool wrong = everyone || me == std::min(1, n - 1);
              invoke(comm, me, Call{op, base_counts(wrong ? n + delta : n)});
            });
          }),
                          hypercomm::SizeMismatch);
        }
      }
    }
    // all_to_allv: send_counts, recv_counts, and the discovering form's out_per_rank.
    for (const int which : {0, 1, 2}) {
      INFO("all_to_allv: " << (which == 0   ? "send_counts"
                               : which == 1 ? "recv_counts"
                                            : "out_per_rank")
                           << " one entry too many on every member");
      CHECK_THROWS_AS(m.run([&](Proc& vp) {
        std::string unused;
        on_group(vp, w.kind, unused, [&](auto& comm, const Group& g) {
          const int n = g.size(), me = g.rank();
          auto send = symmetric_row(n, me), recv = symmetric_row(n, me);
          if (which == 2) {
            std::vector<std::vector<int>> out_per_rank(static_cast<std::size_t>(n) + 1);
            (void)hypercomm::all_to_allv(comm, out_per_rank);
            return;
          }
          (which == 0 ? send : recv).push_back(0);
          all_to_allv_call(comm, send, recv);
        });
      }),
                      hypercomm::SizeMismatch);
    }
  }
}

TEST_CASE("irregular errors: buffers that do not match the counts throw SizeMismatch") {
  for (const Where& w : kErrorPlaces) {
    const Topology t = Topology::parse(w.topology);
    hypercomm::Machine m(t, error_options());
    INFO(w.topology << " " << name_of(w.kind));
    for (const Op op : kCountedOps) {
      // (in_delta, out_delta) on every member: a rooted call sizes the root's buffer of the
      // sum from them, and the other from this member's count (the rest are empty).
      for (const bool zeros : {false, true}) {
        for (const auto& deltas : {std::pair{1, 0}, {0, 1}, {-1, 0}, {0, -1}}) {
          const std::ptrdiff_t din = deltas.first, dout = deltas.second;
          if (zeros && (din < 0 || dout < 0)) continue;  // no buffer of -1 elements
          INFO(name_of(op) << (zeros ? " (zero counts among them)" : "") << ": in "
                           << (din > 0   ? "+1"
                               : din < 0 ? "-1"
                                         : "exact")
                           << ", out "
                           << (dout > 0   ? "+1"
                               : dout < 0 ? "-1"
                                          : "exact"));
          CHECK_THROWS_AS(m.run([&](Proc& vp) {
            std::string unused;
            on_group(vp, w.kind, unused, [&](auto& comm, const Group& g) {
              const int n = g.size(), me = g.rank();
              Call c{op, std::vector<std::size_t>(static_cast<std::size_t>(n), 2), n - 1, din,
                     dout};
              if (zeros)
                for (std::size_t i = 1; i < c.counts.size(); i += 2) c.counts[i] = 0;
              invoke(comm, me, c);
            });
          }),
                          hypercomm::SizeMismatch);
        }
      }
    }
    for (const int which : {0, 1, 2, 3, 4}) {
      INFO("all_to_allv: " << (which == 0   ? "in one element long"
                               : which == 1 ? "in one element short"
                               : which == 2 ? "out one element long"
                               : which == 3 ? "out one element short"
                                            : "send_counts[me] != recv_counts[me]"));
      CHECK_THROWS_AS(m.run([&](Proc& vp) {
        std::string unused;
        on_group(vp, w.kind, unused, [&](auto& comm, const Group& g) {
          const int n = g.size(), me = g.rank();
          auto send = symmetric_row(n, me), recv = send;
          send[static_cast<std::size_t>(me)] += 1;  // no empty buffer to shorten
          recv[static_cast<std::size_t>(me)] += 1;
          if (which == 4) {
            send[static_cast<std::size_t>(me)] += 1;  // in sized for it: only the counts differ
            all_to_allv_call(comm, send, recv);
            return;
          }
          all_to_allv_call(comm, send, recv,
                           which == 0   ? 1
                           : which == 1 ? -1
                                        : 0,
                           which == 2   ? 1
                           : which == 3 ? -1
                                        : 0);
        });
      }),
                      hypercomm::SizeMismatch);
    }
  }
}

// The counts rank `deviant` passes in the counts test below, in a group of n.
std::vector<std::size_t> deviant_counts(int n, int deviant, int how) {
  std::vector<std::size_t> v = base_counts(n);
  const auto d = static_cast<std::size_t>(deviant);
  switch (how) {
    case 0: v[(d + 1) % v.size()] += 1; break;
    case 1: v[d] += 2; break;
    case 2: std::swap(v[0], v[1]); break;
    case 3: std::fill(v.begin(), v.end(), 0); break;
  }
  return v;
}

TEST_CASE(
    "irregular errors: members that pass different counts throw, naming the ranks and the counts") {
  // CollectiveMismatch (never a hang, a SizeMismatch or wrong data), its text naming the
  // operation, the deviant rank and another one (as "rank r", or as a VP whose rank that is),
  // and the first entry where the two counts differ with both values: "counts[2] = 5" and
  // "counts[2] = 1".
  for (const Where& w : kErrorPlaces) {
    const Topology t = Topology::parse(w.topology);
    hypercomm::Machine m(t, error_options());
    for (const Op op : kCountedOps) {
      for (const int deviant_pick : {0, 1, 2}) {  // rank 0, rank 1, the last rank
        for (const int how : {0, 1, 2, 3}) {
          for (const int root_pick : {0, 2}) {  // rank 0, the last rank (rooted calls only)
            if (root_pick != 0 && op != Op::gatherv && op != Op::scatterv) continue;
            INFO(w.topology << " " << name_of(w.kind) << " " << name_of(op) << ": deviant "
                            << (deviant_pick == 2 ? "last rank" : std::to_string(deviant_pick))
                            << ", "
                            << (how == 0   ? "another rank's count + 1"
                                : how == 1 ? "its own count + 2 (its buffers sized for it)"
                                : how == 2 ? "two counts swapped (same sum)"
                                           : "all counts zero")
                            << ", root " << (root_pick == 0 ? "0" : "last"));
            const auto deviant_of = [&](int n) {
              return deviant_pick == 2 ? n - 1 : std::min(deviant_pick, n - 1);
            };
            Members members(t.size());
            const std::string outcome = error_outcome<hypercomm::CollectiveMismatch>(
                m,
                [&](Proc& vp) {
                  std::string unused;
                  on_group(vp, w.kind, unused, [&](auto& comm, const Group& g) {
                    members.note(vp.id(), g);
                    const int n = g.size(), me = g.rank();
                    const int deviant = deviant_of(n);
                    Call c{op, me == deviant ? deviant_counts(n, deviant, how) : base_counts(n)};
                    c.root = root_pick == 0 ? 0 : n - 1;
                    invoke(comm, me, c);
                  });
                },
                [&](const std::string& text) -> std::string {
                  if (text.find(name_of(op)) == std::string::npos) return "no " + name_of(op);
                  const int vp = reporter(text);
                  if (vp < 0 || vp >= t.size()) return "no reporting VP";
                  const int n = members.size[static_cast<std::size_t>(vp)];
                  const int deviant = deviant_of(n);
                  const auto base = base_counts(n), odd = deviant_counts(n, deviant, how);
                  std::size_t i = 0;
                  while (base[i] == odd[i]) ++i;
                  const std::string at = "counts[" + std::to_string(i) + "] = ";
                  for (const std::size_t value : {base[i], odd[i]})
                    if (text.find(at + std::to_string(value)) == std::string::npos)
                      return "does not name " + at + std::to_string(value);
                  if (!names_rank(text, members, deviant, false))
                    return "does not name rank " + std::to_string(deviant);
                  if (!names_rank(text, members, deviant, true))
                    return "names no rank but " + std::to_string(deviant);
                  return "";
                });
            CHECK_MESSAGE(outcome.empty(), outcome);
          }
        }
      }
    }
  }
}

TEST_CASE("irregular errors: on a row, the other member's counts named by its rank, every time") {
  // The runtime's text names the VPs by machine id; the reworded head names the member whose
  // counts differ by its rank in the row, never as "another member" (API.md: naming both ranks
  // and both counts), with meetings and with messages, whoever reports first.
  const Topology t = Topology::mesh(2, 4);
  for (const bool meetings : {true, false}) {
    Options opt = error_options();
    opt.meetings = meetings;
    hypercomm::Machine m(t, opt);
    for (const Op op : kCountedOps) {
      for (int trial = 0; trial < 12; ++trial) {
        INFO(name_of(op) << (meetings ? ", meetings" : ", messages") << ", trial " << trial);
        std::string text;
        try {
          m.run([&](Proc& vp) {
            Group row = vp.row();
            std::vector<std::size_t> counts{1, 2, 1, 1};
            if (row.rank() == 3) counts[1] = 0;
            Call c{op, counts};
            c.root = 1;
            invoke(row, row.rank(), c);
          });
        } catch (const hypercomm::CollectiveMismatch& e) {
          text = e.what();
        }
        INFO(text);
        REQUIRE(!text.empty());
        CHECK(text.find("another member") == std::string::npos);
        CHECK(text.find("rank 3") != std::string::npos);
        CHECK(text.find("counts[1] = 0") != std::string::npos);
        CHECK(text.find("counts[1] = 2") != std::string::npos);
      }
    }
  }
}

TEST_CASE(
    "irregular errors: a member that ran on through later calls is still named by its counts") {
  // A gatherv's leaf only sends, so it runs on into the next calls (new counts each) before the
  // root, held up here, reads its header: the report still names its counts of the call that
  // disagrees, not a digest.
  for (const int calls_ahead : {1, 3, 8}) {
    INFO(calls_ahead << " calls ahead");
    std::string text;
    try {
      hypercomm::run(Topology::hypercube(1), [&](Proc& vp) {
        if (vp.id() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        for (int k = 0; k <= calls_ahead; ++k) {
          std::vector<std::size_t> counts{static_cast<std::size_t>(k), 3};
          if (k == 0 && vp.id() == 1) counts[0] = 5;
          std::vector<int> in(counts[static_cast<std::size_t>(vp.id())]);
          std::vector<int> out(vp.id() == 0 ? counts[0] + counts[1] : 0);
          hypercomm::gatherv(vp, in, out, counts, 0);
        }
      });
    } catch (const hypercomm::CollectiveMismatch& e) {
      text = e.what();
    }
    INFO(text);
    CHECK(text.find("digest") == std::string::npos);
    CHECK(text.find("counts[0] = 5") != std::string::npos);
    CHECK(text.find("counts[0] = 0") != std::string::npos);
    CHECK(text.find("rank 1") != std::string::npos);
  }
}

TEST_CASE(
    "irregular errors: an all_to_allv sender that disagrees with its receiver throws SizeMismatch "
    "naming both") {
  // The receiver throws SizeMismatch naming the sender's rank and send_counts entry and its own
  // rank and recv_counts entry, in elements: "rank 0 sends 3 elements to rank 1 (its
  // send_counts[1]) but rank 1 (this VP) expects 2 (its recv_counts[0])". With every algorithm:
  // the ring, mesh and dimension exchange's final receiver checks the size that travelled with
  // the block (where the algorithm cannot run on the group, automatic's runs again). Where the
  // pairwise exchange meets in shared memory (VPs outnumber cores), the last VP to arrive
  // checks every pair and names the receiver as "rank 1 expects 2 (its recv_counts[0])".
  // Under Links::strict on a line and an open mesh (its rows too): the line's streams, whose
  // final receiver checks the size that travelled a step ahead of the block.
  std::vector<std::pair<Where, Links>> places;
  for (const Where& w : kErrorPlaces) places.emplace_back(w, Links::routed);
  for (const Where& w : {Where{"linear:5", {Kind::proc}}, Where{"mesh:3x3:open", {Kind::proc}},
                         Where{"mesh:3x4:open", {Kind::row}}})
    places.emplace_back(w, Links::strict);
  for (const auto& entry : places) {
    // Not bound in the for: Clang before 16 cannot capture a structured binding.
    const auto& w = entry.first;
    const auto& links = entry.second;
    const Topology t = Topology::parse(w.topology);
    hypercomm::Machine m(t, error_options(links));
    for (const hypercomm::Algo algo :
         {hypercomm::Algo::automatic, hypercomm::Algo::hypercube,
          hypercomm::Algo::dimension_exchange, hypercomm::Algo::mesh, hypercomm::Algo::ring}) {
      for (const int how : {0, 1, 2, 3, 4}) {
        for (const int pair : {0, 1, 2}) {
          INFO(w.topology << " " << name_of(w.kind) << " Algo::" << hypercomm::to_string(algo)
                          << ": "
                          << (how == 0   ? "the sender sends one more"
                              : how == 1 ? "the sender sends one fewer"
                              : how == 2 ? "the sender sends 0 where 2 are expected"
                              : how == 3 ? "the sender sends 2 where 0 are expected"
                                         : "the receiver expects one more")
                          << ", pair " << pair);
          // The sender and the receiver (distinct): 0 -> 1, last -> 0, 1 -> last.
          const auto pair_of = [&](int n) {
            const int s = pair == 0 ? 0 : pair == 1 ? n - 1 : 1;
            const int r = pair == 0 ? 1 : pair == 1 ? 0 : (n - 1 == 1 ? 0 : n - 1);
            return std::pair{s, r};
          };
          // What the sender sends and what the receiver expects, in a group of n.
          const auto entries = [&](int n) {
            const auto [s, r] = pair_of(n);
            std::size_t entry = symmetric_row(n, s)[static_cast<std::size_t>(r)];
            entry = how == 2 ? 2 : how == 3 ? 0 : entry + 1;  // what the receiver expects
            const std::size_t sends = how == 0   ? entry + 1
                                      : how == 1 ? entry - 1
                                      : how == 2 ? 0
                                      : how == 3 ? 2
                                                 : entry;
            return std::pair{sends, how == 4 ? entry + 1 : entry};
          };
          Members members(t.size());
          const std::string outcome = error_outcome<hypercomm::SizeMismatch>(
              m,
              [&](Proc& vp) {
                std::string unused;
                on_group(vp, w.kind, unused, [&](auto& comm, const Group& g) {
                  members.note(vp.id(), g);
                  const int n = g.size(), me = g.rank();
                  const auto [s, r] = pair_of(n);
                  const auto [sends, expects] = entries(n);
                  std::vector<std::vector<std::size_t>> mat(static_cast<std::size_t>(n));
                  for (int i = 0; i < n; ++i)
                    mat[static_cast<std::size_t>(i)] = symmetric_row(n, i);
                  mat[static_cast<std::size_t>(s)][static_cast<std::size_t>(r)] = expects;
                  std::vector<std::size_t> send = mat[static_cast<std::size_t>(me)];
                  std::vector<std::size_t> recv(static_cast<std::size_t>(n));
                  for (int i = 0; i < n; ++i)
                    recv[static_cast<std::size_t>(i)] =
                        mat[static_cast<std::size_t>(i)][static_cast<std::size_t>(me)];
                  if (me == s) send[static_cast<std::size_t>(r)] = sends;
                  hypercomm::Algo use = algo;
                  try {
                    (void)hypercomm::resolve(hypercomm::Collective::all_to_allv, algo, g.topology(),
                                             links, 0);
                  } catch (const hypercomm::AlgorithmError&) {
                    use = hypercomm::Algo::automatic;
                  }
                  all_to_allv_call(comm, send, recv, 0, 0, use);
                });
              },
              [&](const std::string& text) -> std::string {
                const int vp = reporter(text);
                if (vp < 0 || vp >= t.size()) return "no reporting VP";
                const int n = members.size[static_cast<std::size_t>(vp)];
                const auto [s, r] = pair_of(n);
                const auto [sends, expects] = entries(n);
                const std::string rs = std::to_string(r), ss = std::to_string(s);
                // The receiver says "(this VP)"; a meeting's last arriver, which found the
                // disagreement for the receiver, says that they met.
                const bool met = text.find("(they met in shared memory)") != std::string::npos;
                for (const std::string& phrase :
                     {"all_to_allv: rank " + ss + " sends " + std::to_string(sends) +
                          " elements to rank " + rs + " (its send_counts[" + rs + "])",
                      "rank " + rs + (met ? "" : " (this VP)") + " expects " +
                          std::to_string(expects) + " (its recv_counts[" + ss + "])"})
                  if (text.find(phrase) == std::string::npos) return "no '" + phrase + "'";
                // A group's reporter names its rank in the group, meeting or not.
                if (w.kind.kind != Kind::proc && w.kind.kind != Kind::world) {
                  const std::string who = "VP " + std::to_string(vp) + " (rank " +
                                          std::to_string(members.rank_of(vp)) + " of ";
                  if (text.find(who) == std::string::npos) return "no '" + who + "'";
                }
                return "";
              });
          CHECK_MESSAGE(outcome.empty(), outcome);
        }
      }
    }
  }
}

TEST_CASE("Links::strict: all_to_allv runs a neighbour algorithm, or throws AlgorithmError") {
  // The pairwise exchange sends to every other rank: neighbours only on 1 or 2 ranks, or on 3
  // ranks of a ring (each pair adjacent). Elsewhere automatic takes the ring (a ring, a row or a
  // column of a torus), the mesh (a torus), the dimension exchange (a hypercube or subcube), the
  // line's two streams (a linear array, a row of an open mesh) or the open mesh's line phases;
  // where none can run (a split group whose members are not neighbours) every member throws
  // before any message.
  struct Expect {
    const char* topology;
    GroupKind kind;
    bool runs;
  };
  const Expect expectations[] = {
      {"ring:1", {Kind::proc}, true},
      {"ring:2", {Kind::proc}, true},
      {"hypercube:1", {Kind::proc}, true},
      {"ring:3", {Kind::proc}, true},
      {"mesh:3x3", {Kind::row}, true},
      {"mesh:2x3", {Kind::column}, true},
      {"hypercube:3", {Kind::subcube, 0b100}, true},
      {"ring:4", {Kind::proc}, true},
      {"ring:5", {Kind::proc}, true},
      {"hypercube:2", {Kind::proc}, true},
      {"hypercube:3", {Kind::proc}, true},
      {"hypercube:3", {Kind::subcube, 0b011}, true},
      {"mesh:2x2", {Kind::proc}, true},
      {"mesh:3x3", {Kind::world}, true},
      {"mesh:4x4", {Kind::row}, true},
      {"mesh:2x2:open", {Kind::proc}, true},
      {"linear:2", {Kind::proc}, true},
      {"linear:3", {Kind::proc}, true},
      {"linear:5", {Kind::proc}, true},
      {"linear:8", {Kind::proc}, true},
      {"mesh:3x3:open", {Kind::row}, true},
      {"mesh:4x3:open", {Kind::column}, true},
      {"mesh:3x3:open", {Kind::proc}, true},
      {"mesh:2x4:open", {Kind::proc}, true},
      {"mesh:4x3:open", {Kind::proc}, true},
      {"mesh:1x5:open", {Kind::proc}, true},
      {"mesh:5x1:open", {Kind::proc}, true},
      {"ring:9", {Kind::split_mod3}, false},  // {6, 3, 0}, {7, 4, 1}, {5, 2}: VP 8 in none
  };
  for (const Expect& x : expectations) {
    const Topology t = Topology::parse(x.topology);
    hypercomm::Machine m(t, error_options(Links::strict));
    for (const bool discovering : {false, true}) {
      INFO(x.topology << " " << name_of(x.kind)
                      << (discovering ? " all_to_allv(g, out_per_rank)" : " all_to_allv(counts)"));
      std::vector<char> threw(static_cast<std::size_t>(t.size()), 0);
      std::vector<char> right(static_cast<std::size_t>(t.size()), 0);
      std::vector<char> member(static_cast<std::size_t>(t.size()), 0);
      const auto body = [&](Proc& vp) {
        std::string unused;
        on_group(vp, x.kind, unused, [&](auto& comm, const Group& g) {
          member[static_cast<std::size_t>(vp.id())] = 1;
          const int n = g.size(), me = g.rank();
          std::vector<std::vector<int>> out_per_rank(static_cast<std::size_t>(n));
          for (int j = 0; j < n; ++j)
            out_per_rank[static_cast<std::size_t>(j)].assign(static_cast<std::size_t>(me + j + 1),
                                                             me * 100 + j);
          try {
            std::vector<std::vector<int>> got(static_cast<std::size_t>(n));
            if (discovering) {
              got = hypercomm::all_to_allv(comm, out_per_rank);
            } else {
              std::vector<std::size_t> send(static_cast<std::size_t>(n)),
                  recv(static_cast<std::size_t>(n));
              std::vector<int> in;
              for (int j = 0; j < n; ++j) {
                const auto uj = static_cast<std::size_t>(j);
                send[uj] = static_cast<std::size_t>(me + j + 1);
                recv[uj] = static_cast<std::size_t>(j + me + 1);
                in.insert(in.end(), out_per_rank[uj].begin(), out_per_rank[uj].end());
              }
              std::vector<int> out(sum(recv));
              hypercomm::all_to_allv(comm, in, send, out, recv);
              auto at = out.begin();
              for (int i = 0; i < n; ++i) {
                got[static_cast<std::size_t>(i)].assign(
                    at, at + static_cast<std::ptrdiff_t>(recv[static_cast<std::size_t>(i)]));
                at += static_cast<std::ptrdiff_t>(recv[static_cast<std::size_t>(i)]);
              }
            }
            bool ok = true;
            for (int i = 0; i < n; ++i)
              ok = ok && got[static_cast<std::size_t>(i)] ==
                             std::vector<int>(static_cast<std::size_t>(i + me + 1), i * 100 + me);
            right[static_cast<std::size_t>(vp.id())] = ok ? 1 : 0;
          } catch (const hypercomm::AlgorithmError&) {
            threw[static_cast<std::size_t>(vp.id())] = 1;
          }
        });
      };
      try {
        m.run(body);
      } catch (const std::exception& e) {
        FAIL_CHECK("run threw: " << std::string(e.what()));
        continue;
      }
      for (int v = 0; v < t.size(); ++v) {
        INFO("VP " << v);
        if (member[static_cast<std::size_t>(v)] == 0) {
          CHECK(x.kind.kind == Kind::split_mod3);  // the one VP in no group
        } else if (x.runs) {
          CHECK(threw[static_cast<std::size_t>(v)] == 0);
          CHECK(right[static_cast<std::size_t>(v)] == 1);
        } else {
          CHECK(threw[static_cast<std::size_t>(v)] == 1);
        }
      }
    }
  }
}
